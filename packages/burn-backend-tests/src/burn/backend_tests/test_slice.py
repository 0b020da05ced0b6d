"""slice / slice_assign / slice_fill / narrow and `t[...]` indexing (ints, slices with
negative steps, Ellipsis, None)."""

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


@all_dtypes
def test_should_support_full_sliceing_1d(backend, rng, dtype):
    a = random_tensor(backend, rng, (5,), dtype, 0, 9)
    assert_equal(a.slice([range(0, 5)]), ref(a))


def test_should_support_partial_sliceing_1d(backend, rng):
    a = random_tensor(backend, rng, (5,))
    assert_equal(a.slice([range(1, 3)]), ref(a)[1:3])
    assert_equal(a.slice([(2, 5)]), ref(a)[2:5])


def test_should_support_partial_sliceing_3d(backend, rng):
    a = random_tensor(backend, rng, (2, 3, 4))
    assert_equal(a.slice([(0, 1), (1, 3)]), ref(a)[0:1, 1:3])
    assert_equal(a.slice([None, None, (1, 2)]), ref(a)[:, :, 1:2])


def test_should_support_slice_with_negative_bounds_and_steps(backend, rng):
    a = random_tensor(backend, rng, (4, 6))
    assert_equal(a.slice([(-3, -1)]), ref(a)[-3:-1])
    assert_equal(a.slice([slice(None), slice(0, 6, 2)]), ref(a)[:, 0:6:2])
    assert_equal(a.slice([slice(-2, None)]), ref(a)[-2:])


def test_slice_int_index_keeps_rank(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    assert_equal(a.slice([1]), ref(a)[1:2])
    assert_equal(a.slice([-1, 2]), ref(a)[2:3, 2:3])


def test_slice_empty_range(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    assert a.slice([(1, 1)]).dims() == [0, 4]


def test_slice_int_bool_non_contiguous(backend, rng):
    values = rng.standard_normal((4, 5))
    assert_equal(
        strided(backend, values).slice([(1, 3), (0, 4)]), values.astype(np.float32)[1:3, 0:4]
    )
    assert_equal(tensor(backend, [[0, 1, 2], [3, 4, 5]]).slice([(1, 2), (1, 3)]), [[4, 5]])
    assert_equal(tensor(backend, [[True, False, True]]).slice([None, (1, 3)]), [[False, True]])


@all_dtypes
def test_should_support_slice_assign_1d(backend, rng, dtype):
    a = random_tensor(backend, rng, (5,), dtype, 0, 9)
    v = random_tensor(backend, rng, (2,), dtype, 0, 9)
    want = ref(a).copy()
    want[1:3] = ref(v)
    out = a.slice_assign([(1, 3)], v)
    assert_equal(out, want)
    assert_equal(a, ref(a))  # the input is untouched


def test_should_support_slice_assign_2d(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    v = random_tensor(backend, rng, (2, 2))
    want = ref(a).copy()
    want[1:3, 0:4:2] = ref(v)
    assert_equal(a.slice_assign([(1, 3), slice(0, 4, 2)], v), want)


def test_slice_assign_bool_int(backend):
    b = tensor(backend, [False, False, False])
    assert_equal(b.slice_assign([(0, 2)], tensor(backend, [True, True])), [True, True, False])
    i = tensor(backend, [[0, 0], [0, 0]])
    assert_equal(i.slice_assign([1], tensor(backend, [[7, 8]])), [[0, 0], [7, 8]])


def test_slice_fill(backend, rng):
    a = random_tensor(backend, rng, (3, 4))
    want = ref(a).copy()
    want[0:2, 1:3] = -1.0
    assert_equal(a.slice_fill([(0, 2), (1, 3)], -1.0), want)
    assert_equal(tensor(backend, [1, 2, 3]).slice_fill([(1, 3)], 0), [1, 0, 0])


@pytest.mark.parametrize(("dim", "start", "length"), [(0, 1, 2), (1, 0, 1), (-1, 2, 2), (0, 3, 0)])
def test_should_support_narrow(backend, rng, dim, start, length):
    a = random_tensor(backend, rng, (3, 4))
    index = [slice(None)] * 2
    index[dim] = slice(start, start + length)
    assert_equal(a.narrow(dim, start, length), ref(a)[tuple(index)])


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        (1, 2),
        (slice(None), 1),
        slice(1, 3),
        slice(None, None, 2),
        slice(None, None, -1),
        (slice(None), slice(3, 0, -2)),
        (Ellipsis, 1),
        (0, Ellipsis),
        (None, 1),
        (slice(None), None, slice(1, 2)),
        (Ellipsis, slice(None, None, -1)),
        (-2, slice(-3, None), 0),
        Ellipsis,
        slice(5, 1),
    ],
    ids=repr,
)
def test_getitem_matches_numpy(backend, rng, index):
    a = random_tensor(backend, rng, (3, 4, 2))
    want = ref(a)[index]
    got = a[index]
    if want.ndim == 0:
        want = want.reshape(1)  # tensors keep at least one dim
    assert_equal(got, want)


def test_getitem_int_tensor(backend):
    a = tensor(backend, [[0, 1, 2], [3, 4, 5]])
    assert_equal(a[1], [3, 4, 5])
    assert_equal(a[:, ::-1], [[2, 1, 0], [5, 4, 3]])
    assert_equal(a[-1, -1], [5])
