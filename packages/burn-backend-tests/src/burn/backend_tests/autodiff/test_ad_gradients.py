"""What `backward()` returns and how gradients are read (Burn's gradients.rs and the API).

Gradients live in the container returned by `backward()`, keyed by the leaves that asked for
them with `require_grad()`; reading one gives a plain tensor of the inner backend.
"""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import Float, Int, Tensor
from burn.tensor.errors import BackendError, KindError

A = [[1.0, 7.0], [-2.0, 3.0]]
B = [[4.0, -7.0], [2.0, 3.0]]


def _leaf(ad_backend, values):
    return tensor(ad_backend, np.asarray(values), grad_dtype(ad_backend)).require_grad()


def _const(ad_backend, values):
    return tensor(ad_backend, np.asarray(values), grad_dtype(ad_backend))


def _np(t):
    return np.asarray(t.to_data().array, dtype=np.float64)


def test_should_update_tensor_when_grad_replace(ad_backend):
    a, b = _leaf(ad_backend, A), _leaf(ad_backend, B)
    grads = a.matmul(b).backward()
    replacement = a.grad(grads).ones_like() * 3.0
    a.grad_replace(grads, replacement)
    np.testing.assert_array_equal(_np(a.grad(grads)), 3.0)
    assert b.grad(grads) is not None


def test_grads_only_exist_for_require_grad_tensors(ad_backend):
    a, c = _leaf(ad_backend, A), _const(ad_backend, B)
    hidden = a * c
    assert a.is_require_grad() and hidden.is_require_grad() and not c.is_require_grad()
    grads = (hidden.exp() + c).sum().backward()
    assert a.grad(grads) is not None
    assert c.grad(grads) is None, "a constant gets no gradient"
    assert hidden.grad(grads) is None, "intermediate results keep no gradient"
    assert len(grads) == 1


def test_grad_is_a_plain_tensor_of_the_inner_backend(ad_backend):
    a = _leaf(ad_backend, A)
    g = a.grad((a * a).sum().backward())
    assert g.backend is ad_backend.inner() and g.kind is Float
    assert g.dtype == a.dtype and g.dims() == a.dims()
    assert not g.is_require_grad()
    np.testing.assert_allclose(_np(g), 2.0 * np.asarray(A))


def test_grad_remove_pops(ad_backend):
    a = _leaf(ad_backend, A)
    grads = (a * 2.0).sum().backward()
    first = a.grad_remove(grads)
    np.testing.assert_array_equal(_np(first), 2.0)
    assert a.grad(grads) is None and a.grad_remove(grads) is None
    assert len(grads) == 0


def test_detach_stops_gradients(ad_backend):
    a = _leaf(ad_backend, A)
    d = a.detach()
    assert not d.is_require_grad()
    np.testing.assert_array_equal(_np(d), A)
    grads = (d * a).sum().backward()
    np.testing.assert_allclose(_np(a.grad(grads)), A)  # d/da (c * a) with c = a held fixed


def test_set_require_grad_false_makes_a_constant(ad_backend):
    a = _leaf(ad_backend, A)
    b = a.set_require_grad(False)
    assert not b.is_require_grad()
    with pytest.raises(BackendError):
        (b * 2.0).sum().backward()


def test_require_grad_twice_is_the_same_leaf(ad_backend):
    a = _leaf(ad_backend, A)
    again = a.require_grad()
    grads = (again * 3.0).sum().backward()
    np.testing.assert_array_equal(_np(a.grad(grads)), 3.0)


def test_tensor_used_twice_accumulates(ad_backend):
    a = _leaf(ad_backend, A)
    grads = (a * a + a.exp() + a).sum().backward()
    x = np.asarray(A)
    np.testing.assert_allclose(_np(a.grad(grads)), 2 * x + np.exp(x) + 1, rtol=1e-6)


def test_backward_of_non_scalar_seeds_ones(ad_backend):
    """backward() on a tensor of any shape differentiates the sum of its elements."""
    a = _leaf(ad_backend, A)
    np.testing.assert_allclose(_np(a.grad((a * a).backward())), 2 * np.asarray(A))


def test_backward_of_a_leaf(ad_backend):
    a = _leaf(ad_backend, A)
    np.testing.assert_array_equal(_np(a.grad(a.backward())), 1.0)


def test_int_and_bool_ops_are_not_differentiable(ad_backend):
    a = _leaf(ad_backend, A)
    idx = a.argmax(1)
    mask = a.greater_elem(0.0)
    ints = a.int()
    for t in (idx, mask, ints, a.equal(a), a.argsort(0)):
        assert not t.is_require_grad()
        assert t.kind is not Float
    with pytest.raises(KindError):
        idx.backward()
    # They feed back into float ops without breaking the path to `a`.
    loss = a.gather(1, idx).sum() + (a.mask_fill(mask, 0.0) + ints.float(a.dtype)).sum()
    g = _np(a.grad(loss.backward()))
    x = np.asarray(A)
    want = (x <= 0).astype(float)
    want[np.arange(2), x.argmax(1)] += 1.0
    np.testing.assert_allclose(g, want)


def test_int_tensor_require_grad_is_a_no_op(ad_backend):
    i = Tensor[ad_backend, 1, Int].from_data([1, 2, 3], ad_backend.device())
    assert not i.require_grad().is_require_grad()


def test_backward_without_any_tracked_input_raises(ad_backend):
    c = _const(ad_backend, A)
    with pytest.raises(BackendError, match="require_grad"):
        (c * 2.0).sum().backward()


def test_backward_on_plain_backend_names_autodiff(backend):
    plain = backend.inner()
    t = tensor(plain, np.asarray(A)).require_grad()
    assert not t.is_require_grad()
    assert t.detach() is t or not t.detach().is_require_grad()
    with pytest.raises(BackendError, match="Autodiff"):
        t.sum().backward()


def test_plain_backend_grad_hooks_are_harmless(backend):
    plain = backend.inner()
    t = tensor(plain, np.asarray(A))
    assert t.inner() is t


def test_backward_twice_raises_a_clear_error(ad_backend):
    a = _leaf(ad_backend, A)
    loss = (a * a).sum()
    loss.backward()
    with pytest.raises(BackendError, match="freed"):
        loss.backward()


def test_new_forward_after_backward_works(ad_backend):
    a = _leaf(ad_backend, A)
    for _ in range(3):
        grads = (a * a).sum().backward()
        np.testing.assert_allclose(_np(a.grad(grads)), 2 * np.asarray(A))


def test_inner_and_from_inner(ad_backend):
    """inner() leaves the graph (validation-style code); from_inner re-enters it untracked."""
    a = _leaf(ad_backend, A)
    hidden = (a * 2.0).inner()
    assert hidden.backend is ad_backend.inner()
    assert not hidden.is_require_grad()
    back = Tensor.from_inner(hidden, ad_backend)
    assert back.backend is ad_backend and not back.is_require_grad()
    pinned = Tensor[ad_backend, 2].from_inner(hidden)
    assert pinned.backend is ad_backend
    # Re-entered values are constants: gradients flow only through the tracked path.
    grads = (back * a).sum().backward()
    np.testing.assert_allclose(_np(a.grad(grads)), 2.0 * np.asarray(A))


def test_gradients_are_independent_per_backward(ad_backend):
    a = _leaf(ad_backend, A)
    g1 = (a * 2.0).sum().backward()
    g2 = (a * 5.0).sum().backward()
    np.testing.assert_array_equal(_np(a.grad(g1)), 2.0)
    np.testing.assert_array_equal(_np(a.grad(g2)), 5.0)
