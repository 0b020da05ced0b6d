"""embedding: rows of the weights at Int indices (Burn's tests/module/embedding.rs)."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, KindError, OutOfRangeError, RankError
from burn.tensor.module import embedding


def test_embedding_simple(backend, rng):
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 4, 2], [1, 1, 3]])
    out = embedding(tensor(backend, w), tensor(backend, idx))
    assert out.dims() == [2, 3, 3]
    assert_close(out, w[idx])


def test_embedding_strided_weights_f64(backend, rng):
    w = rng.standard_normal((6, 4))
    idx = np.array([[5, 0], [2, 2], [3, 1]])
    out = embedding(strided(backend, w, DType.F64), tensor(backend, idx))
    assert out.dtype is DType.F64
    assert_close(out, w[idx])


def test_embedding_errors(backend, rng):
    w = tensor(backend, rng.standard_normal((4, 2)))
    with pytest.raises(KindError, match="embedding"):
        embedding(w, tensor(backend, [[0.0, 1.0]]))
    with pytest.raises(RankError, match="embedding"):
        embedding(tensor(backend, rng.standard_normal(4)), tensor(backend, np.array([[0]])))
    # Backends that keep data on the host check indices up front; others raise from the gather.
    message = "embedding" if getattr(backend, "host_memory", False) else None
    with pytest.raises(OutOfRangeError, match=message):
        embedding(w, tensor(backend, np.array([[0, 4]])))
