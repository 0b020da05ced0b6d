"""Adam, and the adaptive moments it shares with AdamW."""

from __future__ import annotations

from burn.nn._config import config
from burn.optim.decay import WeightDecay, WeightDecayConfig
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.simple import OptimizerAdaptor, SimpleOptimizer
from burn.tensor import Tensor
from burn.tensor.optim import adam_step_many


class AdaptiveMomentum:
    """Bias-corrected first and second moments; the update is m_hat / (sqrt(v_hat) + eps).

    State: `time` (steps taken), `moment_1` and `moment_2`. The first step starts both moments
    from zero, as PyTorch does, so the numbers match `torch.optim.Adam`. `update_many` updates
    every parameter of a step, with one backend op for all the parameters at the same step
    count (`burn.tensor.optim.adam_step_many`): Adam and AdamW call it for a model's step, and
    `update` is it for one parameter. `transform` gives the step's direction alone, for rules
    built on top of it.
    """

    def __init__(self, beta_1: float, beta_2: float, epsilon: float):
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)

    def transform(self, grad: Tensor, state: dict | None) -> tuple[Tensor, dict]:
        if state is None:
            time = 1
            moment_1 = grad * (1.0 - self.beta_1)
            moment_2 = grad.square() * (1.0 - self.beta_2)
        else:
            time = int(state["time"]) + 1
            moment_1 = state["moment_1"] * self.beta_1 + grad * (1.0 - self.beta_1)
            moment_2 = state["moment_2"] * self.beta_2 + grad.square() * (1.0 - self.beta_2)
        m_hat = moment_1 / (1.0 - self.beta_1**time)
        v_hat = moment_2 / (1.0 - self.beta_2**time)
        delta = m_hat / (v_hat.sqrt() + self.epsilon)
        return delta, {"time": time, "moment_1": moment_1, "moment_2": moment_2}

    def update(
        self,
        lr: float,
        tensor: Tensor,
        grad: Tensor,
        state: dict | None,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ) -> tuple[Tensor, dict]:
        """`tensor` after one step and the new state: `tensor - lr * transform(grad)`, with
        Adam's L2 `weight_decay` folded into the gradient, or AdamW's applied to the parameter
        (`decoupled_weight_decay`). Moments restored in another dtype (a checkpoint saved at
        another precision) are cast to the parameter's first."""
        items = [(tensor, grad, state)]
        return self.update_many(lr, items, weight_decay, decoupled_weight_decay)[0]

    def update_many(
        self,
        lr: float,
        items: list[tuple[Tensor, Tensor, dict | None]],
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ) -> list[tuple[Tensor, dict]]:
        """`update` of every `(tensor, grad, state)`, in order, with the same results: the
        parameters at the same step count (all of them, in a model trained from the start) go
        to the backend as one op."""
        inputs = [self._inputs(tensor, grad, state) for tensor, grad, state in items]
        groups: dict[tuple, list[int]] = {}
        for k, (tensor, _, _) in enumerate(items):
            groups.setdefault((inputs[k][1], tensor.backend), []).append(k)
        results: list = [None] * len(items)
        for (time, _), members in groups.items():
            first = inputs[members[0]][2] is None
            updated, moments_1, moments_2 = adam_step_many(
                [items[k][0] for k in members],
                [inputs[k][0] for k in members],
                None if first else [inputs[k][2] for k in members],
                None if first else [inputs[k][3] for k in members],
                time,
                lr,
                self.beta_1,
                self.beta_2,
                self.epsilon,
                weight_decay,
                decoupled_weight_decay,
            )
            for k, new, m1, m2 in zip(members, updated, moments_1, moments_2, strict=True):
                results[k] = (new, {"time": time, "moment_1": m1, "moment_2": m2})
        return results

    @staticmethod
    def _inputs(tensor: Tensor, grad: Tensor, state: dict | None):
        """`(grad, time, moment_1, moment_2)` of a step of `tensor`: the gradient, and the
        moments restored in another dtype (a checkpoint saved at another precision), cast to
        the parameter's dtype; no moments on the first step."""
        dtype = tensor.dtype
        if grad.dtype != dtype:
            grad = grad.cast(dtype)
        if state is None:
            return grad, 1, None, None
        moment_1, moment_2 = (
            m if m.dtype == dtype else m.cast(dtype) for m in (state["moment_1"], state["moment_2"])
        )
        return grad, int(state["time"]) + 1, moment_1, moment_2


@config
class AdamConfig:
    """Adam's options with Burn's defaults (note epsilon 1e-5, PyTorch's is 1e-8)."""

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def init(self) -> OptimizerAdaptor:
        optim = Adam(
            AdaptiveMomentum(self.beta_1, self.beta_2, self.epsilon),
            WeightDecay(self.weight_decay) if self.weight_decay is not None else None,
        )
        clipping = self.grad_clipping.init() if self.grad_clipping is not None else None
        return OptimizerAdaptor(optim, clipping)


class Adam(SimpleOptimizer):
    """Adam (Kingma and Ba) with L2 weight decay added to the gradient."""

    def __init__(self, momentum: AdaptiveMomentum, weight_decay: WeightDecay | None = None):
        self.momentum = momentum
        self.weight_decay = weight_decay

    def step(self, lr, tensor: Tensor, grad: Tensor, state: dict | None):
        penalty = self.weight_decay.penalty if self.weight_decay is not None else 0.0
        updated, moments = self.momentum.update(
            lr, tensor, grad, state["momentum"] if state else None, penalty
        )
        return updated, {"momentum": moments}

    def step_many(self, lr, items):
        penalty = self.weight_decay.penalty if self.weight_decay is not None else 0.0
        states = [(t, g, s["momentum"] if s else None) for t, g, s in items]
        return [
            (updated, {"momentum": moments})
            for updated, moments in self.momentum.update_many(lr, states, penalty)
        ]

    def __repr__(self) -> str:
        return "Adam"
