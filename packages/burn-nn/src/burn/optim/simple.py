"""`SimpleOptimizer`: an update rule for one tensor, and the adaptor that applies it to a model.

A rule only sees one parameter, its gradient and its own state, so writing a new optimizer is
one small function; `OptimizerAdaptor` walks the model, matches gradients by parameter id,
clips them, keeps each parameter's state and turns it into a record. It hands the rule every
parameter of the step at once (`step_many`), so a rule whose backend op updates many
parameters together (Adam's and AdamW's, one launch for a group on Wgpu) can use it.
"""

from __future__ import annotations

import abc

from burn.optim._params import iter_params, replace_params
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

    def step_many(
        self, lr: LearningRate, items: list[tuple[Tensor, Tensor, dict | None]]
    ) -> list[tuple[Tensor, dict | None]]:
        """`step` of every `(tensor, grad, state)` of one optimizer step, in order.

        One call `step` per parameter by default; a rule overrides it where its backend op
        takes many parameters at once, with the same results as `step` one by one.
        """
        return [self.step(lr, tensor, grad, state) for tensor, grad, state in items]


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
    if isinstance(record, dict):  # the common case first: a step's state, kept as tensors
        return {k: state_from_record(v, like) for k, v in record.items()}
    if isinstance(record, Tensor):
        return (
            record if record.backend is like.backend else state_from_record(record.to_data(), like)
        )
    if isinstance(record, TensorData):
        return Tensor[like.backend].from_data(record, like.device(), dtype=record.dtype)
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
        pids, tensors, items = [], [], []
        for pid, tensor, require_grad in iter_params(model):
            grad = grads.remove(pid)
            if grad is None or not require_grad:
                continue
            if self.grad_clipping is not None:
                grad = self.grad_clipping.clip_gradient(grad)
            state = self.records.pop(record_key(pid), None)
            if state is not None:
                state = state_from_record(state, grad)
            pids.append(pid)
            tensors.append(tensor)
            items.append((tensor.inner(), grad, state))
        if not items:
            return model
        updated = {}
        results = self.optim.step_many(lr, items)
        for pid, tensor, (new, state) in zip(pids, tensors, results, strict=True):
            if state is not None:
                self.records[record_key(pid)] = state
            if tensor.backend is not new.backend:
                new = Tensor.from_inner(new, tensor.backend)
            updated[pid] = new.require_grad()
        return replace_params(model, updated)

    def to_record(self) -> dict:
        return {key: state_to_record(state) for key, state in self.records.items()}

    def load_record(self, record: dict) -> OptimizerAdaptor:
        self.records = {record_key(key): state for key, state in record.items()}
        return self

    def __repr__(self) -> str:
        return f"OptimizerAdaptor({self.optim!r}, grad_clipping={self.grad_clipping!r})"
