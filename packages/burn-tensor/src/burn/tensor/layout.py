"""Layout: reshape, permute, expand, squeeze, flip, repeat, pad, slicing and `t[...]`.

Slicing takes Burn's ranges (one per leading dim; a reversed range is an error, as Burn
panics on it); `t[...]` takes numpy-style indices and drops integer-indexed dims.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from burn.tensor import tensor as _t
from burn.tensor.errors import (
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
)
from burn.tensor.shape import Shape

if TYPE_CHECKING:
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class Layout(_Core):
    """The layout and slicing methods of `Tensor`."""

    __slots__ = ()

    # ================================================================== layout
    def reshape(self, shape: Iterable[int]) -> Tensor:
        """New shape, same elements; -1 infers one dim and 0 keeps the input's dim (Burn)."""
        dims = self.dims()
        shape = list(shape.dims if isinstance(shape, Shape) else shape)
        for i, s in enumerate(shape):
            if not isinstance(s, (int, np.integer)):
                raise ShapeError(f"reshape: dims must be integers, got {shape}")
            if s == 0 and i < len(dims):
                shape[i] = dims[i]
        n = math.prod(dims)
        if shape.count(-1) > 1:
            raise ShapeError(f"reshape: at most one -1 in {shape}")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or n % known:
                raise ShapeError(f"reshape: cannot reshape {dims} into {shape}")
            shape[shape.index(-1)] = n // known
        if math.prod(shape) != n or any(s < 0 for s in shape):
            raise ShapeError(f"reshape: cannot reshape {dims} ({n} elements) into {shape}")
        return self._new(self._op("reshape")(self.primitive, tuple(shape)))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims start_dim..=end_dim into one."""
        dims = self.dims()
        start, end = self._dim(start_dim, "flatten"), self._dim(end_dim, "flatten")
        if start > end:
            raise ShapeError(f"flatten: start_dim {start_dim} is after end_dim {end_dim}")
        merged = math.prod(dims[start : end + 1])
        return self.reshape(dims[:start] + [merged] + dims[end + 1 :])

    def permute(self, axes: Iterable[int]) -> Tensor:
        rank = self.rank()
        axes = [self._dim(a, "permute") for a in axes]
        if sorted(axes) != list(range(rank)):
            raise ShapeError(f"permute: {list(axes)} is not a permutation of {rank} dims")
        return self._new(self._op("permute")(self.primitive, tuple(axes)))

    def swap_dims(self, dim1: int, dim2: int) -> Tensor:
        d1, d2 = self._dim(dim1, "swap_dims"), self._dim(dim2, "swap_dims")
        return self._new(self._op("swap_dims")(self.primitive, d1, d2))

    def transpose(self) -> Tensor:
        """Swap the last two dims."""
        if self.rank() < 2:
            return cast("Tensor", self)
        return self.swap_dims(-2, -1)

    def t(self) -> Tensor:
        return self.transpose()

    @property
    def T(self) -> Tensor:  # noqa: N802 - numpy's name
        return self.transpose()

    def movedim(self, src: int | Iterable[int], dst: int | Iterable[int]) -> Tensor:
        src = [src] if isinstance(src, int) else list(src)
        dst = [dst] if isinstance(dst, int) else list(dst)
        if len(src) != len(dst):
            raise ShapeError(f"movedim: {len(src)} sources but {len(dst)} destinations")
        rank = self.rank()
        src = [self._dim(d, "movedim") for d in src]
        dst = [self._dim(d, "movedim") for d in dst]
        order = [d for d in range(rank) if d not in src]
        axes: list[int | None] = [None] * rank
        for s, d in zip(src, dst, strict=True):
            axes[d] = s
        rest = iter(order)
        return self.permute([a if a is not None else next(rest) for a in axes])

    def expand(self, shape: Iterable[int]) -> Tensor:
        """Broadcast size-1 dims (and add leading dims) to `shape`; -1 keeps a dim."""
        shape = list(Shape(shape)) if not isinstance(shape, list) else list(shape)
        dims = self.dims()
        if len(shape) < len(dims):
            raise RankError(f"expand: cannot expand {dims} to fewer dims {shape}")
        t: Tensor = cast("Tensor", self)
        if len(shape) > len(dims):
            t = self.reshape([1] * (len(shape) - len(dims)) + dims)
            dims = t.dims()
        target = [d if s == -1 else s for s, d in zip(shape, dims, strict=True)]
        for s, d in zip(target, dims, strict=True):
            if d != s and d != 1:
                raise ShapeError(f"expand: cannot expand {self.dims()} to {shape}")
        return t._new(t._op("expand")(t.primitive, tuple(target)))

    def squeeze(self, dim: int | None = None) -> Tensor:
        """Remove `dim` (which must have size 1), or every size-1 dim when `dim` is None."""
        dims = self.dims()
        if dim is None:
            return self.reshape([d for d in dims if d != 1] or [1])
        dim = self._dim(dim, "squeeze")
        if dims[dim] != 1:
            raise ShapeError(f"squeeze: dim {dim} of {dims} has size {dims[dim]}, not 1")
        return self.reshape(dims[:dim] + dims[dim + 1 :])

    def squeeze_dims(self, dims: Iterable[int]) -> Tensor:
        shape = self.dims()
        drop = {self._dim(d, "squeeze_dims") for d in dims}
        for d in drop:
            if shape[d] != 1:
                raise ShapeError(f"squeeze_dims: dim {d} of {shape} has size {shape[d]}, not 1")
        return self.reshape([s for i, s in enumerate(shape) if i not in drop])

    def unsqueeze(self, rank: int | None = None) -> Tensor:
        """Add leading size-1 dims up to `rank` (default: one more dim), like Burn's unsqueeze."""
        dims = self.dims()
        rank = len(dims) + 1 if rank is None else rank
        if rank < len(dims):
            raise RankError(
                f"unsqueeze: cannot go from rank {len(dims)} to {rank}; unsqueeze(rank) adds "
                f"leading dims up to `rank` (Burn); to insert a size-1 dim at {rank}, call "
                f"unsqueeze_dim({rank})"
            )
        return self.reshape([1] * (rank - len(dims)) + dims)

    def unsqueeze_dim(self, dim: int) -> Tensor:
        """Insert a size-1 dim at `dim` (0..=rank)."""
        dims = self.dims()
        dim = self._dim(dim, "unsqueeze_dim", len(dims) + 1)
        return self.reshape(dims[:dim] + [1] + dims[dim:])

    def unsqueeze_dims(self, dims: Iterable[int]) -> Tensor:
        shape = self.dims()
        dims = list(dims)
        rank = len(shape) + len(dims)
        positions = {self._dim(d, "unsqueeze_dims", rank) for d in dims}
        if len(positions) != len(dims):
            raise ShapeError(f"unsqueeze_dims: repeated dims in {dims}")
        rest = iter(shape)
        return self.reshape([1 if i in positions else next(rest) for i in range(rank)])

    def flip(self, axes: Iterable[int]) -> Tensor:
        axes = tuple(sorted({self._dim(a, "flip") for a in axes}))
        if not axes:
            return cast("Tensor", self)
        return self._new(self._op("flip")(self.primitive, axes))

    def repeat_dim(self, dim: int, times: int) -> Tensor:
        """Tile the tensor `times` times along `dim`."""
        dim = self._dim(dim, "repeat_dim")
        if times < 0:
            raise ShapeError(f"repeat_dim: times must be >= 0, got {times}")
        if times == 1:
            return cast("Tensor", self)
        if times == 0:
            dims = self.dims()
            dims[dim] = 0
            return _t.Tensor.empty_like_shape(cast("Tensor", self), dims)
        return self._new(self._op("repeat_dim")(self.primitive, dim, times))

    def repeat(self, sizes: Iterable[int]) -> Tensor:
        """Tile along every dim: `sizes[i]` copies along dim i (Burn's `repeat(&[..])`)."""
        sizes = list(sizes)
        if len(sizes) != self.rank():
            raise RankError(f"repeat: {len(sizes)} sizes for a rank {self.rank()} tensor")
        t: Tensor = cast("Tensor", self)
        for d, n in enumerate(sizes):
            t = t.repeat_dim(d, n)
        return t

    @staticmethod
    def empty_like_shape(t: Tensor, dims: Iterable[int]) -> Tensor:
        return t._filled_as("empty", dims, 0)

    # -- slicing ---------------------------------------------------------------------------
    def _ranges(self, ranges: Iterable[Any], op: str) -> tuple[tuple[int, int, int], ...]:
        """Normalize Burn-style ranges (one per leading dim) to (start, stop, step) triples."""
        dims = self.dims()
        ranges = list(ranges)
        if len(ranges) > len(dims):
            raise RankError(f"{op}: {len(ranges)} ranges for a rank {len(dims)} tensor {dims}")
        out = []
        for d, size in enumerate(dims):
            r = ranges[d] if d < len(ranges) else None
            if r is None:
                out.append((0, size, 1))
                continue
            if isinstance(r, range):
                r = builtins.slice(r.start, r.stop, r.step)
            elif isinstance(r, (tuple, list)):
                r = builtins.slice(*r)
            elif isinstance(r, (int, np.integer)):
                i = int(r)
                if not -size <= i < size:
                    raise OutOfRangeError(
                        f"{op}: index {i} is out of range for dim {d} of size {size}"
                    )
                i %= size
                r = builtins.slice(i, i + 1)
            start, stop, step = r.start, r.stop, r.step
            step = 1 if step is None else step
            if step <= 0:
                raise ShapeError(f"{op}: step must be positive for dim {d}, got {step} (use flip)")
            for bound in (start, stop):
                if bound is not None and not -size - 1 < bound <= size and op != "__getitem__":
                    raise OutOfRangeError(
                        f"{op}: range {start}..{stop} is out of bounds for dim {d} of size {size}"
                    )
            start, stop, step = builtins.slice(start, stop, step).indices(size)
            if start > stop:
                raise OutOfRangeError(
                    f"{op}: range {start}..{stop} of dim {d} is reversed (start > end); "
                    "use flip to reverse"
                )
            out.append((start, stop, step))
        return tuple(out)

    def slice(self, ranges: Iterable[Any]) -> Tensor:
        """Sub-tensor from one range per leading dim (`range`, `(start, end)`, slice, int).

        The rank is kept (as in Burn); `t[...]` offers numpy-style indexing that drops dims.
        """
        return self._new(self._op("slice")(self.primitive, self._ranges(ranges, "slice")))

    def slice_assign(self, ranges: Iterable[Any], values: Tensor) -> Tensor:
        """A copy whose sliced region is replaced by `values` (of the region's shape)."""
        ranges = self._ranges(ranges, "slice_assign")
        region = tuple(len(range(*r)) for r in ranges)
        value = self._peer(values, "slice_assign")
        if tuple(values.dims()) != region:
            raise ShapeError(
                f"slice_assign: values of shape {values.dims()} "
                f"for a region of shape {list(region)}"
            )
        return self._new(self._op("slice_assign")(self.primitive, ranges, value))

    def slice_fill(self, ranges: Iterable[Any], value: Any) -> Tensor:
        ranges = self._ranges(ranges, "slice_fill")
        region = [len(range(*r)) for r in ranges]
        return self.slice_assign(
            ranges, self.full_like(value).slice([builtins.slice(0, n) for n in region])
        )

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        dim = self._dim(dim, "narrow")
        size = self.dims()[dim]
        if start < 0 or length < 0 or start + length > size:
            raise OutOfRangeError(
                f"narrow: {start}..{start + length} is out of bounds for dim {dim} of size {size}"
            )
        ranges: list[Any] = [None] * self.rank()
        ranges[dim] = (start, start + length)
        return self.slice(ranges)

    def chunk(self, chunks: int, dim: int) -> list[Tensor]:
        """Split into `chunks` pieces along `dim` (the last may be smaller), like torch.chunk."""
        dim = self._dim(dim, "chunk")
        if chunks <= 0:
            raise ShapeError(f"chunk: chunks must be positive, got {chunks}")
        size = self.dims()[dim]
        step = -(-size // chunks) if size else 1
        return self.split(step, dim)

    def split(self, split_size: int, dim: int = 0) -> list[Tensor]:
        dim = self._dim(dim, "split")
        if split_size <= 0:
            raise ShapeError(f"split: split_size must be positive, got {split_size}")
        size = self.dims()[dim]
        sizes = [min(split_size, size - s) for s in range(0, size, split_size)] or [0]
        return self.split_with_sizes(sizes, dim)

    def split_with_sizes(self, sizes: Iterable[int], dim: int = 0) -> list[Tensor]:
        dim = self._dim(dim, "split_with_sizes")
        if sum(sizes) != self.dims()[dim]:
            raise ShapeError(
                f"split_with_sizes: sizes {list(sizes)} do not add up to {self.dims()[dim]}"
            )
        out, start = [], 0
        for n in sizes:
            out.append(self.narrow(dim, start, n))
            start += n
        return out

    def iter_dim(self, dim: int) -> Iterator[Tensor]:
        """Iterate over `dim`, yielding slices that keep it with size 1 (Burn's iter_dim)."""
        dim = self._dim(dim, "iter_dim")
        for i in range(self.dims()[dim]):
            yield self.narrow(dim, i, 1)

    def __getitem__(self, index: Any) -> Tensor:
        if not isinstance(index, tuple):
            index = (index,)
        if any(isinstance(i, _t.Tensor) for i in index):
            raise KindError("t[...]: indexing with tensors is not supported; use select or gather")
        if index.count(Ellipsis) > 1:
            raise ShapeError("t[...]: at most one Ellipsis")
        dims = self.dims()
        explicit = [i for i in index if i is not None and i is not Ellipsis]
        if len(explicit) > len(dims):
            raise RankError(f"t[...]: {len(explicit)} indices for a rank {len(dims)} tensor {dims}")
        if Ellipsis in index:
            at = index.index(Ellipsis)
            fill = (builtins.slice(None),) * (len(dims) - len(explicit))
            index = index[:at] + fill + index[at + 1 :]
        ranges: list[Any] = []
        flips: list[int] = []
        out_shape: list[int] = []
        d = 0
        for i in index:
            if i is None:
                out_shape.append(1)
                continue
            size = dims[d]
            if isinstance(i, (int, np.integer)):
                if not -size <= i < size:
                    raise OutOfRangeError(
                        f"t[...]: index {i} is out of range for dim {d} of size {size}"
                    )
                ranges.append(int(i) % size)
            elif isinstance(i, builtins.slice):
                start, stop, step = i.indices(size)
                if step < 0:
                    n = len(range(start, stop, step))
                    last = start + (n - 1) * step if n else 0
                    ranges.append(builtins.slice(last, start + 1 if n else 0, -step))
                    flips.append(d)
                else:
                    ranges.append(builtins.slice(start, max(start, stop), step))
                out_shape.append(len(range(start, stop, step)))
            else:
                raise KindError(f"t[...]: unsupported index {i!r}")
            d += 1
        out_shape.extend(dims[d:])
        t = self.slice(ranges)
        if flips:
            t = t.flip(flips)
        if not out_shape:
            out_shape = [1]
        return t.reshape(out_shape) if out_shape != t.dims() else t

    def pad(self, pads: Iterable[int], value: Any = 0) -> Tensor:
        """Pad the last dims: `pads` is (left, right, top, bottom) for the last two (Burn),
        or any even-length sequence of (before, after) pairs from the last dim backwards."""
        pads = list(pads)
        if len(pads) % 2 or len(pads) // 2 > self.rank():
            raise ShapeError(f"pad: {len(pads)} pads for a rank {self.rank()} tensor")
        if any(p < 0 for p in pads):
            raise ShapeError(f"pad: negative padding {pads}")
        dims = self.dims()
        out = list(dims)
        ranges = [(0, d) for d in dims]
        for k in range(len(pads) // 2):
            d = len(dims) - 1 - k
            before, after = pads[2 * k], pads[2 * k + 1]
            out[d] = dims[d] + before + after
            ranges[d] = (before, before + dims[d])
        base = self._filled_as("full", out, value)
        if TYPE_CHECKING:  # the mixin is only ever part of a Tensor
            assert isinstance(self, _t.Tensor)
        return base.slice_assign(ranges, self)
