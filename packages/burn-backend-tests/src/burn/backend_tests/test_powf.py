"""powf / powf_scalar / powi / powi_scalar / square and the `**` operator."""

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
def test_should_support_powf_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype, 0.1, 3.0)
    b = random_tensor(backend, rng, (2, 3), dtype, -2.0, 2.0)
    assert_close(a.powf(b), np.power(ref(a), ref(b)))
    assert_close(a**b, np.power(ref(a), ref(b)))


def test_should_support_neg_power(backend):
    a = tensor(backend, [[1.0, 2.0], [4.0, 8.0]])
    assert_close(a.powf_scalar(-2.0), [[1.0, 0.25], [1.0 / 16, 1.0 / 64]])


def test_should_support_neg_values_with_even_power(backend):
    a = tensor(backend, [-1.0, -2.0, -3.0])
    assert_close(a.powf_scalar(2.0), [1.0, 4.0, 9.0])
    assert_close(a.powf_scalar(3.0), [-1.0, -8.0, -27.0])


def test_powf_broadcast(backend, rng):
    a = random_tensor(backend, rng, (3, 1), None, 0.5, 2.0)
    b = random_tensor(backend, rng, (1, 4), None, -1.0, 2.0)
    assert_close(a.powf(b), np.power(ref(a), ref(b)))


@float_dtypes
def test_should_support_powf_scalar(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype, 0.0, 3.0)
    assert_close(a.powf_scalar(0.5), np.sqrt(ref(a)))
    assert_close(a**3, ref(a) ** 3)


def test_should_support_rpow(backend):
    a = tensor(backend, [0.0, 1.0, 2.0, -1.0])
    assert_close(2.0**a, [1.0, 2.0, 4.0, 0.5])


@float_dtypes
def test_should_support_powi_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype, -2.0, 2.0)
    assert_close(a.powi_scalar(3), ref(a) ** 3)
    e = tensor(backend, [[0, 1, 2], [3, 2, 1]])
    assert_close(a.powi(e), ref(a) ** np.array([[0, 1, 2], [3, 2, 1]]))


@int_dtypes
def test_should_support_powi_ops_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    assert_equal(a.powi_scalar(2), [[0, 1, 4], [9, 16, 25]], dtype)
    assert_equal(a**2, [[0, 1, 4], [9, 16, 25]], dtype)
    e = tensor(backend, [[3, 2, 1], [0, 1, 2]], dtype)
    assert_equal(a.powi(e), [[0, 1, 2], [1, 4, 25]], dtype)


def test_powf_on_int(backend):
    a = tensor(backend, [1, 2, 3])
    out = a.powf_scalar(2.0)
    assert out.kind is a.kind
    assert_equal(out, [1, 4, 9])


@float_dtypes
def test_should_support_square(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.square(), ref(a) ** 2)
    assert_equal(tensor(backend, [-3, 4]).square(), [9, 16])
