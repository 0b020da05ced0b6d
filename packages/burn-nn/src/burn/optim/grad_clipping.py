"""Gradient clipping, applied to each parameter's gradient before the optimizer sees it."""

from __future__ import annotations

from dataclasses import dataclass

from burn.nn._config import Variants
from burn.tensor import Tensor


class GradientClipping:
    """Base of `GradientClipping.Value` and `GradientClipping.Norm`."""

    def clip_gradient(self, grad: Tensor) -> Tensor:
        raise NotImplementedError


@dataclass(frozen=True)
class ClipByValue(GradientClipping):
    """Clamp every element to [-threshold, threshold]."""

    threshold: float

    def clip_gradient(self, grad: Tensor) -> Tensor:
        t = float(self.threshold)
        return grad.clamp(-t, t)


@dataclass(frozen=True)
class ClipByNorm(GradientClipping):
    """Scale a gradient whose L2 norm exceeds `max_norm` down to that norm.

    The norm is per parameter tensor, as in Burn (PyTorch's `clip_grad_norm_` on one tensor).
    """

    max_norm: float

    def clip_gradient(self, grad: Tensor) -> Tensor:
        norm = float(grad.square().sum().sqrt().into_scalar())
        if norm > self.max_norm:
            return grad * (float(self.max_norm) / norm)
        return grad


GradientClipping.Value = ClipByValue
GradientClipping.Norm = ClipByNorm


class GradientClippingConfig(Variants):
    """`GradientClippingConfig.Value(threshold)` or `GradientClippingConfig.Norm(max_norm)`.

    Saved as Burn writes it: `{"Value": 1.0}` or `{"Norm": 1.0}`.
    """

    _newtype = True

    def init(self) -> GradientClipping:
        raise NotImplementedError


@dataclass(frozen=True)
class _ValueConfig(GradientClippingConfig):
    threshold: float

    def init(self) -> GradientClipping:
        return ClipByValue(float(self.threshold))


@dataclass(frozen=True)
class _NormConfig(GradientClippingConfig):
    max_norm: float

    def init(self) -> GradientClipping:
        return ClipByNorm(float(self.max_norm))


_ValueConfig.__name__ = _ValueConfig.__qualname__ = "Value"
_NormConfig.__name__ = _NormConfig.__qualname__ = "Norm"
GradientClippingConfig._variants = {"Value": _ValueConfig, "Norm": _NormConfig}
GradientClippingConfig.Value = _ValueConfig
GradientClippingConfig.Norm = _NormConfig
