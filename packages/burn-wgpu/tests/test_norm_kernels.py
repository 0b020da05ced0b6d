"""Wgpu's per-channel kernels (`norm_ops.py`): batch norm in two launches each way and the bias
gradients of convolutions in one, against float64 references and against the contract's
compositions (which a strided view still takes)."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend
from burn.tensor import TensorData
from burn.wgpu import Wgpu
from burn.wgpu.kernels.norm import CHANNEL_WG, UNROLL


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


def reference(x, gamma, beta, g, eps):
    """(output, mean, var) and the gradients (x, gamma, beta) of sum(output * g), float64."""
    x, gamma, beta, g = (a.astype(np.float64) for a in (x, gamma, beta, g))
    axes = (0, *range(2, x.ndim))
    view = (1, -1) + (1,) * (x.ndim - 2)
    n = x.size // x.shape[1]
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean) * rstd
    out = xhat * gamma.reshape(view) + beta.reshape(view)
    gxhat = g * gamma.reshape(view)
    g_sum = gxhat.sum(axes, keepdims=True)
    dot = (gxhat * xhat).sum(axes, keepdims=True)
    gx = rstd / n * (n * gxhat - g_sum - xhat * dot)
    return out, mean.reshape(-1), var.reshape(-1), gx, (g * xhat).sum(axes), g.sum(axes)


# A channel's values fewer than, as many as and more than a workgroup's threads (and than a
# turn of its unrolled loops), over ranks 2 to 4.
SHAPES = [(7, 3), (4, 5, 6), (2, CHANNEL_WG // 2, 2, 1), (64, 16, 24, 24), (3, 2, 1, 700)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batch_norm_and_its_backward_are_two_kernels_each(shape):
    rng = np.random.default_rng(4)
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.standard_normal(c).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    want = reference(x, gamma, beta, g, 1e-5)

    (out, mean, var), n = launches(Wgpu.batch_norm, up(x), up(gamma), up(beta), 1e-5)
    assert n == 2
    for got, w in zip((out, mean, var), want[:3], strict=True):
        np.testing.assert_allclose(down(got), w, rtol=1e-5, atol=2e-5)
    composed, m = launches(Backend.batch_norm, Wgpu, up(x), up(gamma), up(beta), 1e-5)
    assert m > 2
    for got, w in zip((out, mean, var), composed, strict=True):
        np.testing.assert_allclose(down(got), down(w), rtol=2e-6, atol=2e-6)

    grads, n = launches(Wgpu.batch_norm_backward, up(x), up(gamma), up(g), 1e-5)
    assert n == 2
    scale = np.sqrt(x.size // c)  # the parameters' gradients are sums of that many terms
    for got, w, tol in zip(grads, want[3:], (2e-5, 2e-5 * scale, 2e-5 * scale), strict=True):
        np.testing.assert_allclose(down(got), w, rtol=1e-5, atol=tol)
    composed = Backend.batch_norm_backward(Wgpu, up(x), up(gamma), up(g), 1e-5)
    for got, w, tol in zip(grads, composed, (1e-5, 1e-5 * scale, 1e-5 * scale), strict=True):
        np.testing.assert_allclose(down(got), down(w), rtol=1e-5, atol=tol)


def test_operands_at_an_offset_are_read_from_it():
    """Contiguous views that start inside their buffers (slices along the first dim)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3, 10)).astype(np.float32)
    g = rng.standard_normal((6, 3, 10)).astype(np.float32)
    params = rng.standard_normal((4, 3)).astype(np.float32)
    xs = Wgpu.slice(up(x), ((2, 5, 1), (0, 3, 1), (0, 10, 1)))
    gs = Wgpu.slice(up(g), ((1, 4, 1), (0, 3, 1), (0, 10, 1)))
    gamma = Wgpu.reshape(Wgpu.slice(up(params), ((1, 2, 1), (0, 3, 1))), (3,))
    beta = Wgpu.reshape(Wgpu.slice(up(params), ((3, 4, 1), (0, 3, 1))), (3,))
    assert xs.offset and gs.offset and gamma.offset and beta.offset and xs.is_contiguous()
    want = reference(x[2:5], params[1], params[3], g[1:4], 1e-3)
    got = [down(p) for p in Wgpu.batch_norm(xs, gamma, beta, 1e-3)]
    got += [down(p) for p in Wgpu.batch_norm_backward(xs, gamma, gs, 1e-3)]
    for a, w in zip(got, want, strict=True):
        np.testing.assert_allclose(a, w, rtol=1e-5, atol=5e-5)


def test_a_strided_view_takes_the_composition_to_the_same_values():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 4, 6)).astype(np.float32)
    xt = Wgpu.permute(up(x), (2, 1, 0))  # [6, 4, 5], not contiguous
    assert not xt.is_contiguous()
    gamma, beta = up(np.ones(4)), up(np.zeros(4))
    (out, _, _), n = launches(Wgpu.batch_norm, xt, gamma, beta, 1e-5)
    assert n > 2
    want = reference(x.transpose(2, 1, 0), np.ones(4), np.zeros(4), np.ones((6, 4, 5)), 1e-5)
    np.testing.assert_allclose(down(out), want[0], rtol=1e-5, atol=2e-5)


BIAS_GRADS = [
    ("conv1d_bias_backward", (3, 4, 9)),
    ("conv2d_bias_backward", (2, 5, 6, 7)),
    ("conv3d_bias_backward", (2, 3, 4, 5, 6)),
    ("conv_transpose1d_bias_backward", (1, 2, (UNROLL + 1) * CHANNEL_WG + 5)),
    ("conv_transpose2d_bias_backward", (4, 3, 5, 5)),
    ("conv_transpose3d_bias_backward", (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize(("op", "shape"), BIAS_GRADS)
def test_a_convolutions_bias_gradient_is_one_kernel(op, shape):
    rng = np.random.default_rng(7)
    g = rng.standard_normal(shape).astype(np.float32)
    out, n = launches(getattr(Wgpu, op), None, None, up(g))
    assert n == 1
    want = g.astype(np.float64).sum(axis=(0, *range(2, len(shape))))
    np.testing.assert_allclose(down(out), want, rtol=1e-5, atol=1e-4)
    composed = getattr(Backend, op)(Wgpu, None, None, up(g))
    np.testing.assert_allclose(down(out), down(composed), rtol=1e-5, atol=1e-4)


def test_a_bias_gradient_at_an_offset_or_strided():
    rng = np.random.default_rng(8)
    g = rng.standard_normal((6, 3, 4, 4)).astype(np.float32)
    sliced = Wgpu.slice(up(g), ((2, 5, 1), (0, 3, 1), (0, 4, 1), (0, 4, 1)))
    assert sliced.offset and sliced.is_contiguous()
    got = down(Wgpu.conv2d_bias_backward(None, None, sliced))
    np.testing.assert_allclose(got, g[2:5].sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)
    strided = Wgpu.permute(up(g), (0, 1, 3, 2))
    out, n = launches(Wgpu.conv2d_bias_backward, None, None, strided)
    assert n > 1
    np.testing.assert_allclose(down(out), g.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)
