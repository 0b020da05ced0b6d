"""remainder / remainder_scalar and `%`: the result takes the divisor's sign (like Python)."""

import numpy as np
from burn.backend_tests.helpers import (
    assert_close,
    assert_equal,
    float_dtypes,
    int_dtypes,
    random_tensor,
    ref,
    tensor,
)


@float_dtypes
def test_should_support_remainder_basic(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, -5, 5)
    b = random_tensor(backend, rng, (3, 4), dtype, 0.5, 2)
    b = b * tensor(backend, rng.choice([-1.0, 1.0], (3, 4)), dtype)
    want = np.mod(ref(a), ref(b))
    got = ref(a.remainder(b))
    # Near a multiple of the divisor the result may land on either side: compare modulo b.
    diff = np.abs(got - want)
    assert np.all((diff < 1e-2) | (np.abs(diff - np.abs(ref(b))) < 1e-2)), (got, want)
    assert np.all((got == 0) | (np.sign(got) == np.sign(ref(b))) | (np.abs(got) < 1e-2))


def test_should_support_remainder_float(backend):
    a = tensor(backend, [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    assert_close(a.remainder_scalar(2.0), [1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    assert_close(a.remainder_scalar(-1.5), [0.0, -0.5, -1.0, -0.5, -1.0, 0.0])
    assert_close(a % 2.0, [1.0, 0.0, 1.0, 1.0, 0.0, 1.0])


def test_should_support_remainder_broadcast(backend):
    a = tensor(backend, [[5.0], [-5.0]])
    b = tensor(backend, [[3.0, -3.0]])
    assert_close(a % b, [[2.0, -1.0], [1.0, -2.0]])


@int_dtypes
def test_should_support_remainder_int(backend, dtype):
    a = tensor(backend, [0, 1, 5, 7, 9, 12], dtype)
    assert_equal(a.remainder_scalar(4), [0, 1, 1, 3, 1, 0], dtype)
    b = tensor(backend, [3, 3, 3, 4, 4, 5], dtype)
    assert_equal(a % b, [0, 1, 2, 3, 1, 2], dtype)


def test_remainder_int_sign_of_divisor(backend):
    a = tensor(backend, [7, -7, 7, -7])
    b = tensor(backend, [3, 3, -3, -3])
    assert_equal(a.remainder(b), [1, 2, -2, -1])
    assert_equal(a.remainder_scalar(-3), [-2, -1, -2, -1])
