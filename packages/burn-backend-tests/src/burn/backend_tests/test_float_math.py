"""Float math: exp log log1p sqrt sin cos tan tanh erf floor ceil round recip atan2.

Each is compared with numpy (or math.erf) in float64, on every float dtype the backend has.
"""

import math

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    assert_close,
    assert_equal,
    float_dtypes,
    random_tensor,
    ref,
    strided,
    tensor,
)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _check(backend, rng, dtype, op, reference, low=-2.0, high=2.0, shape=(2, 3)):
    a = random_tensor(backend, rng, shape, dtype, low, high)
    out = getattr(a, op)()
    assert out.dtype == a.dtype
    assert_close(out, reference(ref(a)))


@float_dtypes
def test_should_support_exp_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "exp", np.exp)


@float_dtypes
def test_should_support_log_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "log", np.log, 0.1, 5.0)


@float_dtypes
def test_should_support_log1p_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "log1p", np.log1p, -0.5, 3.0)


def test_log1p_small_values(backend):
    a = tensor(backend, [1e-7, -1e-7])
    assert_close(a.log1p(), np.log1p([1e-7, -1e-7]), tol=1e-12)


@float_dtypes
def test_should_support_sqrt_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "sqrt", np.sqrt, 0.0, 5.0)


@float_dtypes
def test_should_support_sin_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "sin", np.sin)


@float_dtypes
def test_should_support_cos_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "cos", np.cos)


@float_dtypes
def test_should_support_tan_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "tan", np.tan, -1.0, 1.0)


@float_dtypes
def test_should_support_tanh_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "tanh", np.tanh)


@float_dtypes
def test_should_support_erf_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "erf", _erf)


@float_dtypes
def test_should_support_floor_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "floor", np.floor, -5, 5)


@float_dtypes
def test_should_support_ceil_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "ceil", np.ceil, -5, 5)


@float_dtypes
def test_should_support_round_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "round", np.round, -5, 5)


def test_should_round_ties_even(backend):
    a = tensor(backend, [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, -0.5, -1.5, 0.4, 0.6])
    assert_equal(a.round(), [2.0, 2.0, 4.0, 4.0, 6.0, 6.0, -0.0, -2.0, 0.0, 1.0])


@float_dtypes
def test_should_support_recip_ops(backend, rng, dtype):
    _check(backend, rng, dtype, "recip", lambda x: 1.0 / x, 0.5, 4.0)


@float_dtypes
def test_should_support_atan2_ops(backend, rng, dtype):
    y = random_tensor(backend, rng, (2, 3), dtype)
    x = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(y.atan2(x), np.arctan2(ref(y), ref(x)))


def test_atan2_broadcast_and_quadrants(backend):
    y = tensor(backend, [[1.0], [-1.0]])
    x = tensor(backend, [[1.0, -1.0, 0.0]])
    want = np.arctan2([[1.0], [-1.0]], [[1.0, -1.0, 0.0]])
    assert_close(y.atan2(x), want)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "tanh", "erf", "floor"])
def test_float_math_non_contiguous(backend, rng, op):
    a = rng.uniform(0.1, 2.0, (3, 4))
    reference = {"erf": _erf}.get(op) or getattr(np, op)
    assert_close(getattr(strided(backend, a), op)(), reference(a.astype(np.float32)), tol=1e-5)


def test_float_math_empty(backend):
    a = tensor(backend, np.zeros((2, 0)))
    for op in ("exp", "log", "sqrt", "round", "recip"):
        assert getattr(a, op)().dims() == [2, 0]


def test_float_math_special_values(backend):
    a = tensor(backend, [np.inf, -np.inf, np.nan, 0.0])
    got = ref(a.exp())
    assert got[0] == np.inf and got[1] == 0.0 and np.isnan(got[2]) and got[3] == 1.0
    assert np.isnan(ref(tensor(backend, [-1.0]).sqrt()))[0]
    assert ref(tensor(backend, [0.0]).log())[0] == -np.inf
