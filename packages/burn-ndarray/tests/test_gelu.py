"""NdArray's float32 GELU and its derivative (table interpolation) against float64."""

from __future__ import annotations

import math

import numpy as np
from burn.ndarray import NdArray
from burn.ndarray.gelu import BLOCK, gelu_backward_f32, gelu_f32

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _phi(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))


def _slope(x: np.ndarray) -> np.ndarray:
    return _phi(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _grid() -> np.ndarray:
    """Both signs, the table's cell edges and ends, tiny magnitudes, and past the ends."""
    tiny = np.geomspace(1e-30, 1e-3, 500)
    edges = np.arange(-8 * 1024, 8 * 1024 + 1)[::7] / 1024
    return np.concatenate(
        [np.linspace(-9.0, 9.0, 400_001), edges, tiny, -tiny, [7.9999, 8.0, 8.001, -8.0, 20.0]]
    ).astype(np.float32)


def test_gelu_within_5e7_of_float64():
    x = _grid()
    got = gelu_f32(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    x64 = x.astype(np.float64)
    want = x64 * _phi(x64)
    # `Phi` within 5e-7, so GELU within 5e-7 * |x| (and a float32 rounding of the product).
    bound = 5e-7 * np.maximum(np.abs(x64), 1.0) + np.abs(want) * 2.0**-23
    assert np.all(np.abs(got - want) <= bound)
    # Relative accuracy where GELU is not tiny.
    big = np.abs(want) > 1e-3
    assert np.max(np.abs(got[big] - want[big]) / np.abs(want[big])) < 2e-6


def test_gelu_derivative_within_5e7_of_float64():
    x = _grid()
    grad = np.ones_like(x)
    got = gelu_backward_f32(x, grad)
    assert got.dtype == np.float32
    assert np.max(np.abs(got - _slope(x.astype(np.float64)))) < 5e-7


def test_special_and_large_values():
    x = np.float32([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 50.0, -50.0])
    with np.errstate(invalid="ignore"):
        y = gelu_f32(x)
    assert np.isnan(y[0]) and np.isnan(y[2])  # -inf * 0, as the composition gives
    np.testing.assert_array_equal(y[[1, 3, 7]], x[[1, 3, 7]])
    assert y[4] == 0.0 and y[8] == 0.0 and y[5] == 0.0 and y[6] == 0.0
    d = gelu_backward_f32(x, np.ones_like(x))
    assert np.isnan(d[0])
    np.testing.assert_array_equal(d[1:], [1.0, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0, 0.0])


def test_blocks_strides_and_broadcast_grad():
    """Past one block, on a strided input, with the gradient broadcast: the same values as
    the contiguous computation element by element."""
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 3.0, (3, BLOCK // 2 + 7, 4)).astype(np.float32)
    strided = x[:, ::2, 1:]
    np.testing.assert_array_equal(gelu_f32(strided), gelu_f32(np.ascontiguousarray(strided)))
    grad = rng.normal(size=(1, 1, 3)).astype(np.float32)
    full = np.broadcast_to(grad, strided.shape).copy()
    np.testing.assert_array_equal(
        gelu_backward_f32(strided, grad), gelu_backward_f32(strided, full)
    )


def test_backend_ops_use_the_tables_in_float32_and_keep_half_dtypes():
    x = np.linspace(-4, 4, 101).astype(np.float32)
    np.testing.assert_array_equal(NdArray.gelu(x), gelu_f32(x))
    half = x.astype(np.float16)
    out = NdArray.gelu(half)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, x * _phi(x.astype(np.float64)), atol=2e-3, rtol=2e-3)
    grad = NdArray.gelu_backward(half, np.ones_like(half))
    assert grad.dtype == np.float16
