"""to_data / into_data and TensorData: convert, assert_eq, assert_approx_eq, bytes round-trip,
lists and equality."""

import numpy as np
import pytest
from burn.backend_tests.helpers import FLOAT_DTYPES, INT_DTYPES, require_dtype, tensor
from burn.tensor import DType, Tensor, TensorData


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + (DType.BOOL,), ids=lambda d: d.value)
def test_to_data_round_trip(backend, device, rng, dtype):
    require_dtype(backend, dtype)
    values = rng.integers(0, 5, (2, 3))
    a = tensor(backend, values, dtype)
    data = a.to_data()
    assert isinstance(data, TensorData)
    assert data.dtype == dtype and data.shape == [2, 3]
    again = Tensor[backend, 2, a.kind].from_data(data, device, dtype)
    again.to_data().assert_eq(data)
    assert a.into_data() == data


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + (DType.BOOL,), ids=lambda d: d.value)
def test_bytes_round_trip(backend, rng, dtype):
    require_dtype(backend, dtype)
    a = tensor(backend, rng.integers(0, 5, (3, 2)), dtype)
    data = a.to_data()
    raw = data.bytes
    assert isinstance(raw, bytes) and len(raw) == 6 * dtype.size()
    TensorData.from_bytes(raw, [3, 2], dtype).assert_eq(data)


def test_data_convert(backend):
    data = tensor(backend, [1.5, -2.5]).to_data()
    as_int = data.convert(DType.I32)
    assert as_int.dtype == DType.I32
    assert as_int.to_vec() == [1, -2]
    assert data.convert("f64").dtype == DType.F64


def test_data_assert_eq_and_approx(backend):
    data = tensor(backend, [[1.0, 2.0]]).to_data()
    data.assert_eq(TensorData([[1.0, 2.0]]))
    data.assert_eq(TensorData([[1.0, 2.0]], dtype="f64"), strict=False)
    with pytest.raises(AssertionError):
        data.assert_eq(TensorData([[1.0, 2.0]], dtype="f64"))
    with pytest.raises(AssertionError):
        data.assert_eq(TensorData([[1.0, 2.5]]))
    with pytest.raises(AssertionError):
        data.assert_eq(TensorData([1.0, 2.0]))
    data.assert_approx_eq(TensorData([[1.00001, 2.00001]]), 1e-3)
    with pytest.raises(AssertionError):
        data.assert_approx_eq(TensorData([[1.1, 2.0]]), 1e-3)


def test_data_lists_and_shape(backend):
    data = tensor(backend, [[1, 2], [3, 4]]).to_data()
    assert data.to_list() == [[1, 2], [3, 4]]
    assert data.to_vec() == [1, 2, 3, 4]
    assert list(data.iter()) == [1, 2, 3, 4]
    assert data.num_elements() == 4 and data.rank() == 2
    assert data.shape == [2, 2]
    np.testing.assert_array_equal(np.asarray(data), [[1, 2], [3, 4]])


def test_data_of_non_contiguous_tensor(backend, rng):
    v = rng.standard_normal((3, 4)).astype(np.float32)
    data = tensor(backend, v).transpose().to_data()
    assert data.shape == [4, 3]
    np.testing.assert_array_equal(data.array, v.T)
    assert data.bytes == np.ascontiguousarray(v.T).tobytes()


def test_data_constructors():
    d = TensorData([1, 2, 3, 4, 5, 6], shape=[2, 3])
    assert d.shape == [2, 3] and d.dtype == DType.I64
    assert TensorData([1.0]).dtype == DType.F32
    assert TensorData.zeros([2], DType.I32).to_vec() == [0, 0]
    assert TensorData.ones([1, 2]).to_list() == [[1.0, 1.0]]
    assert "TensorData" in repr(d)
