"""Optimizer updates as contract ops: Adam's (and AdamW's) whole step for one parameter, or for
many at once.

An optimizer written with tensor ops makes about fifteen elementwise ops per parameter and step,
each a pass over the parameter with a fresh buffer; PyTorch's CPU Adam does the same update in a
few in-place passes. Here one parameter's update is one named op, `float_adam_step`, so a backend
can run it as a single kernel of its own (NdArray does it in blocks that stay in the CPU cache,
Wgpu in one GPU kernel) while every other backend runs the default below, written with the
named float ops exactly as `burn.optim.AdaptiveMomentum` composed them before: same ops, same
order, same rounding. Under `Fusion`, a backend's own kernel runs as it is, and the composition
of a backend without one is recorded and fused like any other chain of elementwise ops.

An optimizer updates every parameter of a model in the same step with the same scalars, so
`float_adam_step_many` takes lists: by default it is `float_adam_step` once per parameter, and a
backend whose cost is per launch (Wgpu) updates a group of parameters with one kernel, as
PyTorch's multi-tensor ("foreach") Adam does.

The ops are not differentiable: an optimizer runs on the inner backend's tensors, and the
autodiff decorator forwards it untracked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
else:
    _Core = object


class OptimizerOps(_Core):
    """`float_adam_step` (the Adam/AdamW update, with a default built from named float ops) and
    `float_adam_step_many` (the same for a list of parameters)."""

    if TYPE_CHECKING:
        # Named ops of `FloatTensorOps`, which mixes this group in.
        def float_add(self, lhs: Any, rhs: Any) -> Any: ...

        def float_sub(self, lhs: Any, rhs: Any) -> Any: ...

        def float_mul(self, lhs: Any, rhs: Any) -> Any: ...

        def float_div(self, lhs: Any, rhs: Any) -> Any: ...

        def float_sqrt(self, tensor: Any) -> Any: ...

        def float_add_scalar(self, lhs: Any, rhs: Any) -> Any: ...

        def float_mul_scalar(self, lhs: Any, rhs: Any) -> Any: ...

        def float_div_scalar(self, lhs: Any, rhs: Any) -> Any: ...

    def float_adam_step(
        self,
        tensor: Any,
        grad: Any,
        moment_1: Any | None,
        moment_2: Any | None,
        time: int,
        lr: float,
        beta_1: float,
        beta_2: float,
        epsilon: float,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ) -> tuple[Any, Any, Any]:
        """One Adam step of a parameter: `(tensor, moment_1, moment_2)` after step `time`.

        `time` counts from 1; on the first step `moment_1` and `moment_2` are None (both start
        from zero, as PyTorch's). All tensors have the parameter's shape and dtype. With
        `weight_decay`, Adam adds `weight_decay * tensor` to the gradient (L2); with
        `decoupled_weight_decay` it is AdamW's instead: the parameter shrinks by
        `lr * weight_decay` of itself and the gradient is left alone. The inputs are never
        changed (other references to the old parameter or moments may exist): the results are
        new primitives.

            m = beta_1 * m + (1 - beta_1) * g          v = beta_2 * v + (1 - beta_2) * g * g
            delta = (m / (1 - beta_1**time)) / (sqrt(v / (1 - beta_2**time)) + epsilon)
            tensor = tensor - lr * delta
        """
        if weight_decay and not decoupled_weight_decay:
            grad = self.float_add(self.float_mul_scalar(tensor, weight_decay), grad)
        scaled_grad = self.float_mul_scalar(grad, 1.0 - beta_1)
        squared_grad = self.float_mul_scalar(self.float_mul(grad, grad), 1.0 - beta_2)
        if moment_1 is None or moment_2 is None:
            moment_1, moment_2 = scaled_grad, squared_grad
        else:
            moment_1 = self.float_add(self.float_mul_scalar(moment_1, beta_1), scaled_grad)
            moment_2 = self.float_add(self.float_mul_scalar(moment_2, beta_2), squared_grad)
        m_hat = self.float_div_scalar(moment_1, 1.0 - beta_1**time)
        v_hat = self.float_div_scalar(moment_2, 1.0 - beta_2**time)
        delta = self.float_div(m_hat, self.float_add_scalar(self.float_sqrt(v_hat), epsilon))
        if weight_decay and decoupled_weight_decay:
            tensor = self.float_sub(tensor, self.float_mul_scalar(tensor, lr * weight_decay))
        updated = self.float_sub(tensor, self.float_mul_scalar(delta, lr))
        return updated, moment_1, moment_2

    def float_adam_step_many(
        self,
        tensors: list[Any],
        grads: list[Any],
        moments_1: list[Any] | None,
        moments_2: list[Any] | None,
        time: int,
        lr: float,
        beta_1: float,
        beta_2: float,
        epsilon: float,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """`float_adam_step` of every parameter in `tensors`, all at step `time` with the same
        scalars: `(tensors, moments_1, moments_2)`, three lists in the order given.

        `grads` has one gradient per parameter; `moments_1` and `moments_2` are None on the
        first step, afterwards one moment per parameter each. Each result is what
        `float_adam_step` gives for that parameter alone, to the bit: a backend that overrides
        this op changes how many launches the step takes, never its numbers.
        """
        if moments_1 is None or moments_2 is None:
            firsts: list[Any] = [None] * len(tensors)
            moments_1 = moments_2 = firsts
        step = (time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled_weight_decay)
        results = [
            self.float_adam_step(tensor, grad, m1, m2, *step)
            for tensor, grad, m1, m2 in zip(tensors, grads, moments_1, moments_2, strict=True)
        ]
        updated, new_1, new_2 = (list(part) for part in zip(*results, strict=True))
        return updated, new_1, new_2
