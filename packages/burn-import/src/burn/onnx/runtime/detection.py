"""The detection ops.

NonMaxSuppression: greedy per batch and class, on the host (its output size depends on the
data). Boxes as corners (y1, x1, y2, x2, either order) or centers (x, y, w, h).

RoiAlign: the sampling points of each region are computed on the host from the boxes (as
Resize and GridSample do), and the feature map is read with one `gather` and weighted on the
device, so the op runs on every backend and the gradient reaches the feature map.

MaxRoiPool (Fast R-CNN's region pooling, a legacy op): on the host, region by region.
"""

from __future__ import annotations

import math

import numpy as np
from burn.onnx.runtime.shape import as_scalar, fit, full
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError

__all__ = ["max_roi_pool", "non_max_suppression", "roi_align"]

# Elements gathered per chunk of regions (channels x sampled taps): bounds the memory of a
# detection head's thousand regions.
_ROI_CHUNK_ELEMENTS = 1 << 24
# Sampled taps of one region at the most: adaptive sampling takes about one point per pixel of
# the region, so a box of absurd size (from a damaged or hostile input) is refused, not sampled.
_ROI_MAX_REGION_TAPS = 1 << 26


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    if center_point_box:
        x, y, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
        return np.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], -1)
    y1 = np.minimum(boxes[..., 0], boxes[..., 2])
    y2 = np.maximum(boxes[..., 0], boxes[..., 2])
    x1 = np.minimum(boxes[..., 1], boxes[..., 3])
    x2 = np.maximum(boxes[..., 1], boxes[..., 3])
    return np.stack([y1, x1, y2, x2], -1)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    inter_h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    inter_w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = inter_h * inter_w
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def non_max_suppression(
    boxes: Tensor,
    scores: Tensor,
    max_output_boxes_per_class=None,
    iou_threshold=None,
    score_threshold=None,
    center_point_box: int = 0,
) -> Tensor:
    box = _corners(np.asarray(boxes.to_data().array, dtype=np.float64), center_point_box)
    score = np.asarray(scores.to_data().array, dtype=np.float64)
    limit = (
        int(as_scalar(max_output_boxes_per_class)) if max_output_boxes_per_class is not None else 0
    )
    iou_max = float(as_scalar(iou_threshold)) if iou_threshold is not None else 0.0
    floor = float(as_scalar(score_threshold)) if score_threshold is not None else None
    selected = []
    for b in range(score.shape[0]):
        for c in range(score.shape[1]):
            order = np.argsort(-score[b, c], kind="stable")
            if floor is not None:
                order = [i for i in order if score[b, c, i] > floor]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if all(_iou(box[b, i], box[b, j]) <= iou_max for j in kept):
                    kept.append(int(i))
            selected += [[b, c, i] for i in kept]
    array = np.asarray(selected, dtype=np.int64).reshape(-1, 3)
    device = boxes.device()
    if array.size == 0:
        return full([0, 3], 0, device, "i64")
    return Tensor.from_data(array, device=device, dtype=fit("i64", device))


def _roi_taps(boxes, batch, height, width, out_h, out_w, ratio, scale, half_pixel):
    """Per region, bin and sampling point, the four bilinear taps as flat indices into the
    `[N * H * W]` plane and their weights, each `[R, out_h, out_w, G, 4]` (the regions' grids
    padded to the largest, G points, with zero weights), the real point count per region
    (at least 1: the divisor of `avg`), and which of the G points are real."""
    offset = 0.5 if half_pixel else 0.0
    start_w = boxes[:, 0] * scale - offset
    start_h = boxes[:, 1] * scale - offset
    size_w = boxes[:, 2] * scale - offset - start_w
    size_h = boxes[:, 3] * scale - offset - start_h
    if not half_pixel:  # the opset-10 rule: regions at least one pixel wide
        size_w, size_h = np.maximum(size_w, 1.0), np.maximum(size_h, 1.0)
    bin_h, bin_w = size_h / out_h, size_w / out_w
    if ratio > 0:
        grid_h = np.full(len(boxes), float(ratio))
        grid_w = grid_h
    else:  # adaptive: about one point per input pixel
        grid_h, grid_w = np.ceil(size_h / out_h), np.ceil(size_w / out_w)
    gh, gw = max(float(grid_h.max(initial=0)), 1.0), max(float(grid_w.max(initial=0)), 1.0)
    if out_h * out_w * gh * gw * 4 > _ROI_MAX_REGION_TAPS:
        raise ShapeError(
            f"RoiAlign: a region of {float(size_h.max()):g} x {float(size_w.max()):g} pixels "
            f"in {out_h} x {out_w} bins samples {gh:g} x {gw:g} points per bin, more than "
            f"{_ROI_MAX_REGION_TAPS} taps"
        )
    grid_h, grid_w = grid_h.astype(np.int64), grid_w.astype(np.int64)
    gh, gw = int(gh), int(gw)
    iy = np.arange(gh)[None, None, :, None]
    ix = np.arange(gw)[None, None, None, :]
    ph = np.arange(out_h)[None, :, None, None]
    pw = np.arange(out_w)[None, :, None, None]
    r = (slice(None), None, None, None)
    gh_r, gw_r = np.maximum(grid_h, 1)[r], np.maximum(grid_w, 1)[r]
    y = start_h[r] + ph * bin_h[r] + (iy + 0.5) * bin_h[r] / gh_r  # [R, out_h, gh, 1]
    x = start_w[r] + pw * bin_w[r] + (ix + 0.5) * bin_w[r] / gw_r  # [R, out_w, 1, gw]
    y = np.broadcast_to(y[:, :, None, :, :], (len(boxes), out_h, out_w, gh, gw))
    x = np.broadcast_to(x[:, None, :, :, :], (len(boxes), out_h, out_w, gh, gw))
    real = (iy < grid_h[r]) & (ix < grid_w[r])  # [R, 1, gh, gw]
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y_low, x_low = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    clamp_y, clamp_x = y_low >= height - 1, x_low >= width - 1
    y_low, x_low = np.where(clamp_y, height - 1, y_low), np.where(clamp_x, width - 1, x_low)
    y_high = np.where(clamp_y, y_low, y_low + 1)
    x_high = np.where(clamp_x, x_low, x_low + 1)
    ly = np.where(clamp_y, 0.0, y - y_low)
    lx = np.where(clamp_x, 0.0, x - x_low)
    weights = np.stack([(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx], -1)
    plane = (batch * height * width)[:, None, None, None, None]
    index = (
        np.stack(
            [
                y_low * width + x_low,
                y_low * width + x_high,
                y_high * width + x_low,
                y_high * width + x_high,
            ],
            -1,
        )
        + plane[..., None]
    )
    dead = (outside | ~real[:, None])[..., None]  # outside points read nothing (weight 0)
    weights = np.where(dead, 0.0, weights)
    index = np.where(dead, 0, index)
    shape = (len(boxes), out_h, out_w, gh * gw, 4)
    count = np.maximum(grid_h * grid_w, 1)
    real = np.broadcast_to(real[:, None], (len(boxes), out_h, out_w, gh, gw))
    return index.reshape(shape), weights.reshape(shape), count, real.reshape(shape[:-1])


def roi_align(
    x: Tensor,
    rois: Tensor,
    batch_indices: Tensor,
    coordinate_transformation_mode: str = "half_pixel",
    mode: str = "avg",
    output_height: int = 1,
    output_width: int = 1,
    sampling_ratio: int = 0,
    spatial_scale: float = 1.0,
) -> Tensor:
    """`[R, C, output_height, output_width]`: each region of interest `[x1, y1, x2, y2]` (in
    input pixels before `spatial_scale`) of the image `batch_indices[r]`, cut into bins, each
    bin the mean (or, with `mode="max"`, ONNX's maximum of weighted taps) of its bilinearly
    sampled points."""
    n, c, height, width = x.dims()
    device = x.device()
    boxes = np.asarray(rois.to_data().array, dtype=np.float64).reshape(-1, 4)
    batch = np.asarray(batch_indices.to_data().array, dtype=np.int64).reshape(-1)
    if not np.isfinite(boxes).all():
        raise ShapeError("RoiAlign: region coordinates must be finite numbers")
    if len(batch) != len(boxes):
        raise ShapeError(f"RoiAlign: {len(boxes)} regions but {len(batch)} batch indices")
    if len(batch) and (batch.min() < 0 or batch.max() >= n):
        raise OutOfRangeError(
            f"RoiAlign: batch indices must lie in [0, {n}), got {batch.min()}..{batch.max()}"
        )
    if mode not in ("avg", "max"):
        raise ShapeError(f"RoiAlign: unknown mode {mode!r}")
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ShapeError(
            f"RoiAlign: unknown coordinate_transformation_mode {coordinate_transformation_mode!r}"
        )
    if int(output_height) < 1 or int(output_width) < 1 or int(sampling_ratio) < 0:
        raise ShapeError(
            f"RoiAlign: output_height and output_width must be at least 1 and sampling_ratio "
            f"at least 0, got {output_height}, {output_width} and {sampling_ratio}"
        )
    index, weight, count, real = _roi_taps(
        boxes,
        batch,
        height,
        width,
        int(output_height),
        int(output_width),
        int(sampling_ratio),
        float(spatial_scale),
        coordinate_transformation_mode == "half_pixel",
    )
    plane = x.swap_dims(0, 1).reshape([c, n * height * width])
    per_region = max(1, math.prod(index.shape[1:]) * c)
    chunk = max(1, _ROI_CHUNK_ELEMENTS // per_region)
    parts = []
    for start in range(0, len(boxes), chunk):
        stop = min(len(boxes), start + chunk)
        parts.append(
            _roi_bins(
                plane,
                index[start:stop],
                weight[start:stop],
                count[start:stop],
                real[start:stop],
                mode,
                x,
            )
        )
    if not parts:
        return full([0, c, int(output_height), int(output_width)], 0, device, x.dtype.value)
    return parts[0] if len(parts) == 1 else Tensor.cat(parts, 0)


def _roi_bins(plane, index, weight, count, real, mode, like) -> Tensor:
    """The bins of one chunk of regions, `[R, C, out_h, out_w]`, from `plane` `[C, N*H*W]`."""
    c = plane.dims()[0]
    regions, out_h, out_w, points, _ = index.shape
    device = like.device()
    taps = index.size
    idx = Tensor.from_data(index.reshape(1, taps), device=device, dtype=fit("i64", device))
    w = Tensor.from_data(weight.reshape(1, taps), device=device, dtype=like.dtype)
    values = (plane.gather(1, idx.expand([c, taps])) * w).reshape(
        [c, regions, out_h, out_w, points, 4]
    )
    if mode == "max":
        best = values.max_dim(5)  # ONNX's max mode: the largest weighted tap of each point
        keep = Tensor.from_data(
            real.reshape(1, regions, out_h, out_w, points, 1), device=device, dtype="bool"
        )
        best = best.mask_fill(keep.bool_not().expand(best.dims()), float("-inf"))
        bins = best.max_dim(4)
        none = Tensor.from_data(
            (~real.any(axis=-1)).reshape(1, regions, out_h, out_w, 1, 1),
            device=device,
            dtype="bool",
        )
        bins = bins.mask_fill(none.expand(bins.dims()), 0.0)
    else:
        divisor = Tensor.from_data(
            (1.0 / count).reshape(1, regions, 1, 1, 1, 1), device=device, dtype=like.dtype
        )
        bins = values.sum_dim(5).sum_dim(4) * divisor
    return bins.reshape([c, regions, out_h, out_w]).swap_dims(0, 1)


def _round_half_away(values: np.ndarray) -> np.ndarray:
    """C's `round`: halves go away from zero (numpy's `round` goes to even)."""
    return np.sign(values) * np.floor(np.abs(values) + 0.5)


def max_roi_pool(x: Tensor, rois: Tensor, pooled_shape=(1, 1), spatial_scale: float = 1.0):
    """MaxRoiPool (Fast R-CNN's region pooling): each region of `rois [R, 5]` (batch index,
    x1, y1, x2, y2, scaled by `spatial_scale` and rounded to whole pixels) cut into
    `pooled_shape` bins whose maxima are taken; an empty bin gives 0. Computed on the host
    (a legacy inference op; its output carries no gradient)."""
    features = np.asarray(x.to_data().array)
    boxes = np.asarray(rois.to_data().array, dtype=np.float64).reshape(-1, 5)
    batch, channels, height, width = features.shape
    if len(pooled_shape) != 2 or min(pooled_shape) < 1:
        raise ShapeError(f"MaxRoiPool: pooled_shape must be two sizes >= 1, got {pooled_shape}")
    out_h, out_w = (int(v) for v in pooled_shape)
    if not np.isfinite(boxes).all():
        raise ShapeError("MaxRoiPool: rois hold values that are not finite")
    index = boxes[:, 0].astype(np.int64)
    if ((index < 0) | (index >= batch)).any():
        raise OutOfRangeError(f"MaxRoiPool: a batch index is outside [0, {batch})")
    corners = _round_half_away(boxes[:, 1:] * spatial_scale).astype(np.int64)
    out = np.zeros((len(boxes), channels, out_h, out_w), dtype=features.dtype)
    for r, (x1, y1, x2, y2) in enumerate(corners):
        bin_h = max(y2 - y1 + 1, 1) / out_h
        bin_w = max(x2 - x1 + 1, 1) / out_w
        plane = features[index[r]]
        for ph in range(out_h):
            top = min(max(int(np.floor(ph * bin_h)) + y1, 0), height)
            bottom = min(max(int(np.ceil((ph + 1) * bin_h)) + y1, 0), height)
            for pw in range(out_w):
                left = min(max(int(np.floor(pw * bin_w)) + x1, 0), width)
                right = min(max(int(np.ceil((pw + 1) * bin_w)) + x1, 0), width)
                if bottom > top and right > left:
                    out[r, :, ph, pw] = plane[:, top:bottom, left:right].max(axis=(1, 2))
    return Tensor.from_data(out, device=x.device(), dtype=x.dtype)
