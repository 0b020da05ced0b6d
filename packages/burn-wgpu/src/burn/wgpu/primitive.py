"""`WgpuTensor`, the Wgpu backend's primitive: a strided view of a pooled GPU buffer, and the
helpers that describe views to kernels.

A primitive is a pooled buffer handle with shape, element strides, an element offset and a
dtype, so permute, expand, slice and reshape of contiguous data are views that copy nothing.
Kernels read strided operands directly; results are always fresh contiguous tensors, each in a
buffer of its own except the Adam step of a group of parameters (`optim_ops`), whose results
share one.
"""

from __future__ import annotations

import functools
import math

from burn.tensor import DType
from burn.wgpu.pool import Handle


def row_major(shape) -> tuple[int, ...]:
    """The contiguous strides of `shape` (memoized: every new tensor and view asks)."""
    return _row_major(tuple(shape))


@functools.lru_cache(maxsize=4096)
def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


class WgpuTensor:
    """A strided view of a pooled GPU buffer. Buffers are never written after creation."""

    __slots__ = ("handle", "shape", "strides", "offset", "dtype", "device", "rt", "host")

    def __init__(
        self, handle: Handle, shape, strides, offset: int, dtype: DType, device, rt, host=None
    ):
        self.handle = handle
        self.shape = tuple(map(int, shape))
        self.strides = tuple(map(int, strides))
        self.offset = int(offset)
        self.dtype = dtype
        self.device = device
        self.rt = rt
        self.host = host

    @classmethod
    def _unchecked(
        cls,
        handle: Handle,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: DType,
        device,
        rt,
    ) -> WgpuTensor:
        """A tensor from fields already in their final types, without `__init__`'s conversions:
        every kernel's result and every replayed output is made here."""
        t = cls.__new__(cls)
        t.handle, t.shape, t.strides, t.offset = handle, shape, strides, offset
        t.dtype, t.device, t.rt, t.host = dtype, device, rt, None
        return t

    def with_handle(self, handle: Handle) -> WgpuTensor:
        """The same view of another buffer of the same size (a replayed step's outputs)."""
        return WgpuTensor._unchecked(
            handle, self.shape, self.strides, self.offset, self.dtype, self.device, self.rt
        )

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def is_contiguous(self) -> bool:
        if self.strides == _row_major(self.shape):
            return True
        return all(
            n == 1 or s == e
            for n, s, e in zip(self.shape, self.strides, row_major(self.shape), strict=True)
        )

    def view(self, shape, strides, offset) -> WgpuTensor:
        return WgpuTensor(self.handle, shape, strides, offset, self.dtype, self.device, self.rt)

    @classmethod
    def contiguous(cls, handle: Handle, shape: tuple[int, ...], dtype: DType, device, rt):
        """A contiguous tensor at offset 0 of `handle`; `shape` must be a tuple of ints (it is
        not converted)."""
        return cls._unchecked(handle, shape, _row_major(shape), 0, dtype, device, rt)

    def __repr__(self) -> str:
        shape, strides = list(self.shape), list(self.strides)
        return f"WgpuTensor(shape={shape}, dtype={self.dtype.value}, strides={strides})"


def layout_of(t: WgpuTensor) -> tuple:
    """`(shape, strides, offset, dtype)`: all a kernel's launch depends on about an operand
    besides its buffer (the key of kept launch plans and of capture's comparisons)."""
    return t.shape, t.strides, t.offset, t.dtype


def block(t: WgpuTensor, shape) -> list[int]:
    """The info block `[contiguous flag, offset, strides...]` reading `t` broadcast to `shape`."""
    shape = tuple(shape)
    if t.shape == shape:  # nothing broadcast (the common case, and the cheap one)
        return [int(t.is_contiguous()), t.offset, *t.strides]
    strides = [
        0 if n == 1 and m != 1 else s for n, m, s in zip(t.shape, shape, t.strides, strict=True)
    ]
    return [0, t.offset, *strides]


def broadcast_shape(*shapes) -> tuple[int, ...]:
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # nothing to broadcast: the common case
        return tuple(shapes[0])
    out = []
    for dims in zip(*shapes, strict=True):
        big = [n for n in dims if n != 1]
        out.append(big[0] if big else 1)
    return tuple(out)
