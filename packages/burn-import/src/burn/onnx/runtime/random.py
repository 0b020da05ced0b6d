"""Random ops: RandomNormal, RandomUniform (and their `Like` forms), Bernoulli and Multinomial,
drawn from the backend's generator (`backend.seed(n)` makes them repeatable; ONNX's `seed`
attribute is not used, since each backend has its own generator)."""

from __future__ import annotations

from burn.onnx.runtime.reduce import cumsum
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor, activation
from burn.tensor.distribution import Normal, Uniform

__all__ = ["bernoulli", "multinomial", "random_normal", "random_uniform"]


def random_normal(shape, device, dtype: str = "f32", mean: float = 0.0, scale: float = 1.0):
    return Tensor.random(list(shape), Normal(mean, scale), device=device, dtype=fit(dtype, device))


def random_uniform(shape, device, dtype: str = "f32", low: float = 0.0, high: float = 1.0):
    return Tensor.random(list(shape), Uniform(low, high), device=device, dtype=fit(dtype, device))


def bernoulli(p: Tensor, dtype: str | None = None) -> Tensor:
    draws = random_uniform(p.dims(), p.device(), p.dtype.value)
    hits = draws.lower(p)
    if dtype in (None, p.dtype.value):
        return hits.int().float(p.dtype) if dtype is None else hits.int().float(dtype)
    if dtype == "bool":
        return hits
    if dtype in ("f32", "f64", "f16", "bf16"):
        return hits.int().float(fit(dtype, p.device()))
    return hits.int(fit(dtype, p.device()))


def multinomial(x: Tensor, sample_size: int = 1, dtype: str = "i32") -> Tensor:
    """`sample_size` class indices per row of `x [batch, classes]` (unnormalized log
    probabilities), drawn from its softmax: a uniform draw per sample, counted against the
    running sums of the probabilities (the last class takes what rounding leaves over)."""
    batch, classes = x.dims()
    probs = activation.softmax(x.float("f32") if x.dtype.value != "f32" else x, 1)
    cdf = cumsum(probs, [1]).unsqueeze_dim(1)  # [batch, 1, classes]
    draws = random_uniform([batch, sample_size], x.device()).unsqueeze_dim(2)
    below = cdf.lower(draws).int().sum_dim(2).reshape([batch, sample_size])
    return below.clamp_max(classes - 1).int(fit(dtype, x.device()))
