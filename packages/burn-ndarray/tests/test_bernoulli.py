"""NdArray's Bernoulli draws (dropout's masks): each path (8, 16 or 32 random bits per draw)
gives the asked probability, and the draws that share a generator word are independent."""

from __future__ import annotations

import numpy as np
import pytest
from burn.ndarray.backend import _bernoulli

N = 1 << 21


@pytest.mark.parametrize(
    "prob",
    [0.5, 0.25, 3 / 256, 255 / 256, 5 / 65536, 0.5 + 1 / 65536, 0.1, 0.9, 1e-4],
    ids=lambda p: f"{p:.6g}",
)
def test_draws_are_true_with_the_asked_probability(prob):
    draws = _bernoulli(np.random.default_rng(7), (N,), prob)
    assert draws.dtype == np.bool_ and draws.shape == (N,)
    sigma = np.sqrt(prob * (1 - prob) / N)
    assert abs(draws.mean() - prob) < 6 * sigma


@pytest.mark.parametrize("prob", [0.5, 0.25, 20001 / 65536])  # 8, 8 and 16 bits a draw
def test_draws_sharing_a_word_are_independent(prob):
    """Eight (or four) draws come from one 64-bit word: every pair of positions within a word,
    and neighbouring words, must be true together with probability prob**2."""
    draws = _bernoulli(np.random.default_rng(8), (N,), prob).reshape(-1, 8)
    sigma = np.sqrt(prob**2 * (1 - prob**2) / draws.shape[0])
    for a in range(8):
        for b in range(a + 1, 8):
            both = np.mean(draws[:, a] & draws[:, b])
            assert abs(both - prob**2) < 6 * sigma, (a, b)
    across = np.mean(draws[:-1, 7] & draws[1:, 0])
    assert abs(across - prob**2) < 6 * sigma


def test_the_same_seed_gives_the_same_draws_and_shapes_are_kept():
    a = _bernoulli(np.random.default_rng(3), (5, 7, 3), 0.5)
    b = _bernoulli(np.random.default_rng(3), (5, 7, 3), 0.5)
    assert a.shape == (5, 7, 3)
    np.testing.assert_array_equal(a, b)
    assert _bernoulli(np.random.default_rng(3), (0, 4), 0.5).shape == (0, 4)
    assert _bernoulli(np.random.default_rng(3), (4,), 1.0).all()
    assert not _bernoulli(np.random.default_rng(3), (4,), 0.0).any()
