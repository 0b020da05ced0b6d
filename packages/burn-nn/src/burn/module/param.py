"""`Param` and `ParamId`: a trainable tensor with an identity that survives updates and files."""

from __future__ import annotations

import base64
import hashlib
import secrets
import uuid

from burn.tensor import Float, Tensor


class ParamId:
    """A stable 64-bit parameter identity.

    Optimizers key their state by it, so a parameter keeps its id through optimizer steps,
    device moves and save/load. Its text form is Burn's: the 8 little-endian bytes in lower-case
    base32hex without padding (13 characters), so ids survive a round trip through Rust Burn.
    """

    __slots__ = ("value", "_text")

    def __init__(self, value: int | None = None):
        self.value = secrets.randbits(64) if value is None else int(value) & 0xFFFF_FFFF_FFFF_FFFF
        self._text: str | None = None

    def serialize(self) -> str:
        """The text form stored in records (computed once: optimizers key their state by it at
        every step)."""
        text = self._text
        if text is None:
            raw = base64.b32hexencode(self.value.to_bytes(8, "little")).decode("ascii")
            text = self._text = raw.rstrip("=").lower()
        return text

    @classmethod
    def deserialize(cls, text: str) -> ParamId:
        """Parse the text form; ids of older Burn records (UUIDs) map to a stable 64-bit value."""
        text = str(text)
        try:
            padded = text.upper() + "=" * (-len(text) % 8)
            raw = base64.b32hexdecode(padded)
            if len(raw) <= 8:
                return cls(int.from_bytes(raw.ljust(8, b"\0"), "little"))
        except ValueError:
            pass
        try:
            digest = hashlib.blake2b(uuid.UUID(text).bytes, digest_size=8).digest()
        except ValueError:
            raise ValueError(f"invalid parameter id {text!r}") from None
        return cls(int.from_bytes(digest, "little"))

    def __eq__(self, other) -> bool:
        return isinstance(other, ParamId) and self.value == other.value

    def __hash__(self) -> int:
        return hash(("ParamId", self.value))

    def __str__(self) -> str:
        return self.serialize()

    def __repr__(self) -> str:
        return f"ParamId({self.serialize()!r})"


class Param:
    """A parameter: a tensor, its `ParamId`, and whether it takes gradients.

    On an autodiff backend a float parameter that requires gradients holds a tracked leaf, so
    `loss.backward()` computes its gradient (`param.grad(grads)`). Parameters never change in
    place: `map`/`with_value` give a new `Param` with the same id.

    Args:
        tensor: the value.
        id: its identity (`ParamId` or its text form); a fresh one by default.
        require_grad: whether an autodiff backend tracks it (default True; `no_grad()` clears it).
    """

    __slots__ = ("id", "_tensor", "require_grad")

    def __init__(self, tensor: Tensor, id: ParamId | str | None = None, require_grad: bool = True):  # noqa: A002
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Param holds a Tensor, got {type(tensor).__name__}")
        if id is None:
            id = ParamId()  # noqa: A001
        elif not isinstance(id, ParamId):
            id = ParamId.deserialize(id)  # noqa: A001
        self.id = id
        self.require_grad = bool(require_grad)
        if tensor.kind is Float:
            tensor = tensor.require_grad() if self.require_grad else tensor.set_require_grad(False)
        self._tensor = tensor

    @classmethod
    def from_tensor(cls, tensor: Tensor) -> Param:
        """A new parameter (fresh id, requiring gradients), as Burn's `Param::from_tensor`."""
        return cls(tensor)

    def val(self) -> Tensor:
        """The tensor (Burn's name)."""
        return self._tensor

    @property
    def value(self) -> Tensor:
        return self._tensor

    def shape(self):
        return self._tensor.shape()

    def dims(self) -> list[int]:
        return self._tensor.dims()

    def device(self):
        return self._tensor.device()

    @property
    def dtype(self):
        return self._tensor.dtype

    def num_params(self) -> int:
        return self._tensor.num_elements()

    def is_require_grad(self) -> bool:
        return self.require_grad

    def with_value(self, tensor: Tensor) -> Param:
        """The same parameter (id and flag) holding `tensor`, e.g. after an optimizer step."""
        return Param(tensor, self.id, self.require_grad)

    def map(self, fn) -> Param:
        """The same parameter holding `fn(tensor)`."""
        return self.with_value(fn(self._tensor))

    def set_require_grad(self, flag: bool) -> Param:
        return Param(self._tensor, self.id, flag)

    def grad(self, grads) -> Tensor | None:
        """This parameter's gradient in `grads` (from `loss.backward()`), on the inner backend."""
        return self._tensor.grad(grads)

    def __repr__(self) -> str:
        flag = "" if self.require_grad else ", no grad"
        return f"Param({self.id.serialize()}, shape={self.dims()}, dtype={self.dtype.value}{flag})"
