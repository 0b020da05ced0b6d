"""chunk / split / split_with_sizes / iter_dim."""

import numpy as np
import pytest
from burn.backend_tests.helpers import assert_equal, random_tensor, ref, tensor


@pytest.mark.parametrize(("size", "chunks"), [(6, 3), (6, 4), (5, 2), (3, 5), (1, 1)])
def test_chunk_evenly_divisible_and_not(backend, rng, size, chunks):
    a = random_tensor(backend, rng, (size, 2))
    parts = a.chunk(chunks, 0)
    step = -(-size // chunks)
    want = [ref(a)[i : i + step] for i in range(0, size, step)]
    assert len(parts) == len(want)
    for p, w in zip(parts, want, strict=True):
        assert_equal(p, w)


def test_chunk_along_last_dim_int(backend):
    a = tensor(backend, [[0, 1, 2, 3, 4]])
    parts = a.chunk(2, -1)
    assert_equal(parts[0], [[0, 1, 2]])
    assert_equal(parts[1], [[3, 4]])


@pytest.mark.parametrize(("size", "split"), [(6, 2), (7, 3), (4, 4), (3, 5)])
def test_split(backend, rng, size, split):
    a = random_tensor(backend, rng, (2, size))
    parts = a.split(split, 1)
    want = [ref(a)[:, i : i + split] for i in range(0, size, split)]
    assert [p.dims() for p in parts] == [list(w.shape) for w in want]
    for p, w in zip(parts, want, strict=True):
        assert_equal(p, w)


def test_split_with_sizes(backend, rng):
    a = random_tensor(backend, rng, (6, 2))
    parts = a.split_with_sizes([1, 0, 3, 2], 0)
    assert [p.dims()[0] for p in parts] == [1, 0, 3, 2]
    assert_equal(parts[2], ref(a)[1:4])


def test_should_iter_over_slices(backend, rng):
    a = random_tensor(backend, rng, (2, 3))
    rows = list(a.iter_dim(0))
    assert len(rows) == 2
    assert_equal(rows[1], ref(a)[1:2])
    cols = list(a.iter_dim(1))
    assert len(cols) == 3 and cols[0].dims() == [2, 1]
    assert_equal(cols[2], ref(a)[:, 2:3])
    assert list(tensor(backend, np.zeros((0, 3))).iter_dim(0)) == []


def test_python_iteration_and_len(backend, rng):
    a = random_tensor(backend, rng, (3, 2))
    assert len(a) == 3
    rows = list(a)
    assert len(rows) == 3
    assert_equal(rows[2], ref(a)[2])
