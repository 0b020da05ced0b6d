"""Helpers shared by the suite's tests: building tensors and comparing with numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from burn.tensor import Bool, DType, Float, Int, Tensor, TensorData
from burn.tensor.kind import kind_of_dtype

FLOAT_DTYPES = (DType.F64, DType.F32, DType.F16, DType.BF16)
INT_DTYPES = (DType.I64, DType.I32, DType.I16, DType.I8, DType.U8)

# Tolerances (relative and absolute) by dtype for results compared with a float64 reference.
TOLERANCE = {
    DType.F64: 1e-10,
    DType.F32: 1e-5,
    DType.F16: 2e-3,
    DType.BF16: 2e-2,
}


def require_dtype(backend, dtype: DType) -> None:
    """Skip the test when the backend does not support `dtype` (capability-driven)."""
    if not backend.capabilities.supports(dtype):
        pytest.skip(f"{backend!r} does not support {dtype.value}")


def reference_dtype(backend) -> DType:
    """The most precise float dtype the backend has (f64 where supported)."""
    return (
        DType.F64 if backend.capabilities.supports(DType.F64) else backend.capabilities.float_dtype
    )


def tensor(backend, values, dtype: DType | None = None, kind=None) -> Tensor:
    """A tensor of `backend` holding `values`; the kind follows the dtype or the values."""
    array = np.asarray(values)
    if dtype is None:
        if kind is None:
            kind = Bool if array.dtype == np.bool_ else Int if array.dtype.kind in "iu" else Float
        dtype = {
            Float: backend.capabilities.float_dtype,
            Int: backend.capabilities.int_dtype,
            Bool: DType.BOOL,
        }[kind]
    require_dtype(backend, dtype)
    kind = kind_of_dtype(dtype)
    rank = max(array.ndim, 1)
    return Tensor[backend, rank, kind].from_data(
        TensorData(array.reshape(array.shape or (1,))), backend.device(), dtype
    )


def strided(backend, values, dtype: DType | None = None, kind=None) -> Tensor:
    """Like `tensor`, but laid out non-contiguously (built transposed, then transposed back)."""
    array = np.asarray(values)
    if array.ndim < 2:
        wide = np.stack([array, array], axis=-1)
        return (
            tensor(backend, wide, dtype, kind).narrow(array.ndim, 0, 1).reshape(list(array.shape))
        )
    axes = list(range(array.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return tensor(backend, np.ascontiguousarray(array.transpose(axes)), dtype, kind).swap_dims(
        -1, -2
    )


def values(t: Tensor) -> np.ndarray:
    return t.to_data().array


def assert_close(
    actual: Tensor, expected, dtype: DType | None = None, tol: float | None = None
) -> None:
    """Compare with a reference (computed in float64) within the dtype's tolerance."""
    dtype = dtype or actual.dtype
    tol = TOLERANCE.get(dtype, 0.0) if tol is None else tol
    got = np.asarray(actual.to_data().array).astype(np.float64)
    want = np.asarray(expected, dtype=np.float64)
    assert list(got.shape) == list(want.shape), (
        f"shape {list(got.shape)} != expected {list(want.shape)}"
    )
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def assert_equal(actual: Tensor, expected, dtype: DType | None = None) -> None:
    """Exact comparison (ints, bools, values a float dtype holds exactly)."""
    got = actual.to_data()
    want = np.asarray(expected)
    assert got.shape == list(want.shape), f"shape {got.shape} != expected {list(want.shape)}"
    if dtype is not None:
        assert got.dtype == dtype, f"dtype {got.dtype} != expected {dtype}"
    np.testing.assert_array_equal(
        got.array.astype(np.float64) if got.array.dtype.kind == "V" else got.array, want
    )


def _dtype_id(dtype: DType) -> str:
    return dtype.value


# Parametrize a test over every float / int dtype; `tensor` skips the ones a backend lacks.
float_dtypes = pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=_dtype_id)
int_dtypes = pytest.mark.parametrize("dtype", INT_DTYPES, ids=_dtype_id)
all_dtypes = pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=_dtype_id)


def ref(t: Tensor) -> np.ndarray:
    """The tensor's values as float64: the exact input of a reference computed in numpy.

    Tests build inputs, then compute the reference from what the tensor actually holds, so
    rounding to a low-precision dtype is not counted as an error of the op.
    """
    return np.asarray(t.to_data().array).astype(np.float64)


def random_tensor(backend, rng, shape, dtype: DType | None = None, low=-2.0, high=2.0) -> Tensor:
    """A Float (or Int for an int dtype) tensor of random values in [low, high)."""
    values = rng.uniform(low, high, size=shape)
    if dtype is not None and dtype.is_int:
        values = np.round(values).astype(np.int64)
        if dtype is DType.U8:
            values = np.abs(values)
    return tensor(backend, values, dtype)


def other_backend(backend):
    """A second backend instance of the same class, to test that mixing backends is refused."""
    return type(backend)()
