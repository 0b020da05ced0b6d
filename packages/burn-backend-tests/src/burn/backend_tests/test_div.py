"""div / div_scalar, `/` and `//`: Int division truncates toward zero, as in Burn."""

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
def test_should_support_div_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    b = random_tensor(backend, rng, (2, 3), dtype, 0.5, 3.0)
    assert_close(a.div(b), ref(a) / ref(b))


def test_test_div_broadcast(backend, rng):
    a = random_tensor(backend, rng, (1, 3))
    b = random_tensor(backend, rng, (2, 1), None, 0.5, 2.0)
    assert_close(a / b, ref(a) / ref(b))


@float_dtypes
def test_should_support_div_scalar_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.div_scalar(4.0), ref(a) / 4.0)
    assert_close(a / 4, ref(a) / 4.0)


def test_should_support_rdiv_scalar(backend):
    a = tensor(backend, [1.0, 2.0, 4.0])
    assert_close(2.0 / a, [2.0, 1.0, 0.5])


def test_div_by_zero_float(backend):
    a = tensor(backend, [1.0, -1.0, 0.0])
    out = ref(a / tensor(backend, [0.0, 0.0, 0.0]))
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


def test_floor_div_float(backend):
    a = tensor(backend, [7.0, -7.0, 7.5])
    assert_equal(a // 2.0, [3.0, -4.0, 3.0])


@int_dtypes
def test_should_support_div_ops_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    b = tensor(backend, [[1, 1, 2], [1, 1, 2]], dtype)
    assert_equal(a / b, [[0, 1, 1], [3, 4, 2]], dtype)


def test_int_div_truncates_toward_zero(backend):
    a = tensor(backend, [7, -7, 7, -7, 6, -6])
    b = tensor(backend, [2, 2, -2, -2, 3, 3])
    assert_equal(a / b, [3, -3, -3, 3, 2, -2])
    assert_equal(a.div_scalar(2), [3, -3, 3, -3, 3, -3])


def test_int_floor_div_operator(backend):
    # `//` floors like Python's (div truncates, as Burn's).
    a = tensor(backend, [7, -7, 7, -7, 6, -6])
    assert_equal(a // 2, [3, -4, 3, -4, 3, -3])
    assert_equal(a // tensor(backend, [-2]), [-4, 3, -4, 3, -3, 3])


def test_should_support_div_broadcast_int(backend):
    a = tensor(backend, [[9, 10, 11]])
    b = tensor(backend, [[3], [-5]])
    assert_equal(a / b, [[3, 3, 3], [-1, -2, -2]])
