"""burn.tensor.activation: Burn's v0.14 activation functions against float64 references,
including inputs large enough to overflow a naive formula."""

import math

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_close, float_dtypes, random_tensor, ref, tensor
from burn.tensor import KindError, activation

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _softplus(x, beta=1.0):
    z = beta * x
    return (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta


def _softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


_ELEMENTWISE = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0))),
    "sigmoid": _sigmoid,
    "log_sigmoid": lambda x: -_softplus(-x),
    "silu": lambda x: x * _sigmoid(x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "softplus": _softplus,
    "tanh": np.tanh,
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
}


@float_dtypes
@pytest.mark.parametrize("name", list(_ELEMENTWISE))
def test_activation_elementwise(backend, rng, dtype, name):
    x = random_tensor(backend, rng, (3, 5), dtype, -4.0, 4.0)
    out = getattr(activation, name)(x)
    assert out.dtype == dtype and out.dims() == [3, 5]
    tol = {"f16": 5e-3, "bf16": 3e-2}.get(dtype.value)
    assert_close(out, _ELEMENTWISE[name](ref(x)), tol=tol)


@pytest.mark.parametrize("name", list(_ELEMENTWISE))
def test_activation_large_inputs(backend, name):
    v = np.array([-1e4, -50.0, -1.0, 0.0, 1.0, 50.0, 1e4])
    out = ref(getattr(activation, name)(tensor(backend, v)))
    assert np.all(np.isfinite(out)), out
    assert_close(tensor(backend, out), _ELEMENTWISE[name](v), tol=1e-5)


def test_test_leaky_relu_d2(backend):
    x = tensor(backend, [[0.0, -1.0, 2.0], [-3.0, 4.0, -5.0]])
    assert_close(activation.leaky_relu(x, 0.5), [[0.0, -0.5, 2.0], [-1.5, 4.0, -2.5]])


def test_hard_sigmoid_params(backend, rng):
    x = random_tensor(backend, rng, (4,), None, -5, 5)
    assert_close(activation.hard_sigmoid(x, 0.5, 0.25), np.clip(0.5 * ref(x) + 0.25, 0, 1))


def test_softplus_beta(backend, rng):
    x = random_tensor(backend, rng, (2, 3))
    assert_close(activation.softplus(x, 2.0), _softplus(ref(x), 2.0))


@float_dtypes
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_d2(backend, rng, dtype, dim):
    x = random_tensor(backend, rng, (3, 4), dtype, -3, 3)
    tol = {"f16": 5e-3, "bf16": 3e-2}.get(dtype.value)
    assert_close(activation.softmax(x, dim), _softmax(ref(x), dim), tol=tol)


@pytest.mark.parametrize("dim", [0, 2])
def test_log_softmax_d3(backend, rng, dim):
    x = random_tensor(backend, rng, (2, 3, 4), None, -3, 3)
    want = np.log(_softmax(ref(x), dim))
    assert_close(activation.log_softmax(x, dim), want)


@pytest.mark.parametrize("dim", [0, 1])
def test_quiet_softmax_d2(backend, rng, dim):
    x = random_tensor(backend, rng, (3, 4), None, -3, 3)
    e = np.exp(ref(x))
    assert_close(activation.quiet_softmax(x, dim), e / (1.0 + e.sum(axis=dim, keepdims=True)))


def test_softmax_family_stable(backend):
    x = tensor(backend, [[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    v = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    assert_close(activation.softmax(x, 1), _softmax(v, 1))
    shifted = v - v.max(axis=1, keepdims=True)
    log_sm = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    assert_close(activation.log_softmax(x, 1), log_sm, tol=1e-4)
    q = ref(activation.quiet_softmax(x, 1))
    assert np.all(np.isfinite(q))
    np.testing.assert_allclose(q[0], _softmax(v, 1)[0], rtol=1e-5)
    np.testing.assert_allclose(q[1], 0.0, atol=1e-30)


def test_prelu(backend, rng):
    x = random_tensor(backend, rng, (2, 3, 4))
    alpha = tensor(backend, [0.1, 0.2, 0.3])
    a = np.array([0.1, 0.2, 0.3], dtype=np.float32).reshape(1, 3, 1)
    assert_close(activation.prelu(x, alpha), np.where(ref(x) < 0, ref(x) * a, ref(x)))
    one = tensor(backend, [0.25])
    assert_close(activation.prelu(x, one), np.where(ref(x) < 0, 0.25 * ref(x), ref(x)))


def test_activation_non_contiguous_and_empty(backend, rng):
    v = rng.standard_normal((3, 4))
    t = tensor(backend, v.T.copy()).transpose()
    assert_close(activation.gelu(t), _ELEMENTWISE["gelu"](v.astype(np.float32)), tol=1e-5)
    assert_close(activation.softmax(t, 1), _softmax(v.astype(np.float32), 1), tol=1e-5)
    e = tensor(backend, np.zeros((0, 3)))
    assert activation.relu(e).dims() == [0, 3]
    assert activation.softmax(e, 1).dims() == [0, 3]


@pytest.mark.parametrize("name", ["relu", "gelu", "sigmoid", "softplus", "silu"])
def test_activation_needs_float(backend, name):
    with pytest.raises(KindError, match=name):
        getattr(activation, name)(tensor(backend, [1, 2]))
    with pytest.raises(KindError, match="softmax"):
        activation.softmax(tensor(backend, [1, 2]), 0)
