"""one_hot and one_hot_fill (on/off values and the axis of the classes)."""

import numpy as np
from burn.backend_tests.helpers import assert_equal, tensor
from burn.tensor import Float, Int


def test_int_one_hot(backend):
    a = tensor(backend, [0, 2, 1])
    out = a.one_hot(4)
    assert out.kind is Int
    assert_equal(out, np.eye(4, dtype=np.int64)[[0, 2, 1]])


def test_float_one_hot(backend):
    out = tensor(backend, [1.0, 0.0]).one_hot(3)
    assert out.kind is Float
    assert_equal(out, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_one_hot_2d(backend, rng):
    idx = rng.integers(0, 5, (2, 3))
    assert_equal(tensor(backend, idx).one_hot(5), np.eye(5, dtype=np.int64)[idx])


def test_one_hot_fill_with_positive_axis_and_indices(backend):
    a = tensor(backend, [[1, 0], [2, 1]])
    out = a.one_hot_fill(3, 5, -1, 1)
    want = np.full((2, 3, 2), -1)
    for i in range(2):
        for j in range(2):
            want[i, a.to_data().array[i, j], j] = 5
    assert_equal(out, want)


def test_one_hot_fill_float_values(backend):
    out = tensor(backend, [2.0, 0.0]).one_hot_fill(3, 0.9, 0.05, -1)
    assert_equal(out, np.array([[0.05, 0.05, 0.9], [0.9, 0.05, 0.05]], dtype=np.float32))


def test_one_hot_empty(backend):
    assert tensor(backend, np.zeros((0,), dtype=np.int64)).one_hot(3).dims() == [0, 3]
