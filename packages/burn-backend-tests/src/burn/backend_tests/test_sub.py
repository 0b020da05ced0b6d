"""sub / sub_scalar and the `-` operator."""

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
def test_sub_d2(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    b = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.sub(b), ref(a) - ref(b))


def test_sub_broadcast(backend, rng):
    a = random_tensor(backend, rng, (3, 1, 2))
    b = random_tensor(backend, rng, (1, 4, 2))
    assert_close(a - b, ref(a) - ref(b))


def test_sub_different_strides(backend, rng):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((3, 4))
    assert_close(strided(backend, a) - strided(backend, b), a - b, tol=1e-5)


@float_dtypes
def test_should_support_sub_scalar_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.sub_scalar(1.5), ref(a) - 1.5)
    assert_close(a - 1.5, ref(a) - 1.5)
    assert_close(1.5 - a, 1.5 - ref(a))


@int_dtypes
def test_sub_d2_int(backend, dtype):
    a = tensor(backend, [[10, 11, 12], [13, 14, 15]], dtype)
    b = tensor(backend, [[1, 2, 3], [4, 5, 6]], dtype)
    assert_equal(a - b, [[9, 9, 9], [9, 9, 9]], dtype)


def test_sub_broadcast_int(backend):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]])
    b = tensor(backend, [[1, 2, 3]])
    assert_equal(a - b, [[-1, -1, -1], [2, 2, 2]])
    assert_equal(10 - a, [[10, 9, 8], [7, 6, 5]])


def test_should_support_sub_scalar_ops_int(backend):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]])
    assert_equal(a.sub_scalar(2), [[-2, -1, 0], [1, 2, 3]])
