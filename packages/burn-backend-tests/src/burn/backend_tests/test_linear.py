"""A `Linear` as one op (`module.linear`, the contract's `linear` and its three backward ops)
against float64 numpy references written out here: `x @ weight + bias` over the last dim, and
the gradients `g @ weight^T`, `x^T @ g` over every row and `g` summed over every row; ranks 1
to 4, with and without a bias, strided inputs, every float dtype, the composition it replaces
and bad inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend
from burn.backend_tests.helpers import (
    TOLERANCE,
    assert_close,
    float_dtypes,
    ref,
    require_dtype,
    strided,
    tensor,
)
from burn.tensor import DType, Int, KindError, ShapeError, module

_LOW_PRECISION = {DType.F16: 2e-2, DType.BF16: 1e-1}
D_IN, D_OUT = 5, 3
# Leading dims of `x`: none (a vector), a batch, a batch of sequences, and two batch dims.
LEADS = [(), (4,), (2, 3), (2, 1, 3)]


def _tol(dtype: DType) -> float:
    return _LOW_PRECISION.get(dtype, max(TOLERANCE[dtype], 1e-10 if dtype is DType.F64 else 1e-5))


def _case(backend, rng, dtype, lead, bias=True):
    require_dtype(backend, dtype)
    x = tensor(backend, rng.normal(size=(*lead, D_IN)), dtype)
    w = tensor(backend, rng.normal(size=(D_IN, D_OUT)), dtype)
    b = tensor(backend, rng.normal(size=(D_OUT,)), dtype) if bias else None
    return x, w, b


@float_dtypes
@pytest.mark.parametrize("lead", LEADS, ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_linear(backend, rng, dtype, lead, bias):
    x, w, b = _case(backend, rng, dtype, lead, bias)
    got = module.linear(x, w, b)
    assert got.dims() == [*lead, D_OUT] and got.dtype == dtype
    expected = ref(x) @ ref(w) + (ref(b) if b is not None else 0.0)
    assert_close(got, expected, tol=_tol(dtype))


@float_dtypes
@pytest.mark.parametrize("lead", LEADS[1:], ids=str)
def test_linear_backward_ops(backend, rng, dtype, lead):
    x, w, _ = _case(backend, rng, dtype, lead)
    g = tensor(backend, rng.normal(size=(*lead, D_OUT)), dtype)
    rows_x, rows_g = ref(x).reshape(-1, D_IN), ref(g).reshape(-1, D_OUT)
    x_grad = x._new(backend.linear_x_backward(w.primitive, g.primitive))
    assert x_grad.dims() == x.dims()
    assert_close(x_grad, ref(g) @ ref(w).T, tol=_tol(dtype))
    w_grad = x._new(backend.linear_weight_backward(x.primitive, g.primitive))
    assert w_grad.dims() == [D_IN, D_OUT]
    assert_close(w_grad, rows_x.T @ rows_g, tol=_tol(dtype) * len(rows_x))
    b_grad = x._new(backend.linear_bias_backward(g.primitive))
    assert b_grad.dims() == [D_OUT]
    assert_close(b_grad, rows_g.sum(axis=0), tol=_tol(dtype) * len(rows_x))


def test_linear_takes_strided_inputs(backend, rng):
    x = strided(backend, rng.normal(size=(3, 4, D_IN)))
    w = strided(backend, rng.normal(size=(D_IN, D_OUT)))
    b = strided(backend, rng.normal(size=(D_OUT,)))
    g = strided(backend, rng.normal(size=(3, 4, D_OUT)))
    assert_close(module.linear(x, w, b), ref(x) @ ref(w) + ref(b))
    rows_x, rows_g = ref(x).reshape(-1, D_IN), ref(g).reshape(-1, D_OUT)
    assert_close(x._new(backend.linear_x_backward(w.primitive, g.primitive)), ref(g) @ ref(w).T)
    assert_close(
        x._new(backend.linear_weight_backward(x.primitive, g.primitive)), rows_x.T @ rows_g
    )
    assert_close(x._new(backend.linear_bias_backward(g.primitive)), rows_g.sum(axis=0))


def test_linear_is_the_composition(backend, rng):
    """A backend's own kernels agree with the contract's default composition."""
    x, w, b = _case(backend, rng, DType.F32, (2, 3))
    g = tensor(backend, rng.normal(size=(2, 3, D_OUT)))
    xp, wp, bp, gp = x.primitive, w.primitive, b.primitive, g.primitive
    pairs = [
        (backend.linear(xp, wp, bp), Backend.linear(backend, xp, wp, bp)),
        (backend.linear(xp, wp, None), Backend.linear(backend, xp, wp, None)),
        (backend.linear_x_backward(wp, gp), Backend.linear_x_backward(backend, wp, gp)),
        (
            backend.linear_weight_backward(xp, gp),
            Backend.linear_weight_backward(backend, xp, gp),
        ),
        (backend.linear_bias_backward(gp), Backend.linear_bias_backward(backend, gp)),
    ]
    for own, composed in pairs:
        assert_close(x._new(own), ref(x._new(composed)))


def test_linear_with_no_rows(backend):
    x = tensor(backend, np.zeros((0, D_IN)))
    w = tensor(backend, np.ones((D_IN, D_OUT)))
    b = tensor(backend, np.ones(D_OUT))
    assert module.linear(x, w, b).dims() == [0, D_OUT]
    g = tensor(backend, np.zeros((0, D_OUT)))
    assert_close(x._new(backend.linear_bias_backward(g.primitive)), np.zeros(D_OUT))
    assert_close(
        x._new(backend.linear_weight_backward(x.primitive, g.primitive)), np.zeros((D_IN, D_OUT))
    )


def test_linear_with_no_inputs_or_outputs(backend):
    x = tensor(backend, np.ones((2, 3, 0)))
    w = tensor(backend, np.ones((0, D_OUT)))
    b = tensor(backend, np.full(D_OUT, 0.5))
    assert_close(module.linear(x, w, b), np.full((2, 3, D_OUT), 0.5))
    g = tensor(backend, np.ones((2, 3, D_OUT)))
    assert backend.shape(backend.linear_weight_backward(x.primitive, g.primitive)) == (0, D_OUT)
    empty_out = tensor(backend, np.ones((2, 3, 0)))
    assert backend.shape(backend.linear_bias_backward(empty_out.primitive)) == (0,)


def test_linear_checks_its_inputs(backend):
    x = tensor(backend, np.zeros((2, D_IN)))
    w = tensor(backend, np.zeros((D_IN, D_OUT)))
    with pytest.raises(ShapeError, match=r"expected x \[\.\.\., d_in\] and weight"):
        module.linear(tensor(backend, np.zeros((2, D_IN + 1))), w)
    with pytest.raises(ShapeError, match=r"expected x \[\.\.\., d_in\] and weight"):
        module.linear(x, tensor(backend, np.zeros((1, D_IN, D_OUT))))
    with pytest.raises(ShapeError, match=r"bias must be \[3\]"):
        module.linear(x, w, tensor(backend, np.zeros(D_OUT + 1)))
    with pytest.raises(KindError, match="linear: input must be a Float tensor"):
        module.linear(tensor(backend, np.zeros((2, D_IN), dtype=np.int64), kind=Int), w)
    with pytest.raises(KindError, match="linear: weight must be a Float tensor"):
        module.linear(x, tensor(backend, np.zeros((D_IN, D_OUT), dtype=np.int64), kind=Int))
