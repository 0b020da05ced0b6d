"""Batch normalization with the batch's statistics (`module.batch_norm`) and its backward op,
against float64 numpy references written out here.

The gradient formula below is checked against central differences of the forward reference;
the backward op is then checked against the formula. Every dtype a backend supports is
covered, float32 included, so a kernel that computes in another precision or returns another
dtype fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend_tests.helpers import TOLERANCE, assert_close, float_dtypes, ref, tensor
from burn.tensor import DType, RankError, ShapeError, module

_LOW_PRECISION = {DType.F16: 2e-2, DType.BF16: 1e-1}
SHAPES = [(6, 3), (4, 3, 5), (3, 2, 4, 5), (2, 1, 3, 1)]


def _tol(dtype: DType) -> float:
    # float32 results of a few chained sums and a square root sit near 1e-6 relative.
    return _LOW_PRECISION.get(dtype, max(TOLERANCE[dtype], 1e-10 if dtype is DType.F64 else 2e-5))


def _axes(x: np.ndarray) -> tuple[int, ...]:
    return (0, *range(2, x.ndim))


def _view(v: np.ndarray, rank: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (rank - 2))


def _batch_norm(x, gamma, beta, eps):
    """(output, mean, biased variance) per channel of `[N, C, ...]`."""
    mean = x.mean(_axes(x))
    var = ((x - _view(mean, x.ndim)) ** 2).mean(_axes(x))
    xhat = (x - _view(mean, x.ndim)) / np.sqrt(_view(var, x.ndim) + eps)
    return xhat * _view(gamma, x.ndim) + _view(beta, x.ndim), mean, var


def _batch_norm_grads(x, gamma, g, eps):
    """Gradients of sum(output * g) for (x, gamma, beta)."""
    axes = _axes(x)
    n = x.size // x.shape[1]
    mean = x.mean(axes, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axes, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    gxhat = g * _view(gamma, x.ndim)
    g_sum = gxhat.sum(axes, keepdims=True)
    dot = (gxhat * xhat).sum(axes, keepdims=True)
    gx = rstd / n * (n * gxhat - g_sum - xhat * dot)
    return gx, (g * xhat).sum(axes), g.sum(axes)


def _case(backend, rng, shape, dtype):
    c = shape[1]
    x = tensor(backend, rng.normal(size=shape) * 3.0 + 1.5, dtype)
    gamma = tensor(backend, rng.uniform(0.5, 1.5, c), dtype)
    beta = tensor(backend, rng.normal(size=c), dtype)
    return x, gamma, beta


@float_dtypes
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batch_norm(backend, rng, dtype, shape):
    x, gamma, beta = _case(backend, rng, shape, dtype)
    out, mean, var = module.batch_norm(x, gamma, beta, 1e-5)
    want, want_mean, want_var = _batch_norm(ref(x), ref(gamma), ref(beta), 1e-5)
    assert out.dtype == mean.dtype == var.dtype == dtype
    assert out.dims() == list(shape) and mean.dims() == var.dims() == [shape[1]]
    assert_close(out, want, tol=_tol(dtype))
    assert_close(mean, want_mean, tol=_tol(dtype))
    assert_close(var, want_var, tol=_tol(dtype) * 4)


def test_batch_norm_constant_channel_and_epsilon(backend):
    """A constant channel normalizes to beta (epsilon keeps it finite); epsilon is honoured."""
    x = np.stack([np.full((2, 3), 2.0), np.arange(6.0).reshape(2, 3)], axis=1)  # [2, 2, 3]
    xt = tensor(backend, x)
    gamma, beta = tensor(backend, np.ones(2)), tensor(backend, np.array([0.5, -0.5]))
    out, _, var = module.batch_norm(xt, gamma, beta, 1.0)
    values = ref(out)
    np.testing.assert_allclose(values[:, 0], 0.5)
    np.testing.assert_allclose(ref(var)[0], 0.0, atol=1e-6)
    np.testing.assert_allclose(
        values, _batch_norm(ref(xt), np.ones(2), np.array([0.5, -0.5]), 1.0)[0], rtol=1e-5
    )


@float_dtypes
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batch_norm_backward_op(backend, rng, dtype, shape):
    x, gamma, _ = _case(backend, rng, shape, dtype)
    g = tensor(backend, rng.normal(size=shape), dtype)
    gx, gg, gb = backend.batch_norm_backward(x.primitive, gamma.primitive, g.primitive, 1e-5)
    want = _batch_norm_grads(ref(x), ref(gamma), ref(g), 1e-5)
    for got, w in zip((gx, gg, gb), want, strict=True):
        out = x._new(got) if w.ndim == len(shape) else gamma._new(got)
        assert out.dtype == dtype and out.dims() == list(w.shape)
        assert_close(out, w, tol=_tol(dtype) * 8)


def test_batch_norm_reference_gradient_is_the_derivative(rng):
    """The test's own gradient formula against central differences of its forward."""
    x, gamma, beta = rng.normal(size=(3, 2, 2)), rng.uniform(0.5, 1.5, 2), rng.normal(size=2)
    g = rng.normal(size=x.shape)
    gx, gg, gb = _batch_norm_grads(x, gamma, g, 1e-5)

    def loss(x, gamma, beta):
        return (_batch_norm(x, gamma, beta, 1e-5)[0] * g).sum()

    h = 1e-6
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        fd = (loss(x + e, gamma, beta) - loss(x - e, gamma, beta)) / (2 * h)
        assert fd == pytest.approx(gx[i], rel=1e-5, abs=1e-8)
    for k, e in enumerate(np.eye(2) * h):
        fd_gamma = (loss(x, gamma + e, beta) - loss(x, gamma - e, beta)) / (2 * h)
        fd_beta = (loss(x, gamma, beta + e) - loss(x, gamma, beta - e)) / (2 * h)
        assert fd_gamma == pytest.approx(gg[k], rel=1e-5)
        assert fd_beta == pytest.approx(gb[k], rel=1e-5)


def test_batch_norm_checks_its_inputs(backend):
    x = tensor(backend, np.ones((2, 4, 3)))
    with pytest.raises(ShapeError, match="batch_norm: gamma must be \\[4\\]"):
        module.batch_norm(x, tensor(backend, np.ones(3)), tensor(backend, np.ones(4)))
    with pytest.raises(ShapeError, match="batch_norm: beta must be \\[4\\]"):
        module.batch_norm(x, tensor(backend, np.ones(4)), tensor(backend, np.ones((4, 1))))
    with pytest.raises(RankError, match="batch_norm: input must be \\[batch, channels"):
        module.batch_norm(tensor(backend, np.ones(4)), x, x)
    empty = tensor(backend, np.ones((0, 4)))
    with pytest.raises(ShapeError, match="no values per channel"):
        module.batch_norm(empty, tensor(backend, np.ones(4)), tensor(backend, np.ones(4)))


def test_batch_norm_of_no_channels_is_empty(backend):
    x = tensor(backend, np.ones((3, 0, 2)))
    none = tensor(backend, np.ones(0))
    out, mean, var = module.batch_norm(x, none, none)
    assert out.dims() == [3, 0, 2] and mean.dims() == var.dims() == [0]
    grads = backend.batch_norm_backward(x.primitive, none.primitive, x.primitive, 1e-5)
    assert [list(backend.shape(g)) for g in grads] == [[3, 0, 2], [0], [0]]
