"""`SimpleOptimizer`: an update rule for one tensor, and the adaptor that applies it to a model.

A rule only sees one parameter, its gradient and its own state, so writing a new optimizer is
one small function; `OptimizerAdaptor` walks the model, matches gradients by parameter id,
clips them, keeps each parameter's state and turns it into a record.
"""

from __future__ import annotations

import abc

from burn.optim._params import map_params
from burn.optim.base import LearningRate, Optimizer
from burn.optim.grad_clipping import GradientClipping
from burn.optim.grads import GradientsParams
from burn.tensor import Tensor, TensorData


class SimpleOptimizer(abc.ABC):
    """One update rule: `step(lr, tensor, grad, state) -> (tensor, state)`.

    `tensor` and `grad` are plain tensors (of the inner backend when training on `Autodiff`).
    `state` is None on a parameter's first step, afterwards whatever the previous step returned:
    a nested dict of tensors, ints and None, so it can be recorded and moved between devices.
    """

    @abc.abstractmethod
    def step(
        self, lr: LearningRate, tensor: Tensor, grad: Tensor, state: dict | None
    ) -> tuple[Tensor, dict | None]:
        """The updated tensor and the state for the next step."""


def state_to_record(state):
    """`state` with every tensor replaced by its `TensorData`."""
    if isinstance(state, Tensor):
        return state.to_data()
    if isinstance(state, dict):
        return {k: state_to_record(v) for k, v in state.items()}
    return state


def state_from_record(record, like: Tensor):
    """`record` with every `TensorData` made a tensor on `like`'s backend and device.

    The dtype is kept, so a run continued from a checkpoint is bit-for-bit the same as one
    that was never interrupted.
    """
    if isinstance(record, TensorData):
        return Tensor[like.backend].from_data(record, like.device(), dtype=record.dtype)
    if isinstance(record, Tensor):
        return (
            record if record.backend is like.backend else state_from_record(record.to_data(), like)
        )
    if isinstance(record, dict):
        return {k: state_from_record(v, like) for k, v in record.items()}
    return record


def record_key(pid) -> str:
    """The text form of a parameter id, the key of its state in a record."""
    return pid if isinstance(pid, str) else str(pid)


class OptimizerAdaptor(Optimizer):
    """An `Optimizer` over a whole model built from a `SimpleOptimizer` rule.

    Parameters without a gradient, or whose require-grad flag is off, are returned unchanged.
    """

    def __init__(self, optim: SimpleOptimizer, grad_clipping: GradientClipping | None = None):
        self.optim = optim
        self.grad_clipping = grad_clipping
        self.records: dict[str, object] = {}

    def with_grad_clipping(self, grad_clipping: GradientClipping) -> OptimizerAdaptor:
        self.grad_clipping = grad_clipping
        return self

    def step(self, lr: LearningRate, model, grads: GradientsParams):
        lr = float(lr)

        def update(pid, tensor: Tensor, require_grad: bool) -> Tensor:
            grad = grads.remove(pid)
            if grad is None or not require_grad:
                return tensor
            return self._step_tensor(lr, pid, tensor, grad)

        return map_params(model, update)

    def _step_tensor(self, lr: float, pid, tensor: Tensor, grad: Tensor) -> Tensor:
        if self.grad_clipping is not None:
            grad = self.grad_clipping.clip_gradient(grad)
        key = record_key(pid)
        state = self.records.pop(key, None)
        if state is not None:
            state = state_from_record(state, grad)
        inner = tensor.inner()
        updated, state = self.optim.step(lr, inner, grad, state)
        if state is not None:
            self.records[key] = state
        if tensor.backend is not updated.backend:
            updated = Tensor.from_inner(updated, tensor.backend)
        return updated.require_grad()

    def to_record(self) -> dict:
        return {key: state_to_record(state) for key, state in self.records.items()}

    def load_record(self, record: dict) -> OptimizerAdaptor:
        self.records = {record_key(key): state for key, state in record.items()}
        return self

    def __repr__(self) -> str:
        return f"OptimizerAdaptor({self.optim!r}, grad_clipping={self.grad_clipping!r})"
