"""matmul (`@`) with batch broadcasting, and dot."""

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


@float_dtypes
def test_test_float_matmul_d2(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype)
    b = random_tensor(backend, rng, (4, 5), dtype)
    tol = {"f16": 2e-2, "bf16": 1e-1}.get(dtype.value)
    out = a.matmul(b)
    assert out.dtype is dtype
    assert_close(out, ref(a) @ ref(b), tol=tol)


def test_test_float_matmul_d3(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    b = random_tensor(backend, rng, (2, 4, 2))
    assert_close(a @ b, ref(a) @ ref(b))


def test_test_float_matmul_broadcast_1(backend, rng):
    a = random_tensor(backend, rng, (3, 1, 2, 4))
    b = random_tensor(backend, rng, (1, 2, 4, 3))
    assert_close(a @ b, ref(a) @ ref(b))


def test_test_float_matmul_simple_1(backend):
    a = tensor(backend, [[5.0, 14.0], [14.0, 50.0]])
    b = tensor(backend, [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]])
    assert_close(a @ b, [[15.0, 34.0, 53.0], [42.0, 106.0, 170.0]])


def test_test_float_matmul_trivial_transposed(backend, rng):
    a = rng.standard_normal((4, 3))
    assert_close(strided(backend, a).transpose() @ tensor(backend, a), a.T @ a, tol=1e-4)


def test_matmul_non_contiguous(backend, rng):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2))
    assert_close(strided(backend, a) @ strided(backend, b), a @ b, tol=1e-4)


def test_test_int_matmul_d2(backend):
    a = tensor(backend, [[1, 2], [3, 4]])
    b = tensor(backend, [[5, 6], [7, 8]])
    assert_equal(a @ b, [[19, 22], [43, 50]])


@pytest.mark.parametrize("shape", [(0, 3, 2), (3, 0, 2), (3, 2, 0)])
def test_matmul_empty(backend, shape):
    m, k, n = shape
    a = tensor(backend, np.ones((m, k)))
    b = tensor(backend, np.ones((k, n)))
    assert_close(a @ b, np.ones((m, k)) @ np.ones((k, n)))


def test_should_support_dot(backend, rng):
    a = random_tensor(backend, rng, (5,))
    b = random_tensor(backend, rng, (5,))
    assert_close(a.dot(b), [np.dot(ref(a), ref(b))])
