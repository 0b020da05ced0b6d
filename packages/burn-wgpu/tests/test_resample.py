"""Interpolation and adaptive pooling on their dedicated kernel: one launch per resampled dim,
forward and backward, against dense float64 matrices built here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn.backend.ops.module import InterpolateMode, InterpolateOptions
from burn.tensor import DType, TensorData
from burn.wgpu import Wgpu
from burn.wgpu import resample as R


def up(array, dtype=np.float32):
    return Wgpu.from_data(TensorData(np.ascontiguousarray(array, dtype)), Wgpu.device())


def down(p):
    return Wgpu.into_data(p).array.astype(np.float64)


def corner_position(i: int, size: int, out: int) -> float:
    """Corners aligned: output i samples input position i * (size - 1) / (out - 1)."""
    return i * (size - 1) / max(out - 1, 1)


def nearest(size: int, out: int) -> np.ndarray:
    m = np.zeros((out, size))
    for i in range(out):
        m[i, (i * size) // out] = 1.0
    return m


def bilinear(size: int, out: int) -> np.ndarray:
    m = np.zeros((out, size))
    for i in range(out):
        pos = corner_position(i, size, out)
        lo = min(int(math.floor(pos)), size - 1)
        frac = pos - lo
        m[i, lo] += 1.0 - frac
        m[i, min(lo + 1, size - 1)] += frac
    return m


def keys(t: float, a: float = -0.75) -> float:
    """Keys' cubic convolution kernel."""
    t = abs(t)
    if t <= 1:
        return (a + 2) * t**3 - (a + 3) * t**2 + 1
    if t < 2:
        return a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
    return 0.0


def bicubic(size: int, out: int) -> np.ndarray:
    """Four taps around the sample position, clamped to the edge (PyTorch, align_corners)."""
    m = np.zeros((out, size))
    for i in range(out):
        pos = corner_position(i, size, out)
        lo = min(int(math.floor(pos)), size - 1)
        for d in (-1, 0, 1, 2):
            m[i, min(max(lo + d, 0), size - 1)] += keys(pos - (lo + d))
    return m


def adaptive(size: int, out: int) -> np.ndarray:
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


MATRICES = {
    InterpolateMode.Nearest: nearest,
    InterpolateMode.Bilinear: bilinear,
    InterpolateMode.Bicubic: bicubic,
}


def along(x: np.ndarray, matrix: np.ndarray, dim: int) -> np.ndarray:
    return np.moveaxis(np.tensordot(matrix, np.moveaxis(x, dim, 0), axes=1), 0, dim)


def both_dims(x, rows, cols):
    return along(along(x, rows, 2), cols, 3)


@pytest.mark.parametrize("mode", list(MATRICES))
@pytest.mark.parametrize("size", [(7, 5), (3, 12), (1, 4)])
def test_interpolate_forward_and_backward(mode, size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 8))
    g = rng.standard_normal((2, 3, *size))
    rows, cols = MATRICES[mode](6, size[0]), MATRICES[mode](8, size[1])
    options = InterpolateOptions(mode)
    out = Wgpu.interpolate(up(x), size, options)
    np.testing.assert_allclose(down(out), both_dims(x, rows, cols), rtol=1e-5, atol=1e-5)
    grad = Wgpu.interpolate_backward(up(x), up(g), size, options)
    np.testing.assert_allclose(down(grad), both_dims(g, rows.T, cols.T), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", list(MATRICES))
def test_interpolate_reads_a_permuted_view_and_its_gradient_is_the_adjoint(mode):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 7, 3))  # NHWC in memory, read as an NCHW view
    nchw = x.transpose(0, 3, 1, 2)
    view = Wgpu.permute(up(x), (0, 3, 1, 2))
    g = rng.standard_normal((2, 3, 9, 4))
    options = InterpolateOptions(mode)
    out = down(Wgpu.interpolate(view, (9, 4), options))
    rows, cols = MATRICES[mode](5, 9), MATRICES[mode](7, 4)
    np.testing.assert_allclose(out, both_dims(nchw, rows, cols), rtol=1e-5, atol=1e-5)
    grad = down(Wgpu.interpolate_backward(view, up(g), (9, 4), options))
    # <A x, g> = <x, A^T g>, both sides from the kernel.
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(nchw, grad), rtol=1e-5)


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


@pytest.mark.parametrize("size", [(3, 4), (6, 8), (4, 5), (9, 11)])
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


@pytest.mark.parametrize("size", [(8, 8), (6, 4), (1, 1), (24, 24)])
def test_adaptive_avg_pool2d_over_uniform_windows_is_one_launch_each_way(size):
    """Sizes that divide the input's make uniform windows: one kernel forward and one
    backward (`K.window_mean`), at an offset too, against the dense definition."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 24, 24))
    base = up(np.concatenate([np.zeros(7), x.ravel()]))  # the input starts at element 7
    view = Wgpu.reshape(Wgpu.slice(base, [(7, 7 + x.size, 1)]), x.shape)
    assert view.offset == 7
    rows, cols = adaptive(24, size[0]), adaptive(24, size[1])
    rt = Wgpu.runtime()
    before = rt.launches
    out = Wgpu.adaptive_avg_pool2d(view, size)
    assert rt.launches - before == 1
    np.testing.assert_allclose(down(out), both_dims(x, rows, cols), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal((3, 4, *size))
    before = rt.launches
    grad = Wgpu.adaptive_avg_pool2d_backward(view, up(g))
    assert rt.launches - before == 1
    np.testing.assert_allclose(down(grad), both_dims(g, rows.T, cols.T), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("out", [4, 11, 15])
def test_adaptive_avg_pool1d_on_a_strided_slice(out):
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((3, 4, 25)), rng.standard_normal((2, 3, out))
    view = Wgpu.slice(up(x), ((1, 3, 1), (0, 3, 1), (2, 24, 2)))  # offset and stride 2
    sliced = x[1:3, 0:3, 2:24:2]
    m = adaptive(11, out)
    np.testing.assert_allclose(
        down(Wgpu.adaptive_avg_pool1d(view, out)), along(sliced, m, 2), rtol=1e-5, atol=1e-6
    )
    grad = Wgpu.adaptive_avg_pool1d_backward(view, up(g))
    np.testing.assert_allclose(down(grad), along(g, m.T, 2), rtol=1e-5, atol=1e-6)


def test_repeated_taps_add_up_in_both_directions():
    """A table that reads one input twice for an output, with non-zero weights both times."""
    index = np.array([[0, 2, 2, 4], [0, 2, 3, 4], [1, 2, 3, 0]])
    weight = np.array([[0.5, 1.0, 2.0, -1.0], [0.25, 3.0, 0.5, 1.0], [2.0, -0.5, 1.5, 4.0]])
    dense = np.zeros((4, 5))
    for t in range(3):
        for i in range(4):
            dense[i, index[t, i]] += weight[t, i]
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4, 3))
    out = Wgpu.resample(up(x), 1, index, weight)
    np.testing.assert_allclose(down(out), along(x, dense, 1), rtol=1e-5, atol=1e-6)
    grad = Wgpu.resample_backward(up(g), 1, 5, index, weight)
    np.testing.assert_allclose(down(grad), along(g, dense.T, 1), rtol=1e-5, atol=1e-6)


def test_transposed_padding_reads_nothing():
    """Inputs that no output reads get a zero gradient even when another gradient is inf."""
    x = up(np.zeros((1, 1, 1, 8)))
    g = up(np.array([np.inf, 1.0, 1.0]).reshape(1, 1, 1, 3))
    options = InterpolateOptions(InterpolateMode.Nearest)
    grad = down(Wgpu.interpolate_backward(x, g, (1, 3), options)).ravel()
    np.testing.assert_array_equal(grad, [np.inf, 0, 1, 0, 0, 1, 0, 0])


def test_f16_computes_in_f32():
    if not Wgpu.capabilities.supports(DType.F16):
        pytest.skip("this adapter has no shader-f16")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float16)
    options = InterpolateOptions(InterpolateMode.Bicubic)
    out = Wgpu.interpolate(up(x, np.float16), (7, 3), options)
    assert Wgpu.dtype(out) is DType.F16
    expected = both_dims(x.astype(np.float64), bicubic(5, 7), bicubic(6, 3))
    np.testing.assert_allclose(down(out), expected, rtol=1e-2, atol=1e-2)


def test_one_launch_per_dim_and_tables_uploaded_once(monkeypatch):
    rt = Wgpu.runtime()
    x, g = up(np.ones((1, 2, 10, 12))), up(np.ones((1, 2, 4, 5)))
    x1, g1 = up(np.ones((1, 2, 13))), up(np.ones((1, 2, 6)))
    uploads = []
    upload = rt.upload
    monkeypatch.setattr(rt, "upload", lambda array: uploads.append(array) or upload(array))
    R.tables(rt).clear()
    bicubic_options = InterpolateOptions(InterpolateMode.Bicubic)
    calls = [
        (2, lambda: Wgpu.adaptive_avg_pool2d(x, (4, 5))),
        (2, lambda: Wgpu.adaptive_avg_pool2d_backward(x, g)),
        (1, lambda: Wgpu.adaptive_avg_pool1d(x1, 6)),
        (1, lambda: Wgpu.adaptive_avg_pool1d_backward(x1, g1)),
        (2, lambda: Wgpu.interpolate(x, (4, 5), bicubic_options)),
        (2, lambda: Wgpu.interpolate_backward(x, g, (4, 5), bicubic_options)),
    ]
    for step in range(2):
        for dims, call in calls:
            launches, before = rt.launches, len(uploads)
            call()
            assert rt.launches - launches == dims
            # One table per dim on the first call (forward and transposed tables differ),
            # none afterwards.
            assert len(uploads) - before == (dims if step == 0 else 0)
