"""NdArray's plain max pooling (one spatial dim at a time) against its indexed version (one
pass per window tap) and a float64 loop over every window: same maxima, NaN and infinities
included, for 1-D, 2-D and 3-D windows with strides, padding and dilation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from burn.ndarray import NdArray


def _reference(x, kernel, stride, padding, dilation):
    """Every window's maximum, window by window (NaN wins, as in numpy's `maximum`)."""
    pads = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    padded = np.pad(x.astype(np.float64), pads, constant_values=-np.inf)
    out = [
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation, strict=True)
    ]
    y = np.empty(x.shape[:2] + tuple(out))
    for pos in itertools.product(*(range(o) for o in out)):
        window = padded[
            (slice(None), slice(None))
            + tuple(
                slice(i * s, i * s + d * (k - 1) + 1, d)
                for i, s, d, k in zip(pos, stride, dilation, kernel, strict=True)
            )
        ]
        flat = window.reshape(window.shape[0], window.shape[1], -1)
        y[(slice(None), slice(None), *pos)] = np.maximum.reduce(flat, axis=-1)
    return y.astype(x.dtype)


CASES = [
    (1, (3,), (2,), (1,), (1,)),
    (1, (2,), (1,), (0,), (3,)),
    (2, (3, 3), (2, 2), (1, 1), (1, 1)),
    (2, (2, 3), (1, 2), (0, 1), (2, 1)),
    (2, (1, 1), (2, 3), (0, 0), (1, 1)),
    (3, (2, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1)),
    (2, (2, 2), (2, 2), (1, 1), (1, 1)),  # no tap reaches every output along either dim
]


@pytest.mark.parametrize(("nd", "kernel", "stride", "padding", "dilation"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_max_pool_matches_the_indexed_one_and_a_window_loop(
    nd, kernel, stride, padding, dilation, dtype
):
    rng = np.random.default_rng(nd * 7 + kernel[0])
    shape = (2, 3) + (9, 8, 7)[:nd]
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 6, replace=False)] = [np.nan, np.inf, -np.inf, np.nan, 0.0, -0.0]
    if nd < 3:
        plain = getattr(NdArray, f"max_pool{nd}d")(x, kernel, stride, padding, dilation)
        indexed, _ = getattr(NdArray, f"max_pool{nd}d_with_indices")(
            x, kernel, stride, padding, dilation
        )
    else:  # no 3-D op in the contract: the n-d code both ops share
        plain = NdArray._nd_max_pool(x, kernel, stride, padding, dilation)
        indexed, _ = NdArray._nd_max_pool_with_indices(x, kernel, stride, padding, dilation)
    expected = _reference(x, kernel, stride, padding, dilation)
    assert plain.dtype == x.dtype
    np.testing.assert_array_equal(plain, expected)
    np.testing.assert_array_equal(plain, indexed)


def test_plain_max_pool_leaves_its_input_alone():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    before = x.copy()
    y = NdArray.max_pool2d(x, (2, 2), (1, 1), (0, 0), (1, 1))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(y[0, 0], [[5, 6, 7], [9, 10, 11], [13, 14, 15]])


@pytest.mark.parametrize("block_bytes", [1, 9 * 8 * 4 * 2, 1 << 20])
def test_plain_max_pool_in_blocks_of_channels(monkeypatch, block_bytes):
    """One channel per block, a few, or all at once: the same maxima (the last block short)."""
    from burn.ndarray import module_ops

    monkeypatch.setattr(module_ops, "POOL_BLOCK_BYTES", block_bytes)
    x = np.random.default_rng(3).standard_normal((2, 5, 9, 8)).astype(np.float32)
    y = NdArray.max_pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1))
    np.testing.assert_array_equal(y, _reference(x, (3, 3), (2, 2), (1, 1), (1, 1)))


def test_plain_max_pool_of_a_strided_input_and_of_no_channels():
    x = np.random.default_rng(4).standard_normal((2, 3, 10, 12)).astype(np.float32)
    view = x[:, ::-1, ::2, 1::2]  # not contiguous: pooled from a copy
    y = NdArray.max_pool2d(view, (2, 2), (1, 1), (0, 0), (1, 1))
    np.testing.assert_array_equal(y, _reference(view, (2, 2), (1, 1), (0, 0), (1, 1)))
    empty = NdArray.max_pool2d(np.zeros((2, 0, 6, 6), np.float32), (3, 3), (2, 2), (1, 1), (1, 1))
    assert empty.shape == (2, 0, 3, 3)
