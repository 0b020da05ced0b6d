"""all_close / is_close (|a - b| <= atol + rtol * |b|), contains_nan / is_nan."""

import numpy as np
from burn.backend_tests.helpers import assert_equal, strided, tensor
from burn.tensor import Bool


def test_is_close(backend):
    a = tensor(backend, [1.0, 2.0, 3.0, 100.0])
    b = tensor(backend, [1.0, 2.0001, 3.1, 100.001])
    out = a.is_close(b, 1e-4, 1e-4)
    assert out.kind is Bool
    want = np.isclose([1.0, 2.0, 3.0, 100.0], np.float32([1.0, 2.0001, 3.1, 100.001]), 1e-4, 1e-4)
    assert_equal(out, want)


def test_all_close(backend, rng):
    v = rng.standard_normal((3, 4))
    a = tensor(backend, v)
    assert a.all_close(strided(backend, v))
    assert a.all_close(a + 1e-7)
    assert not a.all_close(a + 1e-2)
    assert a.all_close(a + 1e-2, atol=0.1)
    assert tensor(backend, [1000.0]).all_close(tensor(backend, [1000.5]), rtol=1e-3)


def test_all_close_int(backend):
    a = tensor(backend, [1, 2, 3])
    assert a.all_close(tensor(backend, [1, 2, 3]))
    assert not a.all_close(tensor(backend, [1, 2, 4]))


def test_is_nan(backend):
    a = tensor(backend, [[0.0, np.nan], [np.inf, -np.nan]])
    out = a.is_nan()
    assert out.kind is Bool
    assert_equal(out, [[False, True], [False, True]])
    assert_equal(tensor(backend, [1, 2]).is_nan(), [False, False])


def test_contains_nan(backend):
    assert tensor(backend, [1.0, np.nan]).contains_nan() is True
    assert tensor(backend, [1.0, np.inf]).contains_nan() is False
    assert tensor(backend, np.zeros((0,))).contains_nan() is False
    assert (tensor(backend, [0.0]) / 0.0).contains_nan()
