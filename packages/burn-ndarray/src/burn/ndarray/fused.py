"""`NdArrayFusedOps`: numpy kernels for the ops PyTorch runs as one CPU kernel each.

GELU, softmax, log-softmax, layer norm, batch norm and scaled dot-product attention, with their
backward ops, ReLU's backward (a branch-free select on the gradient's bits), and Adam's update.
The contract's compositions allocate a new array per step and the autodiff decorator records
each step; these make a few in-place passes instead, and the decorator records one node per op.
Each kernel keeps its input's dtype (float32 stays float32: no float64 temporaries).

Adam's update (`float_adam_step`) runs the contract's composition step for step (the same
float32 roundings, so the numbers are bit for bit those of the composition) but writes each
step into the three arrays it returns and a scratch block (two with an L2 penalty) instead
of allocating fifteen parameter-sized arrays: the allocations, not the arithmetic, were most
of its time.

GELU in float32 and its derivative interpolate tables of the normal distribution function
(`burn.ndarray.gelu`), in blocks that stay in the CPU cache; float64 uses the contract's
composition, whose `erf` is exact to float64.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from burn.backend.ops.activation import ActivationOps
from burn.backend.ops.module import ModuleOps
from burn.backend.ops.optim import OptimizerOps
from burn.ndarray.gelu import BLOCK as _BLOCK
from burn.ndarray.gelu import gelu_backward_f32, gelu_f32

# Adam's blocks: eight arrays are touched per block; larger blocks cost no more time and
# smaller ones pay numpy's per-call overhead (measured on a [1024, 512] float32 weight).
_ADAM_BLOCK = 1 << 16


# Rows shorter than this take their maxima as a tree of pairwise `np.maximum` over halves:
# numpy reduces along a short contiguous last axis with a loop per row (float32 rows of 64,
# 524k elements: 0.72 ms by `max`, 0.52 ms as a tree); from 128 on the two tie.
_TREE_MAX_BELOW = 128


def _last_axis(x: np.ndarray, dim: int) -> bool:
    return dim in (-1, x.ndim - 1) and x.size > 0


def _row_max(x: np.ndarray) -> np.ndarray:
    """The max over the last axis of a non-empty `x` (kept as a size-1 dim), NaN if any is."""
    n = x.shape[-1]
    if n >= _TREE_MAX_BELOW:
        return x.max(axis=-1, keepdims=True)
    while n > 1:
        half = n // 2
        folded = np.maximum(x[..., :half], x[..., half : 2 * half])
        if n % 2:
            np.maximum(folded[..., :1], x[..., 2 * half :], out=folded[..., :1])
        x, n = folded, half
    return x


def _row_sums(x: np.ndarray) -> np.ndarray:
    """The sums over the last axis of `x` (kept as a size-1 dim): a contiguous float `x` as
    one matrix-vector product, which BLAS runs in one pass where numpy loops per row (rows of
    64: 0.18 ms against 0.04 ms for 524k float32 elements)."""
    n = x.shape[-1]
    if x.size == 0 or x.dtype not in (np.float32, np.float64) or not x.flags.c_contiguous:
        return x.sum(axis=-1, keepdims=True)
    return (x.reshape(-1, n) @ np.ones(n, x.dtype)).reshape(*x.shape[:-1], 1)


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    if _last_axis(x, dim):
        return _softmax_rows(x, np.empty_like(x))
    with np.errstate(invalid="ignore"):  # a row of -inf is NaN, as IEEE and the composition say
        out = np.subtract(x, x.max(axis=dim, keepdims=True))
        np.exp(out, out=out)
        out /= out.sum(axis=dim, keepdims=True)
    return out


def _softmax_rows(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The softmax over the last axis of `x`, written into `out` (which may be `x`)."""
    if x.size == 0:
        return out
    with np.errstate(invalid="ignore"):  # a row of -inf is NaN, as IEEE and the composition say
        np.subtract(x, _row_max(x), out=out)
        np.exp(out, out=out)
        out /= _row_sums(out)
    return out


def _softmax_backward(output: np.ndarray, grad: np.ndarray, dim: int) -> np.ndarray:
    if _last_axis(output, dim):
        return _softmax_rows_backward(output, grad, np.empty_like(grad))
    dot = np.multiply(grad, output)
    out = np.subtract(grad, dot.sum(dim, keepdims=True))
    out *= output
    return out


def _softmax_rows_backward(output: np.ndarray, grad: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`(grad - rowsum(grad * output)) * output` over the last axis, written into `out` (which
    may be `grad`)."""
    np.subtract(grad, _row_sums(grad * output), out=out)
    out *= output
    return out


def _standardize(x: np.ndarray, axes, epsilon: float):
    """(normalized x, 1 / sqrt(var + epsilon), mean, var) over `axes` (kept as size-1 dims):
    the biased variance, one numpy reduction per statistic. Layer norm standardizes over the
    last dim, batch norm over every dim but the channels'."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = np.subtract(x, mean)
    var = np.square(centered).mean(axis=axes, keepdims=True)
    rstd = var + x.dtype.type(epsilon)
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    centered *= rstd
    return centered, rstd, mean, var


def _row_means(rows: np.ndarray) -> np.ndarray:
    """The mean of each row of `rows [n, d]`, as one matrix-vector product: numpy's reduction
    along a short last axis runs a loop per row, about 5x slower (`[2048, 128]` float32)."""
    return rows @ np.full(rows.shape[1], 1.0 / rows.shape[1], rows.dtype)


def _standardize_rows(x: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """`_standardize` over the last dim for a non-empty `x`, as `(normalized [n, d], rstd [n])`
    on its rows. Layer norm's rows are short (a model width), where numpy's reductions along
    the last axis are slow: the means are matrix-vector products and the sums of squares an
    `einsum` (0.37 ms -> 0.22 ms for `[2048, 128]` float32)."""
    d = x.shape[-1]
    rows = x.reshape(-1, d)
    centered = np.subtract(rows, _row_means(rows)[:, None])
    rstd = np.einsum("ij,ij->i", centered, centered)
    rstd *= x.dtype.type(1.0 / d)
    rstd += x.dtype.type(epsilon)
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    centered *= rstd[:, None]
    return centered, rstd


def _channel_axes(x: np.ndarray) -> tuple[int, ...]:
    """Every dim of `[N, C, ...]` but the channels'."""
    return (0, *range(2, x.ndim))


def _channels(vector: np.ndarray, rank: int) -> np.ndarray:
    return vector.reshape((1, -1) + (1,) * (rank - 2))


def _adam_step(
    tensor: np.ndarray,
    grad: np.ndarray,
    moment_1: np.ndarray | None,
    moment_2: np.ndarray | None,
    time: int,
    lr: float,
    beta_1: float,
    beta_2: float,
    epsilon: float,
    l2_penalty: float,
    decay: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The contract's `float_adam_step`, op for op, into new arrays; `decay` is AdamW's
    `lr * weight_decay` (0: none), `l2_penalty` Adam's (0: none)."""
    scalar = tensor.dtype.type
    b1, one_minus_b1 = scalar(beta_1), scalar(1.0 - beta_1)
    b2, one_minus_b2 = scalar(beta_2), scalar(1.0 - beta_2)
    correction_1, correction_2 = scalar(1.0 - beta_1**time), scalar(1.0 - beta_2**time)
    eps, rate = scalar(epsilon), scalar(lr)
    first = moment_1 is None or moment_2 is None
    updated, new_1, new_2 = (np.empty(tensor.shape, tensor.dtype) for _ in range(3))
    size = tensor.size
    scratch = np.empty(min(size, _ADAM_BLOCK), tensor.dtype)
    decayed = np.empty(min(size, _ADAM_BLOCK), tensor.dtype) if l2_penalty else None
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (tensor, grad)]
    old = [] if first else [np.ascontiguousarray(a).reshape(-1) for a in (moment_1, moment_2)]
    out = [a.reshape(-1) for a in (updated, new_1, new_2)]
    for start in range(0, size, _ADAM_BLOCK):
        end = min(start + _ADAM_BLOCK, size)
        p, g = (a[start:end] for a in flat)
        up, m, v = (a[start:end] for a in out)
        t = scratch[: end - start]
        if decayed is not None:  # Adam's L2 penalty: the gradient becomes p * penalty + g
            np.multiply(p, scalar(l2_penalty), out=decayed[: end - start])
            g = np.add(decayed[: end - start], g, out=decayed[: end - start])
        if first:
            np.multiply(g, one_minus_b1, out=m)
            np.multiply(g, g, out=v)
            v *= one_minus_b2
        else:
            np.multiply(old[0][start:end], b1, out=m)
            np.multiply(g, one_minus_b1, out=t)
            m += t
            np.multiply(old[1][start:end], b2, out=v)
            np.multiply(g, g, out=t)
            t *= one_minus_b2
            v += t
        np.divide(m, correction_1, out=t)  # m_hat
        np.divide(v, correction_2, out=up)  # v_hat, then its root plus epsilon
        np.sqrt(up, out=up)
        up += eps
        t /= up  # the step's direction
        t *= rate
        if decay:  # AdamW: p - p * (lr * weight_decay), then the step
            np.multiply(p, scalar(decay), out=up)
            np.subtract(p, up, out=up)
            up -= t
        else:
            np.subtract(p, t, out=up)
    return updated, new_1, new_2


# Same-size integer types, to handle a float's bits.
_BITS = {2: np.int16, 4: np.int32, 8: np.int64}


def _relu_backward(output: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """`grad` where `output <= 0` is false, else +0: the contract's `mask_where`, bit for bit.

    `np.where` branches on every element, and a ReLU's mask has no pattern, so it mispredicts
    about half of them (2.2 ms for 590k float32 elements). Here the mask becomes an all-ones or
    all-zeros byte per element (`le - 1`), and one bitwise `and` with the gradient's bits
    keeps or clears each element: three passes, none branching (0.13 ms)."""
    with np.errstate(invalid="ignore"):  # NaN outputs compare False, as in the composition
        keep = np.less_equal(output, 0).view(np.int8)
    np.subtract(keep, np.int8(1), out=keep)  # 1 (clear) -> 0, 0 (keep) -> -1: all ones
    bits = _BITS[grad.dtype.itemsize]
    return np.bitwise_and(grad.view(bits), keep).view(grad.dtype)


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


# Bytes of attention weights computed per block of the leading dim (batch): the block's
# scores go through the softmax, the dropout and both products while they are in cache. A
# training step's activations are far past the cache, so each pass over whole arrays reads
# and writes memory: the Transformer encoder of `benches/bench_nn.py` ([32, 4, 64, 64]
# weights) took about 2% less per step in blocks.
ATTENTION_BLOCK_BYTES = 128 << 10


def _attention_blocks(shape: tuple[int, ...], itemsize: int) -> list[tuple]:
    """Indices of `[..., seq_q, seq_k]` weights in blocks of the leading dim (one block of
    everything when there is none)."""
    if len(shape) < 3:
        return [(Ellipsis,)]
    per_item = math.prod(shape[1:]) * itemsize
    step = max(1, ATTENTION_BLOCK_BYTES // max(per_item, 1))
    return [(slice(start, start + step),) for start in range(0, shape[0], step)]


def _linear_dtypes(*arrays: np.ndarray | None) -> bool:
    """Whether the given arrays share float32 or float64 (those BLAS computes as they are)."""
    dtypes = {a.dtype for a in arrays if a is not None}
    return len(dtypes) == 1 and dtypes.pop() in (np.float32, np.float64)


def _broadcast_to(a: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    return None if a is None else np.broadcast_to(a, shape)


def _in_working_precision(kernel):
    """`kernel` run in float32 for float16/bfloat16 inputs, its results cast back.

    numpy's BLAS and ufuncs have no half precision (bfloat16 matmuls even come back as
    float32), so half inputs are computed as float32 and every result gets the first input's
    dtype; float32 and float64 inputs run as they are.
    """

    @functools.wraps(kernel)
    def method(self, *args):
        dtype = args[0].dtype
        if dtype.itemsize >= 4:
            return kernel(self, *args)
        out = kernel(self, *(_widened(a) for a in args))
        if isinstance(out, tuple):
            return tuple(o.astype(dtype) for o in out)
        return out.astype(dtype)

    return method


def _widened(a):
    if isinstance(a, np.ndarray) and a.dtype.kind != "b" and a.dtype.itemsize < 4:
        return a.astype(np.float32)
    return a


class NdArrayFusedOps(OptimizerOps, ModuleOps, ActivationOps):
    """Overrides of the fusable activation, module and optimizer ops (any float dtype).

    Softmax and log-softmax are elementwise passes and reductions, which numpy runs in any
    float dtype, so they keep their input's precision throughout, as the composition did; the
    kernels with matmuls or many steps run half precision in float32."""

    def relu_backward(self, output, grad):
        if (
            grad.dtype.kind == "f"
            and grad.dtype.itemsize in _BITS
            and output.shape == grad.shape
            and grad.size >= _BLOCK // 8
        ):
            return _relu_backward(output, grad)
        return super().relu_backward(output, grad)

    @_in_working_precision
    def gelu(self, x):
        if x.dtype == np.float64:
            return super().gelu(x)  # the composition, with the float64-exact erf
        return gelu_f32(x)

    @_in_working_precision
    def gelu_backward(self, x, grad):
        if x.dtype == np.float64:
            return super().gelu_backward(x, grad)
        return gelu_backward_f32(x, grad)

    def softmax(self, x, dim):
        return _softmax(x, dim)

    def softmax_backward(self, output, grad, dim):
        return _softmax_backward(output, grad, dim)

    def log_softmax(self, x, dim):
        last = _last_axis(x, dim)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.subtract(x, _row_max(x) if last else x.max(axis=dim, keepdims=True))
            exp = np.exp(out)
            out -= np.log(_row_sums(exp) if last else exp.sum(axis=dim, keepdims=True))
        return out

    def log_softmax_backward(self, output, grad, dim):
        out = np.exp(output)
        out *= _row_sums(grad) if _last_axis(grad, dim) else grad.sum(axis=dim, keepdims=True)
        return np.subtract(grad, out, out=out)

    # A `Linear`: the product by the shared weight is `float_matmul`'s (one matmul of the
    # stacked rows); the bias is added in place to that fresh product, and its gradient is one
    # matrix-vector product, where the composition adds into a new array and sums along rows.
    def linear(self, x, weight, bias):
        if not _linear_dtypes(x, weight, bias):
            return super().linear(x, weight, bias)
        out = self.float_matmul(x, weight)  # type: ignore[attr-defined]
        if bias is not None:
            np.add(out, bias, out=out)
        return out

    def linear_x_backward(self, weight, output_grad):
        if not _linear_dtypes(output_grad, weight, None):
            return super().linear_x_backward(weight, output_grad)
        return self.float_matmul(output_grad, weight.T)  # type: ignore[attr-defined]

    def linear_weight_backward(self, x, output_grad):
        if not _linear_dtypes(x, output_grad, None):
            return super().linear_weight_backward(x, output_grad)
        rows = math.prod(x.shape[:-1])
        return x.reshape(rows, x.shape[-1]).T @ output_grad.reshape(rows, output_grad.shape[-1])

    def linear_bias_backward(self, output_grad):
        rows = output_grad.reshape(math.prod(output_grad.shape[:-1]), output_grad.shape[-1])
        if not _linear_dtypes(rows, None, None) or not rows.flags.c_contiguous or not rows.size:
            return super().linear_bias_backward(output_grad)
        return np.ones(rows.shape[0], rows.dtype) @ rows

    @_in_working_precision
    def layer_norm(self, x, gamma, beta, epsilon):
        if x.size == 0:
            out = _standardize(x, -1, epsilon)[0]
        else:
            out = _standardize_rows(x, epsilon)[0].reshape(x.shape)
        out *= gamma
        out += beta
        return out

    @_in_working_precision
    def layer_norm_backward(self, x, gamma, output_grad, epsilon):
        d = x.shape[-1]
        if x.size == 0:
            return np.zeros_like(x), np.zeros(d, x.dtype), np.zeros(d, x.dtype)
        normalized, rstd = _standardize_rows(x, epsilon)
        rows = output_grad.reshape(-1, d)
        beta_grad = rows.sum(axis=0)
        gamma_grad = np.einsum("ij,ij->j", rows, normalized)
        g = rows * gamma
        dot = np.einsum("ij,ij->i", g, normalized)
        dot *= x.dtype.type(1.0 / d)
        g -= _row_means(g)[:, None]
        normalized *= dot[:, None]
        g -= normalized
        g *= rstd[:, None]
        return g.reshape(x.shape), gamma_grad, beta_grad

    @_in_working_precision
    def batch_norm(self, x, gamma, beta, epsilon):
        out, _, mean, var = _standardize(x, _channel_axes(x), epsilon)
        out *= _channels(gamma, x.ndim)
        out += _channels(beta, x.ndim)
        return out, mean.reshape(-1), var.reshape(-1)

    @_in_working_precision
    def batch_norm_backward(self, x, gamma, output_grad, epsilon):
        axes = _channel_axes(x)
        count = x.size // x.shape[1] if x.shape[1] else 0
        normalized, rstd, _, _ = _standardize(x, axes, epsilon)
        beta_grad = output_grad.sum(axis=axes, keepdims=True)
        gamma_grad = np.multiply(output_grad, normalized).sum(axis=axes, keepdims=True)
        normalized *= gamma_grad / x.dtype.type(count)
        g = np.subtract(output_grad, beta_grad / x.dtype.type(count))
        g -= normalized
        g *= rstd * _channels(gamma, x.ndim)
        return g, gamma_grad.reshape(-1), beta_grad.reshape(-1)

    @_in_working_precision
    def attention(self, query, key, value, mask, mask_value, dropout_mask, scale):
        dtype = query.dtype.type
        shape = (*query.shape[:-1], key.shape[-2])
        weights = np.empty(shape, query.dtype)
        context = np.empty((*shape[:-1], value.shape[-1]), query.dtype)
        mask, dropout_mask = _broadcast_to(mask, shape), _broadcast_to(dropout_mask, shape)
        for b in _attention_blocks(shape, query.itemsize):
            w = weights[b]
            np.matmul(query[b] * dtype(scale), _swap(key[b]), out=w)
            if mask is not None:
                np.copyto(w, dtype(mask_value), where=mask[b])
            _softmax_rows(w, w)
            kept = w if dropout_mask is None else w * dropout_mask[b]
            np.matmul(kept, value[b], out=context[b])
        return weights, context

    @_in_working_precision
    def attention_backward(
        self,
        query,
        key,
        value,
        weights,
        mask,
        dropout_mask,
        scale,
        weights_grad,
        context_grad,
    ):
        dtype = query.dtype.type
        shape = weights.shape
        mask, dropout_mask = _broadcast_to(mask, shape), _broadcast_to(dropout_mask, shape)
        query_grad = np.empty(query.shape, query.dtype)
        key_grad = np.empty(key.shape, key.dtype)
        make = np.zeros if context_grad is None else np.empty
        value_grad = make(value.shape, value.dtype)
        for b in _attention_blocks(shape, query.itemsize):
            w = weights[b]
            if context_grad is None:
                grad = np.array(weights_grad[b], copy=True)
            else:
                kept = w if dropout_mask is None else w * dropout_mask[b]
                np.matmul(_swap(kept), context_grad[b], out=value_grad[b])
                grad = np.matmul(context_grad[b], _swap(value[b]))
                if dropout_mask is not None:
                    grad *= dropout_mask[b]
                if weights_grad is not None:
                    grad += weights_grad[b]
            _softmax_rows_backward(w, grad, grad)
            if mask is not None:
                np.copyto(grad, 0, where=mask[b])
            grad *= dtype(scale)
            np.matmul(grad, key[b], out=query_grad[b])
            np.matmul(_swap(grad), query[b], out=key_grad[b])
        return query_grad, key_grad, value_grad

    def float_adam_step(
        self,
        tensor,
        grad,
        moment_1,
        moment_2,
        time,
        lr,
        beta_1,
        beta_2,
        epsilon,
        weight_decay=0.0,
        decoupled_weight_decay=False,
    ):
        dtypes = {a.dtype for a in (tensor, grad, moment_1, moment_2) if a is not None}
        if len(dtypes) > 1 or tensor.dtype not in (np.float32, np.float64):
            return super().float_adam_step(
                tensor,
                grad,
                moment_1,
                moment_2,
                time,
                lr,
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
                decoupled_weight_decay,
            )
        l2 = 0.0 if decoupled_weight_decay else weight_decay
        decay = lr * weight_decay if decoupled_weight_decay else 0.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _adam_step(
                tensor, grad, moment_1, moment_2, time, lr, beta_1, beta_2, epsilon, l2, decay
            )
