"""Tensor kinds: Float, Int and Bool, as in Burn's `Tensor<B, D, K>`.

A kind is a marker class. It names the family of backend ops a tensor uses (`float_add`,
`int_add`...) and the dtypes it may hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.tensor.dtype import DType


class Kind:
    """Base of the three kinds; never instantiated."""

    prefix: str = ""
    name: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.__name__

    def __new__(cls, *args: Any, **kwargs: Any) -> Kind:
        raise TypeError(f"{cls.__name__} is a tensor kind, not a value")


class Float(Kind):
    """Floating point tensors (the default kind): f64, f32, f16, bf16."""

    prefix = "float_"


class Int(Kind):
    """Integer tensors: i64, i32, i16, i8, u8."""

    prefix = "int_"


class Bool(Kind):
    """Boolean tensors."""

    prefix = "bool_"


def kind_of_dtype(dtype: DType) -> type[Kind]:
    """The kind that holds values of `dtype`."""
    if dtype.is_float:
        return Float
    if dtype.is_int:
        return Int
    return Bool
