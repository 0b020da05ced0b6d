"""Resize (and Upsample): separable resampling with every ONNX coordinate mode, nearest
rounding mode, linear and cubic kernels, antialiasing and crop-and-resize."""

from __future__ import annotations

import math

import numpy as np
from burn.onnx.runtime.shape import as_ints, fit
from burn.tensor import Tensor

__all__ = ["resize"]


def resize(
    x: Tensor,
    roi=None,
    scales=None,
    sizes=None,
    antialias: int = 0,
    axes=None,
    coordinate_transformation_mode: str = "half_pixel",
    cubic_coeff_a: float = -0.75,
    exclude_outside: int = 0,
    extrapolation_value: float = 0.0,
    keep_aspect_ratio_policy: str = "stretch",
    mode: str = "nearest",
    nearest_mode: str = "round_prefer_floor",
) -> Tensor:
    """Separable resampling: per axis, output positions map to input taps (host-side tables)
    that are gathered and weighted with tensor ops, so gradients flow to `x`."""
    rank = x.rank()
    axes = [a % rank for a in as_ints(axes)] if axes is not None else list(range(rank))
    dims = x.dims()
    scale_list = _floats(scales)
    size_list = as_ints(sizes) if sizes is not None else []
    if size_list:
        if keep_aspect_ratio_policy != "stretch":
            ratios = [size_list[i] / dims[a] for i, a in enumerate(axes)]
            r = min(ratios) if keep_aspect_ratio_policy == "not_larger" else max(ratios)
            size_list = [int(round(r * dims[a])) for a in axes]
            scale_list = [r] * len(axes)
        else:
            scale_list = [size_list[i] / dims[a] for i, a in enumerate(axes)]
    else:
        size_list = [int(math.floor(dims[a] * s)) for a, s in zip(axes, scale_list, strict=True)]
    roi_list = _floats(roi)
    out = x
    for i, axis in enumerate(axes):
        n_in, n_out, scale = dims[axis], size_list[i], scale_list[i]
        if n_in == n_out and coordinate_transformation_mode != "tf_crop_and_resize":
            if mode == "nearest" or scale == 1.0:
                continue
        if roi_list and len(roi_list) == 2 * len(axes):
            start, end = roi_list[i], roi_list[len(axes) + i]
        elif roi_list and len(roi_list) == 2 * rank:
            start, end = roi_list[axis], roi_list[rank + axis]
        else:
            start, end = 0.0, 1.0
        coords = _coordinates(coordinate_transformation_mode, n_in, n_out, scale, start, end)
        idx, wts = _taps(
            mode, coords, n_in, nearest_mode, cubic_coeff_a, exclude_outside, scale, antialias
        )
        out = _apply_taps(
            out, axis, idx, wts, coords, n_in, coordinate_transformation_mode, extrapolation_value
        )
    return out


def _floats(value) -> list[float]:
    if value is None:
        return []
    if isinstance(value, Tensor):
        return [float(v) for v in np.asarray(value.to_data().array).reshape(-1)]
    return [float(v) for v in value]


def _coordinates(mode, n_in, n_out, scale, start, end) -> np.ndarray:
    i = np.arange(n_out, dtype=np.float64)
    if mode == "half_pixel":
        return (i + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = n_out / (scale * n_in)
        center = n_in / 2
        offset = center * (1 - adjustment)
        return offset + (i + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (i + 0.5) / scale - 0.5 if n_out > 1 else np.zeros_like(i)
    if mode == "align_corners":
        length = n_in * scale  # the unrounded output length, as ONNX's formula has it
        return i * (n_in - 1) / (length - 1) if length != 1 else np.zeros_like(i)
    if mode == "asymmetric":
        return i / scale
    if mode == "tf_crop_and_resize":
        if n_out > 1:
            return start * (n_in - 1) + i * (end - start) * (n_in - 1) / (n_out - 1)
        return np.full_like(i, 0.5 * (start + end) * (n_in - 1))
    raise ValueError(f"Resize: unknown coordinate_transformation_mode {mode!r}")


def _taps(mode, coords, n_in, nearest_mode, a, exclude_outside, scale, antialias):
    if mode == "nearest":
        if nearest_mode == "round_prefer_ceil":
            idx = np.floor(coords + 0.5)
        elif nearest_mode == "floor":
            idx = np.floor(coords)
        elif nearest_mode == "ceil":
            idx = np.ceil(coords)
        else:
            idx = np.ceil(coords - 0.5)
        idx = np.clip(idx, 0, n_in - 1).astype(np.int64)
        return idx[:, None], np.ones((len(coords), 1))
    scale_k = min(scale, 1.0) if antialias else 1.0
    if mode == "linear":
        support = 1.0 / scale_k
        base = (
            np.floor(coords - support + 1).astype(np.int64)
            if antialias
            else np.floor(coords).astype(np.int64)
        )
        count = int(math.ceil(2 * support)) + 1 if antialias else 2
        offsets = base[:, None] + np.arange(count)[None, :]
        dist = np.abs(coords[:, None] - offsets) * scale_k
        w = np.clip(1 - dist, 0, None)
    else:  # cubic
        support = 2.0 / scale_k
        count = int(math.ceil(2 * support)) + 1 if antialias else 4
        base = np.floor(coords).astype(np.int64) - (
            count // 2 - 1 if not antialias else int(math.ceil(support)) - 1
        )
        offsets = base[:, None] + np.arange(count)[None, :]
        dist = np.abs(coords[:, None] - offsets) * scale_k
        w = _cubic(dist, a)
    if exclude_outside:
        w = np.where((offsets < 0) | (offsets >= n_in), 0.0, w)
        w = w / np.maximum(w.sum(1, keepdims=True), 1e-12)
    elif antialias:
        w = w / np.maximum(w.sum(1, keepdims=True), 1e-12)
    return np.clip(offsets, 0, n_in - 1), w


def _cubic(d, a):
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _apply_taps(x, axis, idx, wts, coords, n_in, mode, extrapolation):
    out = None
    for t in range(idx.shape[1]):
        index = Tensor.from_data(idx[:, t], device=x.device(), dtype=fit("i64", x.device()))
        part = x.select(axis, index)
        if not np.all(wts[:, t] == 1.0):
            shape = [1] * x.rank()
            shape[axis] = len(coords)
            weight = Tensor.from_data(wts[:, t].reshape(shape), device=x.device(), dtype=x.dtype)
            part = part * weight
        out = part if out is None else out + part
    if mode == "tf_crop_and_resize":
        outside = (coords < 0) | (coords > n_in - 1)
        if outside.any():
            shape = [1] * x.rank()
            shape[axis] = len(coords)
            mask = Tensor.from_data(outside.reshape(shape), device=x.device(), dtype="bool")
            out = out.mask_fill(mask.expand(out.dims()), extrapolation)
    return out
