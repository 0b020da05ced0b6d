"""conv1d against a direct float64 definition (Burn's tests/module/conv1d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import ConvOptions, conv1d


def _check(backend, rng, x_shape, w_shape, bias=True, dtype=None, make=tensor, **opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0]) if bias else None
    bt = tensor(backend, b, dtype) if bias else None
    out = conv1d(make(backend, x, dtype), make(backend, w, dtype), bt, ConvOptions(**opts))
    assert_close(out, ref.conv(x, w, b, **opts), tol=1e-4 if out.dtype is DType.F32 else None)


def test_conv1d_simple(backend, rng):
    _check(backend, rng, (2, 3, 10), (4, 3, 3))


def test_conv1d_stride_padding_dilation(backend, rng):
    _check(backend, rng, (2, 2, 11), (3, 2, 3), stride=2, padding=2, dilation=2)


def test_conv1d_groups(backend, rng):
    _check(backend, rng, (2, 4, 8), (6, 2, 3), bias=False, groups=2, padding=1)


def test_conv1d_strided_input(backend, rng):
    _check(backend, rng, (3, 2, 7), (2, 2, 2), make=strided, stride=3)


def test_conv1d_f64(backend, rng):
    _check(backend, rng, (2, 3, 9), (3, 1, 4), dtype=DType.F64, groups=3, padding=1)


def test_conv1d_rank_error(backend, rng):
    with pytest.raises(RankError, match="conv1d"):
        conv1d(
            tensor(backend, rng.standard_normal((3, 8))),
            tensor(backend, rng.standard_normal((2, 3, 3))),
        )


def test_conv1d_channel_mismatch(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 2, 8)))
    with pytest.raises(ShapeError, match="conv1d"):
        conv1d(x, tensor(backend, rng.standard_normal((2, 3, 3))))
