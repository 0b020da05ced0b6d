"""Gradients compared with PyTorch's autograd, op by op (runs only where torch is installed).

Each row of `CASES` names an op and gives the same computation twice: with our tensors and
with torch's. Both sides get the same inputs and the same output weights; the gradients of the
weighted sums must agree. Constants (indices, masks) come from `k.ints` / `k.bools`, which
build them for the side being run.

The rows cover `DIFFERENTIABLE_OPS` exactly (checked below), the same list the finite-difference
tests are checked against. A row is named after its op, with `:variant` for a second row of it.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend_tests.autodiff.differentiable_ops import DIFFERENTIABLE_OPS, op_of_case
from burn.backend_tests.autodiff.gradcheck import backward_grads, grad_dtype, output_weights
from burn.backend_tests.helpers import tensor
from burn.tensor import DType, Tensor, activation, module

torch = pytest.importorskip("torch")
F = torch.nn.functional

IDX = np.array([[2, 0, 1, 1], [1, 1, 0, 2]])
IDX1 = np.array([2, 0, 2])
EMB = np.array([[0, 3, 3], [1, 0, 2]])
MASK = np.array([[True, False, True], [False, False, True]])
# Attention over [batch 2, heads 2, seq 3, d 4]: key 2 of batch 0 and key 0 of batch 1 masked.
ATTN_MASK = np.array([False, False, True, True, False, False]).reshape(2, 1, 1, 3)
ATTN_DROP = np.where(np.arange(36).reshape(2, 2, 3, 3) % 4 == 1, 0.0, 4.0 / 3.0)


class _Burn:
    def __init__(self, backend):
        self.backend = backend

    def ints(self, a):
        return tensor(self.backend, np.asarray(a))

    def bools(self, a):
        return tensor(self.backend, np.asarray(a, dtype=bool))

    def floats(self, a):
        return tensor(self.backend, np.asarray(a), grad_dtype(self.backend))


class _Torch:
    def ints(self, a):
        return torch.as_tensor(np.asarray(a), dtype=torch.long)

    def bools(self, a):
        return torch.as_tensor(np.asarray(a, dtype=bool))

    def floats(self, a):
        return torch.as_tensor(np.asarray(a), dtype=torch.float64)


def _attention_torch(k, q, key, v, masked: bool, dropped: bool):
    """(weights, context) written with torch ops, our mask value and dropout mask included."""
    scores = q @ key.transpose(-1, -2) * 0.5
    if masked:
        scores = scores.masked_fill(k.bools(ATTN_MASK), -1.0e4)
    weights = F.softmax(scores, -1)
    kept = weights * k.floats(ATTN_DROP) if dropped else weights
    return weights, kept @ v


def _cat(k, a, b):
    return Tensor.cat([a, b], 1) if not isinstance(a, torch.Tensor) else torch.cat([a, b], 1)


def _slice_assign_torch(a, b):
    c = a.clone()
    c[0:2, 1:3] = b
    return c


def _conv_opts(**kw):
    return module.ConvOptions(**kw)


def _tconv_opts(**kw):
    return module.ConvTransposeOptions(**kw)


# name -> (ours, torch's, input shapes, domain). Both functions take (k, *inputs).
CASES = {
    # -- unary
    "neg": (lambda k, x: -x, lambda k, x: -x, [(2, 3)], "normal"),
    "abs": (lambda k, x: x.abs(), lambda k, x: x.abs(), [(2, 3)], "nonzero"),
    "exp": (lambda k, x: x.exp(), lambda k, x: x.exp(), [(2, 3)], "normal"),
    "log": (lambda k, x: x.log(), lambda k, x: x.log(), [(2, 3)], "positive"),
    "log1p": (lambda k, x: x.log1p(), lambda k, x: x.log1p(), [(2, 3)], "positive"),
    "sqrt": (lambda k, x: x.sqrt(), lambda k, x: x.sqrt(), [(2, 3)], "positive"),
    "sin": (lambda k, x: x.sin(), lambda k, x: x.sin(), [(2, 3)], "normal"),
    "cos": (lambda k, x: x.cos(), lambda k, x: x.cos(), [(2, 3)], "normal"),
    "tan": (lambda k, x: x.tan(), lambda k, x: x.tan(), [(2, 3)], "unit"),
    "tanh": (lambda k, x: x.tanh(), lambda k, x: x.tanh(), [(2, 3)], "normal"),
    "erf": (lambda k, x: x.erf(), lambda k, x: torch.erf(x), [(2, 3)], "normal"),
    "recip": (lambda k, x: x.recip(), lambda k, x: x.reciprocal(), [(2, 3)], "nonzero"),
    "floor": (lambda k, x: x.floor() * x, lambda k, x: x.floor() * x, [(2, 3)], "normal"),
    "ceil": (lambda k, x: x.ceil() * x, lambda k, x: x.ceil() * x, [(2, 3)], "normal"),
    "round": (lambda k, x: x.round() * x, lambda k, x: x.round() * x, [(2, 3)], "normal"),
    "sign": (lambda k, x: x.sign() * x, lambda k, x: x.sign() * x, [(2, 3)], "nonzero"),
    # -- binary, with broadcasting
    "add": (lambda k, a, b: a + b, lambda k, a, b: a + b, [(3, 1), (1, 4)], "normal"),
    "sub": (lambda k, a, b: a - b, lambda k, a, b: a - b, [(2, 3), (1, 3)], "normal"),
    "mul": (lambda k, a, b: a * b, lambda k, a, b: a * b, [(3, 1), (1, 4)], "normal"),
    "div": (lambda k, a, b: a / b, lambda k, a, b: a / b, [(2, 3), (2, 1)], "nonzero"),
    "powf": (lambda k, a, b: a.powf(b), lambda k, a, b: a.pow(b), [(2, 3), (2, 3)], "positive"),
    "remainder": (
        lambda k, a, b: a.remainder(b),
        lambda k, a, b: torch.remainder(a, b),
        [(2, 3), (2, 3)],
        "positive",
    ),
    "max_pair": (
        lambda k, a, b: a.max_pair(b),
        lambda k, a, b: torch.maximum(a, b),
        [(2, 3), (2, 3)],
        "normal",
    ),
    "min_pair": (
        lambda k, a, b: a.min_pair(b),
        lambda k, a, b: torch.minimum(a, b),
        [(3, 1), (1, 4)],
        "normal",
    ),
    "atan2": (
        lambda k, a, b: a.atan2(b),
        lambda k, a, b: torch.atan2(a, b),
        [(2, 3), (2, 3)],
        "positive",
    ),
    # -- scalar forms
    "add_scalar": (lambda k, x: x + 2.0, lambda k, x: x + 2.0, [(2, 3)], "normal"),
    "rsub_scalar": (lambda k, x: 2.0 - x, lambda k, x: 2.0 - x, [(2, 3)], "normal"),
    "mul_scalar": (lambda k, x: x * 3.0, lambda k, x: x * 3.0, [(2, 3)], "normal"),
    "div_scalar": (lambda k, x: x / 4.0, lambda k, x: x / 4.0, [(2, 3)], "normal"),
    "rdiv_scalar": (lambda k, x: 2.0 / x, lambda k, x: 2.0 / x, [(2, 3)], "nonzero"),
    "powf_scalar": (lambda k, x: x**2.5, lambda k, x: x**2.5, [(2, 3)], "positive"),
    "rpow_scalar": (lambda k, x: 2.0**x, lambda k, x: 2.0**x, [(2, 3)], "normal"),
    "powi_scalar": (lambda k, x: x.powi_scalar(3), lambda k, x: x**3, [(2, 3)], "normal"),
    "remainder_scalar": (lambda k, x: x % 0.7, lambda k, x: x % 0.7, [(2, 3)], "normal"),
    # -- reductions
    "sum": (lambda k, x: x.sum(), lambda k, x: x.sum().reshape(1), [(2, 3)], "normal"),
    "sum_dim": (lambda k, x: x.sum_dim(1), lambda k, x: x.sum(1, True), [(2, 3)], "normal"),
    "mean": (lambda k, x: x.mean(), lambda k, x: x.mean().reshape(1), [(2, 3)], "normal"),
    "mean_dim": (lambda k, x: x.mean_dim(0), lambda k, x: x.mean(0, True), [(2, 3)], "normal"),
    "prod": (lambda k, x: x.prod(), lambda k, x: x.prod().reshape(1), [(2, 3)], "nonzero"),
    "prod_dim": (lambda k, x: x.prod_dim(1), lambda k, x: x.prod(1, True), [(2, 3)], "nonzero"),
    "prod_dim:zeros": (
        lambda k, x: x.prod_dim(1),
        lambda k, x: x.prod(1, True),
        [(4, 3)],
        "zeros",
    ),
    "max": (lambda k, x: x.max(), lambda k, x: x.max().reshape(1), [(2, 3)], "distinct"),
    "min": (lambda k, x: x.min(), lambda k, x: x.min().reshape(1), [(2, 3)], "distinct"),
    "max_dim": (
        lambda k, x: x.max_dim(1),
        lambda k, x: x.max(1, True).values,
        [(2, 3)],
        "distinct",
    ),
    "min_dim": (
        lambda k, x: x.min_dim(0),
        lambda k, x: x.min(0, True).values,
        [(2, 3)],
        "distinct",
    ),
    "max_dim_with_indices": (
        lambda k, x: x.max_dim_with_indices(1)[0],
        lambda k, x: x.max(1, True).values,
        [(3, 4)],
        "distinct",
    ),
    "var": (lambda k, x: x.var(1), lambda k, x: x.var(1, keepdim=True), [(2, 4)], "normal"),
    "var_bias": (
        lambda k, x: x.var_bias(1),
        lambda k, x: x.var(1, unbiased=False, keepdim=True),
        [(2, 4)],
        "normal",
    ),
    "var_mean": (
        lambda k, x: x.var_mean(0),
        lambda k, x: torch.var_mean(x, 0, keepdim=True),
        [(3, 2)],
        "normal",
    ),
    # -- layout
    "reshape": (
        lambda k, x: x.reshape([3, 2]) * x.reshape([3, 2]).exp(),
        lambda k, x: x.reshape(3, 2) * x.reshape(3, 2).exp(),
        [(2, 3)],
        "normal",
    ),
    "permute": (
        lambda k, x: x.permute([2, 0, 1]),
        lambda k, x: x.permute(2, 0, 1),
        [(2, 3, 2)],
        "normal",
    ),
    "swap_dims": (
        lambda k, x: x.swap_dims(0, 2).sin(),
        lambda k, x: x.transpose(0, 2).sin(),
        [(2, 3, 2)],
        "normal",
    ),
    "transpose": (
        lambda k, x: x.transpose().matmul(x),
        lambda k, x: x.T.matmul(x),
        [(3, 2)],
        "normal",
    ),
    "expand": (
        lambda k, x: x.expand([2, 3, 4]),
        lambda k, x: x.expand(2, 3, 4),
        [(3, 1)],
        "normal",
    ),
    "flip": (lambda k, x: x.flip([0, 1]), lambda k, x: x.flip(0, 1), [(2, 3)], "normal"),
    "slice": (
        lambda k, x: x.slice([(1, 3), slice(0, 4, 2)]),
        lambda k, x: x[1:3, 0:4:2],
        [(3, 4)],
        "normal",
    ),
    "slice_assign": (
        lambda k, a, b: a.slice_assign([(0, 2), (1, 3)], b).exp(),
        lambda k, a, b: _slice_assign_torch(a, b).exp(),
        [(3, 3), (2, 2)],
        "normal",
    ),
    "narrow": (lambda k, x: x.narrow(1, 1, 2), lambda k, x: x.narrow(1, 1, 2), [(2, 4)], "normal"),
    "chunk": (lambda k, x: x.chunk(3, 1), lambda k, x: x.chunk(3, 1), [(2, 5)], "normal"),
    "cat": (_cat, _cat, [(2, 1), (2, 3)], "normal"),
    "stack": (
        lambda k, a, b: Tensor.stack([a, b * a], 0),
        lambda k, a, b: torch.stack([a, b * a], 0),
        [(2, 3), (2, 3)],
        "normal",
    ),
    "repeat_dim": (
        lambda k, x: x.repeat_dim(1, 3),
        lambda k, x: x.repeat(1, 3),
        [(2, 2)],
        "normal",
    ),
    "pad": (
        lambda k, x: x.pad((1, 2, 0, 1), 0.5),
        lambda k, x: F.pad(x, (1, 2, 0, 1), value=0.5),
        [(2, 3)],
        "normal",
    ),
    "squeeze": (lambda k, x: x.squeeze(1), lambda k, x: x.squeeze(1), [(3, 1, 2)], "normal"),
    "unsqueeze_dim": (
        lambda k, x: x.unsqueeze_dim(1),
        lambda k, x: x.unsqueeze(1),
        [(3, 2)],
        "normal",
    ),
    "getitem": (lambda k, x: x[1, :, ::2], lambda k, x: x[1, :, ::2], [(2, 3, 4)], "normal"),
    # -- indexing
    "gather": (
        lambda k, x: x.gather(1, k.ints(IDX)),
        lambda k, x: torch.gather(x, 1, k.ints(IDX)),
        [(2, 3)],
        "normal",
    ),
    "scatter": (
        lambda k, a, v: a.scatter(1, k.ints(IDX), v),
        lambda k, a, v: a.scatter_add(1, k.ints(IDX), v),
        [(2, 3), (2, 4)],
        "normal",
    ),
    "select": (
        lambda k, x: x.select(0, k.ints(IDX1)),
        lambda k, x: x.index_select(0, k.ints(IDX1)),
        [(3, 2)],
        "normal",
    ),
    "select_assign": (
        lambda k, a, v: a.select_assign(0, k.ints(IDX1), v),
        lambda k, a, v: a.index_add(0, k.ints(IDX1), v),
        [(3, 2), (3, 2)],
        "normal",
    ),
    "mask_where": (
        lambda k, a, b: a.mask_where(k.bools(MASK), b),
        lambda k, a, b: torch.where(k.bools(MASK), b, a),
        [(2, 3), (1, 3)],
        "normal",
    ),
    "mask_fill": (
        lambda k, x: x.mask_fill(k.bools(MASK), 2.0),
        lambda k, x: x.masked_fill(k.bools(MASK), 2.0),
        [(2, 3)],
        "normal",
    ),
    # -- matmul, clamp, sort
    "matmul": (lambda k, a, b: a @ b, lambda k, a, b: a @ b, [(2, 3), (3, 4)], "normal"),
    "matmul:batched_broadcast": (
        lambda k, a, b: a.matmul(b),
        lambda k, a, b: a.matmul(b),
        [(2, 1, 2, 3), (1, 3, 3, 2)],
        "normal",
    ),
    "clamp": (
        lambda k, x: x.clamp(-0.5, 0.5),
        lambda k, x: x.clamp(-0.5, 0.5),
        [(3, 4)],
        "normal",
    ),
    "clamp_min": (lambda k, x: x.clamp_min(0.1), lambda k, x: x.clamp_min(0.1), [(3, 4)], "normal"),
    "clamp_max": (lambda k, x: x.clamp_max(0.1), lambda k, x: x.clamp_max(0.1), [(3, 4)], "normal"),
    "sort": (lambda k, x: x.sort(1), lambda k, x: x.sort(1).values, [(2, 5)], "distinct"),
    "sort_descending": (
        lambda k, x: x.sort_descending(0),
        lambda k, x: x.sort(0, descending=True).values,
        [(4, 2)],
        "distinct",
    ),
    "topk": (lambda k, x: x.topk(2, 1), lambda k, x: x.topk(2, 1).values, [(2, 5)], "distinct"),
    "cast": (
        lambda k, x: x.cast(DType.F32).cast(x.dtype) * x,
        lambda k, x: x.float().double() * x,
        [(2, 3)],
        "normal",
    ),
    # -- activations
    "activation.relu": (
        lambda k, x: activation.relu(x),
        lambda k, x: F.relu(x),
        [(3, 4)],
        "nonzero",
    ),
    "activation.gelu": (
        lambda k, x: activation.gelu(x),
        lambda k, x: F.gelu(x),
        [(3, 4)],
        "normal",
    ),
    "activation.sigmoid": (
        lambda k, x: activation.sigmoid(x),
        lambda k, x: torch.sigmoid(x),
        [(3, 4)],
        "normal",
    ),
    "activation.silu": (
        lambda k, x: activation.silu(x),
        lambda k, x: F.silu(x),
        [(3, 4)],
        "normal",
    ),
    "activation.softmax": (
        lambda k, x: activation.softmax(x, 1),
        lambda k, x: F.softmax(x, 1),
        [(3, 4)],
        "normal",
    ),
    "activation.log_softmax": (
        lambda k, x: activation.log_softmax(x, 0),
        lambda k, x: F.log_softmax(x, 0),
        [(3, 4)],
        "normal",
    ),
    "activation.quiet_softmax": (
        lambda k, x: activation.quiet_softmax(x, 1),
        lambda k, x: x.exp() / (1.0 + x.exp().sum(1, keepdim=True)),
        [(3, 4)],
        "normal",
    ),
    "activation.softplus": (
        lambda k, x: activation.softplus(x),
        lambda k, x: F.softplus(x),
        [(3, 4)],
        "normal",
    ),
    "activation.softplus:beta": (
        lambda k, x: activation.softplus(x, 2.0),
        lambda k, x: F.softplus(x, beta=2.0),
        [(3, 4)],
        "normal",
    ),
    "activation.mish": (
        lambda k, x: activation.mish(x),
        lambda k, x: F.mish(x),
        [(3, 4)],
        "normal",
    ),
    "activation.tanh": (
        lambda k, x: activation.tanh(x),
        lambda k, x: torch.tanh(x),
        [(3, 4)],
        "normal",
    ),
    "activation.leaky_relu": (
        lambda k, x: activation.leaky_relu(x, 0.1),
        lambda k, x: F.leaky_relu(x, 0.1),
        [(3, 4)],
        "nonzero",
    ),
    "activation.log_sigmoid": (
        lambda k, x: activation.log_sigmoid(x),
        lambda k, x: F.logsigmoid(x),
        [(3, 4)],
        "normal",
    ),
    "activation.hard_sigmoid": (
        lambda k, x: activation.hard_sigmoid(x, 0.2, 0.5),
        lambda k, x: (0.2 * x + 0.5).clamp(0.0, 1.0),
        [(3, 4)],
        "wide",
    ),
    "activation.prelu": (
        lambda k, x, a: activation.prelu(x, a),
        lambda k, x, a: F.prelu(x, a),
        [(2, 3, 2), (3,)],
        "nonzero",
    ),
    # -- module ops
    "module.conv1d": (
        lambda k, x, w, b: module.conv1d(x, w, b, _conv_opts(stride=2, padding=1, dilation=1)),
        lambda k, x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
        [(2, 2, 7), (3, 2, 3), (3,)],
        "normal",
    ),
    "module.conv2d": (
        lambda k, x, w, b: module.conv2d(
            x, w, b, _conv_opts(stride=(1, 2), padding=1, dilation=(2, 1), groups=2)
        ),
        lambda k, x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1), groups=2),
        [(1, 4, 5, 5), (2, 2, 2, 3), (2,)],
        "normal",
    ),
    "module.conv3d": (
        lambda k, x, w, b: module.conv3d(x, w, b, _conv_opts(padding=1)),
        lambda k, x, w, b: F.conv3d(x, w, b, padding=1),
        [(1, 2, 3, 3, 2), (2, 2, 2, 2, 2), (2,)],
        "normal",
    ),
    "module.conv_transpose1d": (
        lambda k, x, w, b: module.conv_transpose1d(
            x, w, b, _tconv_opts(stride=2, padding=1, padding_out=1)
        ),
        lambda k, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
        [(2, 2, 4), (2, 3, 3), (3,)],
        "normal",
    ),
    "module.conv_transpose2d": (
        lambda k, x, w, b: module.conv_transpose2d(
            x, w, b, _tconv_opts(stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2)
        ),
        lambda k, x, w, b: F.conv_transpose2d(
            x, w, b, stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2
        ),
        [(1, 4, 3, 3), (4, 1, 2, 2), (2,)],
        "normal",
    ),
    "module.conv_transpose3d": (
        lambda k, x, w, b: module.conv_transpose3d(x, w, b, _tconv_opts(stride=2)),
        lambda k, x, w, b: F.conv_transpose3d(x, w, b, stride=2),
        [(1, 2, 2, 2, 2), (2, 1, 2, 2, 2), (1,)],
        "normal",
    ),
    "module.avg_pool1d": (
        lambda k, x: module.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
        lambda k, x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
        [(2, 2, 7)],
        "normal",
    ),
    "module.avg_pool2d": (
        lambda k, x: module.avg_pool2d(x, (3, 2), (2, 1), (1, 1)),
        lambda k, x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1)),
        [(1, 2, 5, 4)],
        "normal",
    ),
    "module.max_pool1d": (
        lambda k, x: module.max_pool1d(x, 3, 2, 1),
        lambda k, x: F.max_pool1d(x, 3, 2, 1),
        [(2, 2, 7)],
        "distinct",
    ),
    "module.max_pool2d": (
        lambda k, x: module.max_pool2d(x, (2, 3), (1, 2), (1, 1), (2, 1)),
        lambda k, x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1), (2, 1)),
        [(1, 2, 5, 6)],
        "distinct",
    ),
    "module.adaptive_avg_pool1d": (
        lambda k, x: module.adaptive_avg_pool1d(x, 3),
        lambda k, x: F.adaptive_avg_pool1d(x, 3),
        [(2, 2, 7)],
        "normal",
    ),
    "module.adaptive_avg_pool2d": (
        lambda k, x: module.adaptive_avg_pool2d(x, (2, 3)),
        lambda k, x: F.adaptive_avg_pool2d(x, (2, 3)),
        [(1, 2, 5, 7)],
        "normal",
    ),
    "module.interpolate_nearest": (
        lambda k, x: module.interpolate(x, (5, 7), "nearest"),
        lambda k, x: F.interpolate(x, (5, 7), mode="nearest"),
        [(1, 2, 3, 4)],
        "normal",
    ),
    "module.interpolate_bilinear": (
        lambda k, x: module.interpolate(x, (5, 7), "bilinear"),
        lambda k, x: F.interpolate(x, (5, 7), mode="bilinear", align_corners=True),
        [(1, 2, 3, 4)],
        "normal",
    ),
    "module.interpolate_bicubic": (
        lambda k, x: module.interpolate(x, (5, 7), "bicubic"),
        lambda k, x: F.interpolate(x, (5, 7), mode="bicubic", align_corners=True),
        [(1, 2, 3, 4)],
        "normal",
    ),
    "module.layer_norm": (
        lambda k, x, g, b: module.layer_norm(x, g, b, 1e-5),
        lambda k, x, g, b: F.layer_norm(x, (4,), g, b, 1e-5),
        [(2, 3, 4), (4,), (4,)],
        "normal",
    ),
    "module.batch_norm": (
        lambda k, x, g, b: module.batch_norm(x, g, b, 1e-5)[0],
        lambda k, x, g, b: F.batch_norm(x, None, None, g, b, training=True, eps=1e-5),
        [(3, 2, 4), (2,), (2,)],
        "normal",
    ),
    "module.attention": (
        lambda k, q, key, v: module.attention(q, key, v, scale=0.5),
        lambda k, q, key, v: _attention_torch(k, q, key, v, False, False),
        [(2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 4)],
        "normal",
    ),
    "module.attention:mask_dropout": (
        lambda k, q, key, v: module.attention(
            q,
            key,
            v,
            k.bools(ATTN_MASK),
            scale=0.5,
            mask_value=-1.0e4,
            dropout_mask=k.floats(ATTN_DROP),
        ),
        lambda k, q, key, v: _attention_torch(k, q, key, v, True, True),
        [(2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 4)],
        "normal",
    ),
    "module.attention:sdpa": (
        lambda k, q, key, v: module.attention(q, key, v, k.bools(ATTN_MASK))[1],
        lambda k, q, key, v: F.scaled_dot_product_attention(
            q, key, v, attn_mask=~k.bools(ATTN_MASK)
        ),
        [(2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 5)],
        "normal",
    ),
    "module.embedding": (
        lambda k, w: module.embedding(w, k.ints(EMB)),
        lambda k, w: F.embedding(k.ints(EMB), w),
        [(4, 3)],
        "normal",
    ),
    "module.unfold4d": (
        lambda k, x: module.unfold4d(x, (2, 3), module.UnfoldOptions(stride=(1, 2), padding=1)),
        lambda k, x: F.unfold(x, (2, 3), stride=(1, 2), padding=1),
        [(1, 2, 4, 5)],
        "normal",
    ),
    "module.lstm": (
        lambda k, x, w_ih, w_hh, b, h0, c0: module.lstm(x, w_ih, w_hh, b, h0, c0),
        lambda k, x, w_ih, w_hh, b, h0, c0: _torch_lstm(x, w_ih, w_hh, b, h0, c0),
        [(2, 3, 3), (3, 8), (2, 8), (8,), (2, 2), (2, 2)],
        "normal",
    ),
    "module.gru": (
        lambda k, x, w_ih, w_hh, b_ih, b_hh, h0: module.gru(x, w_ih, w_hh, b_ih, b_hh, h0),
        lambda k, x, w_ih, w_hh, b_ih, b_hh, h0: _torch_gru(x, w_ih, w_hh, b_ih, b_hh, h0),
        [(2, 3, 3), (3, 6), (2, 6), (6,), (6,), (2, 2)],
        "normal",
    ),
}


def _torch_gru(x, w_ih, w_hh, b_ih, b_hh, h0):
    """torch's GRU with our layouts (weights transposed): `(output, h_n)`."""
    params = [w_ih.t(), w_hh.t(), b_ih, b_hh]
    out, h = torch.gru(x, h0[None], params, True, 1, 0.0, True, False, True)
    return out, h[0]


def _torch_lstm(x, w_ih, w_hh, b, h0, c0):
    """torch's LSTM with our layouts: weights transposed, one bias, `(output, h_n, c_n)`."""
    params = [w_ih.t(), w_hh.t(), b, torch.zeros_like(b)]
    out, h, c = torch.lstm(x, (h0[None], c0[None]), params, True, 1, 0.0, True, False, True)
    return out, h[0], c[0]


def _slice_fill_torch(x):
    c = x.clone()
    c[0:1] = 2.0
    return c


POW_EXP = np.array([[1, 2, 3], [0, 2, 1]])

# The rest of `DIFFERENTIABLE_OPS`, in the same form.
CASES |= {
    "square": (lambda k, x: x.square(), lambda k, x: torch.square(x), [(2, 3)], "normal"),
    "powi": (
        lambda k, x: x.powi(k.ints(POW_EXP)),
        lambda k, x: x.pow(k.ints(POW_EXP).to(x.dtype)),
        [(2, 3)],
        "normal",
    ),
    "radd_scalar": (lambda k, x: 5.0 + x, lambda k, x: 5.0 + x, [(2, 3)], "normal"),
    "sub_scalar": (lambda k, x: x.sub_scalar(0.5), lambda k, x: x - 0.5, [(2, 3)], "normal"),
    "rmul_scalar": (lambda k, x: -0.5 * x, lambda k, x: -0.5 * x, [(2, 3)], "normal"),
    "sum_dims": (
        lambda k, x: x.sum_dims([0, 2]),
        lambda k, x: x.sum((0, 2), keepdim=True),
        [(2, 3, 2)],
        "normal",
    ),
    "mean_dims": (
        lambda k, x: x.mean_dims([1, 2]),
        lambda k, x: x.mean((1, 2), keepdim=True),
        [(2, 3, 2)],
        "normal",
    ),
    "max_abs": (
        lambda k, x: x.max_abs(),
        lambda k, x: x.abs().max().reshape(1),
        [(2, 3)],
        "distinct",
    ),
    "max_dims": (
        lambda k, x: x.max_dims([0, 2]),
        lambda k, x: x.amax((0, 2), keepdim=True),
        [(2, 3, 2)],
        "distinct",
    ),
    "min_dims": (
        lambda k, x: x.min_dims([1]),
        lambda k, x: x.amin(1, keepdim=True),
        [(2, 3, 2)],
        "distinct",
    ),
    "min_dim_with_indices": (
        lambda k, x: x.min_dim_with_indices(0),
        lambda k, x: x.min(0, True).values,
        [(3, 4)],
        "distinct",
    ),
    "var_mean_bias": (
        lambda k, x: x.var_mean_bias(0),
        lambda k, x: torch.var_mean(x, 0, correction=0, keepdim=True),
        [(3, 2)],
        "normal",
    ),
    "flatten": (lambda k, x: x.flatten(1, 2), lambda k, x: x.flatten(1, 2), [(2, 3, 2)], "normal"),
    "squeeze_dims": (
        lambda k, x: x.squeeze_dims([0, 2]),
        lambda k, x: x.squeeze(2).squeeze(0),
        [(1, 3, 1)],
        "normal",
    ),
    "unsqueeze": (lambda k, x: x.unsqueeze(), lambda k, x: x.unsqueeze(0), [(2, 3)], "normal"),
    "unsqueeze_dims": (
        lambda k, x: x.unsqueeze_dims([0, 3]),
        lambda k, x: x.unsqueeze(0).unsqueeze(3),
        [(2, 3)],
        "normal",
    ),
    "t": (lambda k, x: x.t().exp(), lambda k, x: x.t().exp(), [(3, 2)], "normal"),
    "movedim": (
        lambda k, x: x.movedim(0, 2),
        lambda k, x: x.movedim(0, 2),
        [(2, 3, 4)],
        "normal",
    ),
    "slice_fill": (
        lambda k, x: x.slice_fill([(0, 1)], 2.0) * x,
        lambda k, x: _slice_fill_torch(x) * x,
        [(3, 2)],
        "normal",
    ),
    "split": (lambda k, x: x.split(2, 0), lambda k, x: x.split(2, 0), [(5, 2)], "normal"),
    "split_with_sizes": (
        lambda k, x: x.split_with_sizes([1, 3], 1),
        lambda k, x: x.split([1, 3], 1),
        [(2, 4)],
        "normal",
    ),
    "iter_dim": (
        lambda k, x: [t * (i + 1.0) for i, t in enumerate(x.iter_dim(0))],
        lambda k, x: [t * (i + 1.0) for i, t in enumerate(x.unbind(0))],
        [(3, 2)],
        "normal",
    ),
    "repeat": (
        lambda k, x: x.repeat([2, 1, 3]),
        lambda k, x: x.repeat(2, 1, 3),
        [(2, 2, 1)],
        "normal",
    ),
    "tril": (lambda k, x: x.tril(), lambda k, x: x.tril(), [(3, 3)], "normal"),
    "triu": (lambda k, x: x.triu(1), lambda k, x: x.triu(1), [(3, 4)], "normal"),
    "dot": (
        lambda k, a, b: a.dot(b),
        lambda k, a, b: torch.dot(a, b).reshape(1),
        [(4,), (4,)],
        "normal",
    ),
    "sort_with_indices": (
        lambda k, x: x.sort_with_indices(1),
        lambda k, x: x.sort(1).values,
        [(2, 4)],
        "distinct",
    ),
    "sort_descending_with_indices": (
        lambda k, x: x.sort_descending_with_indices(1),
        lambda k, x: x.sort(1, descending=True).values,
        [(2, 4)],
        "distinct",
    ),
    "topk_with_indices": (
        lambda k, x: x.topk_with_indices(1, 0),
        lambda k, x: x.topk(1, 0).values,
        [(3, 2)],
        "distinct",
    ),
    "module.max_pool1d_with_indices": (
        lambda k, x: module.max_pool1d_with_indices(x, 3, 2, 1),
        lambda k, x: F.max_pool1d(x, 3, 2, 1),
        [(2, 2, 7)],
        "distinct",
    ),
    "module.max_pool2d_with_indices": (
        lambda k, x: module.max_pool2d_with_indices(x, (2, 3), (1, 2), (1, 1)),
        lambda k, x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1)),
        [(1, 2, 5, 6)],
        "distinct",
    ),
}


def _input(rng, shape, domain):
    if domain == "positive":
        return rng.uniform(0.5, 2.0, size=shape)
    if domain == "nonzero":
        return rng.uniform(0.3, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, size=shape)
    if domain == "wide":
        return rng.uniform(-4.0, 4.0, size=shape)
    if domain == "zeros":  # one zero in row 0, two in row 1
        x = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        x[0, 0] = x[1, 0] = x[1, 2] = 0.0
        return x
    if domain == "distinct":
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape)
    return rng.normal(size=shape)


def _torch_grads(fn, arrays, seed):
    xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = fn(_Torch(), *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    weights = output_weights([tuple(o.shape) for o in outs], seed)
    loss = sum((o * torch.as_tensor(w)).sum() for o, w in zip(outs, weights, strict=True))
    loss.backward()
    return [
        np.zeros(a.shape) if x.grad is None else x.grad.numpy()
        for x, a in zip(xs, arrays, strict=True)
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_torch(ad_backend, name):
    ours, theirs, shapes, domain = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    arrays = [_input(rng, s, domain) for s in shapes]
    k = _Burn(ad_backend)
    got = backward_grads(ad_backend, lambda *xs: ours(k, *xs), *arrays)
    want = _torch_grads(theirs, arrays, seed=7)
    tol = 1e-7 if grad_dtype(ad_backend) is DType.F64 else 1e-4
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g is not None, f"{name}: input {i} got no gradient"
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"{name}: input {i}")


def test_every_differentiable_op_has_a_torch_row():
    """The table covers `DIFFERENTIABLE_OPS` exactly: no op left out, no row for an unknown op."""
    covered = {op_of_case(name) for name in CASES}
    assert not set(DIFFERENTIABLE_OPS) - covered, "ops without a torch row"
    assert not covered - set(DIFFERENTIABLE_OPS), "rows for ops missing from DIFFERENTIABLE_OPS"
