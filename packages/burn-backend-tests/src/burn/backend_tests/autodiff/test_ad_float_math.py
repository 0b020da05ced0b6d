"""Gradients of the unary float ops (Burn's abs.rs, cos.rs, exp.rs, log.rs, ... one test each).

Each input is drawn from a range where the op is smooth: away from kinks (abs at 0), poles
(recip at 0, tan at pi/2) and jumps (floor at integers).
"""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads

SHAPE = (2, 3)


def _nonzero(rng, low=0.3, high=2.0):
    return rng.uniform(low, high, size=SHAPE) * rng.choice([-1.0, 1.0], size=SHAPE)


def _off_integers(rng):
    """Values whose fractional part is in [0.15, 0.35] or [0.65, 0.85]: no jump, no .5 tie."""
    frac = rng.uniform(0.15, 0.35, size=SHAPE) + rng.choice([0.0, 0.5], size=SHAPE)
    return rng.integers(-3, 3, size=SHAPE) + frac


@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_should_diff_neg(ad_backend, rng, strided):
    check_grads(ad_backend, lambda x: -x, rng.normal(size=SHAPE), strided_inputs=strided)
    check_grads(ad_backend, lambda x: x.neg(), rng.normal(size=SHAPE), strided_inputs=strided)


def test_should_diff_abs(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.abs(), _nonzero(rng))
    check_grads(ad_backend, lambda x: abs(x), _nonzero(rng), strided_inputs=True)


@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_should_diff_exp(ad_backend, rng, strided):
    check_grads(ad_backend, lambda x: x.exp(), rng.uniform(-2, 2, SHAPE), strided_inputs=strided)


def test_should_diff_log(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.log(), rng.uniform(0.3, 3.0, SHAPE))


def test_should_diff_log1p(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.log1p(), rng.uniform(-0.6, 3.0, SHAPE))


def test_should_diff_sqrt(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sqrt(), rng.uniform(0.3, 3.0, SHAPE))


def test_should_diff_sin(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sin(), rng.uniform(-3, 3, SHAPE))


def test_should_diff_cos(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.cos(), rng.uniform(-3, 3, SHAPE))


def test_should_diff_tan(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.tan(), rng.uniform(-1.2, 1.2, SHAPE))


def test_should_diff_tanh(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.tanh(), rng.uniform(-2.5, 2.5, SHAPE))


def test_should_diff_erf(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.erf(), rng.uniform(-2, 2, SHAPE))


def test_should_diff_recip(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.recip(), _nonzero(rng, 0.5))


@pytest.mark.parametrize("op", ["floor", "ceil", "round", "sign"])
def test_should_diff_piecewise_constant(ad_backend, rng, op):
    """floor, ceil, round and sign are flat almost everywhere: their gradient is zero."""
    x = _off_integers(rng) if op != "sign" else _nonzero(rng)
    (g,) = check_grads(ad_backend, lambda t: getattr(t, op)() * 2.0, x)
    np.testing.assert_array_equal(g, 0.0)


def test_should_diff_floor(ad_backend, rng):
    """A constant part next to a smooth part: the gradient is the smooth part's alone."""
    check_grads(ad_backend, lambda x: x.floor() + x * x, _off_integers(rng))


def test_should_diff_ceil(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.ceil() * x, _off_integers(rng))


def test_should_diff_round(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.round() * x.exp(), _off_integers(rng))


def test_should_diff_sign(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.sign() * x, _nonzero(rng))


def test_should_diff_chain_of_unary_ops(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x: x.sin().exp().add_scalar(1.0).log().sqrt().tanh(),
        rng.uniform(-2, 2, SHAPE),
        strided_inputs=True,
    )
