"""Precision settings: the element types a recorder stores floats and ints as.

They mirror Burn's `FullPrecisionSettings` (f32/i32), `HalfPrecisionSettings` (f16/i16) and
`DoublePrecisionSettings` (f64/i64). The `rust_*` names are what Burn writes in a record's
metadata, so a file saved here carries the same header a Rust program writes.
"""

from __future__ import annotations

from burn.tensor import DType, TensorData


class PrecisionSettings:
    """Base of the precision settings; use a subclass (class or instance, both work)."""

    float: DType = DType.F32
    int: DType = DType.I32
    rust_float: str = "f32"
    rust_int: str = "i32"

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def apply(cls, data: TensorData) -> TensorData:
        """`data` as this setting stores it: floats to `float`, ints to `int`, bools kept."""
        dtype = data.dtype
        if dtype.is_float and dtype is not cls.float:
            return data.convert(cls.float)
        if dtype.is_int and dtype is not cls.int:
            return data.convert(cls.int)
        return data

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FullPrecisionSettings(PrecisionSettings):
    """f32 floats and i32 ints: exact for f32 models, the default."""


class HalfPrecisionSettings(PrecisionSettings):
    """f16 floats and i16 ints: half the size, within f16 rounding (about 3 decimal digits)."""

    float = DType.F16
    int = DType.I16
    rust_float = "half::binary16::f16"
    rust_int = "i16"


class DoublePrecisionSettings(PrecisionSettings):
    """f64 floats and i64 ints: exact for every float dtype, twice the size of full precision."""

    float = DType.F64
    int = DType.I64
    rust_float = "f64"
    rust_int = "i64"


def settings_class(settings) -> type[PrecisionSettings]:
    """Accept a settings class or instance; anything else is a `TypeError`."""
    if isinstance(settings, PrecisionSettings):
        return type(settings)
    if isinstance(settings, type) and issubclass(settings, PrecisionSettings):
        return settings
    raise TypeError(f"expected a PrecisionSettings (e.g. FullPrecisionSettings), got {settings!r}")
