"""conv3d against a direct float64 definition (Burn's tests/module/conv3d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import ConvOptions, conv3d


def _check(backend, rng, x_shape, w_shape, bias=True, dtype=None, make=tensor, **opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0]) if bias else None
    bt = tensor(backend, b, dtype) if bias else None
    out = conv3d(make(backend, x, dtype), make(backend, w, dtype), bt, ConvOptions(**opts))
    assert_close(out, ref.conv(x, w, b, **opts), tol=1e-4 if out.dtype is DType.F32 else None)


def test_conv3d_simple(backend, rng):
    _check(backend, rng, (2, 2, 4, 5, 4), (3, 2, 2, 3, 2))


def test_conv3d_stride_padding_dilation(backend, rng):
    _check(
        backend,
        rng,
        (1, 2, 6, 5, 7),
        (2, 2, 2, 2, 3),
        stride=(2, 1, 2),
        padding=(1, 0, 2),
        dilation=(2, 2, 1),
    )


def test_conv3d_groups(backend, rng):
    _check(backend, rng, (1, 4, 4, 4, 4), (4, 2, 3, 3, 3), groups=2, padding=1)


def test_conv3d_strided_input(backend, rng):
    _check(backend, rng, (1, 2, 3, 4, 5), (2, 2, 2, 2, 2), make=strided)


def test_conv3d_f64(backend, rng):
    _check(backend, rng, (1, 2, 4, 4, 3), (2, 2, 3, 2, 2), dtype=DType.F64, padding=1)


def test_conv3d_rank_error(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 2, 4, 4)))
    with pytest.raises(RankError, match="conv3d"):
        conv3d(x, tensor(backend, rng.standard_normal((2, 2, 2, 2, 2))))


def test_conv3d_channel_mismatch(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 3, 4, 4, 4)))
    with pytest.raises(ShapeError, match="conv3d"):
        conv3d(x, tensor(backend, rng.standard_normal((2, 2, 2, 2, 2))))
