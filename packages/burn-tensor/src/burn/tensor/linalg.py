"""Vector norms and similarities along a dimension, as in Burn's `linalg` module.

Every function keeps the reduced dimension (size 1), like the tensor reductions.
"""

from __future__ import annotations

import math

from burn.tensor.errors import KindError, ShapeError
from burn.tensor.kind import Float
from burn.tensor.tensor import Tensor


class Norm:
    """Named orders for `vector_norm`: `Norm.L0`, `L1`, `L2`, `LInf`, `LNegInf`, or any float."""

    L0 = 0.0
    L1 = 1.0
    L2 = 2.0
    LInf = math.inf
    LNegInf = -math.inf


def _float(x: Tensor, op: str) -> None:
    if x.kind is not Float:
        raise KindError(f"{op}: needs a Float tensor, got {x.kind.name}")


def vector_norm(x: Tensor, p: float, dim: int) -> Tensor:
    """The order-`p` norm of the vectors along `dim` (0 counts non-zeros; ±inf: max/min |x|)."""
    _float(x, "vector_norm")
    p = float(p)
    if p == 0.0:
        return l0_norm(x, dim)
    if p == 1.0:
        return l1_norm(x, dim)
    if p == 2.0:
        return l2_norm(x, dim)
    if p == math.inf:
        return max_abs_norm(x, dim)
    if p == -math.inf:
        return min_abs_norm(x, dim)
    return lp_norm(x, p, dim)


def l0_norm(x: Tensor, dim: int) -> Tensor:
    """How many entries along `dim` are non-zero (as a float)."""
    _float(x, "l0_norm")
    return x.not_equal_elem(0.0).float(x.dtype).sum_dim(dim)


def l1_norm(x: Tensor, dim: int) -> Tensor:
    _float(x, "l1_norm")
    return x.abs().sum_dim(dim)


def l2_norm(x: Tensor, dim: int) -> Tensor:
    _float(x, "l2_norm")
    return (x * x).sum_dim(dim).sqrt()


def lp_norm(x: Tensor, p: float, dim: int) -> Tensor:
    _float(x, "lp_norm")
    if p == 0:
        raise ShapeError("lp_norm: p must not be 0 (use l0_norm)")
    return x.abs().powf_scalar(float(p)).sum_dim(dim).powf_scalar(1.0 / float(p))


def max_abs_norm(x: Tensor, dim: int) -> Tensor:
    _float(x, "max_abs_norm")
    return x.abs().max_dim(dim)


def min_abs_norm(x: Tensor, dim: int) -> Tensor:
    _float(x, "min_abs_norm")
    return x.abs().min_dim(dim)


def vector_normalize(x: Tensor, p: float, dim: int, eps: float = 1e-12) -> Tensor:
    """`x` divided by its order-`p` norm along `dim`, the norm clamped below by `eps`."""
    return x / vector_norm(x, p, dim).clamp_min(eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between the vectors along `dim` (each norm clamped by `eps`)."""
    _float(x1, "cosine_similarity")
    dot = (x1 * x2).sum_dim(dim)
    return dot / (l2_norm(x1, dim).clamp_min(eps) * l2_norm(x2, dim).clamp_min(eps))


__all__ = [
    "Norm",
    "cosine_similarity",
    "l0_norm",
    "l1_norm",
    "l2_norm",
    "lp_norm",
    "max_abs_norm",
    "min_abs_norm",
    "vector_norm",
    "vector_normalize",
]
