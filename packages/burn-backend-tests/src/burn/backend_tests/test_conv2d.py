"""conv2d against a direct float64 definition (Burn's tests/module/conv2d.rs)."""

import numpy as np
import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, reference_dtype, strided, tensor
from burn.tensor import DType, Int, KindError, RankError, ShapeError
from burn.tensor.module import ConvOptions, conv2d

F32_TOL = 1e-4


def _check(backend, rng, x_shape, w_shape, bias=True, dtype=None, make=tensor, **opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0]) if bias else None
    out = conv2d(
        make(backend, x, dtype),
        make(backend, w, dtype),
        tensor(backend, b, dtype) if bias else None,
        ConvOptions(**opts),
    )
    tol = F32_TOL if out.dtype is DType.F32 else None
    assert_close(out, ref.conv(x, w, b, **opts), tol=tol)
    return out


def test_conv2d_simple(backend, rng):
    _check(backend, rng, (2, 3, 6, 5), (4, 3, 3, 3))


def test_conv2d_no_bias(backend, rng):
    _check(backend, rng, (1, 2, 4, 4), (3, 2, 2, 2), bias=False)


def test_conv2d_stride_padding_dilation(backend, rng):
    _check(backend, rng, (2, 2, 9, 8), (3, 2, 3, 2), stride=(2, 1), padding=(1, 2), dilation=(2, 3))


def test_conv2d_groups(backend, rng):
    _check(backend, rng, (2, 4, 5, 5), (6, 2, 3, 3), groups=2, padding=1)


def test_conv2d_groups_stride_2(backend, rng):
    _check(backend, rng, (1, 6, 7, 6), (9, 2, 3, 3), groups=3, stride=2, padding=1, dilation=(1, 2))


def test_conv2d_depthwise(backend, rng):
    _check(backend, rng, (2, 3, 5, 6), (3, 1, 3, 3), groups=3, padding=1)


def test_conv2d_kernel_1x1(backend, rng):
    _check(backend, rng, (2, 5, 3, 4), (7, 5, 1, 1))


def test_conv2d_kernel_larger_than_stride_padding(backend, rng):
    _check(backend, rng, (1, 1, 4, 4), (1, 1, 4, 4), padding=2, stride=3)


def test_conv2d_strided_input(backend, rng):
    _check(backend, rng, (2, 3, 6, 5), (4, 3, 3, 3), make=strided, padding=1, stride=2)


def test_conv2d_f64(backend, rng):
    out = _check(
        backend, rng, (2, 4, 6, 6), (4, 2, 3, 3), dtype=DType.F64, groups=2, padding=1, dilation=2
    )
    assert out.dtype is DType.F64


def test_conv2d_f16(backend, rng):
    x = rng.standard_normal((1, 2, 5, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    out = conv2d(tensor(backend, x, DType.F16), tensor(backend, w, DType.F16))
    assert out.dtype is DType.F16
    x16 = x.astype(np.float16).astype(np.float64)
    w16 = w.astype(np.float16).astype(np.float64)
    assert_close(out, ref.conv(x16, w16), tol=2e-2)


def test_conv2d_guide_shapes(backend, rng):
    """The shapes of the guide model's first layers: [B, 1, 28, 28] -> 8 -> 16 channels."""
    x = rng.standard_normal((2, 1, 28, 28))
    w1 = rng.standard_normal((8, 1, 3, 3))
    w2 = rng.standard_normal((16, 8, 3, 3))
    dtype = reference_dtype(backend)
    h = conv2d(tensor(backend, x, dtype), tensor(backend, w1, dtype))
    y = conv2d(h, tensor(backend, w2, dtype))
    assert y.dims() == [2, 16, 24, 24]
    assert_close(y, ref.conv(ref.conv(x, w1), w2), tol=F32_TOL if dtype is DType.F32 else 1e-9)


def test_conv2d_rank_error(backend, rng):
    x = tensor(backend, rng.standard_normal((3, 6, 6)))
    w = tensor(backend, rng.standard_normal((2, 3, 3, 3)))
    with pytest.raises(RankError, match=r"conv2d.*\[3, 6, 6\]"):
        conv2d(x, w)


def test_conv2d_channel_mismatch(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 4, 6, 6)))
    w = tensor(backend, rng.standard_normal((2, 3, 3, 3)))
    with pytest.raises(ShapeError, match=r"conv2d.*4 channels"):
        conv2d(x, w)


def test_conv2d_groups_not_dividing(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 4, 6, 6)))
    w = tensor(backend, rng.standard_normal((3, 2, 3, 3)))
    with pytest.raises(ShapeError, match="divisible by groups"):
        conv2d(x, w, options=ConvOptions(groups=2))


def test_conv2d_bias_shape(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 3, 6, 6)))
    w = tensor(backend, rng.standard_normal((2, 3, 3, 3)))
    with pytest.raises(ShapeError, match=r"bias must have shape \[2\]"):
        conv2d(x, w, tensor(backend, rng.standard_normal(3)))


def test_conv2d_kernel_too_large(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 1, 3, 3)))
    w = tensor(backend, rng.standard_normal((1, 1, 4, 4)))
    with pytest.raises(ShapeError, match="does not fit"):
        conv2d(x, w)


def test_conv2d_int_input(backend, rng):
    x = tensor(backend, np.ones((1, 1, 3, 3), dtype=np.int64), kind=Int)
    w = tensor(backend, rng.standard_normal((1, 1, 2, 2)))
    with pytest.raises(KindError, match="conv2d"):
        conv2d(x, w)


def test_conv2d_bad_options(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 1, 5, 5)))
    w = tensor(backend, rng.standard_normal((1, 1, 2, 2)))
    with pytest.raises(ShapeError, match="stride"):
        conv2d(x, w, options=ConvOptions(stride=0))
    with pytest.raises(ShapeError, match="padding"):
        conv2d(x, w, options=ConvOptions(padding=(1, 1, 1)))
