"""numpy and PyTorch habits: numpy defers to Tensor, PyTorch spellings get Burn's names."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_close, assert_equal, tensor
from burn.tensor import Bool, KindError, RankError, Tensor, UnknownNameError, UsageError


def test_numpy_ufunc_runs_the_tensor_op(backend):
    t = tensor(backend, [0.0, 1.0, 2.0])
    out = np.sin(t)
    assert isinstance(out, Tensor) and out.backend is backend
    assert_close(out, np.sin([0.0, 1.0, 2.0]))
    assert_close(np.exp(t), np.exp([0.0, 1.0, 2.0]))
    assert_close(np.maximum(t, 1.0), [1.0, 1.0, 2.0])


def test_numpy_scalar_on_the_left(backend):
    t = tensor(backend, [1.0, 2.0, 4.0])
    for out, expected in [
        (np.float32(2.0) * t, [2.0, 4.0, 8.0]),
        (np.float64(1.0) - t, [0.0, -1.0, -3.0]),
        (np.float32(8.0) / t, [8.0, 4.0, 2.0]),
        (t * np.float32(2.0), [2.0, 4.0, 8.0]),
    ]:
        assert isinstance(out, Tensor)
        assert_close(out, expected)


def test_numpy_array_and_tensor_are_refused_both_ways(backend):
    t = tensor(backend, [1.0, 2.0])
    array = np.array([1.0, 2.0])
    for mix in (lambda: array + t, lambda: t + array, lambda: np.add(array, t)):
        with pytest.raises(KindError, match="Tensor.from_data"):
            mix()


def test_numpy_without_a_tensor_equivalent_is_a_clear_error(backend):
    t = tensor(backend, [1.0, 2.0])
    with pytest.raises(UsageError, match="numpy"):
        np.add.reduce(t)
    with pytest.raises(UsageError, match="t.numpy"):
        np.cbrt(t)


def test_numpy_ufunc_keeps_the_graph(backend):
    if not backend.tracks_gradients():
        pytest.skip("needs an autodiff backend")
    x = tensor(backend, [0.5, 1.0]).require_grad()
    grads = np.sin(x).sum().backward()
    assert_close(x.grad(grads), np.cos([0.5, 1.0]))


def test_pytorch_spellings_name_the_burn_method(backend):
    t = tensor(backend, [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(UsageError, match=r"sum_dim\(0\)"):
        t.sum(0)
    with pytest.raises(UsageError, match=r"mean_dim\(1\)"):
        t.mean(1)
    with pytest.raises(UnknownNameError, match="into_scalar"):
        t.item()
    with pytest.raises(UnknownNameError, match="reshape"):
        t.view(4)
    with pytest.raises(RankError, match=r"unsqueeze_dim\(0\)"):
        t.unsqueeze(0)
    assert not hasattr(t, "no_such_name")


def test_shape_reads_both_ways(backend):
    t = tensor(backend, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape[0] == 2 and t.shape[1] == 3
    assert t.shape() == [2, 3] and t.shape.dims == t.shape().dims


def test_equality_is_elementwise(backend):
    a = tensor(backend, [1.0, 2.0, 3.0])
    b = tensor(backend, [1.0, 0.0, 3.0])
    eq = a == b
    assert eq.kind is Bool
    assert_equal(eq, [True, False, True])
    assert_equal(a != b, [False, True, False])
    assert_equal(a == 2.0, [False, True, False])
    assert (a == None) is False  # noqa: E711 - not a tensor or a number: plain identity
    assert a in [a]
