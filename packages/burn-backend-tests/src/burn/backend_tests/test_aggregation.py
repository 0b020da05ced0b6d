"""sum / mean / prod, whole-tensor and along dims (kept with size 1, as Burn does)."""

import numpy as np
import pytest
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
def test_should_sum(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    out = a.sum()
    assert out.dims() == [1] and out.dtype == dtype
    assert_close(out, [ref(a).sum()], tol={"f16": 1e-2, "bf16": 5e-2}.get(dtype.value))


@float_dtypes
def test_should_mean(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.mean(), [ref(a).mean()], tol={"f16": 1e-2, "bf16": 5e-2}.get(dtype.value))


@int_dtypes
def test_should_sum_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    assert_equal(a.sum(), [15], dtype)


def test_should_mean_int(backend):
    # The integer mean divides the sum with Int division.
    assert_equal(tensor(backend, [[2, 2, 2], [3, 4, 5]]).mean(), [3])


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_should_sum_dim(backend, rng, dim):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_close(a.sum_dim(dim), ref(a).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, 2, -2])
def test_should_mean_dim(backend, rng, dim):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_close(a.mean_dim(dim), ref(a).mean(axis=dim, keepdims=True))


@float_dtypes
def test_should_mean_last_dim(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.mean_dim(1), ref(a).mean(axis=1, keepdims=True))


def test_should_sum_last_dim_int(backend):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]])
    assert_equal(a.sum_dim(1), [[3], [12]])
    assert_equal(a.mean_dim(1), [[1], [4]])


def test_should_sum_mid_dim_3d_non_contiguous_1(backend, rng):
    a = rng.standard_normal((2, 3, 4))
    t = tensor(backend, a).swap_dims(0, 2)
    assert_close(
        t.sum_dim(1), a.astype(np.float32).transpose(2, 1, 0).sum(1, keepdims=True), tol=1e-5
    )


def test_should_sum_mid_dim_3d_non_contiguous_2(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_close(
        strided(backend, a).sum_dim(0), a.astype(np.float32).sum(0, keepdims=True), tol=1e-5
    )


def test_sum_dims_and_mean_dims(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_close(a.sum_dims([0, 2]), ref(a).sum(axis=(0, 2), keepdims=True))
    assert_close(a.mean_dims([1, -1]), ref(a).mean(axis=(1, 2), keepdims=True))


def test_prod_float(backend):
    assert_close(tensor(backend, [[2.0, 1.0, 2.0], [3.0, 4.0, 5.0]]).prod(), [240.0])
    assert_close(tensor(backend, [[2.0, 0.0, 2.0], [3.0, 4.0, 5.0]]).prod(), [0.0])


def test_prod_dim_float(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    assert_close(a.prod_dim(1), ref(a).prod(axis=1, keepdims=True))
    assert_close(a.prod_dim(0), ref(a).prod(axis=0, keepdims=True))


def test_prod_int(backend):
    a = tensor(backend, [[2, 1, 2], [3, 4, 5]])
    assert_equal(a.prod(), [240])
    assert_equal(a.prod_dim(1), [[4], [60]])


def test_sum_prod_empty(backend):
    a = tensor(backend, np.zeros((0, 3)))
    assert_equal(a.sum(), [0.0])
    assert_equal(a.sum_dim(0), [[0.0, 0.0, 0.0]])
    assert_equal(a.prod_dim(0), [[1.0, 1.0, 1.0]])
    assert_equal(a.sum_dim(1), np.zeros((0, 1)))
