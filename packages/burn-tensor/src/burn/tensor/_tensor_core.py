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
    from burn.tensor.checks import Scalar
    from burn.tensor.data import TensorData
    from burn.tensor.dtype import DType
    from burn.tensor.kind import Kind
    from burn.tensor.tensor import Tensor


class TensorCore(Protocol):
    """The part of `Tensor` every mixin may use."""

    primitive: Any
    backend: Backend
    kind: type[Kind]
    # Set on the classes made by `Tensor[B, rank, kind]`.
    _backend: Backend | None
    _rank: int | None
    _kind: type[Kind] | None

    # Class-level internals of `Tensor` that the creation classmethods use.
    @classmethod
    def _resolve(cls, device: Any, backend: Backend | None = None) -> tuple[Backend, Any]: ...

    @classmethod
    def _check_rank(cls, rank: int, op: str) -> None: ...

    @classmethod
    def _creation_dtype(cls, backend: Backend, kind: type[Kind], dtype: object) -> DType: ...

    @classmethod
    def _make(cls, backend: Backend, primitive: Any, kind: type[Kind]) -> Tensor: ...

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

    def _peer(self, other: object, op: str, kind: type[Kind] | None = None) -> Any:
        """The primitive of `other`, checked to fit this tensor for a binary op."""
        ...

    def _binary(self, name: str, other: Any, op: str | None = None) -> Tensor:
        """A tensor-or-scalar binary op."""
        ...

    def _compare(self, name: str, other: Any) -> Tensor:
        """A tensor-or-scalar comparison (a Bool tensor)."""
        ...

    def _float_unary(self, name: str) -> Tensor:
        """A unary op of Float tensors."""
        ...

    @property
    def dtype(self) -> DType: ...

    def device(self) -> Any: ...

    def to_data(self) -> TensorData: ...

    def shape_tuple(self) -> tuple[int, ...]: ...

    def dims(self) -> list[int]: ...

    def rank(self) -> int: ...

    def num_elements(self) -> int: ...

    # From the other mixins.
    def abs(self) -> Tensor: ...

    def movedim(self, src: Any, dst: Any) -> Tensor: ...

    def unsqueeze_dim(self, dim: int) -> Tensor: ...

    def min(self) -> Tensor: ...

    def max(self) -> Tensor: ...

    def __sub__(self, other: Tensor | Scalar) -> Tensor: ...

    def _filled_as(self, op: str, shape: Any, value: Any) -> Tensor: ...

    def full_like(self, value: Any) -> Tensor: ...

    # Last: inside this class body these names would shadow the builtins for annotations below.
    def int(self, dtype: Any = None) -> Tensor: ...

    def float(self, dtype: Any = None) -> Tensor: ...

    def bool(self) -> Tensor: ...
