"""Creation: from_data / from_floats / from_ints / from_bool, zeros / ones / full / empty,
the `_like` forms, arange / arange_step and eye."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    all_dtypes,
    assert_equal,
    require_dtype,
    tensor,
)
from burn.tensor import Bool, DType, Float, Int, Tensor, TensorData


@all_dtypes
def test_from_data(backend, device, dtype):
    require_dtype(backend, dtype)
    kind = Float if dtype.is_float else Int
    t = Tensor[backend, 2, kind].from_data([[1, 2, 3], [4, 5, 6]], device, dtype)
    assert t.dtype == dtype and t.kind is kind and t.dims() == [2, 3]
    assert t.backend is backend and t.device() == device
    assert_equal(t, [[1, 2, 3], [4, 5, 6]])


def test_from_data_infers_kind_and_default_dtype(backend, device):
    caps = backend.capabilities
    f = Tensor.from_data(TensorData([[1.0, 2.0]]), device)
    assert f.kind is Float and f.dtype == caps.float_dtype
    # A device names its backend; a decorator (Autodiff(B)) shares B's devices, so only a
    # pinned `Tensor[backend, ...]` reaches the decorator.
    assert f.backend is backend or backend.inner() is not backend
    i = Tensor.from_data(TensorData([1, 2]), device)
    assert i.kind is Int and i.dtype == caps.int_dtype
    b = Tensor.from_data(TensorData([True, False]), device)
    assert b.kind is Bool and b.dtype == DType.BOOL


def test_from_floats_ints_bool(backend, device):
    assert_equal(Tensor[backend, 1].from_floats([1.0, 2.5], device), [1.0, 2.5])
    i = Tensor[backend, 2].from_ints([[1, 2]], device)
    assert i.kind is Int
    assert_equal(i, [[1, 2]])
    b = Tensor[backend, 1].from_bool([True, False], device)
    assert b.kind is Bool


def test_from_data_of_tensor_and_empty(backend, device):
    a = tensor(backend, [[1.0, 2.0]])
    assert_equal(Tensor.from_data(a, device), [[1.0, 2.0]])
    e = Tensor[backend, 2].from_data(np.zeros((0, 3), np.float32), device)
    assert e.dims() == [0, 3] and e.num_elements() == 0


@all_dtypes
@pytest.mark.parametrize(("op", "value"), [("zeros", 0), ("ones", 1), ("empty", None)])
def test_zeros_ones_empty(backend, device, dtype, op, value):
    require_dtype(backend, dtype)
    kind = Float if dtype.is_float else Int
    t = getattr(Tensor[backend, 2, kind], op)([2, 3], device, dtype)
    assert t.dims() == [2, 3] and t.dtype == dtype and t.kind is kind
    if value is not None:
        assert_equal(t, np.full((2, 3), value))


def test_zeros_ones_default_float(backend, device):
    t = Tensor[backend, 3].zeros([1, 0, 2], device)
    assert t.kind is Float and t.dtype == backend.capabilities.float_dtype
    assert t.dims() == [1, 0, 2]
    assert_equal(Tensor[backend, 1, Bool].zeros([2], device), [False, False])
    assert_equal(Tensor[backend, 1, Bool].ones([2], device), [True, True])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=lambda d: d.value)
def test_full(backend, device, dtype):
    require_dtype(backend, dtype)
    kind = Float if dtype.is_float else Int
    t = Tensor[backend, 2, kind].full([2, 3], 5, device, dtype)
    assert t.dtype == dtype
    assert_equal(t, np.full((2, 3), 5))


def test_full_float_and_bool(backend, device):
    assert_equal(Tensor[backend, 1].full([3], 2.5, device), [2.5, 2.5, 2.5])
    assert_equal(Tensor[backend, 2, Bool].full([1, 2], True, device), [[True, True]])


def test_create_like(backend, rng):
    a = tensor(backend, rng.standard_normal((2, 3)))
    for t, v in ((a.zeros_like(), 0.0), (a.ones_like(), 1.0), (a.full_like(7.0), 7.0)):
        assert t.dims() == [2, 3] and t.dtype == a.dtype and t.kind is Float
        assert_equal(t, np.full((2, 3), v))
    assert a.empty_like().dims() == [2, 3]
    r = a.random_like()
    assert r.dims() == [2, 3] and r.dtype == a.dtype
    i = tensor(backend, [[1, 2]])
    assert i.ones_like().kind is Int
    assert_equal(i.full_like(4), [[4, 4]])
    assert_equal(tensor(backend, [True]).ones_like(), [True])


def test_arange(backend, device):
    t = Tensor[backend, 1, Int].arange(2, 7, device)
    assert t.kind is Int and t.dtype == backend.capabilities.int_dtype
    assert_equal(t, [2, 3, 4, 5, 6])
    assert_equal(Tensor[backend, 1, Int].arange(range(0, 3), device), [0, 1, 2])
    assert Tensor[backend, 1, Int].arange(3, 3, device).dims() == [0]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.value)
def test_arange_dtype(backend, device, dtype):
    require_dtype(backend, dtype)
    t = Tensor[backend, 1, Int].arange(0, 4, device, dtype)
    assert t.dtype == dtype
    assert_equal(t, [0, 1, 2, 3])


def test_arange_step(backend, device):
    assert_equal(Tensor[backend, 1, Int].arange_step(0, 10, 3, device), [0, 3, 6, 9])
    assert_equal(Tensor[backend, 1, Int].arange_step(5, 0, -2, device), [5, 3, 1])
    assert_equal(Tensor[backend, 1, Int].arange_step(-3, 3, 2, device), [-3, -1, 1])


@pytest.mark.parametrize("size", [0, 1, 4])
def test_eye(backend, device, size):
    f = Tensor[backend, 2].eye(size, device)
    assert f.kind is Float
    assert_equal(f, np.eye(size))
    i = Tensor[backend, 2, Int].eye(size, device)
    assert i.kind is Int
    assert_equal(i, np.eye(size, dtype=np.int64))
