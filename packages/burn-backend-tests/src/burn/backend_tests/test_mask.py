"""mask_where (values from another tensor) and mask_fill (a scalar), with broadcasting."""

import numpy as np
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, strided, tensor


@all_dtypes
def test_should_support_mask_where_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 9)
    v = random_tensor(backend, rng, (3, 4), dtype, 0, 9)
    m = rng.random((3, 4)) < 0.5
    out = a.mask_where(tensor(backend, m), v)
    assert out.dtype == dtype
    assert_equal(out, np.where(m, ref(v), ref(a)))


def test_should_support_mask_where_broadcast(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    v = random_tensor(backend, rng, (1, 4))
    m = rng.random((3, 1)) < 0.5
    assert_equal(a.mask_where(tensor(backend, m), v), np.where(m, ref(v), ref(a)))


def test_should_support_mask_where_bool(backend):
    a = tensor(backend, [True, True, False])
    v = tensor(backend, [False, False, True])
    m = tensor(backend, [True, False, True])
    assert_equal(a.mask_where(m, v), [False, True, True])


@all_dtypes
def test_should_support_mask_fill_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 9)
    m = rng.random((3, 4)) < 0.5
    out = a.mask_fill(tensor(backend, m), 2)
    assert out.dtype == dtype
    assert_equal(out, np.where(m, 2.0, ref(a)))


def test_should_support_mask_fill_broadcast_and_bool(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    m = np.array([[True, False, True]])
    assert_equal(a.mask_fill(tensor(backend, m), -1.5), np.where(m, -1.5, ref(a)))
    b = tensor(backend, [False, False])
    assert_equal(b.mask_fill(tensor(backend, [True, False]), True), [True, False])


def test_mask_non_contiguous_and_nan(backend, rng):
    values = rng.standard_normal((3, 4))
    m = rng.random((4, 3)) < 0.5
    got = strided(backend, values).mask_fill(tensor(backend, m).transpose(), np.nan)
    want = np.where(m.T, np.nan, values.astype(np.float32))
    assert_equal(got, want)
