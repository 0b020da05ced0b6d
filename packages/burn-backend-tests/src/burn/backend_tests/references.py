"""Naive float64 references for the module ops, written from their definitions.

These loop over output (or input) positions and kernel taps and share nothing with the
im2col/col2im code of the backends, so agreement means the definitions agree.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _zip(*seqs):
    return zip(*seqs, strict=True)


def _grid(shape):
    return itertools.product(*(range(n) for n in shape))


def conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, i] = b[o] + sum over c in o's group, taps k: w[o, c, k] * x[n, c, i*s + k*d - p]."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    nd = x.ndim - 2
    stride, padding, dilation = (_tup(v, nd) for v in (stride, padding, dilation))
    n, c, *spatial = x.shape
    o, cg, *kernel = w.shape
    og = o // groups
    out = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in _zip(spatial, padding, dilation, kernel, stride)
    ]
    y = np.zeros((n, o, *out))
    for pos in _grid(out):
        for tap in _grid(kernel):
            src = [
                i * st + k * d - p for i, st, k, d, p in _zip(pos, stride, tap, dilation, padding)
            ]
            if any(s_ < 0 or s_ >= size for s_, size in _zip(src, spatial)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg), *src)]  # [n, cg]
                ws = w[(slice(g * og, (g + 1) * og), slice(None), *tap)]  # [og, cg]
                y[(slice(None), slice(g * og, (g + 1) * og), *pos)] += xs @ ws.T
    if b is not None:
        y += np.asarray(b, np.float64).reshape(1, o, *([1] * nd))
    return y


def conv_transpose(x, w, b=None, stride=1, padding=0, padding_out=0, dilation=1, groups=1):
    """Every input element scatters x[n, c, i] * w[c, o, k] to output position i*s + k*d - p."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    nd = x.ndim - 2
    stride, padding, padding_out, dilation = (
        _tup(v, nd) for v in (stride, padding, padding_out, dilation)
    )
    n, c, *spatial = x.shape
    _, og, *kernel = w.shape
    cg = c // groups
    out = [
        (s - 1) * st + d * (k - 1) + 1 + po - 2 * p
        for s, st, d, k, po, p in _zip(spatial, stride, dilation, kernel, padding_out, padding)
    ]
    y = np.zeros((n, og * groups, *out))
    for pos in _grid(spatial):
        for tap in _grid(kernel):
            dst = [
                i * st + k * d - p for i, st, k, d, p in _zip(pos, stride, tap, dilation, padding)
            ]
            if any(t < 0 or t >= size for t, size in _zip(dst, out)):
                continue
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg), *pos)]  # [n, cg]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None), *tap)]  # [cg, og]
                y[(slice(None), slice(g * og, (g + 1) * og), *dst)] += xs @ ws
    if b is not None:
        y += np.asarray(b, np.float64).reshape(1, -1, *([1] * nd))
    return y


def avg_pool(x, kernel, stride, padding, count_include_pad=True):
    x = np.asarray(x, np.float64)
    nd = x.ndim - 2
    kernel, stride, padding = (_tup(v, nd) for v in (kernel, stride, padding))
    spatial = x.shape[2:]
    out = [(s + 2 * p - k) // st + 1 for s, p, k, st in _zip(spatial, padding, kernel, stride)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in _grid(out):
        lo = [i * st - p for i, st, p in _zip(pos, stride, padding)]
        window = tuple(slice(max(a, 0), min(a + k, s)) for a, k, s in _zip(lo, kernel, spatial))
        region = x[(slice(None), slice(None), *window)]
        count = math.prod(kernel) if count_include_pad else math.prod(region.shape[2:])
        y[(slice(None), slice(None), *pos)] = region.sum(axis=tuple(range(2, 2 + nd))) / count
    return y


def max_pool_with_indices(x, kernel, stride, padding, dilation=1):
    """(max, flat index in the plane) of each window; the first maximum in tap order wins."""
    x = np.asarray(x, np.float64)
    nd = x.ndim - 2
    kernel, stride, padding, dilation = (_tup(v, nd) for v in (kernel, stride, padding, dilation))
    n, c, *spatial = x.shape
    out = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in _zip(spatial, padding, dilation, kernel, stride)
    ]
    y = np.full((n, c, *out), -np.inf)
    idx = np.zeros((n, c, *out), dtype=np.int64)
    for pos in _grid(out):
        best = np.full((n, c), -np.inf)
        where = np.zeros((n, c), dtype=np.int64)
        for tap in _grid(kernel):
            src = [
                i * st + k * d - p for i, st, k, d, p in _zip(pos, stride, tap, dilation, padding)
            ]
            if any(s_ < 0 or s_ >= size for s_, size in _zip(src, spatial)):
                continue
            v = x[(slice(None), slice(None), *src)]
            better = v > best
            best = np.where(better, v, best)
            where = np.where(better, np.ravel_multi_index(src, spatial), where)
        y[(slice(None), slice(None), *pos)] = best
        idx[(slice(None), slice(None), *pos)] = where
    return y, idx


def adaptive_avg_pool(x, output_size):
    x = np.asarray(x, np.float64)
    nd = x.ndim - 2
    output_size = _tup(output_size, nd)
    spatial = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(output_size))
    for pos in _grid(output_size):
        window = tuple(
            slice(math.floor(i * s / o), math.ceil((i + 1) * s / o))
            for i, s, o in _zip(pos, spatial, output_size)
        )
        y[(slice(None), slice(None), *pos)] = x[(slice(None), slice(None), *window)].mean(
            axis=tuple(range(2, 2 + nd))
        )
    return y


def _cubic(p0, p1, p2, p3, t, a=-0.75):
    def near(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return p0 * far(t + 1) + p1 * near(t) + p2 * near(1 - t) + p3 * far(2 - t)


def interpolate(x, output_size, mode):
    """Burn's interpolation, one output element at a time (bilinear/bicubic align corners)."""
    x = np.asarray(x, np.float64)
    n, c, h, w = x.shape
    oh, ow = output_size
    y = np.zeros((n, c, oh, ow))
    if mode == "nearest":
        for i in range(oh):
            for j in range(ow):
                y[:, :, i, j] = x[:, :, (i * h) // oh, (j * w) // ow]
        return y
    ry = (h - 1) / max(oh - 1, 1)
    rx = (w - 1) / max(ow - 1, 1)
    for i in range(oh):
        for j in range(ow):
            fy, fx = ry * i, rx * j
            y0, x0 = math.floor(fy), math.floor(fx)
            ty, tx = fy - y0, fx - x0
            if mode == "bilinear":
                y1, x1 = min(math.ceil(fy), h - 1), min(math.ceil(fx), w - 1)
                y[:, :, i, j] = (
                    x[:, :, y0, x0] * (1 - tx) * (1 - ty)
                    + x[:, :, y0, x1] * tx * (1 - ty)
                    + x[:, :, y1, x0] * (1 - tx) * ty
                    + x[:, :, y1, x1] * tx * ty
                )
            else:
                ys = [min(max(y0 + d, 0), h - 1) for d in (-1, 0, 1, 2)]
                xs = [min(max(x0 + d, 0), w - 1) for d in (-1, 0, 1, 2)]
                rows = [_cubic(*(x[:, :, r, q] for q in xs), tx) for r in ys]
                y[:, :, i, j] = _cubic(*rows, ty)
    return y


def unfold4d(x, kernel, stride=1, padding=0, dilation=1):
    """Columns [N, C*KH*KW, L]: row c*KH*KW + kh*KW + kw, column oh*OW + ow."""
    x = np.asarray(x, np.float64)
    kernel, stride, padding, dilation = (_tup(v, 2) for v in (kernel, stride, padding, dilation))
    n, c, h, w = x.shape
    out = [
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in _zip((h, w), padding, dilation, kernel, stride)
    ]
    cols = np.zeros((n, c, kernel[0], kernel[1], out[0], out[1]))
    for oh, ow in _grid(out):
        for kh, kw in _grid(kernel):
            r = oh * stride[0] + kh * dilation[0] - padding[0]
            q = ow * stride[1] + kw * dilation[1] - padding[1]
            if 0 <= r < h and 0 <= q < w:
                cols[:, :, kh, kw, oh, ow] = x[:, :, r, q]
    return cols.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])


def _tup(v, n):
    return (int(v),) * n if np.isscalar(v) else tuple(int(a) for a in v)


def lstm(x, w_ih, w_hh, b, h0, c0):
    """LSTM states step by step, gates i, f, g, o in column blocks: `(output, h_n, c_n)`."""
    hidden = h0.shape[1]
    h, c, outputs = h0, c0, []
    for t in range(x.shape[1]):
        z = x[:, t] @ w_ih + h @ w_hh + (0.0 if b is None else b)
        i, f, g, o = (z[:, k * hidden : (k + 1) * hidden] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, 1), h, c


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def gru(x, w_ih, w_hh, b_ih, b_hh, h0):
    """GRU states step by step (PyTorch's form, gates r, z, n): `(output, h_n)`."""
    hidden = h0.shape[1]
    h, outputs = h0, []
    for t in range(x.shape[1]):
        gi = x[:, t] @ w_ih + (0.0 if b_ih is None else b_ih)
        gh = h @ w_hh + (0.0 if b_hh is None else b_hh)
        r = _sigmoid(gi[:, :hidden] + gh[:, :hidden])
        z = _sigmoid(gi[:, hidden : 2 * hidden] + gh[:, hidden : 2 * hidden])
        n = np.tanh(gi[:, 2 * hidden :] + r * gh[:, 2 * hidden :])
        h = (1.0 - z) * n + z * h
        outputs.append(h)
    return np.stack(outputs, 1), h


def central_differences(fn, arrays, weights, step=1e-6):
    """Gradients of `sum_k sum(fn(*arrays)[k] * weights[k])` with respect to every array, by
    central differences in float64 (for reference functions of this module)."""

    def loss(args):
        return sum(float(np.sum(o * w)) for o, w in zip(fn(*args), weights, strict=True))

    grads = []
    for k, base in enumerate(arrays):
        g = np.zeros(base.shape)
        for j in np.ndindex(base.shape):
            plus, minus = list(arrays), list(arrays)
            plus[k], minus[k] = base.copy(), base.copy()
            plus[k][j] += step
            minus[k][j] -= step
            g[j] = (loss(plus) - loss(minus)) / (2 * step)
        grads.append(g)
    return grads
