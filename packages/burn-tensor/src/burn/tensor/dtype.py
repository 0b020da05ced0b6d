"""Element types, mirroring Burn's `DType`.

Each member knows its numpy dtype, so data moves between backends without guessing. bf16 comes
from `ml_dtypes`, since numpy has no bfloat16 of its own.
"""

from __future__ import annotations

import enum
from typing import Any, cast

import ml_dtypes
import numpy as np


class DType(enum.Enum):
    """The element type of a tensor."""

    F64 = "f64"
    F32 = "f32"
    F16 = "f16"
    BF16 = "bf16"
    I64 = "i64"
    I32 = "i32"
    I16 = "i16"
    I8 = "i8"
    U8 = "u8"
    BOOL = "bool"

    # Members are singletons that compare by identity, so hashing by identity is exact; it is
    # also done in C, where Enum's own `__hash__` is a Python call, and dtypes are dict keys
    # and set members on every op's path.
    __hash__ = object.__hash__

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype that stores this element type."""
        return cast("np.dtype[Any]", _TO_NUMPY[self])

    @property
    def is_float(self) -> bool:
        return self in _FLOATS

    @property
    def is_int(self) -> bool:
        return self in _INTS

    @property
    def is_bool(self) -> bool:
        return self is DType.BOOL

    def size(self) -> int:
        """Bytes per element."""
        return self.numpy.itemsize

    @classmethod
    def from_numpy(cls, dtype: Any) -> DType:
        """The DType of a numpy dtype; `DTypeError` for one burn does not model."""
        dtype = np.dtype(dtype)
        try:
            return _FROM_NUMPY[dtype]
        except KeyError:
            from burn.tensor.errors import DTypeError

            raise DTypeError(f"numpy dtype {dtype} has no burn DType") from None

    @classmethod
    def parse(cls, value: Any) -> DType:
        """Accept a DType, its name ('f32'), or a numpy dtype."""
        if isinstance(value, DType):
            return value
        if isinstance(value, str):
            try:
                return cls(value.lower())
            except ValueError:
                pass
        return cls.from_numpy(value)

    def __repr__(self) -> str:
        return f"DType.{self.name}"


_TO_NUMPY = {
    DType.F64: np.dtype(np.float64),
    DType.F32: np.dtype(np.float32),
    DType.F16: np.dtype(np.float16),
    DType.BF16: np.dtype(ml_dtypes.bfloat16),
    DType.I64: np.dtype(np.int64),
    DType.I32: np.dtype(np.int32),
    DType.I16: np.dtype(np.int16),
    DType.I8: np.dtype(np.int8),
    DType.U8: np.dtype(np.uint8),
    DType.BOOL: np.dtype(np.bool_),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}
_FLOATS = frozenset({DType.F64, DType.F32, DType.F16, DType.BF16})
_INTS = frozenset({DType.I64, DType.I32, DType.I16, DType.I8, DType.U8})
