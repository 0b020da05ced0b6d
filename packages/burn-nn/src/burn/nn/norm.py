"""Normalization layers: `BatchNorm`, `LayerNorm`, `GroupNorm`, `InstanceNorm`, `RmsNorm`.

All scale by a learned `gamma` (ones) and shift by `beta` (zeros), as Burn names them.
`BatchNorm` keeps running statistics as parameters that take no gradient: they are saved in
the record with the weights, updated by a forward on an autodiff backend (training) and used
as they are everywhere else (after `model.valid()`).
"""

from __future__ import annotations

import math

from burn.module import Module, Param
from burn.nn._config import config
from burn.nn.dropout import _tracks_gradients
from burn.tensor import Tensor
from burn.tensor.module import batch_norm, layer_norm


def _channel_view(t: Tensor, rank: int) -> Tensor:
    """A `[C]` tensor shaped `[1, C, 1, ...]` to broadcast over `[N, C, ...]`."""
    shape = [1] * rank
    shape[1] = t.dims()[0]
    return t.reshape(shape)


@config
class BatchNormConfig:
    """`momentum`: weight of the newest batch in the running statistics."""

    num_features: int
    epsilon: float = 1e-5
    momentum: float = 0.1

    def init(self, device=None) -> BatchNorm:
        n = [self.num_features]
        return BatchNorm(
            Param(Tensor.ones(n, device)),
            Param(Tensor.zeros(n, device)),
            Param(Tensor.zeros(n, device), require_grad=False),
            Param(Tensor.ones(n, device), require_grad=False),
            self.momentum,
            self.epsilon,
        )


class BatchNorm(Module):
    """Normalizes each channel (dim 1) of `[batch, channels, ...]` over the other dims.

    Training (an autodiff backend) uses the batch's statistics and moves the running mean and
    variance towards them; the variance recorded is the unbiased one, as PyTorch does (Burn
    records the biased one). Inference uses the running statistics.
    """

    gamma: Param
    beta: Param
    running_mean: Param
    running_var: Param

    def __init__(
        self,
        gamma: Param,
        beta: Param,
        running_mean: Param,
        running_var: Param,
        momentum: float = 0.1,
        epsilon: float = 1e-5,
    ):
        self.gamma = gamma
        self.beta = beta
        self.running_mean = running_mean
        self.running_var = running_var
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)

    def forward(self, x: Tensor) -> Tensor:
        rank = x.rank()
        if rank < 2:
            raise ValueError(f"BatchNorm expects [batch, channels, ...], got {x.dims()}")
        if _tracks_gradients(x):
            return self._forward_train(x)
        mean = _channel_view(self.running_mean.val(), rank)
        var = _channel_view(self.running_var.val(), rank)
        return self._normalize(x, mean, var)

    __call__ = forward

    def _forward_train(self, x: Tensor) -> Tensor:
        """One `batch_norm` op (one autodiff node, one backward op) with the batch's
        statistics, which then move the running ones."""
        dims = x.dims()
        count = math.prod(dims) // dims[1] if dims[1] else 0
        out, mean, var = batch_norm(x, self.gamma.val(), self.beta.val(), self.epsilon)
        m = self.momentum
        unbiased = var * (count / max(count - 1, 1))
        new_mean = self.running_mean.val() * (1.0 - m) + mean * m
        new_var = self.running_var.val() * (1.0 - m) + unbiased * m
        # Running statistics are state, not part of the graph: replace them in place.
        self.running_mean = self.running_mean.with_value(new_mean.detach())
        self.running_var = self.running_var.with_value(new_var.detach())
        return out

    def _normalize(self, x: Tensor, mean: Tensor, var: Tensor) -> Tensor:
        rank = x.rank()
        out = (x - mean) / (var + self.epsilon).sqrt()
        return out * _channel_view(self.gamma.val(), rank) + _channel_view(self.beta.val(), rank)


@config
class LayerNormConfig:
    """Normalizes the last dim, of size `d_model`."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device=None) -> LayerNorm:
        n = [self.d_model]
        return LayerNorm(
            Param(Tensor.ones(n, device)), Param(Tensor.zeros(n, device)), self.epsilon
        )


def _last_dim_view(t: Tensor, rank: int) -> Tensor:
    return t.reshape([1] * (rank - 1) + [t.dims()[0]])


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) over the last dim, then gamma and beta: `[..., d_model]`."""

    gamma: Param
    beta: Param

    def __init__(self, gamma: Param, beta: Param, epsilon: float = 1e-5):
        self.gamma = gamma
        self.beta = beta
        self.epsilon = float(epsilon)

    def forward(self, x: Tensor) -> Tensor:
        return layer_norm(x, self.gamma.val(), self.beta.val(), self.epsilon)

    __call__ = forward


def _group_norm(x: Tensor, groups: int, gamma, beta, epsilon: float) -> Tensor:
    dims = x.dims()
    rank = len(dims)
    batch = dims[0]
    grouped = x.reshape([batch, groups, -1])
    var, mean = grouped.var_mean_bias(2)
    out = ((grouped - mean) / (var + epsilon).sqrt()).reshape(dims)
    if gamma is not None:
        out = out * _channel_view(gamma.val(), rank) + _channel_view(beta.val(), rank)
    return out


@config
class GroupNormConfig:
    """`num_channels` split into `num_groups` groups; `affine` adds gamma and beta."""

    num_groups: int
    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device=None) -> GroupNorm:
        if self.num_channels % self.num_groups:
            raise ValueError(
                f"The number of channels ({self.num_channels}) must be divisible by the number "
                f"of groups ({self.num_groups})"
            )
        gamma, beta = _affine(self.affine, self.num_channels, device)
        return GroupNorm(gamma, beta, self.num_groups, self.num_channels, self.epsilon)


def _affine(affine: bool, n: int, device):
    if not affine:
        return None, None
    return Param(Tensor.ones([n], device)), Param(Tensor.zeros([n], device))


class GroupNorm(Module):
    """Normalizes `[batch, channels, ...]` over each group of channels and the spatial dims."""

    gamma: Param | None
    beta: Param | None

    def __init__(
        self,
        gamma: Param | None,
        beta: Param | None,
        num_groups: int,
        num_channels: int,
        epsilon: float = 1e-5,
    ):
        self.gamma = gamma
        self.beta = beta
        self.num_groups = int(num_groups)
        self.num_channels = int(num_channels)
        self.epsilon = float(epsilon)

    def forward(self, x: Tensor) -> Tensor:
        if x.rank() < 2 or x.dims()[1] != self.num_channels:
            raise ValueError(f"GroupNorm expects [batch, {self.num_channels}, ...], got {x.dims()}")
        return _group_norm(x, self.num_groups, self.gamma, self.beta, self.epsilon)

    __call__ = forward


@config
class InstanceNormConfig:
    """Each channel of each sample normalized on its own; `affine` adds gamma and beta."""

    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def init(self, device=None) -> InstanceNorm:
        gamma, beta = _affine(self.affine, self.num_channels, device)
        return InstanceNorm(gamma, beta, self.num_channels, self.epsilon)


class InstanceNorm(Module):
    """GroupNorm with one group per channel (no running statistics)."""

    gamma: Param | None
    beta: Param | None

    def __init__(
        self, gamma: Param | None, beta: Param | None, num_channels: int, epsilon: float = 1e-5
    ):
        self.gamma = gamma
        self.beta = beta
        self.num_channels = int(num_channels)
        self.epsilon = float(epsilon)

    def forward(self, x: Tensor) -> Tensor:
        if x.rank() < 2 or x.dims()[1] != self.num_channels:
            raise ValueError(
                f"InstanceNorm expects [batch, {self.num_channels}, ...], got {x.dims()}"
            )
        return _group_norm(x, self.num_channels, self.gamma, self.beta, self.epsilon)

    __call__ = forward


@config
class RmsNormConfig:
    """Scales the last dim, of size `d_model`, by its root mean square (no centring)."""

    d_model: int
    epsilon: float = 1e-5

    def init(self, device=None) -> RmsNorm:
        if self.epsilon <= 0:
            raise ValueError(f"epsilon must be positive, got {self.epsilon}")
        return RmsNorm(Param(Tensor.ones([self.d_model], device)), self.epsilon)


class RmsNorm(Module):
    """x / sqrt(mean(x^2) + eps) * gamma over the last dim: LayerNorm without the mean."""

    gamma: Param

    def __init__(self, gamma: Param, epsilon: float = 1e-5):
        self.gamma = gamma
        self.epsilon = float(epsilon)

    def forward(self, x: Tensor) -> Tensor:
        rank = x.rank()
        rms = (x.square().mean_dim(rank - 1) + self.epsilon).sqrt()
        return x / rms * _last_dim_view(self.gamma.val(), rank)

    __call__ = forward
