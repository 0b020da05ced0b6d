"""The autodiff hooks of Tensor on a backend without autodiff: no-ops, or a clear error."""

import pytest
from burn.backend_tests.helpers import assert_equal, tensor
from burn.tensor import BackendError, Tensor


@pytest.fixture
def plain(backend):
    if backend.tracks_gradients():
        pytest.skip("an autodiff backend: its own suite checks these")
    return backend


def test_require_grad_is_a_no_op(plain):
    t = tensor(plain, [1.0, 2.0])
    assert t.require_grad().is_require_grad() is False
    assert t.set_require_grad(True).is_require_grad() is False
    assert_equal(t.detach(), [1.0, 2.0])
    assert t.inner() is t
    assert Tensor.from_inner(t, plain) is t


def test_backward_needs_autodiff(plain):
    with pytest.raises(BackendError, match="backward"):
        tensor(plain, [1.0]).sum().backward()


def test_into_primitive(plain):
    t = tensor(plain, [1.0, 2.0])
    assert t.into_primitive() is t.primitive
