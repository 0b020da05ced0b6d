"""NdArray's matmul of a stack of matrices by one broadcast matrix: one product over the
stacked rows where they stack without a copy, numpy's batched product otherwise; the same
values as `np.matmul` either way."""

import numpy as np
import pytest
from burn.ndarray import NdArray
from burn.ndarray.backend import _matmul


def _cases(rng):
    a = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    b = rng.standard_normal((1, 1, 6, 7)).astype(np.float32)
    yield a, b  # rows stack: one product
    yield a.transpose(1, 0, 2, 3), b  # batch dims swapped: no stacking without a copy
    yield a[:, :, ::2], b  # every other row: no stacking without a copy
    yield a[..., :5], b[..., :5, :]  # rows of a wider array: they stack as a strided view
    yield a.swapaxes(2, 3)[..., :5], rng.standard_normal((1, 1, 5, 2)).astype(np.float32)
    yield a, rng.standard_normal((1, 1, 1, 6, 7)).astype(np.float32)  # rhs of higher rank
    yield a, rng.standard_normal((3, 1, 6, 7)).astype(np.float32)  # rhs batched: numpy's way
    yield a[:, :, :0], b  # no rows
    yield a[:0], b  # empty batch
    yield rng.integers(-5, 5, (2, 3, 4)), rng.integers(-5, 5, (1, 4, 2))


def test_matches_numpy():
    rng = np.random.default_rng(0)
    for lhs, rhs in _cases(rng):
        want = np.matmul(lhs, rhs)
        got = _matmul(lhs, rhs)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_stacked_rows_are_one_product(monkeypatch):
    """A contiguous stack reaches BLAS as one 2-d product; a stack whose rows do not stack
    without a copy keeps numpy's batched product."""
    shapes = []
    real = np.matmul

    def spy(x, y, *args, **kwargs):
        shapes.append((x.shape, y.shape))
        return real(x, y, *args, **kwargs)

    monkeypatch.setattr(np, "matmul", spy)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 8, 16)).astype(np.float32)
    b = rng.standard_normal((1, 16, 3)).astype(np.float32)
    _matmul(a, b)
    assert shapes == [((32, 16), (16, 3))]
    shapes.clear()
    _matmul(a.transpose(1, 0, 2), b)
    assert shapes == [((8, 4, 16), (1, 16, 3))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backend_op(dtype):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 5, 3)).astype(dtype)
    b = rng.standard_normal((1, 3, 4)).astype(dtype)
    np.testing.assert_allclose(NdArray.float_matmul(a, b), a @ b, rtol=1e-6)
