"""`into_data_many` (and `Tensor.to_data_many`) read several tensors at once: the same values,
dtypes and shapes, in order, as reading each on its own, for every kind, computed results and
views included."""

import numpy as np
import pytest
from burn.backend_tests.helpers import tensor
from burn.tensor import KindError, Tensor


def test_to_data_many_gives_what_each_read_gives(backend):
    x = np.array([[1.0, -2.0, 3.5], [0.25, 4.0, -1.0]], dtype=np.float32)
    t = tensor(backend, x)
    computed = (t * 2.0 + 1.0).sum_dim(1)  # pending work on lazy backends
    view = t.swap_dims(0, 1)  # not contiguous
    ints = tensor(backend, np.array([3, 1, 2]))
    mask = t.greater_elem(0.0)
    empty = t.slice([(0, 0), (0, 3)])
    tensors = [computed, t, view, ints, mask, empty, computed]
    got = Tensor.to_data_many(tensors)
    assert len(got) == len(tensors)
    for data, tensor_ in zip(got, tensors, strict=True):
        data.assert_eq(tensor_.to_data())
    np.testing.assert_allclose(got[0].as_array().ravel(), (x * 2 + 1).sum(1), rtol=1e-6)
    assert got[4].as_array().tolist() == (x > 0).tolist()
    assert got[5].as_array().shape == (0, 3)
    assert Tensor.to_data_many([]) == []


def test_into_data_many_of_the_backend_reads_primitives_in_order(backend):
    a = tensor(backend, np.arange(6, dtype=np.float32).reshape(2, 3))
    b = a.exp()
    datas = a.backend.into_data_many([b.primitive, a.primitive])
    datas[0].assert_eq(b.to_data())
    datas[1].assert_eq(a.to_data())


def test_to_data_many_refuses_what_is_not_a_tensor(backend):
    with pytest.raises(KindError, match="to_data_many: expected Tensors, got ndarray"):
        Tensor.to_data_many([tensor(backend, np.ones(2)), np.ones(2)])
