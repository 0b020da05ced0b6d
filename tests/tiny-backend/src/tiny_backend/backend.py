"""`Tiny`: a backend written from the contract's required core alone.

It exists to prove the contract: every op a user calls (matmul, cat, sort, conv, softmax...)
reaches this file only through the abstract methods of `PrimitiveOps`, so when the conformance
suite passes here, the contract's defaults are right. It also works differently from NdArray on
purpose: a primitive is a flat row-major buffer plus a shape, and every layout op computes the
flat offsets it needs itself instead of relying on numpy views and strides.
"""

from __future__ import annotations

import math

import numpy as np
from burn.backend import Backend, Capabilities, Device
from burn.backend.ops import COMPARISON_OPS
from burn.tensor import DType, TensorData
from burn.tensor.errors import OutOfRangeError


class TinyTensor:
    """A primitive: a flat 1-D buffer in row-major order, its shape and its dtype.

    Buffers are never written after creation, so reshape and clones may share them.
    """

    __slots__ = ("buf", "shape", "dtype")

    def __init__(self, buf: np.ndarray, shape: tuple[int, ...], dtype: DType):
        self.buf = buf
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"TinyTensor(shape={list(self.shape)}, dtype={self.dtype.value})"


class TinyDevice(Device):
    """Tiny's only device: host memory."""

    def __repr__(self) -> str:
        return "TinyDevice"


# ---------------------------------------------------------------------- index arithmetic
def _strides(shape) -> list[int]:
    """Row-major element strides of a contiguous buffer of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return strides[::-1]


def _offsets(shape, strides, start: int = 0) -> np.ndarray:
    """Flat offsets of every element of a view (`shape`, `strides`, `start`), row-major.

    One outer sum per dimension: after step k the array lists the offsets of the first k+1
    dimensions in order, which is exactly what a strided view would visit.
    """
    offsets = np.array([start], dtype=np.int64)
    for n, stride in zip(shape, strides, strict=True):
        offsets = (offsets[:, None] + np.arange(n, dtype=np.int64) * stride).reshape(-1)
    return offsets


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The common shape of two equal-rank shapes (size-1 dims stretch)."""
    return tuple(m if n == 1 else n for n, m in zip(a, b, strict=True))


def _spread(p: TinyTensor, shape: tuple[int, ...]) -> np.ndarray:
    """`p`'s buffer broadcast to `shape`: stretched dims get stride 0."""
    if p.shape == shape:
        return p.buf
    pairs = zip(p.shape, shape, _strides(p.shape), strict=True)
    strides = [0 if n == 1 and m != 1 else s for n, m, s in pairs]
    return p.buf[_offsets(shape, strides)]


def _along(p_shape, idx: TinyTensor, dim: int) -> np.ndarray:
    """Flat offsets into a `p_shape` buffer of the positions `idx` names along `dim`."""
    size = p_shape[dim]
    index = idx.buf.astype(np.int64, copy=False)
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index.min() if index.min() < 0 else index.max()
        raise OutOfRangeError(f"index {int(bad)} is out of range for a dim of size {size}")
    strides = _strides(p_shape)
    base = _offsets(idx.shape, [0 if d == dim else s for d, s in enumerate(strides)])
    return base + index * strides[dim]


# ---------------------------------------------------------------------- elementwise kernels
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sign(x: np.ndarray) -> np.ndarray:
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype) if x.dtype.kind != "f" else np.sign(x)


_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "erf": _erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,  # half to even
    "sign": _sign,
    "recip": lambda x: 1 / x,
    "not": np.logical_not,
}


def _div(a: np.ndarray, b: np.ndarray, is_int: bool) -> np.ndarray:
    """True division for floats; for ints, truncation toward zero (0 where b is 0).

    `a - fmod(a, b)` is an exact multiple of `b`, so floor division of it is exact too.
    """
    if not is_int:
        return a / b
    zero = b == 0
    safe = np.where(zero, 1, b).astype(b.dtype)
    q = (a - np.fmod(a, safe)) // safe
    return np.where(zero, 0, q)


def _rem(a: np.ndarray, b: np.ndarray, is_int: bool) -> np.ndarray:
    """Remainder with the divisor's sign: C's fmod, moved by one divisor when signs differ."""
    if is_int:
        zero = b == 0
        b = np.where(zero, 1, b).astype(b.dtype)
    r = np.fmod(a, b)
    r = np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return np.where(zero, 0, r) if is_int else r


def _pow(a: np.ndarray, b: np.ndarray, is_int: bool) -> np.ndarray:
    """Powers; an integer to a negative power is the real power truncated toward zero.

    That is 1 for a base of 1, +-1 for -1 (by the exponent's parity) and 0 otherwise, 0
    included (the contract's rule, where 0 ** -1 would be a division by zero).
    """
    if not is_int:
        return np.power(a, b)
    negative = b < 0
    exact = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    if not negative.any():
        return exact
    odd = (b % 2).astype(bool)
    tiny = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(negative, tiny, exact)


_BINARY = {
    "add": lambda a, b, i: a + b,
    "sub": lambda a, b, i: a - b,
    "mul": lambda a, b, i: a * b,
    "div": _div,
    "rem": _rem,
    "pow": _pow,
    "max": lambda a, b, i: np.maximum(a, b),
    "min": lambda a, b, i: np.minimum(a, b),
    "atan2": lambda a, b, i: np.arctan2(a, b),
    "eq": lambda a, b, i: a == b,
    "ne": lambda a, b, i: a != b,
    "gt": lambda a, b, i: a > b,
    "ge": lambda a, b, i: a >= b,
    "lt": lambda a, b, i: a < b,
    "le": lambda a, b, i: a <= b,
    "and": lambda a, b, i: np.logical_and(a, b),
    "or": lambda a, b, i: np.logical_or(a, b),
    "xor": lambda a, b, i: np.logical_xor(a, b),
}

_REDUCE = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "argmax": np.argmax,
    "argmin": np.argmin,
}


class TinyBackend(Backend):
    """The required core and nothing more. Use the `Tiny` instance."""

    name = "tiny"
    # Every dtype but the half-precision floats, so the suite's capability skips get exercised.
    capabilities = Capabilities(
        dtypes=frozenset(DType) - {DType.F16, DType.BF16},
        float_dtype=DType.F32,
        int_dtype=DType.I64,
    )
    host_memory = True  # buffers are numpy arrays: index values can be checked cheaply

    def device(self, *args, **kwargs) -> TinyDevice:
        return _DEVICE

    def priority(self) -> int:
        """Never chosen by `default()`: this backend is a proof, not a product."""
        return -1

    def display_name(self) -> str:
        return "Tiny"

    # ANCHOR: core
    # -------------------------------------------------------------- data
    def from_data(self, data: TensorData, device):
        array = data.array
        return TinyTensor(array.reshape(-1).copy(), array.shape, data.dtype)

    def into_data(self, p: TinyTensor) -> TensorData:
        return TensorData(p.buf.reshape(p.shape).copy())

    def shape(self, p: TinyTensor):
        return p.shape

    def dtype(self, p: TinyTensor) -> DType:
        return p.dtype

    def device_of(self, p: TinyTensor):
        return _DEVICE

    def to_device(self, p: TinyTensor, device):
        return p

    def cast(self, p: TinyTensor, dtype: DType):
        if p.dtype == dtype:
            return p
        with np.errstate(invalid="ignore"):
            src = np.trunc(p.buf) if p.dtype.is_float and not dtype.is_float else p.buf
            return TinyTensor(src.astype(dtype.numpy), p.shape, dtype)

    # -------------------------------------------------------------- layout
    def reshape(self, p: TinyTensor, shape):
        return TinyTensor(p.buf, shape, p.dtype)  # row-major buffer: metadata only

    def permute(self, p: TinyTensor, axes):
        if tuple(axes) == tuple(range(len(axes))):
            return p
        strides = _strides(p.shape)
        shape = tuple(p.shape[a] for a in axes)
        return TinyTensor(p.buf[_offsets(shape, [strides[a] for a in axes])], shape, p.dtype)

    def expand(self, p: TinyTensor, shape):
        shape = tuple(shape)
        return p if shape == p.shape else TinyTensor(_spread(p, shape), shape, p.dtype)

    def _region(self, p: TinyTensor, ranges):
        """Flat offsets and shape of the strided region `ranges` of `p`."""
        strides = _strides(p.shape)
        shape = tuple(len(range(*r)) for r in ranges)
        start = sum(r[0] * s for r, s in zip(ranges, strides, strict=True))
        steps = [r[2] * s for r, s in zip(ranges, strides, strict=True)]
        return _offsets(shape, steps, start), shape

    def slice(self, p: TinyTensor, ranges):
        offsets, shape = self._region(p, ranges)
        return TinyTensor(p.buf[offsets], shape, p.dtype)

    def slice_assign(self, p: TinyTensor, ranges, value: TinyTensor):
        offsets, _ = self._region(p, ranges)
        out = p.buf.copy()
        out[offsets] = value.buf
        return TinyTensor(out, p.shape, p.dtype)

    # -------------------------------------------------------------- indexing
    def gather(self, p: TinyTensor, dim, indices: TinyTensor):
        return TinyTensor(p.buf[_along(p.shape, indices, dim)], indices.shape, p.dtype)

    def scatter_add(self, p: TinyTensor, dim, indices: TinyTensor, values: TinyTensor):
        out = p.buf.copy()
        np.add.at(out, _along(p.shape, indices, dim), _spread(values, indices.shape))
        return TinyTensor(out, p.shape, p.dtype)

    def mask_where(self, p: TinyTensor, mask: TinyTensor, value: TinyTensor):
        shape = _broadcast(_broadcast(p.shape, mask.shape), value.shape)
        out = np.where(_spread(mask, shape), _spread(value, shape), _spread(p, shape))
        return TinyTensor(out.astype(p.dtype.numpy, copy=False), shape, p.dtype)

    # -------------------------------------------------------------- compute
    def unary(self, op: str, p: TinyTensor):
        with np.errstate(all="ignore"):
            out = _UNARY[op](p.buf)
        dtype = DType.BOOL if op == "not" else p.dtype
        return TinyTensor(out.astype(dtype.numpy, copy=False), p.shape, dtype)

    def binary(self, op: str, lhs: TinyTensor, rhs: TinyTensor):
        shape = _broadcast(lhs.shape, rhs.shape)
        a, b = _spread(lhs, shape), _spread(rhs, shape)
        with np.errstate(all="ignore"):
            out = _BINARY[op](a, b, not lhs.dtype.is_float)
        dtype = DType.BOOL if op in COMPARISON_OPS else lhs.dtype
        return TinyTensor(np.asarray(out).astype(dtype.numpy, copy=False), shape, dtype)

    def reduce(self, op: str, p: TinyTensor, dim: int):
        strides = _strides(p.shape)
        shape = p.shape[:dim] + (1,) + p.shape[dim + 1 :]
        lanes = _offsets(shape, strides)[:, None] + np.arange(p.shape[dim]) * strides[dim]
        out = _REDUCE[op](p.buf[lanes], axis=1)  # one row per output element
        dtype = self.capabilities.int_dtype if op in ("argmax", "argmin") else p.dtype
        return TinyTensor(out.astype(dtype.numpy, copy=False), shape, dtype)

    # ANCHOR_END: core


_DEVICE = TinyDevice()
Tiny = TinyBackend()
TinyDevice.backend = Tiny
