"""unfold4d (im2col) against a position-by-position float64 definition
(Burn's tests/module/unfold4d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import UnfoldOptions, unfold4d


def test_unfold4d_simple(backend, rng):
    x = rng.standard_normal((2, 3, 4, 5))
    out = unfold4d(tensor(backend, x), 2)
    assert out.dims() == [2, 12, 12]
    assert_close(out, ref.unfold4d(x, 2))


def test_unfold4d_stride_padding_dilation(backend, rng):
    x = rng.standard_normal((1, 2, 7, 6))
    opts = dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1))
    out = unfold4d(strided(backend, x), (3, 2), UnfoldOptions(**opts))
    assert_close(out, ref.unfold4d(x, (3, 2), **opts))


def test_unfold4d_f64(backend, rng):
    x = rng.standard_normal((2, 1, 5, 5))
    out = unfold4d(tensor(backend, x, DType.F64), 3, UnfoldOptions(stride=2, padding=1))
    assert_close(out, ref.unfold4d(x, 3, stride=2, padding=1))


def test_unfold4d_errors(backend, rng):
    with pytest.raises(RankError, match="unfold4d"):
        unfold4d(tensor(backend, rng.standard_normal((2, 4, 4))), 2)
    with pytest.raises(ShapeError, match="unfold4d"):
        unfold4d(tensor(backend, rng.standard_normal((1, 1, 2, 2))), 3)
