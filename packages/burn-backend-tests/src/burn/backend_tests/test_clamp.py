"""clamp / clamp_min / clamp_max, Float and Int."""

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
def test_clamp_min(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype)
    assert_close(a.clamp_min(0.5), np.maximum(ref(a), 0.5))


@float_dtypes
def test_clamp_max(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype)
    assert_close(a.clamp_max(-0.5), np.minimum(ref(a), -0.5))


@float_dtypes
def test_clamp_min_max(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 4), dtype)
    assert_close(a.clamp(-1.0, 1.0), np.clip(ref(a), -1.0, 1.0))


@int_dtypes
def test_clamp_int(backend, dtype):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]], dtype)
    assert_equal(a.clamp(1, 4), [[1, 1, 2], [3, 4, 4]], dtype)
    assert_equal(a.clamp_min(2), [[2, 2, 2], [3, 4, 5]], dtype)
    assert_equal(a.clamp_max(3), [[0, 1, 2], [3, 3, 3]], dtype)


def test_clamp_non_contiguous_and_empty(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_close(strided(backend, a).clamp(-0.5, 0.5), np.clip(a, -0.5, 0.5), tol=1e-6)
    assert tensor(backend, np.zeros((0, 4))).clamp(0, 1).dims() == [0, 4]


def test_clamp_keeps_nan(backend):
    got = ref(tensor(backend, [np.nan, 3.0]).clamp(0.0, 1.0))
    assert np.isnan(got[0]) and got[1] == 1.0
