"""Metadata and plumbing: shape / dims / rank / num_elements / dtype / device / to_device,
clone, and `Tensor[B, rank, kind]` pinning."""

import pytest
from burn.backend_tests.helpers import tensor
from burn.tensor import Float, Int, RankError, Shape, Tensor


def test_shape_dims_rank(backend):
    t = tensor(backend, [[[1.0, 2.0]], [[3.0, 4.0]]])
    assert t.dims() == [2, 1, 2]
    assert t.shape() == Shape([2, 1, 2])
    assert t.shape_tuple() == (2, 1, 2)
    assert t.rank() == 3
    assert t.num_elements() == 4
    assert t.dtype == backend.capabilities.float_dtype


def test_device_and_to_device(backend, device):
    t = tensor(backend, [1.0, 2.0])
    assert t.device() == device
    moved = t.to_device(device)
    assert moved.device() == device
    assert moved.to_data() == t.to_data()
    for other in backend.devices():
        assert t.to_device(other).device() == other


def test_clone_is_independent_of_later_ops(backend):
    t = tensor(backend, [1.0, 2.0])
    c = t.clone()
    t2 = t.add_scalar(1.0)
    assert c.to_data().to_vec() == [1.0, 2.0]
    assert t2.to_data().to_vec() == [2.0, 3.0]


def test_pinned_tensor_class(backend, device):
    T2 = Tensor[backend, 2]
    t = T2.zeros([2, 3], device)
    assert t.kind is Float and t.backend is backend
    assert Tensor[backend, 2] is T2
    with pytest.raises(RankError, match="zeros"):
        T2.zeros([2], device)
    assert Tensor[backend, 1, Int].ones([3], device).kind is Int
