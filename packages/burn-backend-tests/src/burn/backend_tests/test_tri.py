"""tril / triu with diagonal offsets, and tril_mask / triu_mask / diag_mask."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_equal, random_tensor, ref, tensor
from burn.tensor import Bool, Tensor


@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
def test_tril_triu(backend, rng, diagonal):
    a = random_tensor(backend, rng, (3, 4))
    assert_equal(a.tril(diagonal), np.tril(ref(a), diagonal))
    assert_equal(a.triu(diagonal), np.triu(ref(a), diagonal))


def test_tril_triu_batched_int(backend, rng):
    v = rng.integers(-5, 5, (2, 3, 3))
    a = tensor(backend, v)
    assert_equal(a.tril(), np.tril(v))
    assert_equal(a.triu(1), np.triu(v, 1))


@pytest.mark.parametrize("offset", [-1, 0, 2])
def test_tri_masks(backend, device, offset):
    shape = [3, 4]
    lower = Tensor[backend, 2].tril_mask(shape, offset, device)
    upper = Tensor[backend, 2].triu_mask(shape, offset, device)
    diag = Tensor[backend, 2].diag_mask(shape, offset, device)
    assert lower.kind is Bool and upper.kind is Bool and diag.kind is Bool
    ones = np.ones(shape, dtype=bool)
    assert_equal(lower, ~np.tril(ones, offset))
    assert_equal(upper, ~np.triu(ones, offset))
    want_diag = np.ones(shape, dtype=bool)
    i = np.arange(shape[0])
    j = i + offset
    keep = (j >= 0) & (j < shape[1])
    want_diag[i[keep], j[keep]] = False
    assert_equal(diag, want_diag)


def test_tri_mask_batched(backend, device):
    m = Tensor[backend, 3].triu_mask([2, 2, 2], 0, device)
    assert_equal(m, np.broadcast_to(~np.triu(np.ones((2, 2), bool)), (2, 2, 2)))
