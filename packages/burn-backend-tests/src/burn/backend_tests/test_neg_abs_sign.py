"""neg, abs, sign (and `-t`, `abs(t)`) for Float and Int tensors."""

import numpy as np
from burn.backend_tests.helpers import (
    assert_close,
    assert_equal,
    float_dtypes,
    int_dtypes,
    random_tensor,
    ref,
    strided,
    tensor,
)
from burn.tensor import DType


@float_dtypes
def test_should_support_neg_ops(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.neg(), -ref(a))
    assert_close(-a, -ref(a))


@int_dtypes
def test_should_support_neg_ops_int(backend, dtype):
    if dtype is DType.U8:
        return  # negation of unsigned values wraps; nothing portable to check
    a = tensor(backend, [[0, 1, -2], [3, -4, 5]], dtype)
    assert_equal(-a, [[0, -1, 2], [-3, 4, -5]], dtype)


@float_dtypes
def test_should_support_abs_ops_float(backend, rng, dtype):
    a = random_tensor(backend, rng, (2, 3), dtype)
    assert_close(a.abs(), np.abs(ref(a)))
    assert_close(abs(a), np.abs(ref(a)))


@int_dtypes
def test_should_support_abs_ops_int(backend, dtype):
    values = [[0, 1, 2], [3, 4, 5]] if dtype is DType.U8 else [[0, -1, 2], [3, 4, -5]]
    a = tensor(backend, values, dtype)
    assert_equal(a.abs(), np.abs(values), dtype)


def test_abs_non_contiguous(backend, rng):
    a = rng.standard_normal((3, 4))
    assert_close(strided(backend, a).abs(), np.abs(a), tol=1e-5)


@float_dtypes
def test_should_support_sign_ops_float(backend, dtype):
    a = tensor(backend, [[-0.2, -1.0, 2.0], [3.0, 0.0, -5.0]], dtype)
    assert_equal(a.sign(), [[-1.0, -1.0, 1.0], [1.0, 0.0, -1.0]])


@int_dtypes
def test_should_support_sign_ops_int(backend, dtype):
    values = [[2, 0, 1]] if dtype is DType.U8 else [[-2, 0, 7]]
    a = tensor(backend, values, dtype)
    assert_equal(a.sign(), np.sign(values), dtype)
