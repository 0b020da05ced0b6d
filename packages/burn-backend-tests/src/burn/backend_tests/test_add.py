"""add / add_scalar and the `+` operator, for Float and Int tensors."""

import numpy as np
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
def test_add_d2(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    b = random_tensor(backend, rng, (2, 3), dtype)
    out = a.add(b)
    assert out.dtype == dtype
    assert_close(out, ref(a) + ref(b))


def test_add_broadcast(backend, rng):
    a = random_tensor(backend, rng, (1, 3))
    b = random_tensor(backend, rng, (2, 1))
    assert_close(a + b, ref(a) + ref(b))
    assert_close(b + a, ref(b) + ref(a))


def test_add_different_strides_rhs(backend, rng):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((3, 4))
    assert_close(tensor(backend, a) + strided(backend, b), a + b, tol=1e-5)
    assert_close(strided(backend, a) + tensor(backend, b), a + b, tol=1e-5)


@float_dtypes
def test_add_scalar_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.add_scalar(2.0), ref(a) + 2.0)
    assert_close(a + 2, ref(a) + 2.0)
    assert_close(2.5 + a, ref(a) + 2.5)


def test_add_empty(backend):
    a = tensor(backend, np.zeros((0, 3)))
    assert (a + a).dims() == [0, 3]
    assert (a + 1.0).dims() == [0, 3]


@int_dtypes
def test_add_d2_int(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype, 0, 20)
    b = random_tensor(backend, rng, (2, 3), dtype, 0, 20)
    out = a + b
    assert_equal(out, ref(a) + ref(b), dtype)


def test_add_broadcast_int(backend):
    a = tensor(backend, [[0, 1, 2]])
    b = tensor(backend, [[3], [4]])
    assert_equal(a + b, [[3, 4, 5], [4, 5, 6]])


@int_dtypes
def test_add_scalar_ops_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    assert_equal(a.add_scalar(2), [[2, 3, 4], [5, 6, 7]], dtype)
    assert_equal(3 + a, [[3, 4, 5], [6, 7, 8]], dtype)
