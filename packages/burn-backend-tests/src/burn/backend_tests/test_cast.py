"""Kind and dtype conversions: int() / float() / bool() / cast, into_scalar and the Python
number protocols."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_equal,
    require_dtype,
    tensor,
)
from burn.tensor import Bool, Float, Int


def test_cast_float_to_int_truncates(backend):
    a = tensor(backend, [[1.7, -1.7, 0.5], [-0.5, 2.0, -3.9]])
    out = a.int()
    assert out.kind is Int and out.dtype == backend.capabilities.int_dtype
    assert_equal(out, [[1, -1, 0], [0, 2, -3]])


def test_cast_int_to_float(backend):
    out = tensor(backend, [[1, -2], [3, 4]]).float()
    assert out.kind is Float and out.dtype == backend.capabilities.float_dtype
    assert_equal(out, [[1.0, -2.0], [3.0, 4.0]])


def test_cast_to_bool(backend):
    assert_equal(tensor(backend, [0.0, 0.1]).bool(), [False, True])
    assert tensor(backend, [0, 2]).bool().kind is Bool


def test_conversion_to_same_kind_is_identity(backend):
    f = tensor(backend, [1.0])
    assert f.float() is f
    i = tensor(backend, [1])
    assert i.int() is i


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.value)
def test_cast_float_dtypes(backend, dtype):
    require_dtype(backend, dtype)
    a = tensor(backend, [0.5, -1.25, 3.0])
    out = a.cast(dtype)
    assert out.dtype == dtype and out.kind is Float
    assert_equal(out, [0.5, -1.25, 3.0])
    assert a.float(dtype).dtype == dtype


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.value)
def test_cast_int_dtypes(backend, dtype):
    require_dtype(backend, dtype)
    a = tensor(backend, [0, 7, 100])
    out = a.cast(dtype)
    assert out.dtype == dtype and out.kind is Int
    assert_equal(out, [0, 7, 100])
    assert_equal(tensor(backend, [2.9, 7.1]).int(dtype), [2, 7])
    assert tensor(backend, [2.9]).int(dtype).dtype == dtype


def test_cast_accepts_names(backend):
    for dtype in (backend.capabilities.float_dtype,):
        assert tensor(backend, [1.0]).cast(dtype.value).dtype == dtype


def test_into_scalar(backend):
    f = tensor(backend, [[2.5]]).into_scalar()
    assert isinstance(f, float) and f == 2.5
    i = tensor(backend, [7]).into_scalar()
    assert isinstance(i, int) and i == 7
    b = tensor(backend, [True]).into_scalar()
    assert b is True


def test_python_number_protocols(backend):
    a = tensor(backend, [3.5])
    assert float(a) == 3.5
    assert int(a) == 3
    assert bool(tensor(backend, [1])) is True
    assert bool(tensor(backend, [0.0])) is False
    assert tensor(backend, [1, 2]).sum().into_scalar() == 3


def test_array_protocol_and_numpy(backend):
    a = tensor(backend, [[1.0, 2.0]])
    np.testing.assert_array_equal(np.asarray(a), [[1.0, 2.0]])
    np.testing.assert_array_equal(a.numpy(), [[1.0, 2.0]])
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
