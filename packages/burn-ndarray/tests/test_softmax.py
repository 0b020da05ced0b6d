"""NdArray's softmax, log-softmax and their backward ops over the last axis, where the row
maxima are a tree of pairwise maxima and the row sums a matrix-vector product, against float64
references and numpy's own reductions: every row length around the tree's folds (odd lengths
leave a column over), the other axes, and rows of NaN and -inf."""

from __future__ import annotations

import numpy as np
import pytest
from burn.ndarray import fused
from burn.ndarray.backend import NdArrayBackend

OPS = NdArrayBackend()
LENGTHS = [1, 2, 3, 5, 7, 10, 31, 64, 65, 127, 128, 300]


def _reference_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("n", LENGTHS)
def test_row_max_is_numpy_max_at_every_length(n):
    x = np.random.default_rng(n).standard_normal((3, 17, n)).astype(np.float32)
    x[1, 4, n // 2] = np.nan
    x[2, 5] = -np.inf
    x[0, 3, -1] = 1e30  # the last column, which an odd length leaves over at the first fold
    assert np.array_equal(fused._row_max(x), x.max(axis=-1, keepdims=True), equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", LENGTHS)
def test_row_sums_match_numpy(n, dtype):
    x = np.random.default_rng(n).standard_normal((4, 9, n)).astype(dtype)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(
        fused._row_sums(x), x.sum(axis=-1, keepdims=True), rtol=tolerance, atol=tolerance
    )
    strided = x[:, ::2]  # not contiguous: numpy's own sum
    np.testing.assert_allclose(
        fused._row_sums(strided), strided.sum(axis=-1, keepdims=True), rtol=tolerance
    )


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dim", [-1, 2, 1, 0])
def test_softmax_and_log_softmax_against_float64(n, dim):
    x = (np.random.default_rng(n).standard_normal((5, 6, n)) * 4).astype(np.float32)
    expected = _reference_softmax(x, dim)
    np.testing.assert_allclose(OPS.softmax(x, dim), expected, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(OPS.log_softmax(x, dim), np.log(expected), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("n", [3, 64, 65])
def test_backward_ops_against_float64(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((7, n)).astype(np.float32)
    grad = rng.standard_normal((7, n)).astype(np.float32)
    s = _reference_softmax(x, -1)
    g = grad.astype(np.float64)
    softmax_grad = s * (g - (g * s).sum(axis=-1, keepdims=True))
    log_softmax_grad = g - s * g.sum(axis=-1, keepdims=True)
    output = OPS.softmax(x, -1)
    np.testing.assert_allclose(
        OPS.softmax_backward(output, grad, -1), softmax_grad, rtol=1e-5, atol=1e-6
    )
    log_output = OPS.log_softmax(x, -1)
    np.testing.assert_allclose(
        OPS.log_softmax_backward(log_output, grad, -1), log_softmax_grad, rtol=1e-5, atol=1e-6
    )


def test_rows_of_nan_and_minus_infinity_stay_nan():
    x = np.zeros((3, 10), np.float32)
    x[0, 3] = np.nan
    x[1] = -np.inf
    out = OPS.softmax(x, -1)
    assert np.isnan(out[0]).all() and np.isnan(out[1]).all()
    np.testing.assert_allclose(out[2], np.full(10, 0.1, np.float32))
    log_out = OPS.log_softmax(x, -1)
    assert np.isnan(log_out[0]).all() and np.isnan(log_out[1]).all()
