"""`GradientsParams`: gradients by parameter id, detached from the autodiff graph."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from burn.optim._params import iter_params
from burn.tensor import Tensor


class GradientsParams:
    """The gradient of each parameter, keyed by its `ParamId`, on the inner backend.

    `loss.backward()` gives gradients keyed by graph node; this re-keys them by parameter so an
    optimizer can match them to a model's parameters, and so they can be accumulated, clipped
    or moved between devices independently of the graph that produced them.
    """

    def __init__(self, grads: dict | None = None):
        self._grads: dict = dict(grads or {})

    @classmethod
    def from_grads(cls, grads, model) -> GradientsParams:
        """Take the gradient of every parameter of `model` out of `grads` (from `backward()`)."""
        return cls.from_module(grads, model)

    @classmethod
    def from_module(cls, grads, model) -> GradientsParams:
        out = cls()
        for pid, tensor, _ in iter_params(model):
            grad = tensor.grad_remove(grads)
            if grad is not None:
                out.register(pid, grad)
        return out

    @classmethod
    def from_params(cls, grads, model, params: Iterable) -> GradientsParams:
        """Like `from_grads`, for the parameters whose ids are in `params` only."""
        wanted = set(params)
        out = cls()
        for pid, tensor, _ in iter_params(model):
            if pid in wanted:
                grad = tensor.grad_remove(grads)
                if grad is not None:
                    out.register(pid, grad)
        return out

    def get(self, pid) -> Tensor | None:
        return self._grads.get(pid)

    def remove(self, pid) -> Tensor | None:
        return self._grads.pop(pid, None)

    def register(self, pid, grad: Tensor) -> None:
        self._grads[pid] = grad

    def len(self) -> int:
        return len(self._grads)

    def is_empty(self) -> bool:
        return not self._grads

    def ids(self) -> list:
        return list(self._grads)

    def to_device(self, device) -> GradientsParams:
        """The same gradients on `device` (for data-parallel training)."""
        return GradientsParams({pid: g.to_device(device) for pid, g in self._grads.items()})

    def __len__(self) -> int:
        return len(self._grads)

    def __contains__(self, pid) -> bool:
        return pid in self._grads

    def __iter__(self) -> Iterator:
        return iter(self._grads)

    def items(self):
        return self._grads.items()

    def __repr__(self) -> str:
        return f"GradientsParams({len(self)} tensors)"
