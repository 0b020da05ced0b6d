"""Interpolation and adaptive pooling on their dedicated kernel: one launch per resampled dim,
forward and backward, against dense float64 matrices built here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn.backend.ops.module import InterpolateMode, InterpolateOptions
from burn.tensor import TensorData
from burn.wgpu import Wgpu


def up(array):
    return Wgpu.from_data(TensorData(np.ascontiguousarray(array, np.float32)), Wgpu.device())


def down(p):
    return Wgpu.into_data(p).array.astype(np.float64)


def nearest(size: int, out: int) -> np.ndarray:
    m = np.zeros((out, size))
    for i in range(out):
        m[i, (i * size) // out] = 1.0
    return m


def bilinear(size: int, out: int) -> np.ndarray:
    """Corners aligned: output i samples input position i * (size - 1) / (out - 1)."""
    m = np.zeros((out, size))
    for i in range(out):
        pos = i * (size - 1) / max(out - 1, 1)
        lo = min(int(math.floor(pos)), size - 1)
        frac = pos - lo
        m[i, lo] += 1.0 - frac
        m[i, min(lo + 1, size - 1)] += frac
    return m


def adaptive(size: int, out: int) -> np.ndarray:
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


def along(x: np.ndarray, matrix: np.ndarray, dim: int) -> np.ndarray:
    return np.moveaxis(np.tensordot(matrix, np.moveaxis(x, dim, 0), axes=1), 0, dim)


def both_dims(x, rows, cols):
    return along(along(x, rows, 2), cols, 3)


@pytest.mark.parametrize(
    "mode, matrix", [(InterpolateMode.Nearest, nearest), (InterpolateMode.Bilinear, bilinear)]
)
@pytest.mark.parametrize("size", [(7, 5), (3, 12)])
def test_interpolate_forward_and_backward(mode, matrix, size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 8))
    g = rng.standard_normal((2, 3, *size))
    rows, cols = matrix(6, size[0]), matrix(8, size[1])
    options = InterpolateOptions(mode)
    out = Wgpu.interpolate(up(x), size, options)
    np.testing.assert_allclose(down(out), both_dims(x, rows, cols), rtol=1e-5, atol=1e-5)
    grad = Wgpu.interpolate_backward(up(x), up(g), size, options)
    np.testing.assert_allclose(down(grad), both_dims(g, rows.T, cols.T), rtol=1e-5, atol=1e-5)


def test_bicubic_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    g = rng.standard_normal((1, 2, 9, 4)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.interpolate(tx, (9, 4), mode="bicubic", align_corners=True)
    ty.backward(torch.tensor(g))
    options = InterpolateOptions(InterpolateMode.Bicubic)
    out = Wgpu.interpolate(up(x), (9, 4), options)
    np.testing.assert_allclose(down(out), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    grad = Wgpu.interpolate_backward(up(x), up(g), (9, 4), options)
    np.testing.assert_allclose(down(grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [(3, 4), (6, 8), (4, 5)])
def test_adaptive_avg_pool2d_on_a_permuted_view(size):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 8, 3))  # NHWC in memory, read as an NCHW view
    nchw = x.transpose(0, 3, 1, 2)
    view = Wgpu.permute(up(x), (0, 3, 1, 2))
    rows, cols = adaptive(6, size[0]), adaptive(8, size[1])
    out = Wgpu.adaptive_avg_pool2d(view, size)
    np.testing.assert_allclose(down(out), both_dims(nchw, rows, cols), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal((2, 3, *size))
    grad = Wgpu.adaptive_avg_pool2d_backward(view, up(g))
    np.testing.assert_allclose(down(grad), both_dims(g, rows.T, cols.T), rtol=1e-5, atol=1e-6)


def test_adaptive_avg_pool1d_forward_and_backward():
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((2, 3, 11)), rng.standard_normal((2, 3, 4))
    m = adaptive(11, 4)
    out = Wgpu.adaptive_avg_pool1d(up(x), 4)
    np.testing.assert_allclose(down(out), along(x, m, 2), rtol=1e-5, atol=1e-6)
    grad = Wgpu.adaptive_avg_pool1d_backward(up(x), up(g))
    np.testing.assert_allclose(down(grad), along(g, m.T, 2), rtol=1e-5, atol=1e-6)


def test_one_launch_per_dim_and_tables_uploaded_once():
    rt = Wgpu.runtime()
    x, g = up(np.ones((1, 2, 10, 12))), up(np.ones((1, 2, 4, 5)))
    Wgpu.adaptive_avg_pool2d(x, (4, 5))  # first call: uploads the two tables
    Wgpu.adaptive_avg_pool2d_backward(x, g)
    uploads = rt.pool.stats.created + rt.pool.stats.reused
    launches = rt.launches
    Wgpu.adaptive_avg_pool2d(x, (4, 5))
    assert rt.launches - launches == 2
    launches = rt.launches
    Wgpu.adaptive_avg_pool2d_backward(x, g)
    assert rt.launches - launches == 2
    # Four buffers were acquired (two outputs, each of two launches), none for the tables.
    assert rt.pool.stats.created + rt.pool.stats.reused - uploads == 4
