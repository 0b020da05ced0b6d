"""var (unbiased), var_bias, var_mean, var_mean_bias along a kept dim."""

import pytest
from burn.backend_tests.helpers import (
    assert_close,
    float_dtypes,
    random_tensor,
    ref,
    tensor,
)


@float_dtypes
def test_var(backend, rng, dtype):
    a = random_tensor(backend, rng, (3, 5), dtype)
    assert_close(
        a.var(1), ref(a).var(axis=1, ddof=1, keepdims=True), tol={"bf16": 5e-2}.get(dtype.value)
    )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_var_bias(backend, rng, dim):
    a = random_tensor(backend, rng, (3, 4))
    assert_close(a.var_bias(dim), ref(a).var(axis=dim, keepdims=True))


def test_var_mean(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    var, mean = a.var_mean(1)
    assert_close(var, ref(a).var(axis=1, ddof=1, keepdims=True))
    assert_close(mean, ref(a).mean(axis=1, keepdims=True))


def test_var_mean_bias(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    var, mean = a.var_mean_bias(2)
    assert_close(var, ref(a).var(axis=2, keepdims=True))
    assert_close(mean, ref(a).mean(axis=2, keepdims=True))


def test_var_known_values(backend):
    a = tensor(backend, [[0.5, 1.8, 0.2, -2.0], [3.0, -4.0, 5.0, 0.0]])
    assert_close(a.var(1), [[2.4892], [15.3333]], tol=1e-4)
