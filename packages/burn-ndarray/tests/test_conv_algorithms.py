"""Every convolution algorithm, whichever the per-shape timing picks, against float64 references.

The conformance suite sees only the algorithm the autotune chose on that machine, so each one
is checked here directly (the im2col ones of `burn.ndarray.module_ops`, the flat-grid
forward and gradients, the shifted-add input gradient and the depthwise taps of
`burn.ndarray.conv`, the kernel-row products of `burn.ndarray.conv_rows` and the Winograd ones
of `burn.ndarray.winograd`) against
a loop-over-taps numpy reference; the gradients are checked entry by entry, exactly, since the
loss `sum(y * g)` is linear in `x` and `w`. Winograd's float32 rounding is checked against a
float64 reference on ResNet-like layers, ReLU-like and large-magnitude inputs included.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from burn.ndarray import conv, conv_rows, module_ops, winograd
from burn.ndarray.autotune import Autotune
from burn.ndarray.conv import (
    conv_stride1,
    conv_weight_grad_stride1,
    conv_x_grad_by_forward,
    conv_x_grad_stride1,
    depthwise_columns_stride1,
    depthwise_stride1,
    depthwise_weight_grad_stride1,
    depthwise_x_grad_stride1,
    flipped_forward_applies,
)
from burn.ndarray.conv_rows import rows_apply, rows_conv2d, rows_conv2d_weight_grad


def reference_conv(x, w, stride, padding, dilation, groups):
    """Direct definition: for every tap, a strided slice of the zero-padded input."""
    n, c, *spatial = x.shape
    o, cg, *kernel = w.shape
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in zip(spatial, padding, dilation, kernel, stride, strict=True)
    ]
    y = np.zeros((n, o, *out))
    og = o // groups
    for pos in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(j * d, j * d + (m - 1) * st + 1, st)
            for j, d, m, st in zip(pos, dilation, out, stride, strict=True)
        )
        window = padded[(slice(None), slice(None), *index)]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None), *pos)]
            xs = window[:, g * cg : (g + 1) * cg]
            y[:, g * og : (g + 1) * og] += np.einsum("oc,nc...->no...", wg, xs)
    return y


CASES = [  # (spatial, kernel, stride, padding, dilation, groups)
    ((9,), (3,), (1,), (0,), (1,), 1),
    ((9,), (2,), (2,), (3,), (1,), 2),
    ((7, 8), (3, 2), (1, 1), (1, 2), (2, 1), 2),
    ((7, 8), (3, 3), (2, 3), (1, 0), (1, 2), 1),
    ((9, 8), (2, 2), (1, 1), (3, 3), (1, 1), 1),  # padding past the kernel's reach
    ((5, 6, 4), (2, 3, 2), (1, 1, 2), (1, 0, 1), (1, 1, 1), 2),
]


@pytest.mark.parametrize("spatial, kernel, stride, padding, dilation, groups", CASES)
def test_algorithms_agree_with_the_definition(spatial, kernel, stride, padding, dilation, groups):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, *spatial))
    w = rng.standard_normal((6, 4 // groups, *kernel))
    y = reference_conv(x, w, stride, padding, dilation, groups)
    out = y.shape[2:]
    got = module_ops._conv(x, w, stride, padding, dilation, groups, out)
    np.testing.assert_allclose(got, y, atol=1e-12)
    stride1 = all(s == 1 for s in stride)
    rows = stride1 and rows_apply(x.shape, w.shape, groups, padding, dilation, x.itemsize)
    if stride1:
        got = conv_stride1(x, w, padding, dilation, groups)
        assert got.shape == y.shape
        np.testing.assert_allclose(got, y, atol=1e-12)
    if rows:
        got = rows_conv2d(x, w, padding, dilation, groups)
        assert got.shape == y.shape
        np.testing.assert_allclose(got, y, atol=1e-12)
        # A bias: a column of the first kernel row's product without groups, added after with.
        bias = rng.standard_normal(w.shape[0])
        got = rows_conv2d(x, w, padding, dilation, groups, bias=bias)
        np.testing.assert_allclose(got, y + bias.reshape(1, -1, 1, 1), atol=1e-12)

    # The loss sum(y * g) is linear in x and in w: its gradients are exact from the definition.
    g = rng.standard_normal(y.shape)
    x_grads = [module_ops._x_grad_col2im(x.shape, w, g, stride, padding, dilation, groups)]
    w_grads = [
        module_ops._weight_grad_im2col(x, w.shape, g, stride, padding, dilation, groups, first)
        for first in (False, True)
    ]
    if stride1:
        x_grads.append(conv_x_grad_stride1(x.shape, w, g, padding, dilation, groups))
        w_grads.append(conv_weight_grad_stride1(x, w.shape, g, padding, dilation, groups))
        if flipped_forward_applies(w.shape, padding, dilation):
            x_grads.append(conv_x_grad_by_forward(w, g, padding, dilation, groups))
    if rows:
        w_grads.append(rows_conv2d_weight_grad(x, w.shape, g, padding, dilation, groups))
        if flipped_forward_applies(w.shape, padding, dilation):
            x_grads.append(
                conv_x_grad_by_forward(w, g, padding, dilation, groups, forward=rows_conv2d)
            )
    assert all(grad.shape == x.shape for grad in x_grads)
    assert all(grad.shape == w.shape for grad in w_grads)
    for flat_index in rng.choice(x.size, 5, replace=False):
        basis = np.zeros(x.size)
        basis[flat_index] = 1.0
        expected = np.sum(
            reference_conv(basis.reshape(x.shape), w, stride, padding, dilation, groups) * g
        )
        for grad in x_grads:
            assert grad.reshape(-1)[flat_index] == pytest.approx(expected, abs=1e-10)
    for flat_index in rng.choice(w.size, 5, replace=False):
        basis = np.zeros(w.size)
        basis[flat_index] = 1.0
        expected = np.sum(
            reference_conv(x, basis.reshape(w.shape), stride, padding, dilation, groups) * g
        )
        for grad in w_grads:
            assert grad.reshape(-1)[flat_index] == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("block", ["row", "sample"])
@pytest.mark.parametrize("spatial, kernel, stride, padding, dilation, groups", CASES)
def test_blocked_forward_and_gradients_match_the_whole_batch(
    spatial, kernel, stride, padding, dilation, groups, block, monkeypatch
):
    """`_conv` in blocks of samples or, one sample at a time, of output rows, the im2col
    weight gradients and col2im input gradient in blocks of samples, and the shifted-add input
    gradient in blocks of columns (one per block here), give what the unblocked forms give; so
    do the flat-grid forward and gradients in blocks of one row of one sample, and the
    kernel-row products in blocks of one sample (the last block of a batch of 3 is short when
    blocks hold 2)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, *spatial))
    w = rng.standard_normal((6, 4 // groups, *kernel))
    y = reference_conv(x, w, stride, padding, dilation, groups)
    # One byte: every block is one row of one sample; one sample's matrix: blocks of samples.
    one_sample = math.prod(w.shape[1:]) * groups * math.prod(y.shape[2:]) * x.itemsize
    budget = 1 if block == "row" else one_sample
    g = rng.standard_normal(y.shape)
    whole_w_grads = [
        module_ops._weight_grad_im2col(x, w.shape, g, stride, padding, dilation, groups, first)
        for first in (False, True)
    ]
    whole_col2im = module_ops._x_grad_col2im(x.shape, w, g, stride, padding, dilation, groups)
    whole_x_grad = None
    stride1 = all(s == 1 for s in stride)
    flat = {}
    if stride1:
        whole_x_grad = conv_x_grad_stride1(x.shape, w, g, padding, dilation, groups)
        flat = flat_grid_algorithms(x, w, g, padding, dilation, groups)
    monkeypatch.setattr(module_ops, "SAMPLE_BLOCK_BYTES", budget)
    monkeypatch.setattr(conv, "COLUMN_BLOCK_BYTES", 1)
    # The flat grid's column matrix of one sample's row, then of one sample.
    grid_row = x.shape[1] * math.prod(kernel) * x.itemsize
    grid_row *= math.prod(s + 2 * p for s, p in zip(spatial[1:], padding[1:], strict=True))
    row_budget = 1 if block == "row" else grid_row * y.shape[2]
    monkeypatch.setattr(conv, "ROW_BLOCK_BYTES", row_budget)
    rows_sample = x.shape[1] * kernel[-1] * x.itemsize * (spatial[0] + 2 * padding[0])
    rows_sample *= y.shape[-1]
    monkeypatch.setattr(conv_rows, "ROWS_BLOCK_BYTES", 1 if block == "row" else 2 * rows_sample)
    blocked = module_ops._conv(x, w, stride, padding, dilation, groups, y.shape[2:])
    np.testing.assert_allclose(blocked, y, atol=1e-12)
    for first, whole in zip((False, True), whole_w_grads, strict=True):
        got = module_ops._weight_grad_im2col(
            x, w.shape, g, stride, padding, dilation, groups, first
        )
        np.testing.assert_allclose(got, whole, atol=1e-12)
    got = module_ops._x_grad_col2im(x.shape, w, g, stride, padding, dilation, groups)
    np.testing.assert_allclose(got, whole_col2im, atol=1e-12)
    if whole_x_grad is not None:
        got = conv_x_grad_stride1(x.shape, w, g, padding, dilation, groups)
        np.testing.assert_allclose(got, whole_x_grad, atol=1e-12)
    blocked_flat = flat_grid_algorithms(x, w, g, padding, dilation, groups) if stride1 else {}
    assert blocked_flat.keys() == flat.keys()
    for name, whole in flat.items():
        np.testing.assert_allclose(blocked_flat[name], whole, atol=1e-12, err_msg=name)


def flat_grid_algorithms(x, w, g, padding, dilation, groups) -> dict:
    """The flat-grid forward and gradients of `burn.ndarray.conv` and, for 2-d layers, the
    kernel-row products of `burn.ndarray.conv_rows` (the input gradients where no padding
    reaches past the kernel)."""
    results = {
        "forward": conv_stride1(x, w, padding, dilation, groups),
        "weight": conv_weight_grad_stride1(x, w.shape, g, padding, dilation, groups),
    }
    if flipped_forward_applies(w.shape, padding, dilation):
        results["input"] = conv_x_grad_by_forward(w, g, padding, dilation, groups)
    if rows_apply(x.shape, w.shape, groups, padding, dilation, x.itemsize):
        results["rows forward"] = rows_conv2d(x, w, padding, dilation, groups)
        results["rows weight"] = rows_conv2d_weight_grad(x, w.shape, g, padding, dilation, groups)
        if "input" in results:
            results["rows input"] = conv_x_grad_by_forward(
                w, g, padding, dilation, groups, forward=rows_conv2d
            )
    return results


def test_float32_through_the_backend_matches_float64():
    from burn.backend.ops.module_options import ConvOptions
    from burn.ndarray.backend import NdArrayBackend

    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 10, 9)).astype(np.float32)
    w = rng.standard_normal((8, 2, 3, 3)).astype(np.float32)
    options = ConvOptions((1, 1), (1, 1), (1, 1), 2)
    backend = NdArrayBackend()
    y = backend.conv2d(x, w, None, options)
    assert y.dtype == np.float32
    expected = reference_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), (1, 1), 2)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(y.shape).astype(np.float32)
    for _ in range(2):  # the timed first call and a call served by the remembered winner
        xg = backend.conv2d_x_backward(x, w, g, options)
        wg = backend.conv2d_weight_backward(x, w, g, options)
        assert xg.shape == x.shape and xg.dtype == np.float32
        assert wg.shape == w.shape and wg.dtype == np.float32
    np.testing.assert_allclose(
        xg,
        module_ops._x_grad_col2im(
            x.shape, w.astype(np.float64), g.astype(np.float64), (1, 1), (1, 1), (1, 1), 2
        ),
        rtol=1e-4,
        atol=1e-4,
    )


def test_autotune_keeps_the_faster_candidate_and_returns_its_result():
    import time

    tune = Autotune()
    calls = {"slow": 0, "fast": 0}

    def slow():
        calls["slow"] += 1
        time.sleep(0.01)
        return "slow"

    def fast():
        calls["fast"] += 1
        return "fast"

    assert tune.run("k", [slow, fast]) == "fast"
    assert tune.winner("k") == 1
    assert tune.run("k", [slow, fast]) == "fast"
    assert calls == {"slow": 3, "fast": 4}  # timed three times each, then only the winner
    assert tune.winner("other") is None
    assert tune.run("single", [slow]) == "slow"


WINOGRAD_CASES = [  # (batch, channels, out channels, spatial, padding, groups)
    (2, 3, 5, (7, 9), (1, 1), 1),  # sizes that are no multiple of either tile
    (1, 4, 4, (8, 8), (0, 2), 2),
    (3, 2, 4, (3, 3), (0, 0), 2),  # a single output
    (2, 1, 3, (4, 13), (2, 0), 1),
]


@pytest.mark.parametrize("blocks", ["none", "samples", "rows", "channels"])
@pytest.mark.parametrize("batch, channels, out_channels, spatial, padding, groups", WINOGRAD_CASES)
def test_winograd_agrees_with_the_definition(
    batch, channels, out_channels, spatial, padding, groups, blocks, monkeypatch
):
    """Whole, in blocks of one sample, in blocks of one row of tiles of one sample, and with
    both transforms one channel at a time."""
    if blocks == "channels":
        monkeypatch.setattr(winograd, "TRANSFORM_BLOCK_BYTES", 1)
    budget = {"none": winograd.BLOCK_BYTES, "samples": None, "rows": 1, "channels": None}[blocks]
    if budget is None and blocks == "channels":
        budget = winograd.BLOCK_BYTES
    if budget is None:  # one sample's tiles for F(2x2), so F(4x4)'s go in rows of tiles
        out = [s + 2 * p - 2 for s, p in zip(spatial, padding, strict=True)]
        budget = 16 * (channels + out_channels) * math.prod(-(-o // 2) for o in out) * 8
    monkeypatch.setattr(winograd, "BLOCK_BYTES", budget)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, channels, *spatial))
    w = rng.standard_normal((out_channels, channels // groups, 3, 3))
    one = (1, 1)
    assert winograd.applies(x.shape, w.shape, one, padding, one, x.dtype)
    y = reference_conv(x, w, one, padding, one, groups)
    g = rng.standard_normal(y.shape)
    x_grad = module_ops._x_grad_col2im(x.shape, w, g, one, padding, one, groups)
    w_grad = module_ops._weight_grad_im2col(x, w.shape, g, one, padding, one, groups)
    for m in winograd.TILE_SIZES:
        np.testing.assert_allclose(winograd.conv2d(x, w, padding, groups, m), y, atol=1e-12)
        got = winograd.conv2d_x_grad(x.shape, w, g, padding, groups, m)
        np.testing.assert_allclose(got, x_grad, atol=1e-12)
    for m in winograd.WEIGHT_GRAD_TILE_SIZES:
        got = winograd.conv2d_weight_grad(x, w.shape, g, padding, groups, m)
        np.testing.assert_allclose(got, w_grad, atol=1e-11)


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, dtype",
    [
        ((1, 2, 8, 8), (2, 2, 3, 3), (2, 2), (1, 1), (1, 1), np.float32),
        ((1, 2, 8, 8), (2, 2, 3, 3), (1, 1), (1, 1), (2, 2), np.float32),
        ((1, 2, 8, 8), (2, 2, 5, 5), (1, 1), (1, 1), (1, 1), np.float32),
        ((1, 2, 8, 8), (2, 2, 3, 3), (1, 1), (3, 1), (1, 1), np.float32),
        ((1, 2, 8, 8), (2, 2, 3, 3), (1, 1), (1, 1), (1, 1), np.float16),
        ((1, 2, 8), (2, 2, 3), (1,), (1,), (1,), np.float32),
        ((0, 2, 8, 8), (2, 2, 3, 3), (1, 1), (1, 1), (1, 1), np.float32),
        ((1, 2, 1, 8), (2, 2, 3, 3), (1, 1), (0, 0), (1, 1), np.float32),
    ],
)
def test_winograd_declines_what_it_cannot_compute(
    x_shape, w_shape, stride, padding, dilation, dtype
):
    assert not winograd.applies(x_shape, w_shape, stride, padding, dilation, dtype)


def _layer(rng, kind, shape, channels):
    """A ResNet-like layer's input and He-initialised 3x3 kernel, in float64."""
    x = rng.standard_normal(shape)
    if kind == "relu":  # post-ReLU activations of a sizeable scale
        x = np.maximum(x, 0.0) * 10.0
    elif kind == "large":  # large magnitudes in inputs and weights
        x = x * 1e3
    elif kind == "spiky":  # one input in a hundred a thousand times the rest
        x = x * np.where(rng.random(shape) < 0.01, 1e3, 1.0)
    w = rng.standard_normal((channels, shape[1], 3, 3)) * np.sqrt(2.0 / (9 * shape[1]))
    if kind == "large":
        w = w * 1e2
    return x, w


@pytest.mark.parametrize("kind", ["normal", "relu", "large", "spiky"])
def test_winograd_float32_error_stays_within_the_tolerances(kind):
    """Float32 Winograd against float64: within 1e-4 of the output's scale, as the ONNX model
    tests compare, on every input kind; within the conformance suite's 1e-4 absolute and
    relative tolerance on inputs of ordinary magnitude."""
    rng = np.random.default_rng(3)
    x, w = _layer(rng, kind, (1, 64, 16, 16), 64)
    padding, one = (1, 1), (1, 1)
    y = reference_conv(x, w, one, padding, one, 1)
    g = rng.standard_normal(y.shape)
    x_grad = module_ops._x_grad_col2im(x.shape, w, g, one, padding, one, 1)
    w_grad = module_ops._weight_grad_im2col(x, w.shape, g, one, padding, one, 1)
    x32, w32, g32 = (a.astype(np.float32) for a in (x, w, g))
    results = []
    for m in winograd.TILE_SIZES:
        results.append((winograd.conv2d(x32, w32, padding, 1, m), y))
        results.append((winograd.conv2d_x_grad(x.shape, w32, g32, padding, 1, m), x_grad))
    for m in winograd.WEIGHT_GRAD_TILE_SIZES:
        results.append((winograd.conv2d_weight_grad(x32, w.shape, g32, padding, 1, m), w_grad))
    for got, want in results:
        assert got.dtype == np.float32
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)
        if kind in ("normal", "relu"):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_winograd_is_offered_only_to_layers_with_enough_channels():
    one, least = (1, 1), winograd.MIN_CHANNELS

    def offered(channels, out_channels, groups, stride=one, dtype=np.float32):
        x_shape = (1, channels, 8, 8)
        w_shape = (out_channels, channels // groups, 3, 3)
        return winograd.applies(x_shape, w_shape, stride, one, one, dtype, groups, least)

    assert offered(least, least, 1)
    assert not offered(least - 1, least, 1)
    assert not offered(least, least - 1, 1)
    assert offered(2 * least, 2 * least, 2)  # 2 groups of `least` in and out
    assert not offered(4 * least, 2 * least, 4)
    assert not offered(least, least, 1, stride=(2, 2))
    assert not offered(least, least, 1, dtype=np.float16)


def test_stride1_convolutions_through_the_backend_match_float64():
    """At 16 channels per group Winograd is among the timed candidates of the forward pass,
    both gradients and the transposed convolution; whichever wins, the results agree with
    float64 within the conformance tolerance."""
    from burn.backend.ops.module_options import ConvOptions, ConvTransposeOptions
    from burn.ndarray.backend import NdArrayBackend

    rng = np.random.default_rng(4)
    backend = NdArrayBackend()
    x = rng.standard_normal((2, 32, 9, 7)).astype(np.float32)
    w = (rng.standard_normal((32, 16, 3, 3)) / 12).astype(np.float32)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    one = (1, 1)
    y = backend.conv2d(x, w, None, ConvOptions(one, one, one, 2))
    np.testing.assert_allclose(y, reference_conv(x64, w64, one, one, one, 2), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(y.shape).astype(np.float32)
    g64 = g.astype(np.float64)
    options = ConvOptions(one, one, one, 2)
    xg = backend.conv2d_x_backward(x, w, g, options)
    expected = module_ops._x_grad_col2im(x.shape, w64, g64, one, one, one, 2)
    np.testing.assert_allclose(xg, expected, rtol=1e-4, atol=1e-4)
    wg = backend.conv2d_weight_backward(x, w, g, options)
    expected = module_ops._weight_grad_im2col(x64, w.shape, g64, one, one, one, 2)
    np.testing.assert_allclose(wg, expected, rtol=1e-4, atol=1e-4)
    # A transposed convolution is the input gradient of the convolution it transposes.
    t = backend.conv_transpose2d(x, w, None, ConvTransposeOptions(one, one, (0, 0), one, 2))
    expected = module_ops._x_grad_col2im(t.shape, w64, x64, one, one, one, 2)
    assert t.dtype == np.float32 and t.shape == (2, 32, 9, 7)
    np.testing.assert_allclose(t, expected, rtol=1e-4, atol=1e-4)


def test_winograd_kernel_cache_serves_only_the_same_kernel_and_forgets_freed_ones():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    cache = winograd.FILTER_CACHE
    before = len(cache)
    first = winograd.conv2d(x, w, (1, 1), 1, 4, cache=True)
    assert len(cache) == before + 1
    np.testing.assert_array_equal(winograd.conv2d(x, w, (1, 1), 1, 4, cache=True), first)
    w[0, 0, 1, 1] += 1.0  # changed in place: the cached transform must not be served
    expected = reference_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), (1, 1), 1)
    changed = winograd.conv2d(x, w, (1, 1), 1, 4, cache=True)
    np.testing.assert_allclose(changed, expected, rtol=1e-4, atol=1e-4)
    assert len(cache) == before + 1
    del w
    assert len(cache) == before


def test_winograd_kernel_cache_serves_a_kernel_that_cannot_change_without_comparing(
    monkeypatch,
):
    """Weights loaded from a record are read-only views of `bytes`: nothing can change them,
    so the cache keeps no copy and skips the comparison; every other kernel is compared."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    values = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    frozen = np.frombuffer(values.tobytes(), dtype=np.float32).reshape(values.shape)
    owned = values.copy()
    owned.flags.writeable = False  # its owner may make it writeable again
    view = values[:]
    view.flags.writeable = False  # `values` still writes the same memory
    assert winograd._immutable(frozen) and winograd._immutable(frozen[1:])
    assert not winograd._immutable(values)
    assert not winograd._immutable(owned) and not winograd._immutable(view)

    cache = winograd.FILTER_CACHE
    before = len(cache)
    first = winograd.conv2d(x, frozen, (1, 1), 1, 2, cache=True)
    assert len(cache) == before + 1
    compared = []
    real_equal = np.array_equal
    monkeypatch.setattr(np, "array_equal", lambda a, b: compared.append(1) or real_equal(a, b))
    np.testing.assert_array_equal(winograd.conv2d(x, frozen, (1, 1), 1, 2, cache=True), first)
    assert compared == []
    winograd.conv2d(x, owned, (1, 1), 1, 2, cache=True)
    winograd.conv2d(x, owned, (1, 1), 1, 2, cache=True)
    assert compared == [1]
    del frozen, owned
    assert len(cache) == before


DEPTHWISE = [  # (spatial, kernel, padding, dilation)
    ((9,), (3,), (1,), (1,)),
    ((7, 8), (3, 3), (1, 1), (1, 1)),
    ((7, 8), (5, 3), (2, 0), (1, 2)),
    ((6, 6), (1, 1), (0, 0), (1, 1)),
    ((9, 8), (2, 2), (3, 3), (1, 1)),  # padding past the kernel's reach
    ((5, 6, 4), (3, 2, 2), (1, 0, 1), (1, 1, 2)),
]


@pytest.mark.parametrize("spatial, kernel, padding, dilation", DEPTHWISE)
@pytest.mark.parametrize("channels", [1, 5, 300])  # 300: several blocks of channels
def test_depthwise_taps_agree_with_the_definition(spatial, kernel, padding, dilation, channels):
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((2, channels, *spatial))
    w = rng.standard_normal((channels, 1, *kernel))
    expected = reference_conv(x, w, (1,) * len(kernel), padding, dilation, channels)
    for forward in (depthwise_stride1, depthwise_columns_stride1):
        got = forward(x, w, padding, dilation)
        assert got.shape == expected.shape and got.flags.c_contiguous
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)

    # The loss sum(y * g) is linear in x and in w: each gradient entry is exact from the
    # definition (the input gradient where no padding reaches past the kernel).
    g = rng.standard_normal(expected.shape)
    stride = (1,) * len(kernel)
    w_grad = depthwise_weight_grad_stride1(x, w.shape, g, padding, dilation)
    assert w_grad.shape == w.shape
    for flat_index in rng.choice(w.size, min(w.size, 6), replace=False):
        basis = np.zeros(w.size)
        basis[flat_index] = 1.0
        want = np.sum(
            reference_conv(x, basis.reshape(w.shape), stride, padding, dilation, channels) * g
        )
        assert w_grad.reshape(-1)[flat_index] == pytest.approx(want, abs=1e-9)
    if not flipped_forward_applies(w.shape, padding, dilation):
        return
    x_grads = [
        depthwise_x_grad_stride1(w, g, padding, dilation, forward)
        for forward in (depthwise_stride1, depthwise_columns_stride1)
    ]
    for flat_index in rng.choice(x.size, 6, replace=False):
        basis = np.zeros(x.size)
        basis[flat_index] = 1.0
        want = np.sum(
            reference_conv(basis.reshape(x.shape), w, stride, padding, dilation, channels) * g
        )
        for x_grad in x_grads:
            assert x_grad.shape == x.shape
            assert x_grad.reshape(-1)[flat_index] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("block", [1, 40, 200])  # runs of 1, 4 and 22 columns of one channel
def test_depthwise_columns_in_runs_of_columns_agree_with_the_definition(block, monkeypatch):
    """A plane too large for one block is copied and multiplied a run of columns at a time."""
    monkeypatch.setattr(conv, "_DEPTHWISE_BLOCK", block)
    rng = np.random.default_rng(block)
    x = rng.standard_normal((2, 3, 7, 6))
    w = rng.standard_normal((3, 1, 3, 2))
    got = depthwise_columns_stride1(x, w, (1, 0), (1, 2))
    expected = reference_conv(x, w, (1, 1), (1, 0), (1, 2), 3)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_depthwise_through_the_backend_in_float32_matches_float64():
    """The backend's autotune may pick the depthwise taps for these shapes; whichever it picks
    agrees with the float64 definition to float32 rounding."""
    from burn.backend.ops.module import ConvOptions
    from burn.ndarray import NdArray

    rng = np.random.default_rng(3)
    for channels, size, k in ((32, 40, 3), (96, 14, 5)):
        x = rng.standard_normal((2, channels, size, size)).astype(np.float32)
        w = rng.standard_normal((channels, 1, k, k)).astype(np.float32)
        p = k // 2
        options = ConvOptions(stride=(1, 1), padding=(p, p), dilation=(1, 1), groups=channels)
        got = NdArray.conv2d(x, w, None, options)
        expected = reference_conv(
            x.astype(np.float64), w.astype(np.float64), (1, 1), (p, p), (1, 1), channels
        )
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


POINTWISE = [  # (spatial, stride, groups)
    ((9,), (1,), 1),
    ((7, 8), (1, 1), 2),
    ((7, 8), (2, 3), 1),
    ((5, 6, 4), (1, 2, 1), 4),
]


@pytest.mark.parametrize("batch", [1, 3])  # one sample takes it directly, more go to autotune
@pytest.mark.parametrize("spatial, stride, groups", POINTWISE)
def test_pointwise_convolution_agrees_with_the_definition(batch, spatial, stride, groups):
    """A 1x1 convolution as one batched matmul over the input's channels (strided and
    grouped too), directly and through the backend, against the definition in float64."""
    from burn.backend.ops.module_options import ConvOptions
    from burn.ndarray import NdArray

    rng = np.random.default_rng(5)
    x = rng.standard_normal((batch, 8, *spatial))
    w = rng.standard_normal((6 if groups != 4 else 8, 8 // groups, *([1] * len(spatial))))
    one = (1,) * len(spatial)
    expected = reference_conv(x, w, stride, (0,) * len(spatial), one, groups)
    got = module_ops._pointwise_conv(x, w, stride, groups)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    spaced = np.zeros((*x.shape[:-1], 2 * x.shape[-1]), np.float32)
    spaced[..., ::2] = x
    strided = spaced[..., ::2]  # the same values, every other element of a wider array
    assert not strided.flags.c_contiguous
    options = ConvOptions(list(stride), [0] * len(spatial), list(one), groups)
    bias = rng.standard_normal(w.shape[0]).astype(np.float32)
    y = getattr(NdArray, f"conv{len(spatial)}d")(strided, w.astype(np.float32), bias, options)
    bias_shape = (1, -1) + (1,) * len(spatial)
    np.testing.assert_allclose(y, expected + bias.reshape(bias_shape), rtol=1e-5, atol=1e-5)


def test_kernel_rows_serve_one_channel_layers_but_not_depthwise_or_huge_ones():
    """The guide's first layer (one input channel, no groups) gets the kernel-row products,
    forward and weight gradient, and they agree with the definition; a depthwise layer (one
    channel in each of several groups), a 1x1 kernel over one channel and a sample whose
    copies would be past `ROWS_SAMPLE_BYTES` are not offered."""
    one, zero = (1, 1), (0, 0)
    assert rows_apply((64, 1, 28, 28), (8, 1, 3, 3), 1, zero, one, 4)
    assert rows_apply((1, 64, 56, 56), (64, 64, 3, 3), 1, one, one, 4)  # 2.5 MB
    assert not rows_apply((1, 64, 256, 256), (64, 64, 3, 3), 1, one, one, 4)  # 50 MB
    assert not rows_apply((2, 8, 9, 9), (8, 1, 3, 3), 8, one, one, 4)
    assert not rows_apply((2, 1, 9, 9), (4, 1, 1, 1), 1, zero, one, 4)
    assert not rows_apply((2, 4, 9), (4, 4, 3), 1, (0,), (1,), 4)  # 1-d
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 1, 9, 8))
    w = rng.standard_normal((5, 1, 3, 2))
    one = (1, 1)
    y = reference_conv(x, w, one, one, one, 1)
    np.testing.assert_allclose(rows_conv2d(x, w, one, one, 1), y, atol=1e-12)
    g = rng.standard_normal(y.shape)
    got = rows_conv2d_weight_grad(x, w.shape, g, one, one, 1)
    expected = module_ops._weight_grad_im2col(x, w.shape, g, one, one, one, 1)
    np.testing.assert_allclose(got, expected, atol=1e-12)
