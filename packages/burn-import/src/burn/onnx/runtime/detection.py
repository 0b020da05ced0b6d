"""NonMaxSuppression: greedy per batch and class, on the host (its output size depends on the
data). Boxes as corners (y1, x1, y2, x2, either order) or centers (x, y, w, h)."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import as_scalar, fit
from burn.tensor import Tensor

__all__ = ["non_max_suppression"]


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
        from burn.onnx.runtime.shape import full

        return full([0, 3], 0, device, "i64")
    return Tensor.from_data(array, device=device, dtype=fit("i64", device))
