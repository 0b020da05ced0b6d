"""`NdArray`: the CPU backend on numpy.

Primitives are plain numpy arrays, so most ops are one vectorised numpy call; layout ops
return views where numpy can (tensors are immutable, so sharing memory is safe).
"""

from __future__ import annotations

import math

import numpy as np
from burn.backend import Backend, Capabilities
from burn.ndarray import elementwise
from burn.ndarray.device import NdArrayDevice
from burn.ndarray.fused import NdArrayFusedOps
from burn.ndarray.heap import keep_freed_memory
from burn.ndarray.module_ops import NdArrayModuleOps
from burn.ndarray.recurrent import NdArrayRecurrentOps
from burn.tensor import DType, TensorData
from burn.tensor.distribution import Bernoulli
from burn.tensor.errors import OutOfRangeError


class NdArrayBackend(NdArrayFusedOps, NdArrayModuleOps, NdArrayRecurrentOps, Backend):
    """numpy-backed CPU backend. Use the `NdArray` instance."""

    name = "ndarray"
    capabilities = Capabilities(dtypes=frozenset(DType), float_dtype=DType.F32, int_dtype=DType.I64)
    host_memory = True

    def device(self, *args, **kwargs) -> NdArrayDevice:
        return NdArrayDevice.Cpu

    def display_name(self) -> str:
        return "NdArray"

    # ------------------------------------------------------------------ data
    def from_data(self, data: TensorData, device):
        return data.array

    def into_data(self, p) -> TensorData:
        return TensorData(p)

    def shape(self, p):
        return p.shape

    def dtype(self, p) -> DType:
        return DType.from_numpy(p.dtype)

    def device_of(self, p):
        return NdArrayDevice.Cpu

    def same_device(self, a, b) -> bool:
        return True

    def to_device(self, p, device):
        return p

    def cast(self, p, dtype: DType):
        target = dtype.numpy
        if p.dtype == target:
            return p
        if p.dtype.kind == "f" and target.kind in "iu":
            with np.errstate(invalid="ignore"):
                return np.trunc(p).astype(target)
        return p.astype(target)

    # ------------------------------------------------------------------ creation
    def full(self, shape, value, dtype: DType, device):
        return np.full(tuple(shape), value, dtype.numpy)

    def float_zeros(self, shape, device, dtype: DType):
        return np.zeros(shape, dtype.numpy)

    def float_ones(self, shape, device, dtype: DType):
        return np.ones(shape, dtype.numpy)

    int_zeros = float_zeros
    int_ones = float_ones

    def arange(self, start, end, step, dtype: DType, device):
        return np.arange(start, end, step, dtype=dtype.numpy)

    def random(self, shape, distribution, dtype: DType, device):
        if isinstance(distribution, Bernoulli) and dtype.is_float:
            return _bernoulli(self.rng(), tuple(shape), distribution.prob).astype(dtype.numpy)
        return distribution.sample(self.rng(), tuple(shape)).astype(dtype.numpy)

    def dropout(self, x, prob):
        """The contract's draw, scale and product with two arrays instead of four: the
        Bernoulli draws become the scaled mask in one multiply (the same words, so the same
        mask and values as the composition after the same seed)."""
        keep = 1.0 - prob
        if keep == 0.0 or x.dtype not in (np.float32, np.float64):
            return super().dropout(x, prob)
        kept = _bernoulli(self.rng(), x.shape, keep)
        mask = np.multiply(kept, x.dtype.type(1.0 / keep), dtype=x.dtype)
        return np.multiply(x, mask), mask

    def scalar_like(self, p, value):
        return np.full((1,) * p.ndim, value, p.dtype)

    # ------------------------------------------------------------------ layout
    def reshape(self, p, shape):
        return p.reshape(shape)

    def permute(self, p, axes):
        return p.transpose(axes)

    def expand(self, p, shape):
        return np.broadcast_to(p, shape)

    def float_flip(self, tensor, axes):
        return np.flip(tensor, axes)

    int_flip = bool_flip = float_flip

    def slice(self, p, ranges):
        return p[tuple(slice(*r) for r in ranges)]

    def slice_assign(self, p, ranges, value):
        out = p.copy()
        out[tuple(slice(*r) for r in ranges)] = value
        return out

    def float_cat(self, tensors, dim):
        return np.concatenate(tensors, axis=dim)

    int_cat = bool_cat = float_cat

    # ------------------------------------------------------------------ indexing
    def gather(self, p, dim, indices):
        if p.shape != indices.shape:
            # Outside `dim` the indices may cover only a leading part of `p` (as in Burn and
            # torch); numpy's take_along_axis wants equal (or broadcastable) sizes there.
            p = p[tuple(slice(None) if d == dim else slice(n) for d, n in enumerate(indices.shape))]
        try:
            return np.take_along_axis(p, indices, axis=dim)
        except IndexError as e:
            raise OutOfRangeError(f"gather: {e}") from None

    def scatter_add(self, p, dim, indices, values):
        out = p.copy()
        idx = list(np.indices(indices.shape, sparse=True))
        idx[dim] = indices
        np.add.at(out, tuple(idx), values)
        return out

    def float_select(self, tensor, dim, indices):
        return np.take(tensor, indices, axis=dim)

    int_select = bool_select = float_select

    def float_select_assign(self, tensor, dim, indices, value):
        out = tensor.copy()
        index = [slice(None)] * tensor.ndim
        index[dim] = indices
        np.add.at(out, tuple(index), value)
        return out

    int_select_assign = bool_select_assign = float_select_assign

    def mask_where(self, p, mask, value):
        if p.dtype.kind in "fiu" and p.size >= _SELECT_MIN_SIZE:
            return _select(mask, value, p)
        return np.where(mask, value, p).astype(p.dtype, copy=False)

    # ------------------------------------------------------------------ compute
    def unary(self, op, p):
        if op == "sign" and p.dtype.kind == "u":
            return (p > 0).astype(p.dtype)
        if op in elementwise.QUIET_UNARY:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                out = elementwise.UNARY[op](p)
        else:
            out = elementwise.UNARY[op](p)
        return out if out.dtype == p.dtype or out.dtype == np.bool_ else out.astype(p.dtype)

    def binary(self, op, lhs, rhs):
        return elementwise.binary(op, lhs, rhs, lhs.dtype)

    # The commonest named ops, one numpy call each (the defaults go through `binary`, which
    # dispatches by name); like `binary`, the result keeps the left operand's dtype.
    def float_add(self, lhs, rhs):
        return _like(np.add(lhs, rhs), lhs)

    def float_sub(self, lhs, rhs):
        return _like(np.subtract(lhs, rhs), lhs)

    def float_mul(self, lhs, rhs):
        return _like(np.multiply(lhs, rhs), lhs)

    int_add, int_sub, int_mul = float_add, float_sub, float_mul

    def binary_scalar(self, op, p, value):
        return elementwise.binary(op, p, np.asarray(value).astype(p.dtype), p.dtype)

    def reduce(self, op, p, dim):
        if op == "argmax" or op == "argmin":
            fn = np.argmax if op == "argmax" else np.argmin
            return fn(p, axis=dim, keepdims=True).astype(np.int64)
        fn = _REDUCE[op]
        return fn(p, axis=dim, keepdims=True).astype(p.dtype, copy=False)

    def float_mean_dim(self, tensor, dim):
        return np.mean(
            tensor, axis=dim, keepdims=True, dtype=np.float64 if tensor.dtype.itemsize < 4 else None
        ).astype(tensor.dtype, copy=False)

    def float_clamp(self, tensor, min, max):  # noqa: A002 - the contract's names
        """One `np.clip` pass into one new array, where the composition (max, then min) makes
        two: ReLU6 on `[1, 96, 112, 112]` float32 took 0.76 ms as two ops and 0.34 as one.
        Values are the composition's, and an input of -0.0 stays -0.0 at a bound of +0.0
        (the composition returns the bound), as PyTorch's `clamp` keeps it."""
        lo, hi = (np.asarray(v).astype(tensor.dtype) for v in (min, max))
        return _like(np.clip(tensor, lo, hi), tensor)

    def float_matmul(self, lhs, rhs):
        return _like(_matmul(lhs, rhs), lhs)  # numpy gives float32 for bfloat16

    int_matmul = float_matmul

    def float_sort_with_indices(self, tensor, dim, descending):
        p = tensor
        if not descending:
            idx = np.argsort(p, axis=dim, kind="stable")
        else:
            # A stable ascending sort of the reversed axis, read backwards, is a stable
            # descending sort (ties keep their original order) without negating values.
            idx = (
                p.shape[dim]
                - 1
                - np.flip(np.argsort(np.flip(p, dim), axis=dim, kind="stable"), dim)
            )
        return np.take_along_axis(p, idx, axis=dim), idx.astype(np.int64)

    int_sort_with_indices = float_sort_with_indices

    def bool_tri_mask(self, shape, offset, upper, device):
        rows, cols = shape[-2], shape[-1]
        diff = np.arange(cols)[None, :] - np.arange(rows)[:, None]
        keep = diff >= offset if upper else diff <= offset
        return np.broadcast_to(~keep, tuple(shape))

    def float_is_nan(self, tensor):
        return np.isnan(tensor)


def _bernoulli(rng: np.random.Generator, shape: tuple[int, ...], prob: float) -> np.ndarray:
    """Bool draws, True with probability `prob` (to 2**-32), from raw 64-bit words.

    Dropout draws a mask per step as large as its input: comparing the generator's raw words
    with a threshold makes no float uniforms (twice as fast as `rng.random() < prob`). A
    probability that is a whole number of 256ths or 65536ths (dropout's 0.5, 0.25, ...) is drawn
    exactly from 8 or 16 bits, so one word makes eight or four draws: the guide's masks (a
    million draws a step at 0.5) took 0.83 ms from 32-bit draws and take about 0.25 ms.
    """
    n = math.prod(shape)
    if prob <= 0.0 or prob >= 1.0 or n == 0:
        return np.full(shape, prob >= 1.0)
    for bits in (8, 16):
        threshold = prob * 2.0**bits
        if threshold == int(threshold):  # exactly `threshold` of the 2**bits values
            per_word = 64 // bits
            words = rng.bit_generator.random_raw(-(-n // per_word))
            small = words.view(np.uint8 if bits == 8 else np.uint16)[:n]
            return (small < int(threshold)).reshape(shape)
    words32 = rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    return (words32 < np.uint32(min(round(prob * 2.0**32), 2**32 - 1))).reshape(shape)


def _matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`np.matmul`, with a stack of matrices times one matrix as one product of stacked rows.

    numpy runs one BLAS call per matrix of a stack even when `rhs` is a single matrix
    broadcast over it (a `Linear` on `[batch, seq, d]`), and BLAS is slower on the few rows of
    each: 32 products `[64, 128] @ [128, 128]` took 0.72 ms against 0.53 ms for one
    `[2048, 128]` product. Where `lhs`'s rows can be stacked without a copy, they are."""
    if lhs.ndim > 2 and lhs.shape[-2] > 0 and all(d == 1 for d in rhs.shape[:-2]):
        try:
            rows = np.reshape(lhs, (-1, lhs.shape[-1]), copy=False)
        except ValueError:  # a layout whose rows do not stack without a copy
            return np.matmul(lhs, rhs)
        out = np.matmul(rows, rhs.reshape(rhs.shape[-2:]))
        lead = (1,) * (rhs.ndim - lhs.ndim) + lhs.shape[:-2]
        return out.reshape(*lead, lhs.shape[-2], rhs.shape[-1])
    return np.matmul(lhs, rhs)


def _like(out: np.ndarray, lhs: np.ndarray) -> np.ndarray:
    return out if out.dtype == lhs.dtype else out.astype(lhs.dtype)


_SELECT_MIN_SIZE = 256  # below this, `np.where`'s one call costs less than five


def _select(mask: np.ndarray, value, p: np.ndarray) -> np.ndarray:
    """`np.where(mask, value, p)` in `p`'s dtype, bit for bit, without per-element branches.

    numpy's `where` branches on every element, and a mask with no pattern (a ReLU's gradient,
    a dropout mask) mispredicts about half of them: 2.1 ms for 590k float32 elements against
    0.2 ms here. Here the mask becomes all-one or all-zero words, and the result is
    `p ^ ((p ^ value) & mask)` on the elements' bits: five passes that never branch.
    """
    unsigned = np.dtype(f"u{p.dtype.itemsize}")
    p_bits = p.view(unsigned)
    value_bits = np.asarray(value).astype(p.dtype, copy=False).view(unsigned)
    ones = mask.astype(unsigned)
    np.negative(ones, out=ones)  # True -> all bits set
    out = np.bitwise_xor(p_bits, value_bits)
    shape = np.broadcast_shapes(out.shape, ones.shape)
    out = np.bitwise_and(out, ones, out=out if out.shape == shape else None)
    np.bitwise_xor(out, p_bits, out=out)
    return out.view(p.dtype)


_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}

for _name in ("float_add", "float_sub", "float_mul"):  # `help()` shows the contract's words
    getattr(NdArrayBackend, _name).__doc__ = getattr(Backend, _name).__doc__

NdArray = NdArrayBackend()
NdArrayDevice.backend = NdArray
keep_freed_memory()
