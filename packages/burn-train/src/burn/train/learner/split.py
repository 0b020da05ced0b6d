"""Splitting a batch across devices for data-parallel steps.

A batch is whatever the batcher returned: tensors, or dataclasses, named tuples, tuples,
lists and dicts of them. Every tensor is cut along its first dimension (the batch) into
contiguous parts, and each part is moved to its device; anything else is shared as it is.
A batch class may define `split(sizes, devices)` to do this itself.
"""

from __future__ import annotations

import dataclasses

from burn.tensor import BurnError, Tensor


class BatchSplitError(BurnError, ValueError):
    """A batch that cannot be cut into parts for several devices."""


def batch_size(batch) -> int | None:
    """The first dimension of the first tensor found in `batch`."""
    if isinstance(batch, Tensor):
        return batch.dims()[0] if batch.rank() else None
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        values = [getattr(batch, f.name) for f in dataclasses.fields(batch)]
    elif isinstance(batch, dict):
        values = list(batch.values())
    elif isinstance(batch, (list, tuple)):
        values = list(batch)
    else:
        values = (
            [v for k, v in vars(batch).items() if not k.startswith("_")]
            if hasattr(batch, "__dict__")
            else []
        )
    for value in values:
        found = batch_size(value)
        if found is not None:
            return found
    return None


def part_sizes(total: int, parts: int) -> list[int]:
    """`total` items in `parts` contiguous parts, the first ones one larger when uneven."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _take(value, start: int, length: int, device, total: int):
    if isinstance(value, Tensor):
        if value.rank() and value.dims()[0] == total:
            value = value.narrow(0, start, length)
        return value.to_device(device)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _take(getattr(value, f.name), start, length, device, total)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_take(v, start, length, device, total) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_take(v, start, length, device, total) for v in value)
    if isinstance(value, dict):
        return {k: _take(v, start, length, device, total) for k, v in value.items()}
    return value


def split_batch(batch, devices: list) -> list[tuple[object, int]]:
    """`batch` as one `(part, size)` per device (empty parts left out when the batch is small)."""
    custom = getattr(batch, "split", None)
    total = batch_size(batch)
    if total is None:
        raise BatchSplitError(
            f"cannot split a {type(batch).__name__} across devices: no tensor with a batch "
            "dimension was found (define `split(sizes, devices)` on the batch class)"
        )
    sizes = part_sizes(total, len(devices))
    if callable(custom) and not isinstance(batch, (Tensor, list, tuple, dict)):
        parts = custom(sizes, devices)
        return [(p, n) for p, n in zip(parts, sizes, strict=True) if n > 0]
    out = []
    start = 0
    for size, device in zip(sizes, devices, strict=True):
        if size > 0:
            out.append((_take(batch, start, size, device, total), size))
        start += size
    return out
