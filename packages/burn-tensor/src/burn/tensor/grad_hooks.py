"""The autodiff side of `Tensor`: `require_grad`, `backward`, `grad`, `inner`, `from_inner`.

Each calls the backend's autodiff protocol (`burn.backend.ops.autodiff.AutodiffOps`), whose
defaults make these no-ops (or a clear error for `backward`) on a backend without autodiff.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, cast

from burn.tensor import tensor as _t
from burn.tensor.errors import (
    BackendError,
    DeviceError,
)
from burn.tensor.kind import Float

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.tensor._tensor_core import TensorCore as _Core
    from burn.tensor.tensor import Tensor
else:
    _Core = object


class GradHooks(_Core):
    """The autodiff methods of `Tensor`."""

    __slots__ = ()

    # ================================================================== autodiff hooks
    # On a backend without autodiff these exist and do nothing, as in Burn.
    def require_grad(self) -> Tensor:
        return self.set_require_grad(True)

    def set_require_grad(self, flag: builtins.bool) -> Tensor:
        if self.kind is not Float:
            return cast("Tensor", self)
        return self._new(self.backend.float_set_require_grad(self.primitive, flag))

    def is_require_grad(self) -> builtins.bool:
        return self.kind is Float and self.backend.float_is_require_grad(self.primitive)

    def detach(self) -> Tensor:
        if self.kind is not Float:
            return cast("Tensor", self)
        return self._new(self.backend.float_detach(self.primitive))

    def backward(self) -> Any:
        """Gradients of this (one-element) tensor; needs an autodiff backend."""
        return self.backend.backward(self)

    def grad(self, grads: Any) -> Tensor | None:
        """This tensor's gradient in `grads`, on the inner backend (None when it has none)."""
        found = self.backend.grad(self.primitive, grads) if self.kind is Float else None
        return None if found is None else _t.Tensor._make(self.backend.inner(), found, Float)

    def grad_remove(self, grads: Any) -> Tensor | None:
        """Pop this tensor's gradient from `grads` (so it is not applied twice)."""
        found = self.backend.grad_remove(self.primitive, grads) if self.kind is Float else None
        return None if found is None else _t.Tensor._make(self.backend.inner(), found, Float)

    def grad_replace(self, grads: Any, grad: Tensor) -> None:
        """Replace this tensor's gradient in `grads` by `grad` (a tensor of the inner backend)."""
        self.backend.grad_replace(self.primitive, grads, grad.primitive)

    def inner(self) -> Tensor:
        """The same values on the inner backend of an autodiff backend (itself otherwise: a
        decorator that tracks no gradients, such as `Fusion`, keeps its tensors)."""
        backend = self.backend
        if backend.inner() is backend or not backend.tracks_gradients():
            return cast("Tensor", self)
        return _t.Tensor._make(backend.inner(), self._op("inner")(self.primitive), self.kind)

    @classmethod
    def from_inner(cls, tensor: Tensor, backend: Backend | None = None) -> Tensor:
        """Wrap a tensor of the inner backend for the decorator `backend` (or the pinned one)."""
        backend = backend or cls._backend
        if backend is None:
            raise BackendError(
                "from_inner: name the decorator backend, e.g. _t.Tensor[B, 2].from_inner(t)"
            )
        if backend.inner() is backend or not backend.tracks_gradients():
            return tensor
        if tensor.backend is not backend.inner():
            raise DeviceError(
                f"from_inner: tensor is on {tensor.backend!r}, expected {backend.inner()!r}"
            )
        wrap = getattr(backend, tensor.kind.prefix + "from_inner")
        return _t.Tensor._make(backend, wrap(tensor.primitive), tensor.kind)
