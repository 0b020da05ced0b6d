"""Wgpu's one-kernel activations (`activation_ops.py`): relu's backward and log-softmax with
its backward, against a float64 reference and against the contract's composition (which a
strided view or another dtype still takes)."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend
from burn.tensor import TensorData
from burn.wgpu import Wgpu
from burn.wgpu.kernels.activation import SERIAL_LENGTH


def up(array):
    return Wgpu.from_data(TensorData(np.ascontiguousarray(array, dtype=np.float32)), Wgpu.device())


def down(p):
    return Wgpu.into_data(p).array


def launches(fn, *args):
    """`fn(*args)` and how many kernels it launched."""
    rt = Wgpu.runtime()
    before = rt.launches
    out = fn(*args)
    return out, rt.launches - before


def reference_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x.astype(np.float64) - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


# Rows short enough for a thread each and long enough for a workgroup each, along the first,
# a middle and the last dim.
SHAPES = [
    ((64, 10), 1),
    ((5, 3 * SERIAL_LENGTH + 7), 1),
    ((6, 4, 5), 0),
    ((3, SERIAL_LENGTH + 1, 4), 1),
    ((2, 3, 500), 2),
    ((9,), 0),
]


@pytest.mark.parametrize(("shape", "dim"), SHAPES)
def test_log_softmax_and_its_backward_are_one_kernel_each(shape, dim):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    out, n = launches(Wgpu.log_softmax, up(x), dim)
    assert n == 1
    np.testing.assert_allclose(down(out), reference_log_softmax(x, dim), rtol=1e-5, atol=1e-5)
    composed = Backend.log_softmax(Wgpu, up(x), dim)
    np.testing.assert_allclose(down(out), down(composed), rtol=1e-6, atol=2e-6)

    grad, n = launches(Wgpu.log_softmax_backward, out, up(g), dim)
    assert n == 1
    o = down(out).astype(np.float64)
    want = g - np.exp(o) * g.astype(np.float64).sum(axis=dim, keepdims=True)
    np.testing.assert_allclose(down(grad), want, rtol=1e-5, atol=1e-5)
    composed = Backend.log_softmax_backward(Wgpu, out, up(g), dim)
    np.testing.assert_allclose(down(grad), down(composed), rtol=1e-6, atol=2e-6)


@pytest.mark.parametrize("length", [6, 2 * SERIAL_LENGTH])
def test_log_softmax_rows_with_infinities_and_nans_match_the_composition(length):
    """A row holding +inf, one all -inf, one with a NaN, one with a -inf among finite values:
    the kernel's NaNs, infinities and values are the composition's."""
    x = np.linspace(-3, 3, 4 * length, dtype=np.float32).reshape(4, length)
    x[0, 1] = np.inf
    x[1, :] = -np.inf
    x[2, 2] = np.nan
    x[3, 0] = -np.inf
    got = down(Wgpu.log_softmax(up(x), 1))
    want = down(Backend.log_softmax(Wgpu, up(x), 1))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert got[3, 0] == -np.inf and np.isfinite(got[3, 1:]).all()


def test_operands_at_an_offset_are_read_from_it():
    """Contiguous views that start inside their buffer (a slice along the first dim)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 80)).astype(np.float32)
    g = rng.standard_normal((6, 80)).astype(np.float32)
    xs = Wgpu.slice(up(x), ((2, 5, 1), (0, 80, 1)))
    gs = Wgpu.slice(up(g), ((1, 4, 1), (0, 80, 1)))
    assert xs.offset and gs.offset and xs.is_contiguous()
    out = Wgpu.log_softmax(xs, 1)
    np.testing.assert_allclose(down(out), reference_log_softmax(x[2:5], 1), atol=1e-5)
    grad = down(Wgpu.log_softmax_backward(xs, gs, 1))
    want = down(Backend.log_softmax_backward(Wgpu, xs, gs, 1))
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=2e-6)
    relu = down(Wgpu.relu_backward(xs, gs))
    np.testing.assert_array_equal(relu, np.where(x[2:5] <= 0, 0, g[1:4]))


def test_relu_backward_is_one_kernel_with_the_compositions_values():
    o = np.array([[-1.0, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf, 1e-30]], dtype=np.float32)
    g = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, np.nan, 7.0, -8.0]], dtype=np.float32)
    out, n = launches(Wgpu.relu_backward, up(o), up(g))
    assert n == 1
    composed, m = launches(Backend.relu_backward, Wgpu, up(o), up(g))
    assert m > 1
    np.testing.assert_array_equal(down(out), down(composed))
    np.testing.assert_array_equal(down(out), [[0, 0, 0, 4, 5, np.nan, 0, -8]])


def test_a_strided_view_takes_the_composition_to_the_same_values():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((70, 5)).astype(np.float32)
    g = rng.standard_normal((70, 5)).astype(np.float32)
    view = Wgpu.permute(up(x.T.copy()), (1, 0))
    gview = Wgpu.permute(up(g.T.copy()), (1, 0))
    assert not view.is_contiguous()
    for dim in (0, 1):
        out, n = launches(Wgpu.log_softmax, view, dim)
        assert n > 1
        np.testing.assert_allclose(down(out), reference_log_softmax(x, dim), atol=1e-5)
        grad, n = launches(Wgpu.log_softmax_backward, view, gview, dim)
        assert n > 1
        fast = Wgpu.log_softmax_backward(up(x), up(g), dim)
        np.testing.assert_allclose(down(grad), down(fast), rtol=1e-6, atol=2e-6)
    relu, n = launches(Wgpu.relu_backward, view, up(g))
    assert n > 1
    np.testing.assert_array_equal(down(relu), np.where(x <= 0, 0, g))
