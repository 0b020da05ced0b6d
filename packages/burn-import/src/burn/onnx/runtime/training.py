"""The training ops of `ai.onnx.preview.training`: one step of Momentum (standard or
Nesterov), Adagrad and Adam over any number of tensors, as tensor arithmetic."""

from __future__ import annotations

import math

from burn.onnx.runtime.shape import as_scalar
from burn.tensor import Tensor

__all__ = ["adagrad_step", "adam_step", "momentum_step"]


def _groups(tensors, per: int) -> list[list[Tensor]]:
    n = len(tensors) // per
    return [list(tensors[k * n : (k + 1) * n]) for k in range(per)]


def momentum_step(r, t, *tensors, alpha: float, beta: float, mode: str, norm_coefficient: float):
    rate, step = float(as_scalar(r)), int(as_scalar(t))
    xs, gs, vs = _groups(tensors, 3)
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs, strict=True):
        g = x * norm_coefficient + g
        v = v * alpha + g * (beta if step > 0 else 1.0)
        if mode == "nesterov":
            new_x.append(x - (g + v * alpha) * rate)
        else:
            new_x.append(x - v * rate)
        new_v.append(v)
    return tuple(new_x + new_v)


def adagrad_step(
    r, t, *tensors, decay_factor: float = 0.0, epsilon: float = 1e-6, norm_coefficient: float = 0.0
):
    rate = float(as_scalar(r)) / (1 + int(as_scalar(t)) * decay_factor)
    xs, gs, hs = _groups(tensors, 3)
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs, strict=True):
        g = x * norm_coefficient + g
        h = h + g * g
        new_x.append(x - g * rate / (h.sqrt() + epsilon))
        new_h.append(h)
    return tuple(new_x + new_h)


def adam_step(
    r,
    t,
    *tensors,
    alpha: float = 0.9,
    beta: float = 0.999,
    epsilon: float = 1e-6,
    norm_coefficient: float = 0.0,
    norm_coefficient_post: float = 0.0,
):
    rate, step = float(as_scalar(r)), int(as_scalar(t))
    if step > 0:
        rate = rate * math.sqrt(1 - beta**step) / (1 - alpha**step)
    xs, gs, vs, hs = _groups(tensors, 4)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs, strict=True):
        g = x * norm_coefficient + g
        v = v * alpha + g * (1 - alpha)
        h = h * beta + g * g * (1 - beta)
        x = x - v / (h.sqrt() + epsilon) * rate
        new_x.append(x * (1 - norm_coefficient_post))
        new_v.append(v)
        new_h.append(h)
    return tuple(new_x + new_v + new_h)
