"""Tensor.cov: covariance with observations along a dim, against numpy.cov in float64."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_close, reference_dtype, strided, tensor
from burn.tensor import RankError


@pytest.mark.parametrize("correction", [0, 1])
def test_cov_d2(backend, rng, correction):
    x = rng.standard_normal((3, 7))
    got = tensor(backend, x, reference_dtype(backend)).cov(1, correction)
    assert_close(got, np.cov(x, ddof=correction))


def test_cov_observations_first(backend, rng):
    x = rng.standard_normal((6, 4))
    got = strided(backend, x, reference_dtype(backend)).cov(0)
    assert_close(got, np.cov(x, rowvar=False))


def test_cov_batched(backend, rng):
    x = rng.standard_normal((2, 3, 5))
    got = tensor(backend, x, reference_dtype(backend)).cov(2)
    assert_close(got, np.stack([np.cov(b) for b in x]))


def test_cov_needs_rank_2(backend):
    with pytest.raises(RankError, match="cov"):
        tensor(backend, np.ones(3)).cov(0)
