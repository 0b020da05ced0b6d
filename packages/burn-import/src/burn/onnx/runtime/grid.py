"""GridSample (2-d and 3-d; nearest, linear, cubic; zeros, border, reflection padding) and
AffineGrid. Sampling positions and weights come from the grid on the host; the input is
gathered and weighted with tensor ops, so gradients reach it."""

from __future__ import annotations

import itertools

import numpy as np
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]


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
