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

    def _require(self, op: str, *kinds: type[Kind]) -> None:
        """Raise `KindError` unless this tensor is of one of `kinds`."""
        ...

    def _numeric(self, op: str) -> None:
        """Raise `KindError` for a Bool tensor."""
        ...

    def _dim(self, dim: int, op: str, rank: int | None = None) -> int:
        """`dim` checked against the rank and made non-negative."""
        ...

    def dims(self) -> list[int]: ...

    def rank(self) -> int: ...

    def num_elements(self) -> int: ...

    # From the other mixins.
    def abs(self) -> Tensor: ...

    def movedim(self, src: Any, dst: Any) -> Tensor: ...

    # Last: inside this class body the name would shadow the builtin for the annotations below.
    def bool(self) -> Tensor: ...
