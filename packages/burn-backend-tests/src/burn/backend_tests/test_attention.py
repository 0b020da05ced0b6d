"""The ops PyTorch runs as one kernel each: softmax, log_softmax, layer_norm and scaled
dot-product attention, with their backward ops, against float64 numpy references.

The references below are written out in numpy (forward and gradient formulas), independent of
the contract's compositions; the backward ops are also checked against central differences of
the forward references. Every dtype a backend supports is covered, float32 included, so a
kernel that silently computes in another precision or returns another dtype fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    TOLERANCE,
    assert_close,
    float_dtypes,
    ref,
    reference_dtype,
    tensor,
)
from burn.tensor import DType, RankError, ShapeError, activation, module

_LOW_PRECISION = {DType.F16: 1e-2, DType.BF16: 6e-2}


def _tol(dtype: DType) -> float:
    # float32 results of a few chained steps (matmul, exp, sums) sit near 1e-6 relative.
    return _LOW_PRECISION.get(dtype, max(TOLERANCE[dtype], 1e-10 if dtype is DType.F64 else 2e-5))


# ====================================================================== references
def _softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _layer_norm_grads(x, gamma, g, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    d = x.shape[-1]
    gxhat = g * gamma
    gx = (
        rstd
        / d
        * (d * gxhat - gxhat.sum(-1, keepdims=True) - xhat * (gxhat * xhat).sum(-1, keepdims=True))
    )
    lead = tuple(range(x.ndim - 1))
    return gx, (g * xhat).sum(lead), g.sum(lead)


def _attention(q, k, v, mask, mask_value, drop, scale):
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(mask, mask_value, scores)
    w = _softmax(scores, -1)
    return w, (w if drop is None else w * drop) @ v


def _attention_grads(q, k, v, mask, drop, scale, gw, gc):
    """Gradients of sum(w * gw) + sum(context * gc), by the chain rule written out."""
    w, _ = _attention(q, k, v, mask, -1.0e4, drop, scale)
    kept = w if drop is None else w * drop
    gv = np.swapaxes(kept, -1, -2) @ gc
    gkept = gc @ np.swapaxes(v, -1, -2)
    gw_total = gw + (gkept if drop is None else gkept * drop)
    gs = w * (gw_total - (gw_total * w).sum(-1, keepdims=True))
    if mask is not None:
        gs = np.where(mask, 0.0, gs)
    gs = gs * scale
    return gs @ k, np.swapaxes(gs, -1, -2) @ q, gv


def _case(rng, masked=True, dropout=True):
    """q, k, v `[2, 3, 4, 5]` (batch 2, 3 heads, seq 4, d 5), a padding mask, a dropout mask."""
    q, k, v = (rng.normal(size=(2, 3, 4, 5)) for _ in range(3))
    mask = None
    if masked:
        mask = np.zeros((2, 1, 1, 4), dtype=bool)
        mask[0, ..., 3] = True
        mask[1, ..., 1:3] = True
    drop = None
    if dropout:
        drop = (rng.random((2, 3, 4, 4)) < 0.75) / 0.75
    return q, k, v, mask, drop


# ====================================================================== softmax
@float_dtypes
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax_and_log_softmax_dims(backend, rng, dtype, dim):
    x = tensor(backend, rng.normal(size=(3, 4, 5)) * 3.0, dtype)
    for fn, want in (
        (activation.softmax, _softmax(ref(x), dim)),
        (activation.log_softmax, np.log(_softmax(ref(x), dim))),
    ):
        out = fn(x, dim)
        assert out.dtype == dtype
        assert_close(out, want, tol=_tol(dtype))


def test_softmax_large_and_infinite_inputs(backend):
    x = tensor(backend, np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0]]))
    want = _softmax(ref(x), 1)
    assert_close(activation.softmax(x, 1), want)
    log = ref(activation.log_softmax(x, 1))
    assert log[0, 2] == pytest.approx(-2e4) and log[1, 0] == -np.inf
    assert np.isfinite(log[1, 1:]).all()


@float_dtypes
def test_softmax_backward_ops(backend, rng, dtype):
    b = backend
    x = tensor(backend, rng.normal(size=(3, 5)), dtype)
    g = tensor(backend, rng.normal(size=(3, 5)), dtype)
    y = _softmax(ref(x), 1)
    want = y * (ref(g) - (ref(g) * y).sum(1, keepdims=True))
    out = b.softmax_backward(b.softmax(x.primitive, 1), g.primitive, 1)
    assert_close(x._new(out), want, tol=_tol(dtype))
    log_y = np.log(y)
    want = ref(g) - y * ref(g).sum(1, keepdims=True)
    out = b.log_softmax_backward(b.log_softmax(x.primitive, 1), g.primitive, 1)
    assert_close(x._new(out), want, tol=_tol(dtype))
    assert np.isfinite(log_y).all()


# ====================================================================== layer norm
@float_dtypes
def test_layer_norm(backend, rng, dtype):
    x = tensor(backend, rng.normal(size=(2, 3, 6)) * 4.0 + 1.5, dtype)
    gamma = tensor(backend, rng.uniform(0.5, 1.5, 6), dtype)
    beta = tensor(backend, rng.normal(size=6), dtype)
    out = module.layer_norm(x, gamma, beta, 1e-5)
    assert out.dtype == dtype and out.dims() == [2, 3, 6]
    assert_close(out, _layer_norm(ref(x), ref(gamma), ref(beta), 1e-5), tol=_tol(dtype))


def test_layer_norm_constant_rows_and_epsilon(backend):
    """A constant row normalizes to 0 (the epsilon keeps it finite); epsilon is honoured."""
    x = tensor(backend, np.array([[2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 2.0, 3.0]]))
    gamma, beta = tensor(backend, np.ones(4)), tensor(backend, np.full(4, 0.5))
    out = ref(module.layer_norm(x, gamma, beta, 1.0))
    np.testing.assert_allclose(out[0], 0.5)
    np.testing.assert_allclose(out[1], _layer_norm(ref(x), 1.0, 0.5, 1.0)[1], rtol=1e-5)


@float_dtypes
def test_layer_norm_backward_op(backend, rng, dtype):
    x = tensor(backend, rng.normal(size=(2, 3, 6)), dtype)
    gamma = tensor(backend, rng.uniform(0.5, 1.5, 6), dtype)
    g = tensor(backend, rng.normal(size=(2, 3, 6)), dtype)
    gx, gg, gb = backend.layer_norm_backward(x.primitive, gamma.primitive, g.primitive, 1e-5)
    want = _layer_norm_grads(ref(x), ref(gamma), ref(g), 1e-5)
    for got, w in zip((gx, gg, gb), want, strict=True):
        out = x._new(got) if len(w.shape) == 3 else gamma._new(got)
        assert out.dtype == dtype
        assert_close(out, w, tol=_tol(dtype) * 4)


def test_layer_norm_reference_gradient_is_the_derivative(rng):
    """The test's own gradient formula against central differences of its forward."""
    x, gamma, beta = rng.normal(size=(2, 5)), rng.uniform(0.5, 1.5, 5), rng.normal(size=5)
    g = rng.normal(size=(2, 5))
    gx, gg, _ = _layer_norm_grads(x, gamma, g, 1e-5)
    h = 1e-6
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        fd = (_layer_norm(x + e, gamma, beta, 1e-5) - _layer_norm(x - e, gamma, beta, 1e-5)) * g
        assert fd.sum() / (2 * h) == pytest.approx(gx[i], rel=1e-5, abs=1e-8)
    fd = [
        (
            (_layer_norm(x, gamma + h * e, beta, 1e-5) - _layer_norm(x, gamma - h * e, beta, 1e-5))
            * g
        ).sum()
        / (2 * h)
        for e in np.eye(5)
    ]
    np.testing.assert_allclose(fd, gg, rtol=1e-5)


def test_layer_norm_checks_shapes(backend):
    x = tensor(backend, np.ones((2, 4)))
    with pytest.raises(ShapeError, match="layer_norm: gamma must be \\[4\\]"):
        module.layer_norm(x, tensor(backend, np.ones(3)), tensor(backend, np.ones(4)))


# ====================================================================== attention
@float_dtypes
@pytest.mark.parametrize("masked,dropout", [(False, False), (True, False), (True, True)])
def test_attention(backend, rng, dtype, masked, dropout):
    q, k, v, mask, drop = _case(rng, masked, dropout)
    tq, tk, tv = (tensor(backend, a, dtype) for a in (q, k, v))
    tmask = None if mask is None else tensor(backend, mask)
    tdrop = None if drop is None else tensor(backend, drop, dtype)
    weights, context = module.attention(
        tq, tk, tv, tmask, scale=0.3, mask_value=-1.0e4, dropout_mask=tdrop
    )
    assert weights.dtype == context.dtype == dtype
    assert weights.dims() == [2, 3, 4, 4] and context.dims() == [2, 3, 4, 5]
    want_w, want_c = _attention(
        ref(tq), ref(tk), ref(tv), mask, -1.0e4, None if tdrop is None else ref(tdrop), 0.3
    )
    assert_close(weights, want_w, tol=_tol(dtype))
    assert_close(context, want_c, tol=_tol(dtype) * 4)
    if masked:
        assert np.all(ref(weights)[np.broadcast_to(mask, want_w.shape)] == 0.0)


def test_attention_default_scale_and_infinite_mask(backend, rng):
    """The default scale is 1/sqrt(d_k) and the default mask value -inf, as PyTorch."""
    q, k, v, mask, _ = _case(rng, masked=True, dropout=False)
    tq, tk, tv = (tensor(backend, a) for a in (q, k, v))
    weights, context = module.attention(tq, tk, tv, tensor(backend, mask))
    want_w, want_c = _attention(ref(tq), ref(tk), ref(tv), mask, -np.inf, None, 5**-0.5)
    assert_close(weights, want_w, tol=_tol(tq.dtype))
    assert_close(context, want_c, tol=_tol(tq.dtype) * 4)


@pytest.mark.parametrize("which", ["context", "weights", "both"])
@pytest.mark.parametrize("masked,dropout", [(False, False), (True, True)])
def test_attention_backward_op(backend, rng, which, masked, dropout):
    dtype = reference_dtype(backend)
    q, k, v, mask, drop = _case(rng, masked, dropout)
    tq, tk, tv = (tensor(backend, a, dtype) for a in (q, k, v))
    gw = rng.normal(size=(2, 3, 4, 4)) if which != "context" else None
    gc = rng.normal(size=(2, 3, 4, 5)) if which != "weights" else None
    prim = {
        name: None
        if a is None
        else tensor(backend, a, dtype if a.dtype != bool else None).primitive
        for name, a in (("mask", mask), ("drop", drop), ("gw", gw), ("gc", gc))
    }
    weights, _ = backend.attention(
        tq.primitive, tk.primitive, tv.primitive, prim["mask"], -1.0e4, prim["drop"], 0.3
    )
    grads = backend.attention_backward(
        tq.primitive,
        tk.primitive,
        tv.primitive,
        weights,
        prim["mask"],
        prim["drop"],
        0.3,
        prim["gw"],
        prim["gc"],
    )
    want = _attention_grads(
        ref(tq),
        ref(tk),
        ref(tv),
        mask,
        drop,
        0.3,
        np.zeros((2, 3, 4, 4)) if gw is None else gw,
        np.zeros((2, 3, 4, 5)) if gc is None else gc,
    )
    for got, w, name in zip(grads, want, ("query", "key", "value"), strict=True):
        out = tq._new(got)
        assert out.dtype == dtype, name
        assert_close(out, w, tol=_tol(dtype) * 4)


def test_attention_reference_gradient_is_the_derivative(rng):
    """The test's own attention gradients against central differences of its forward."""
    q, k, v, mask, drop = _case(rng, masked=True, dropout=True)
    gw, gc = rng.normal(size=(2, 3, 4, 4)), rng.normal(size=(2, 3, 4, 5))

    def objective(q, k, v):
        w, c = _attention(q, k, v, mask, -1.0e4, drop, 0.3)
        return (w * gw).sum() + (c * gc).sum()

    grads = _attention_grads(q, k, v, mask, drop, 0.3, gw, gc)
    inputs = [q, k, v]
    h = 1e-6
    for which, grad in enumerate(grads):
        for i in [(0, 0, 0, 0), (1, 2, 3, 4), (1, 1, 2, 0), (0, 2, 1, 3)]:
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[which][i] += h
            minus[which][i] -= h
            fd = (objective(*plus) - objective(*minus)) / (2 * h)
            assert fd == pytest.approx(grad[i], rel=1e-5, abs=1e-8)


def test_attention_checks_shapes(backend):
    q = tensor(backend, np.ones((1, 2, 3, 4)))
    k_wrong = tensor(backend, np.ones((1, 2, 3, 5)))
    with pytest.raises(ShapeError, match="attention: query"):
        module.attention(q, k_wrong, q)
    with pytest.raises(RankError, match="attention"):
        module.attention(q, tensor(backend, np.ones((2, 3, 4))), q)
    with pytest.raises(ShapeError, match="attention: mask"):
        module.attention(q, q, q, tensor(backend, np.ones((1, 2, 2, 3), dtype=bool)))
    with pytest.raises(ShapeError, match="attention: dropout_mask"):
        module.attention(q, q, q, dropout_mask=tensor(backend, np.ones((1, 2, 3, 4))))
