"""sort / sort_descending / *_with_indices / argsort / argsort_descending (stable) and topk."""

import numpy as np
import pytest
from burn.backend_tests.helpers import all_dtypes, assert_equal, random_tensor, ref, strided, tensor
from burn.tensor import Int


def _stable_desc(values, dim):
    """Indices of a stable descending sort (ties keep their original order)."""
    return np.argsort(-values, axis=dim, kind="stable")


@all_dtypes
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_with_indices(backend, rng, dtype, dim):
    a = random_tensor(backend, rng, (4, 5), dtype, 0, 6)  # small range: many ties
    values, indices = a.sort_with_indices(dim)
    want = np.argsort(ref(a), axis=dim, kind="stable")
    assert indices.kind is Int
    assert_equal(indices, want)
    assert_equal(values, np.take_along_axis(ref(a), want, dim))
    assert_equal(a.sort(dim), np.sort(ref(a), axis=dim))
    assert_equal(a.argsort(dim), want)


@all_dtypes
@pytest.mark.parametrize("dim", [0, 1])
def test_sort_descending_with_indices(backend, rng, dtype, dim):
    a = random_tensor(backend, rng, (4, 5), dtype, 0, 6)
    values, indices = a.sort_descending_with_indices(dim)
    want = _stable_desc(ref(a), dim)
    assert_equal(indices, want)
    assert_equal(values, np.take_along_axis(ref(a), want, dim))
    assert_equal(a.sort_descending(dim), np.take_along_axis(ref(a), want, dim))
    assert_equal(a.argsort_descending(dim), want)


def test_sort_stability_explicit(backend):
    a = tensor(backend, [2.0, 1.0, 2.0, 1.0, 3.0])
    assert_equal(a.argsort(0), [1, 3, 0, 2, 4])
    assert_equal(a.argsort_descending(0), [4, 0, 2, 1, 3])


def test_sort_3d_non_contiguous(backend, rng):
    v = rng.standard_normal((2, 3, 4))
    t = strided(backend, v)
    assert_equal(t.sort(1), np.sort(v.astype(np.float32), axis=1))
    assert_equal(t.argsort(2), np.argsort(v.astype(np.float32), axis=2, kind="stable"))


def test_sort_empty(backend):
    assert tensor(backend, np.zeros((0, 3))).sort(1).dims() == [0, 3]


@pytest.mark.parametrize(("k", "dim"), [(1, 0), (3, 1), (5, 1), (0, 1), (2, -1)])
def test_topk(backend, rng, k, dim):
    a = random_tensor(backend, rng, (4, 5))
    want = np.take_along_axis(ref(a), _stable_desc(ref(a), dim), dim)
    index = [slice(None)] * 2
    index[dim] = slice(0, k)
    assert_equal(a.topk(k, dim), want[tuple(index)])


def test_topk_with_indices(backend):
    a = tensor(backend, [[1, 5, 3, 5], [0, 2, 9, 4]])
    values, indices = a.topk_with_indices(2, 1)
    assert_equal(values, [[5, 5], [9, 4]])
    assert_equal(indices, [[1, 3], [2, 3]])
