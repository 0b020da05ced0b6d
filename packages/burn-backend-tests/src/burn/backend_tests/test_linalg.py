"""burn.tensor.linalg: vector norms, normalisation and cosine similarity (Burn's linalg tests)."""

import math

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_close, reference_dtype, strided, tensor
from burn.tensor import Int, KindError, linalg


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_vector_norm(backend, rng, p, dim):
    dtype = reference_dtype(backend)
    x = rng.standard_normal((3, 4))
    x[0, 1] = 0.0
    a = np.abs(x)
    if p == 0.0:
        want = (x != 0).sum(axis=dim, keepdims=True)
    elif math.isinf(p):
        want = (a.max if p > 0 else a.min)(axis=dim, keepdims=True)
    else:
        want = (a**p).sum(axis=dim, keepdims=True) ** (1 / p)
    assert_close(linalg.vector_norm(tensor(backend, x, dtype), p, dim), want)


def test_named_norms_match_vector_norm(backend, rng):
    x = rng.standard_normal((2, 5))
    t = strided(backend, x, reference_dtype(backend))
    for fn, p in [
        (linalg.l0_norm, linalg.Norm.L0),
        (linalg.l1_norm, linalg.Norm.L1),
        (linalg.l2_norm, linalg.Norm.L2),
        (linalg.max_abs_norm, linalg.Norm.LInf),
        (linalg.min_abs_norm, linalg.Norm.LNegInf),
    ]:
        assert_close(fn(t, 1), linalg.vector_norm(t, p, 1).to_data().array)
    assert_close(linalg.lp_norm(t, 3.0, 1), (np.abs(x) ** 3).sum(1, keepdims=True) ** (1 / 3))


def test_vector_normalize(backend, rng):
    x = rng.standard_normal((4, 3))
    x[1] = 0.0  # the eps clamp keeps a zero vector at zero instead of NaN
    got = linalg.vector_normalize(tensor(backend, x, reference_dtype(backend)), 2.0, 1)
    norm = np.maximum(np.sqrt((x**2).sum(1, keepdims=True)), 1e-12)
    assert_close(got, x / norm)


def test_cosine_similarity(backend, rng):
    a = rng.standard_normal((3, 6))
    b = rng.standard_normal((3, 6))
    dtype = reference_dtype(backend)
    got = linalg.cosine_similarity(tensor(backend, a, dtype), tensor(backend, b, dtype), 1)
    want = (a * b).sum(1, keepdims=True) / (
        np.linalg.norm(a, axis=1, keepdims=True) * np.linalg.norm(b, axis=1, keepdims=True)
    )
    assert_close(got, want)


def test_norm_needs_float(backend):
    with pytest.raises(KindError, match="l2_norm"):
        linalg.l2_norm(tensor(backend, np.array([[1, 2]]), kind=Int), 1)
