"""`TensorData`: tensor values on the host, the currency between backends and files.

It owns a contiguous numpy array plus its `DType`. Backends build primitives from it
(`from_data`) and return it (`into_data`); records and tests use it to compare values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from burn.tensor.dtype import DType
from burn.tensor.errors import DTypeError, ShapeError
from burn.tensor.shape import Shape


class TensorData:
    """Host values with a shape and a dtype.

    Args:
        value: nested lists, a scalar, a numpy array or another `TensorData`.
        shape: optional shape to reshape a flat `value` to.
        dtype: optional dtype to convert to; by default the natural one (float64 lists become
            f32, as in Burn, ints i64, bools bool).
    """

    __slots__ = ("array",)
    array: np.ndarray

    def __init__(self, value: Any, shape: Any = None, dtype: Any = None) -> None:
        if isinstance(value, TensorData):
            array = value.array
        elif isinstance(value, np.ndarray):
            array = value
        else:
            try:
                array = np.asarray(value)
            except ValueError as e:  # ragged nested lists
                msg = f"TensorData: values do not form a rectangular array ({e})"
                raise ShapeError(msg) from None
            if array.dtype == np.float64 and dtype is None:
                array = array.astype(np.float32)
        if array.dtype.kind in "OUS":
            raise DTypeError(f"TensorData: values of numpy dtype {array.dtype} are not numbers")
        if array.dtype not in _KNOWN and array.dtype.kind in "iu":
            array = array.astype(np.int64)
        if shape is not None:
            shape = tuple(Shape(shape))
            if int(np.prod(shape)) != array.size:
                raise ShapeError(f"TensorData: {array.size} values do not fit shape {list(shape)}")
            array = array.reshape(shape)
        if dtype is not None:
            array = array.astype(DType.parse(dtype).numpy, copy=False)
        DType.from_numpy(array.dtype)
        self.array = np.ascontiguousarray(array)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def zeros(cls, shape: Any, dtype: Any = DType.F32) -> TensorData:
        return cls(np.zeros(tuple(shape), DType.parse(dtype).numpy))

    @classmethod
    def ones(cls, shape: Any, dtype: Any = DType.F32) -> TensorData:
        return cls(np.ones(tuple(shape), DType.parse(dtype).numpy))

    @classmethod
    def from_bytes(cls, data: bytes, shape: Any, dtype: Any) -> TensorData:
        dtype = DType.parse(dtype)
        return cls(np.frombuffer(data, dtype=dtype.numpy).reshape(tuple(shape)))

    # -- properties ------------------------------------------------------------------------
    @property
    def shape(self) -> list[int]:
        return list(self.array.shape)

    @property
    def dtype(self) -> DType:
        return DType.from_numpy(self.array.dtype)

    @property
    def bytes(self) -> bytes:
        """The little-endian element bytes, row-major."""
        return self.array.astype(self.array.dtype.newbyteorder("<"), copy=False).tobytes()

    def num_elements(self) -> int:
        return int(self.array.size)

    def rank(self) -> int:
        return self.array.ndim

    # -- conversion ------------------------------------------------------------------------
    def convert(self, dtype: Any) -> TensorData:
        """The same values as another dtype."""
        return TensorData(self.array.astype(DType.parse(dtype).numpy))

    def to_list(self) -> list[Any]:
        """Nested Python lists (Burn's `to_vec` gives the flat list; see `to_vec`)."""
        values: list[Any] = self.array.tolist()
        return values

    def to_vec(self) -> list[Any]:
        """The values as a flat Python list, row-major."""
        return self.array.reshape(-1).tolist()

    def as_array(self) -> np.ndarray:
        return self.array

    def iter(self) -> Any:
        return iter(self.to_vec())

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self.array if dtype is None else self.array.astype(dtype)

    # -- comparisons -----------------------------------------------------------------------
    def assert_eq(self, other: Any, strict: bool = True) -> None:
        """Raise AssertionError unless shapes, values (and dtypes when `strict`) match."""
        other = other if isinstance(other, TensorData) else TensorData(other)
        if self.shape != other.shape:
            raise AssertionError(f"shapes differ: {self.shape} != {other.shape}")
        if strict and self.dtype != other.dtype:
            raise AssertionError(f"dtypes differ: {self.dtype} != {other.dtype}")
        a, b = self.array, other.array
        if a.dtype.kind == "f" or b.dtype.kind == "f" or a.dtype == np.dtype("V2"):
            a, b = a.astype(np.float64), b.astype(np.float64)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            raise AssertionError(f"values differ:\n{self.array}\n!=\n{other.array}")

    def assert_approx_eq(self, other: Any, tolerance: float = 1e-4) -> None:
        """Raise AssertionError unless shapes match and values agree within `tolerance`."""
        other = other if isinstance(other, TensorData) else TensorData(other)
        if self.shape != other.shape:
            raise AssertionError(f"shapes differ: {self.shape} != {other.shape}")
        a = self.array.astype(np.float64)
        b = other.array.astype(np.float64)
        if not np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True):
            worst = float(np.nanmax(np.abs(a - b))) if a.size else 0.0
            raise AssertionError(
                f"values differ by up to {worst:g} (tolerance {tolerance}):\n{a}\n!=\n{b}"
            )

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, TensorData):
            return NotImplemented
        return (
            self.array.dtype == other.array.dtype
            and self.array.shape == other.array.shape
            and np.array_equal(self.array, other.array)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        from burn.tensor.display import format_values

        flat = format_values(self.array.reshape(-1))
        return f"TensorData(shape={self.shape}, dtype={self.dtype.value}, value={flat})"


_KNOWN = {d.numpy for d in DType}
