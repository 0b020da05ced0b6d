"""Devices and backend capabilities."""

from __future__ import annotations

from dataclasses import dataclass, field

from burn.tensor.dtype import DType


class Device:
    """A place where a backend's tensors live. Each backend defines its own subclass.

    Devices compare by value and know their backend (`device.backend`), so creation functions
    called with a device alone build tensors on the right backend.
    """

    backend = None  # set by the backend that owns the device class

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Device) and type(self) is type(other) and self._key() == other._key()
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple[object, ...]:
        return ()


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports; the conformance suite turns this into skips.

    Attributes:
        dtypes: every dtype the backend stores.
        float_dtype: the default dtype of Float tensors.
        int_dtype: the default dtype of Int tensors (and of indices it returns).
    """

    dtypes: frozenset[DType] = field(default_factory=lambda: frozenset(DType))
    float_dtype: DType = DType.F32
    int_dtype: DType = DType.I64

    def supports(self, dtype: DType) -> bool:
        return dtype in self.dtypes
