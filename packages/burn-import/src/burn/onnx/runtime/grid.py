"""GridSample (2-d and 3-d; nearest, linear, cubic; zeros, border, reflection padding) and
AffineGrid. Sampling positions and weights come from the grid on the host; the input is
gathered and weighted with tensor ops, so gradients reach it."""

from __future__ import annotations

import itertools

import numpy as np
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = ["affine_grid", "deform_conv", "grid_sample"]


def _reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    span = high - low
    out = x.copy()
    below, above = x < low, x > high
    for mask, dist, near, far in ((below, low - x, low, high), (above, x - high, high, low)):
        if not mask.any() or span == 0:
            continue
        n = np.floor(dist / span)
        r = dist - n * span
        even = (n % 2) == 0
        sign = 1 if near == low else -1
        value = np.where(even, near + sign * r, far - sign * r)
        out = np.where(mask, value, out)
    return out


def _cubic(t: np.ndarray) -> list[np.ndarray]:
    a = -0.75
    t = np.abs(t)
    return [
        ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
        ((a + 2) * t - (a + 3)) * t * t + 1,
        ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
        ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
    ]


def grid_sample(
    x: Tensor,
    grid: Tensor,
    align_corners: int = 0,
    mode: str = "linear",
    padding_mode: str = "zeros",
) -> Tensor:
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    dims = x.dims()[2:]
    n, c = x.dims()[:2]
    g = np.asarray(grid.to_data().array).astype(np.float64)
    out_spatial = list(g.shape[1:-1])
    g = g.reshape(n, -1, len(dims))[..., ::-1]  # per output point, coordinates in dims order
    taps_per_dim = []
    for i, size in enumerate(dims):
        coord = g[..., i]
        if align_corners:
            pos, low, high = (coord + 1) / 2 * (size - 1), 0.0, size - 1.0
        else:
            pos, low, high = ((coord + 1) * size - 1) / 2, -0.5, size - 0.5
        if mode == "nearest":
            pos = np.rint(pos)
        outside = (pos < low) | (pos > high)
        if padding_mode == "border":
            pos = np.where(outside, np.clip(pos, 0, size - 1), pos)
        elif padding_mode == "reflection":
            pos = np.where(outside, _reflect(pos, low, high), pos)
        if mode == "nearest":
            base, weights, offsets = pos.astype(np.int64), [np.ones_like(pos)], [0]
        else:
            floor = np.floor(pos)
            frac = pos - floor
            base = floor.astype(np.int64)
            if mode == "linear":
                weights, offsets = [1 - frac, frac], [0, 1]
            else:
                weights, offsets = _cubic(frac), [-1, 0, 1, 2]
        taps = []
        for w, off in zip(weights, offsets, strict=True):
            idx = base + off
            if padding_mode == "zeros":
                valid = (idx >= 0) & (idx < size)
                w = np.where(valid, w, 0.0)
                idx = np.where(valid, idx, 0)
            elif padding_mode == "border":
                idx = np.clip(idx, 0, size - 1)
            else:
                idx = np.clip(np.trunc(_reflect(idx.astype(np.float64), low, high)), 0, size - 1)
                idx = idx.astype(np.int64)
            taps.append((idx, w))
        taps_per_dim.append(taps)
    strides = np.cumprod([1] + dims[::-1])[:-1][::-1]
    flat = x.reshape([n, c, int(np.prod(dims))])
    out = None
    for combo in itertools.product(*taps_per_dim):
        index = sum(idx * int(s) for (idx, _), s in zip(combo, strides, strict=True))
        weight = np.prod([w for _, w in combo], axis=0)
        points = index.shape[1]
        idx_t = Tensor.from_data(
            index.reshape(n, 1, points), device=x.device(), dtype=fit("i64", x.device())
        )
        w_t = Tensor.from_data(weight.reshape(n, 1, points), device=x.device(), dtype=x.dtype)
        part = flat.gather(2, idx_t.expand([n, c, points])) * w_t
        out = part if out is None else out + part
    return out.reshape([n, c, *out_spatial])


def affine_grid(theta: Tensor, size, align_corners: int = 0) -> Tensor:
    from burn.onnx.runtime.shape import as_ints

    dims = as_ints(size)
    n, spatial = dims[0], dims[2:]
    axes = []
    for s in spatial:
        if align_corners:
            axes.append(np.linspace(-1, 1, s) if s > 1 else np.zeros(1))
        else:
            axes.append((np.arange(s) * 2 + 1) / s - 1)
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = np.stack([m.reshape(-1) for m in mesh[::-1]] + [np.ones(mesh[0].size)], 1)
    base = Tensor.from_data(coords, device=theta.device(), dtype=theta.dtype)  # [P, k+1]
    out = base.unsqueeze(3).matmul(theta.swap_dims(1, 2))  # [N, P, k]
    return out.reshape([n, *spatial, len(spatial)])


def deform_conv(
    x: Tensor,
    w: Tensor,
    offset: Tensor,
    b: Tensor | None = None,
    mask: Tensor | None = None,
    dilations=None,
    group: int = 1,
    kernel_shape=None,
    offset_group: int = 1,
    pads=None,
    strides=None,
) -> Tensor:
    """Deformable 2-d convolution: each kernel tap samples the input (bilinearly, zero outside)
    at its place shifted by `offset`, scaled by `mask`; the columns are then multiplied by the
    weights. Positions come from the offsets on the host; values are gathered with tensor ops."""
    n, c, h, wd = x.dims()
    o, cg, kh, kw = w.dims()
    sh, sw = list(strides or [1, 1])
    dh, dw = list(dilations or [1, 1])
    p = list(pads or [0, 0, 0, 0])
    oh = (h + p[0] + p[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + p[1] + p[3] - dw * (kw - 1) - 1) // sw + 1
    off = np.asarray(offset.to_data().array, dtype=np.float64).reshape(
        n, offset_group, kh, kw, 2, oh, ow
    )
    base_y = (np.arange(oh) * sh - p[0])[None, None, None, :, None] + (np.arange(kh) * dh)[
        None, :, None, None, None
    ]
    base_x = (np.arange(ow) * sw - p[1])[None, None, None, None, :] + (np.arange(kw) * dw)[
        None, None, :, None, None
    ]
    flat = x.reshape([n, c, h * wd])
    per_group = c // offset_group
    points = kh * kw * oh * ow
    columns = []
    for g in range(offset_group):
        y = base_y + off[:, g, :, :, 0]  # [N, kh, kw, oh, ow]
        xx = base_x + off[:, g, :, :, 1]
        y0, x0 = np.floor(y), np.floor(xx)
        part = None
        for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
            yy, xc = y0 + dy, x0 + dx
            weight = (1 - np.abs(y - yy)) * (1 - np.abs(xx - xc))
            inside = (yy >= 0) & (yy < h) & (xc >= 0) & (xc < wd)
            weight = np.where(inside, weight, 0.0)
            index = (np.clip(yy, 0, h - 1) * wd + np.clip(xc, 0, wd - 1)).astype(np.int64)
            idx_t = Tensor.from_data(
                index.reshape(n, 1, points), device=x.device(), dtype=fit("i64", x.device())
            )
            w_t = Tensor.from_data(weight.reshape(n, 1, points), device=x.device(), dtype=x.dtype)
            chunk = flat.narrow(1, g * per_group, per_group)
            term = chunk.gather(2, idx_t.expand([n, per_group, points])) * w_t
            part = term if part is None else part + term
        if mask is not None:
            m = mask.narrow(1, g * kh * kw, kh * kw).reshape([n, 1, points])
            part = part * m
        columns.append(part)
    cols = Tensor.cat(columns, 1) if len(columns) > 1 else columns[0]  # [N, C, kh*kw*oh*ow]
    cols = cols.reshape([n, group, cg * kh * kw, oh * ow])
    weights = w.reshape([1, group, o // group, cg * kh * kw])
    out = weights.matmul(cols).reshape([n, o, oh, ow])
    if b is not None:
        out = out + b.reshape([1, o, 1, 1])
    return out
