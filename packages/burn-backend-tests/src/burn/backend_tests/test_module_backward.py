"""The module ops' backward ops (used by autodiff as their rules).

Linear maps are checked with the adjoint identity <A x, g> = <x, A^T g> in float64, with
A x computed by the independent references; max pooling and embedding against scatters of the
reference indices; a few cases also against central finite differences.
"""

import math

import numpy as np
import pytest
from burn.backend.ops.module import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateMode,
    InterpolateOptions,
)
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import reference_dtype, tensor, values
from burn.tensor import DType
from burn.tensor.module import UnfoldOptions, unfold4d


def _prims(backend, *arrays):
    dtype = reference_dtype(backend)
    ts = [tensor(backend, a, dtype) for a in arrays]
    return ts, [t.primitive for t in ts]


def _np(ts, prim):
    return values(ts[0]._new(prim)).astype(np.float64)


def _tol(backend):
    return 1e-9 if reference_dtype(backend) is DType.F64 else 2e-4


def _adjoint(backend, forward_ref, x, g, grad):
    """<forward_ref(x), g> == <x, grad>, relative to the sizes involved."""
    assert grad.shape == x.shape, f"gradient shape {grad.shape} != input shape {x.shape}"
    lhs = float(np.sum(forward_ref(x) * g))
    rhs = float(np.sum(x * grad))
    scale = math.sqrt(float(np.sum(forward_ref(x) ** 2) * np.sum(g**2))) + 1.0
    assert abs(lhs - rhs) <= _tol(backend) * scale, f"<Ax, g> = {lhs} but <x, A^T g> = {rhs}"


CONV_CASES = [
    # (x shape, w shape, options)
    ((2, 3, 9), (4, 3, 3), dict(stride=2, padding=1, dilation=1, groups=1)),
    ((2, 4, 10), (6, 2, 2), dict(stride=3, padding=2, dilation=2, groups=2)),
    ((2, 3, 6, 5), (4, 3, 3, 3), dict(stride=1, padding=1, dilation=1, groups=1)),
    ((1, 4, 7, 8), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ((2, 3, 5, 5), (3, 1, 2, 2), dict(stride=2, padding=0, dilation=1, groups=3)),
    (
        (1, 2, 4, 5, 4),
        (2, 2, 2, 3, 2),
        dict(stride=(1, 2, 1), padding=(1, 0, 1), dilation=1, groups=1),
    ),
]


def _conv_name(x_shape):
    return f"conv{len(x_shape) - 2}d"


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_CASES)
def test_conv_x_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    nd = len(x_shape) - 2
    y = ref.conv(x, w, **opts)
    g = rng.standard_normal(y.shape)
    ts, (xp, wp, gp) = _prims(backend, x, w, g)
    op = getattr(backend, _conv_name(x_shape) + "_x_backward")
    grad = _np(ts, op(xp, wp, gp, ConvOptions(**opts).for_dims(nd)))
    _adjoint(backend, lambda v: ref.conv(v, w, **opts), x, g, grad)


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_CASES)
def test_conv_weight_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    nd = len(x_shape) - 2
    g = rng.standard_normal(ref.conv(x, w, **opts).shape)
    ts, (xp, wp, gp) = _prims(backend, x, w, g)
    op = getattr(backend, _conv_name(x_shape) + "_weight_backward")
    grad = _np(ts, op(xp, wp, gp, ConvOptions(**opts).for_dims(nd)))
    _adjoint(backend, lambda v: ref.conv(x, v, **opts), w, g, grad)


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_CASES)
def test_conv_bias_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0])
    g = rng.standard_normal(ref.conv(x, w, **opts).shape)
    ts, (xp, bp, gp) = _prims(backend, x, b, g)
    grad = _np(ts, getattr(backend, _conv_name(x_shape) + "_bias_backward")(xp, bp, gp))
    np.testing.assert_allclose(
        grad, g.sum(axis=(0, *range(2, g.ndim))), rtol=_tol(backend), atol=_tol(backend)
    )


CONV_T_CASES = [
    ((2, 3, 5), (3, 2, 3), dict(stride=2, padding=1, padding_out=1, dilation=1, groups=1)),
    ((1, 4, 4), (4, 1, 3), dict(stride=1, padding=2, padding_out=1, dilation=2, groups=2)),
    (
        (2, 2, 3, 4),
        (2, 3, 3, 2),
        dict(stride=(2, 1), padding=(1, 0), padding_out=(1, 0), dilation=1, groups=1),
    ),
    (
        (1, 4, 3, 3),
        (4, 2, 2, 2),
        dict(stride=2, padding=0, padding_out=0, dilation=(1, 2), groups=2),
    ),
    (
        (1, 2, 2, 3, 2),
        (2, 2, 2, 2, 2),
        dict(stride=2, padding=(0, 1, 0), padding_out=(1, 0, 1), dilation=1, groups=1),
    ),
]


def _conv_t_name(x_shape):
    return f"conv_transpose{len(x_shape) - 2}d"


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_T_CASES)
def test_conv_transpose_x_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    nd = len(x_shape) - 2
    g = rng.standard_normal(ref.conv_transpose(x, w, **opts).shape)
    ts, (wp, gp) = _prims(backend, w, g)
    op = getattr(backend, _conv_t_name(x_shape) + "_x_backward")
    grad = _np(ts, op(wp, gp, ConvTransposeOptions(**opts).for_dims(nd)))
    _adjoint(backend, lambda v: ref.conv_transpose(v, w, **opts), x, g, grad)


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_T_CASES)
def test_conv_transpose_weight_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    nd = len(x_shape) - 2
    g = rng.standard_normal(ref.conv_transpose(x, w, **opts).shape)
    ts, (xp, wp, gp) = _prims(backend, x, w, g)
    op = getattr(backend, _conv_t_name(x_shape) + "_weight_backward")
    grad = _np(ts, op(xp, wp, gp, ConvTransposeOptions(**opts).for_dims(nd)))
    _adjoint(backend, lambda v: ref.conv_transpose(x, v, **opts), w, g, grad)


@pytest.mark.parametrize(("x_shape", "w_shape", "opts"), CONV_T_CASES[:3])
def test_conv_transpose_bias_backward(backend, rng, x_shape, w_shape, opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    g = rng.standard_normal(ref.conv_transpose(x, w, **opts).shape)
    b = rng.standard_normal(g.shape[1])
    ts, (xp, bp, gp) = _prims(backend, x, b, g)
    grad = _np(ts, getattr(backend, _conv_t_name(x_shape) + "_bias_backward")(xp, bp, gp))
    np.testing.assert_allclose(
        grad, g.sum(axis=(0, *range(2, g.ndim))), rtol=_tol(backend), atol=_tol(backend)
    )


def test_conv2d_x_backward_finite_differences(backend, rng):
    """The x gradient of sum(conv2d(x, w) * g) by central differences, element by element."""
    x = rng.standard_normal((1, 2, 4, 4))
    w = rng.standard_normal((2, 2, 2, 2))
    opts = dict(stride=2, padding=1, dilation=1, groups=1)
    g = rng.standard_normal(ref.conv(x, w, **opts).shape)
    ts, (xp, wp, gp) = _prims(backend, x, w, g)
    grad = _np(ts, backend.conv2d_x_backward(xp, wp, gp, ConvOptions(**opts).for_dims(2)))
    eps = 1e-6
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        numeric[i] = np.sum((ref.conv(x + d, w, **opts) - ref.conv(x - d, w, **opts)) * g) / (
            2 * eps
        )
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=max(_tol(backend), 1e-6))


POOL_CASES = [
    ((2, 3, 9), 3, 2, 1),
    ((2, 2, 8), 2, 2, 0),
    ((2, 3, 6, 7), (3, 2), (2, 1), (1, 1)),
    ((1, 2, 5, 5), 3, 1, 1),
]


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize(("shape", "kernel", "stride", "padding"), POOL_CASES)
def test_avg_pool_backward(backend, rng, shape, kernel, stride, padding, count_include_pad):
    nd = len(shape) - 2
    x = rng.standard_normal(shape)
    g = rng.standard_normal(ref.avg_pool(x, kernel, stride, padding, count_include_pad).shape)
    ts, (xp, gp) = _prims(backend, x, g)
    op = getattr(backend, f"avg_pool{nd}d_backward")
    grad = _np(ts, op(xp, gp, kernel, stride, padding, count_include_pad))
    _adjoint(
        backend, lambda v: ref.avg_pool(v, kernel, stride, padding, count_include_pad), x, g, grad
    )


@pytest.mark.parametrize(
    ("shape", "kernel", "stride", "padding", "dilation"),
    [
        ((2, 3, 9), 3, 2, 1, 1),
        ((1, 2, 11), 2, 1, 1, 3),
        ((2, 2, 6, 7), 3, 2, 1, 1),
        ((1, 3, 7, 7), 2, 1, 1, 2),
    ],
)
def test_max_pool_with_indices_backward(backend, rng, shape, kernel, stride, padding, dilation):
    nd = len(shape) - 2
    x = rng.standard_normal(shape)
    k, s, p, d = (ref._tup(v, nd) for v in (kernel, stride, padding, dilation))
    if nd == 1:
        k, s, p, d = k[0], s[0], p[0], d[0]
    ts, (xp,) = _prims(backend, x)
    forward = getattr(backend, f"max_pool{nd}d_with_indices")
    _, idx = forward(xp, k, s, p, d)
    want_out, want_idx = ref.max_pool_with_indices(x, kernel, stride, padding, dilation)
    g = rng.standard_normal(want_out.shape)
    _, (gp,) = _prims(backend, g)
    backward = getattr(backend, f"max_pool{nd}d_with_indices_backward")
    grad = _np(ts, backward(xp, k, s, p, d, gp, idx))
    want = np.zeros((shape[0] * shape[1], math.prod(shape[2:])))
    np.add.at(
        want,
        (np.arange(want.shape[0])[:, None], want_idx.reshape(want.shape[0], -1)),
        g.reshape(want.shape[0], -1),
    )
    np.testing.assert_allclose(grad, want.reshape(shape), rtol=_tol(backend), atol=_tol(backend))


@pytest.mark.parametrize(
    ("shape", "out"),
    [((2, 3, 7), (3,)), ((2, 2, 5), (8,)), ((2, 3, 7, 5), (3, 4)), ((1, 2, 4, 6), (6, 1))],
)
def test_adaptive_avg_pool_backward(backend, rng, shape, out):
    nd = len(shape) - 2
    x = rng.standard_normal(shape)
    g = rng.standard_normal(shape[:2] + out)
    ts, (xp, gp) = _prims(backend, x, g)
    grad = _np(ts, getattr(backend, f"adaptive_avg_pool{nd}d_backward")(xp, gp))
    _adjoint(backend, lambda v: ref.adaptive_avg_pool(v, out), x, g, grad)


@pytest.mark.parametrize("mode", list(InterpolateMode), ids=lambda m: m.value)
@pytest.mark.parametrize(("size", "out"), [((4, 5), (7, 3)), ((6, 3), (2, 8)), ((3, 3), (1, 1))])
def test_interpolate_backward(backend, rng, mode, size, out):
    x = rng.standard_normal((2, 2, *size))
    g = rng.standard_normal((2, 2, *out))
    ts, (xp, gp) = _prims(backend, x, g)
    grad = _np(ts, backend.interpolate_backward(xp, gp, out, InterpolateOptions(mode)))
    _adjoint(backend, lambda v: ref.interpolate(v, out, mode.value), x, g, grad)


def test_embedding_backward(backend, rng):
    w = rng.standard_normal((6, 3))
    idx = np.array([[0, 5, 2, 2], [5, 1, 0, 5]])
    g = rng.standard_normal((2, 4, 3))
    ts, (wp, gp) = _prims(backend, w, g)
    ip = tensor(backend, idx).primitive
    grad = _np(ts, backend.embedding_backward(wp, gp, ip))
    want = np.zeros_like(w)
    np.add.at(want, idx.ravel(), g.reshape(-1, 3))
    np.testing.assert_allclose(grad, want, rtol=_tol(backend), atol=_tol(backend))


def test_unfold4d_matmul_is_conv2d(backend, rng):
    """unfold4d followed by a matmul with the flattened weight is conv2d."""
    x = rng.standard_normal((2, 3, 6, 5))
    w = rng.standard_normal((4, 3, 3, 2))
    dtype = reference_dtype(backend)
    cols = unfold4d(tensor(backend, x, dtype), (3, 2), UnfoldOptions(stride=2, padding=1))
    y = tensor(backend, w.reshape(1, 4, -1), dtype).matmul(cols)
    want = ref.conv(x, w, stride=2, padding=1)
    np.testing.assert_allclose(
        values(y).reshape(want.shape), want, rtol=_tol(backend), atol=_tol(backend)
    )
