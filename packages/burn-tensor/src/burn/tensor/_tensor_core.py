"""`TensorCore`: the fields and internals of `Tensor` that its mixins rely on, for type checkers.

`Tensor` is assembled from mixins (`GradHooks`, `Arithmetic`...), each written against the
fields and helpers `Tensor` defines. A mixin names this protocol as its base only under
`TYPE_CHECKING`, so a checker sees what `self` offers while the runtime classes stay as they
are (nothing imports this module when the program runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.tensor.kind import Kind
    from burn.tensor.tensor import Tensor


class TensorCore(Protocol):
    """The part of `Tensor` every mixin may use."""

    primitive: Any
    backend: Backend
    kind: type[Kind]
    # Set on the classes made by `Tensor[B, rank, kind]`.
    _backend: Backend | None

    def _new(self, primitive: Any, kind: type[Kind] | None = None) -> Tensor:
        """A tensor of this backend holding `primitive` (this kind unless `kind` is given)."""
        ...

    def _op(self, name: str) -> Any:
        """The backend's named op for this kind (`float_` + `name`...)."""
        ...
