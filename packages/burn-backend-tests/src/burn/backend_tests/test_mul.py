"""mul / mul_scalar and the `*` operator."""

from burn.backend_tests.helpers import (
    assert_close,
    assert_equal,
    float_dtypes,
    int_dtypes,
    random_tensor,
    ref,
    strided,
    tensor,
)


@float_dtypes
def test_should_support_mul_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    b = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.mul(b), ref(a) * ref(b))


def test_test_mul_broadcast(backend, rng):
    a = random_tensor(backend, rng, (1, 3))
    b = random_tensor(backend, rng, (2, 1))
    assert_close(a * b, ref(a) * ref(b))


def test_test_mul_broadcast_2_dims(backend, rng):
    a = random_tensor(backend, rng, (3, 1))
    b = random_tensor(backend, rng, (1, 3))
    assert_close(a * b, ref(a) * ref(b))


def test_mul_different_strides(backend, rng):
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((2, 3, 4))
    assert_close(strided(backend, a) * tensor(backend, b), a * b, tol=1e-5)


@float_dtypes
def test_should_support_mul_scalar_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.mul_scalar(2.0), ref(a) * 2.0)
    assert_close(-0.5 * a, ref(a) * -0.5)


@int_dtypes
def test_should_support_mul_ops_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    assert_equal(a * a, [[0, 1, 4], [9, 16, 25]], dtype)
    assert_equal(a.mul_scalar(2), [[0, 2, 4], [6, 8, 10]], dtype)


def test_should_support_mul_broadcast_int(backend):
    a = tensor(backend, [[0, 1, 2]])
    b = tensor(backend, [[3], [-4]])
    assert_equal(a * b, [[0, 3, 6], [0, -4, -8]])
