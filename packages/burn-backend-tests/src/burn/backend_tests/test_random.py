"""random with each Distribution: shapes, dtypes, ranges and moments (fixed seed, loose bounds)."""

import numpy as np
import pytest
from burn.backend_tests.helpers import FLOAT_DTYPES, ref, require_dtype
from burn.tensor import Distribution, Int, Tensor

N = 20_000


def _draw(backend, device, dist, dtype=None, kind=None):
    if hasattr(backend, "seed"):
        backend.seed(7)
    cls = Tensor[backend, 2, kind] if kind else Tensor[backend, 2]
    t = cls.random([N // 100, 100], dist, device, dtype)
    assert t.dims() == [N // 100, 100]
    return ref(t)


def test_distribution_default(backend, device):
    v = _draw(backend, device, Distribution.Default)
    assert v.min() >= 0.0 and v.max() < 1.0 + 1e-6
    assert abs(v.mean() - 0.5) < 0.02
    assert abs(v.var() - 1 / 12) < 0.01


def test_distribution_uniform(backend, device):
    v = _draw(backend, device, Distribution.Uniform(-3.0, 5.0))
    assert v.min() >= -3.0 and v.max() <= 5.0
    assert abs(v.mean() - 1.0) < 0.1
    assert abs(v.var() - 64 / 12) < 0.3


def test_distribution_normal(backend, device):
    v = _draw(backend, device, Distribution.Normal(2.0, 0.5))
    assert abs(v.mean() - 2.0) < 0.02
    assert abs(v.std() - 0.5) < 0.02
    assert np.mean(np.abs(v - 2.0) < 0.5) == pytest.approx(0.6827, abs=0.02)


def test_distribution_bernoulli(backend, device):
    v = _draw(backend, device, Distribution.Bernoulli(0.3))
    assert set(np.unique(v)) <= {0.0, 1.0}
    assert abs(v.mean() - 0.3) < 0.02


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.value)
def test_random_float_dtypes(backend, device, dtype):
    require_dtype(backend, dtype)
    t = Tensor[backend, 1].random([64], Distribution.Uniform(0.0, 1.0), device, dtype)
    assert t.dtype == dtype
    v = ref(t)
    assert v.min() >= 0.0 and v.max() <= 1.0


def test_random_int(backend, device):
    v = _draw(backend, device, Distribution.Uniform(0.0, 10.0), kind=Int)
    assert np.all(v == np.round(v))
    assert v.min() >= 0 and v.max() <= 10


def test_random_empty_and_different_draws(backend, device):
    assert Tensor[backend, 2].random([0, 3], Distribution.Default, device).dims() == [0, 3]
    a = ref(Tensor[backend, 1].random([32], Distribution.Default, device))
    b = ref(Tensor[backend, 1].random([32], Distribution.Default, device))
    assert not np.array_equal(a, b)


def test_seed_reproducible(backend, device):
    if not hasattr(backend, "seed"):
        pytest.skip("backend has no seed()")
    backend.seed(3)
    a = ref(Tensor[backend, 1].random([16], Distribution.Normal(0.0, 1.0), device))
    backend.seed(3)
    b = ref(Tensor[backend, 1].random([16], Distribution.Normal(0.0, 1.0), device))
    np.testing.assert_array_equal(a, b)
