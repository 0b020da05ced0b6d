"""What the contract fixes where integer arithmetic has no mathematical answer.

Integer division and remainder by zero give 0 (Burn's Rust backends would panic; a defined
result needs no read-back on a GPU). `powi` with a negative integer exponent gives the real
result truncated toward zero: 1 for a base of 1, +-1 for -1 by the exponent's parity, 0 for
every other base (0 included). Float `powi` with a negative exponent is the ordinary power.
"""

import numpy as np
from burn.backend_tests.helpers import assert_close, assert_equal, int_dtypes, tensor


@int_dtypes
def test_int_div_by_zero_is_zero(backend, dtype):
    a = tensor(backend, [7, -7, 0, 5], dtype)
    zero = tensor(backend, [0, 0, 0, 0], dtype)
    assert_equal(a / zero, [0, 0, 0, 0], dtype)
    assert_equal(a.div_scalar(0), [0, 0, 0, 0], dtype)


@int_dtypes
def test_int_remainder_by_zero_is_zero(backend, dtype):
    a = tensor(backend, [7, -7, 0, 5], dtype)
    assert_equal(a.remainder(tensor(backend, [0, 0, 0, 0], dtype)), [0, 0, 0, 0], dtype)
    assert_equal(a.remainder_scalar(0), [0, 0, 0, 0], dtype)


def test_int_div_by_zero_mixed_with_nonzero(backend):
    a = tensor(backend, [7, -7, 9, -9])
    b = tensor(backend, [0, 2, 0, -4])
    assert_equal(a / b, [0, -3, 0, 2])
    assert_equal(a % b, [0, 1, 0, -1])


def test_int_powi_negative_exponent_truncates(backend):
    base = tensor(backend, [2, 1, -1, -1, 0, -3])
    exponent = tensor(backend, [-1, -5, -1, -2, -1, -2])
    assert_equal(base.powi(exponent), [0, 1, -1, 1, 0, 0])
    assert_equal(tensor(backend, [1, -1, 2, 0]).powi_scalar(-3), [1, -1, 0, 0])


def test_float_powi_negative_exponent(backend):
    a = tensor(backend, [2.0, -4.0, 0.5])
    assert_close(a.powi_scalar(-1), [0.5, -0.25, 2.0])
    assert_close(a.powi(tensor(backend, [-2, -1, -3])), [0.25, -0.25, 8.0])
    assert np.isinf(tensor(backend, [0.0]).powi_scalar(-1).into_scalar())
