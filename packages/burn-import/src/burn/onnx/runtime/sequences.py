"""ONNX sequences as Python lists of tensors: construct, insert, erase, index, split, concat."""

from __future__ import annotations

from burn.onnx.runtime.shape import as_ints, as_scalar, split
from burn.tensor import Tensor
from burn.tensor.errors import ShapeError

__all__ = [
    "concat_from_sequence",
    "sequence_at",
    "sequence_erase",
    "sequence_insert",
    "split_to_sequence",
    "stack_batch",
    "stack_scan",
    "take",
    "item",
    "device_of",
]


def _position(seq: list, position, insert: bool = False) -> int:
    if position is None:
        return len(seq) if insert else -1
    p = int(as_scalar(position))
    return p + len(seq) + (1 if insert and p < 0 else 0) if p < 0 else p


def sequence_at(seq: list, position) -> Tensor:
    return seq[int(as_scalar(position))]


def sequence_insert(seq: list, tensor: Tensor, position=None) -> list:
    out = list(seq)
    p = _position(seq, position, insert=True)
    if position is not None and int(as_scalar(position)) < 0:
        p = len(seq) + int(as_scalar(position))
    out.insert(p, tensor)
    return out


def sequence_erase(seq: list, position=None) -> list:
    out = list(seq)
    del out[_position(seq, position)]
    return out


def split_to_sequence(x: Tensor, sizes=None, axis: int = 0, keepdims: int = 1) -> list:
    axis %= x.rank()
    if sizes is None:
        parts = split(x, [1] * x.dims()[axis], axis)
        if not keepdims:
            parts = [p.squeeze_dims([axis]) if p.rank() > 1 else p for p in parts]
        return parts
    values = as_ints(sizes)
    if len(values) == 1:  # one size: equal parts, the last one shorter
        size = values[0]
        n = x.dims()[axis]
        values = [size] * (n // size) + ([n % size] if n % size else [])
    return split(x, values, axis)


def concat_from_sequence(seq: list, axis: int, new_axis: int = 0) -> Tensor:
    if new_axis:
        rank = seq[0].rank() + 1
        return Tensor.stack(list(seq), axis % rank)
    return Tensor.cat(list(seq), axis % seq[0].rank())


def stack_scan(items: list, axis: int = 0, reverse: bool = False, scalars: bool = False):
    """The per-iteration outputs of a Loop or Scan stacked along `axis` (in order, or reversed).
    Tensors are stacked; sequences (lists) are concatenated, as Loop does for them."""
    if items and isinstance(items[0], list):
        return [t for part in items for t in part]
    items = items[::-1] if reverse else items
    if not items:
        return []
    if scalars:  # one-element tensors standing for ONNX scalars: a vector of them
        return Tensor.cat(list(items), 0)
    return Tensor.stack(list(items), axis % (items[0].rank() + 1))


def stack_batch(entries: list, length: int | None = None, scalars: bool = False) -> Tensor:
    """Opset-8 Scan's results, one per batch entry, stacked along a new batch axis 0; with
    `length`, each entry is first padded with zeros along its axis 0 to `length` (the scan
    output of a sequence shorter than the longest)."""
    if length is not None:
        padded = []
        for entry in entries:
            if isinstance(entry, list):  # no iteration ran, so nothing says the items' shape
                raise ShapeError("Scan (opset 8): a sequence of length 0 has no output shape")
            dims = entry.dims()
            if dims[0] < length:
                dims[0] = length - dims[0]
                zeros = Tensor.zeros(dims, device=entry.device(), dtype=entry.dtype)
                entry = Tensor.cat([entry, zeros], 0)
            padded.append(entry)
        entries = padded
    return stack_scan(entries, 0, False, scalars)


def take(x: Tensor, axis: int, index: int) -> Tensor:
    """Slice `index` of `axis`, the axis removed (a scalar stays a one-element tensor)."""
    part = x.narrow(axis, index, 1)
    dims = part.dims()
    del dims[axis]
    return part.reshape(dims or [1])


def item(value, index: int):
    """Element `index` of a sequence; a tensor stands for itself (SequenceMap's extra inputs)."""
    return value[index] if isinstance(value, list) else value


def device_of(*values):
    """The device of the first tensor among `values` (sequences looked into), else None."""
    for value in values:
        if isinstance(value, list):
            found = device_of(*value)
            if found is not None:
                return found
        elif isinstance(value, Tensor):
            return value.device()
    return None
