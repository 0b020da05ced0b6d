"""Burn's AutodiffBackend, declared in the contract with defaults for backends without it.

`Tensor` reaches gradients only through these methods. On a backend that does not track
gradients they do what Burn's defaults do: `require_grad` is a no-op, there is never a
gradient, and `backward` explains how to get one. `Autodiff(B)` (burn-autodiff) overrides all
of them. `Tensor.inner()` and `Tensor.from_inner()` go through the `*_inner` and
`*_from_inner` ops, which are the identity on a backend that decorates nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn.backend.ops.shared import Primitive
from burn.tensor.errors import BackendError


class AutodiffOps:
    """The autodiff protocol: `backward`, `grad`, `grad_remove`, `grad_replace`, ..."""

    def tracks_gradients(self) -> bool:
        """True on a backend that records a graph (an `Autodiff(B)` backend)."""
        return False

    def backward(self, tensor: Any) -> Any:
        """The `Gradients` of the one-element Float `tensor` with respect to its leaves."""
        raise BackendError(
            f"backward: backend {self!r} does not track gradients; "
            f"use Autodiff({self!r}) (pip install burn-autodiff)"
        )

    def set_grad_hook(
        self, hook: Callable[[int, Primitive], None] | None
    ) -> Callable[[int, Primitive], None] | None:
        """Call `hook(leaf_id, grad)` during each `backward` as each leaf's gradient is final.

        A leaf's gradient is final once every op that consumed the leaf has been processed;
        the hook gets the leaf's id (`leaf_id`) and the gradient (an inner primitive, the one
        the returned `Gradients` will hold), so work on it (such as a data-parallel
        all-reduce) can start while the rest of the graph is still being differentiated.
        `None` removes the hook. Returns the hook set before, to restore it afterwards.
        """
        raise BackendError(f"set_grad_hook: backend {self!r} does not track gradients")

    def leaf_id(self, tensor: Primitive) -> int | None:
        """The id a gradient hook receives for this leaf (None when it is not a leaf)."""
        return None

    def grad(self, tensor: Primitive, grads: Any) -> Primitive | None:
        """The gradient of a Float leaf in `grads`, as a primitive of the inner backend."""
        return None

    def grad_remove(self, tensor: Primitive, grads: Any) -> Primitive | None:
        """Like `grad`, and the gradient is taken out of `grads`."""
        return None

    def grad_replace(self, tensor: Primitive, grads: Any, grad: Primitive) -> None:
        """Store `grad` (an inner primitive) as the gradient of `tensor` in `grads`."""
        raise BackendError(f"grad_replace: backend {self!r} does not track gradients")

    def float_set_require_grad(self, tensor: Primitive, require_grad: bool) -> Primitive:
        """The Float primitive marked (or unmarked) as a leaf whose gradient is wanted."""
        return tensor

    def float_is_require_grad(self, tensor: Primitive) -> bool:
        """Whether the Float primitive depends on a leaf that requires a gradient."""
        return False

    def float_detach(self, tensor: Primitive) -> Primitive:
        """The same values, cut from the graph."""
        return tensor

    def float_inner(self, tensor: Primitive) -> Primitive:
        """The Float primitive of the inner backend (the identity when nothing is decorated)."""
        return tensor

    def int_inner(self, tensor: Primitive) -> Primitive:
        """The Int primitive of the inner backend."""
        return tensor

    def bool_inner(self, tensor: Primitive) -> Primitive:
        """The Bool primitive of the inner backend."""
        return tensor

    def float_from_inner(self, tensor: Primitive) -> Primitive:
        """A Float primitive of this backend around one of the inner backend (untracked)."""
        return tensor

    def int_from_inner(self, tensor: Primitive) -> Primitive:
        """An Int primitive of this backend around one of the inner backend."""
        return tensor

    def bool_from_inner(self, tensor: Primitive) -> Primitive:
        """A Bool primitive of this backend around one of the inner backend."""
        return tensor
