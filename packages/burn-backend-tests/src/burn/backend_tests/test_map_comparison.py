"""equal / not_equal / greater / greater_equal / lower / lower_equal, their `_elem` forms and
the comparison operators; results are Bool tensors."""

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    all_dtypes,
    assert_equal,
    random_tensor,
    ref,
    strided,
    tensor,
)
from burn.tensor import Bool

_OPS = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "lower": np.less,
    "lower_equal": np.less_equal,
}


@all_dtypes
@pytest.mark.parametrize("op", list(_OPS))
def test_should_support_comparison(backend, rng, dtype, op):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 4)
    b = random_tensor(backend, rng, (3, 4), dtype, 0, 4)
    b = b.mask_where(tensor(backend, rng.random((3, 4)) < 0.3), a)  # some exact ties
    out = getattr(a, op)(b)
    assert out.kind is Bool
    assert_equal(out, _OPS[op](ref(a), ref(b)))


@all_dtypes
@pytest.mark.parametrize("op", list(_OPS))
def test_should_support_comparison_elem(backend, rng, dtype, op):
    a = random_tensor(backend, rng, (3, 4), dtype, 0, 4)
    out = getattr(a, op + "_elem")(2)
    assert out.kind is Bool
    assert_equal(out, _OPS[op](ref(a), 2))


@pytest.mark.parametrize("op", list(_OPS))
def test_should_support_comparison_broadcast(backend, rng, op):
    a = random_tensor(backend, rng, (3, 1))
    b = random_tensor(backend, rng, (1, 4))
    assert_equal(getattr(a, op)(b), _OPS[op](ref(a), ref(b)))


def test_comparison_operators(backend):
    a = tensor(backend, [1.0, 2.0, 3.0])
    b = tensor(backend, [3.0, 2.0, 1.0])
    assert_equal(a < b, [True, False, False])
    assert_equal(a <= b, [True, True, False])
    assert_equal(a > b, [False, False, True])
    assert_equal(a >= b, [False, True, True])
    assert_equal(a > 1.5, [False, True, True])
    assert_equal(a <= 2, [True, True, False])


def test_comparison_non_contiguous(backend, rng):
    a = rng.integers(0, 3, (3, 4)).astype(np.float64)
    b = rng.integers(0, 3, (3, 4)).astype(np.float64)
    assert_equal(strided(backend, a).equal(tensor(backend, b)), a == b)
    assert_equal(strided(backend, a).greater(strided(backend, b)), a > b)


def test_should_support_bool_equal(backend):
    a = tensor(backend, [True, False, True])
    b = tensor(backend, [True, True, False])
    assert_equal(a.equal(b), [True, False, False])
    assert_equal(a.not_equal(b), [False, True, True])
    assert_equal(a.equal_elem(True), [True, False, True])
    assert_equal(a.not_equal_elem(True), [False, True, False])


def test_comparison_with_nan(backend):
    a = tensor(backend, [np.nan, 1.0])
    assert_equal(a.equal(a), [False, True])
    assert_equal(a.not_equal(a), [True, False])
    assert_equal(a.greater_elem(0.0), [False, True])


def test_comparison_empty(backend):
    a = tensor(backend, np.zeros((0, 2)))
    assert a.equal(a).dims() == [0, 2]
    assert a.lower_elem(1.0).dims() == [0, 2]
