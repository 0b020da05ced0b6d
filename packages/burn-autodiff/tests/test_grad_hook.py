"""`set_grad_hook`: each leaf's gradient handed over during `backward()` once it is final."""

import numpy as np
import pytest
from burn.autodiff import Autodiff
from burn.ndarray import NdArray
from burn.tensor import Tensor, activation
from burn.tensor.errors import BackendError

B = Autodiff(NdArray)


def _leaf(rng, *shape):
    return Tensor.from_data(
        rng.standard_normal(shape).astype(np.float32), B.device()
    ).require_grad()


def _three_layers():
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((4, 3)).astype(np.float32), B.device())
    w1, b1, w2, w3 = _leaf(rng, 3, 5), _leaf(rng, 1, 5), _leaf(rng, 5, 5), _leaf(rng, 5, 2)
    unused = _leaf(rng, 2)
    h = activation.relu(x.matmul(w1) + b1)
    h = activation.tanh(h.matmul(w2))
    # w2 is consumed twice, once early and once late in the forward pass: its gradient is a
    # sum, final only after both uses are differentiated.
    loss = (h.matmul(w3).sum() + h.matmul(w2).sum()) * 0.5
    return loss, {"w1": w1, "b1": b1, "w2": w2, "w3": w3, "unused": unused}


def test_every_leaf_once_with_the_final_gradient():
    loss, leaves = _three_layers()
    seen = []
    previous = B.set_grad_hook(lambda leaf, grad: seen.append((leaf, np.array(grad, copy=True))))
    try:
        grads = loss.backward()
    finally:
        assert B.set_grad_hook(previous) is not None
    names = {B.leaf_id(t.primitive): name for name, t in leaves.items()}
    order = [names[leaf] for leaf, _ in seen]
    assert sorted(order) == ["b1", "w1", "w2", "w3"]  # each once; `unused` has no gradient
    # The later a leaf is used in the forward pass, the sooner its gradient is final.
    assert order.index("w2") < order.index("w1") and order.index("w2") < order.index("b1")
    for leaf, grad in seen:
        np.testing.assert_array_equal(grad, leaves[names[leaf]].grad(grads).to_data().array)
    # The same gradients as without a hook.
    again, fresh = _three_layers()
    plain = again.backward()
    for name in ("w1", "b1", "w2", "w3"):
        np.testing.assert_array_equal(
            leaves[name].grad(grads).to_data().array, fresh[name].grad(plain).to_data().array
        )


def test_a_leaf_as_the_root():
    (w,) = [_leaf(np.random.default_rng(1), 1)]
    seen = []
    previous = B.set_grad_hook(lambda leaf, grad: seen.append(leaf))
    try:
        w.backward()
    finally:
        B.set_grad_hook(previous)
    assert seen == [B.leaf_id(w.primitive)]


def test_no_hook_by_default_and_none_removes_it():
    assert B.set_grad_hook(None) is None
    calls = []
    B.set_grad_hook(lambda leaf, grad: calls.append(leaf))
    assert B.set_grad_hook(None) is not None
    _three_layers()[0].backward()
    assert calls == []


def test_leaf_id_is_none_off_the_leaves():
    w = _leaf(np.random.default_rng(2), 2)
    assert B.leaf_id((w * 2.0).primitive) is None
    assert B.leaf_id(Tensor.from_data([1.0], B.device()).primitive) is None


def test_a_backend_without_gradients_says_so():
    with pytest.raises(BackendError, match="set_grad_hook: backend .* does not track gradients"):
        NdArray.set_grad_hook(lambda leaf, grad: None)
    assert NdArray.leaf_id(Tensor.from_data([1.0], NdArray.device()).primitive) is None
