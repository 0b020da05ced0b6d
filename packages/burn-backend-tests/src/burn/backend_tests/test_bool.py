"""Bool tensors: bool_not / bool_and / bool_or / bool_xor (and ~ & | ^), and bool() of
Float and Int tensors."""

import numpy as np
from burn.backend_tests.helpers import assert_equal, strided, tensor
from burn.tensor import Bool


def test_from_float_and_int(backend):
    f = tensor(backend, [[0.0, 1.5], [-2.0, 0.0]]).bool()
    assert f.kind is Bool
    assert_equal(f, [[False, True], [True, False]])
    assert_equal(tensor(backend, [0, 3, -1]).bool(), [False, True, True])


def test_bool_not(backend):
    a = tensor(backend, [[True, False], [False, True]])
    assert_equal(a.bool_not(), [[False, True], [True, False]])
    assert_equal(~a, [[False, True], [True, False]])


def test_bool_and_or_xor(backend, rng):
    x = rng.random((3, 4)) < 0.5
    y = rng.random((3, 4)) < 0.5
    a, b = tensor(backend, x), tensor(backend, y)
    assert_equal(a.bool_and(b), x & y)
    assert_equal(a.bool_or(b), x | y)
    assert_equal(a.bool_xor(b), x ^ y)
    assert_equal(a & b, x & y)
    assert_equal(a | b, x | y)
    assert_equal(a ^ b, x ^ y)


def test_bool_ops_broadcast_and_strided(backend, rng):
    x = rng.random((3, 1)) < 0.5
    y = rng.random((1, 4)) < 0.5
    assert_equal(tensor(backend, x).bool_and(tensor(backend, y)), x & y)
    z = rng.random((3, 4)) < 0.5
    assert_equal(strided(backend, z).bool_not(), ~z)


def test_bool_into_int_and_float(backend):
    a = tensor(backend, [True, False])
    assert_equal(a.int(), [1, 0])
    assert_equal(a.float(), [1.0, 0.0])
    assert a.int().dtype == backend.capabilities.int_dtype
    assert a.float().dtype == backend.capabilities.float_dtype


def test_bool_empty(backend):
    a = tensor(backend, np.zeros((0, 2), dtype=bool))
    assert (~a).dims() == [0, 2]
