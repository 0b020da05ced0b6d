"""conv_transpose3d against a scatter definition
(Burn's tests/module/conv_transpose3d.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import ConvTransposeOptions, conv_transpose3d


def _check(backend, rng, x_shape, w_shape, bias=True, dtype=None, make=tensor, **opts):
    x = rng.standard_normal(x_shape)
    w = rng.standard_normal(w_shape)
    groups = opts.get("groups", 1)
    b = rng.standard_normal(w_shape[1] * groups) if bias else None
    bt = tensor(backend, b, dtype) if bias else None
    out = conv_transpose3d(
        make(backend, x, dtype), make(backend, w, dtype), bt, ConvTransposeOptions(**opts)
    )
    assert_close(
        out, ref.conv_transpose(x, w, b, **opts), tol=1e-4 if out.dtype is DType.F32 else None
    )


def test_conv_transpose3d_simple(backend, rng):
    _check(backend, rng, (1, 2, 3, 2, 3), (2, 2, 2, 3, 2))


def test_conv_transpose3d_stride_padding_out(backend, rng):
    _check(
        backend,
        rng,
        (1, 2, 3, 2, 3),
        (2, 2, 2, 3, 2),
        stride=(2, 1, 2),
        padding=(1, 0, 1),
        padding_out=(1, 0, 0),
    )


def test_conv_transpose3d_stride_padding_dilation(backend, rng):
    _check(
        backend,
        rng,
        (1, 2, 3, 2, 3),
        (2, 2, 2, 3, 2),
        bias=False,
        stride=(1, 2, 1),
        padding=(0, 1, 1),
        dilation=(2, 1, 2),
    )


def test_conv_transpose3d_groups(backend, rng):
    _check(backend, rng, (1, 4, 2, 3, 2), (4, 1, 2, 2, 2), groups=2, stride=2)


def test_conv_transpose3d_strided_input(backend, rng):
    _check(backend, rng, (1, 2, 3, 2, 3), (2, 2, 2, 3, 2), make=strided, stride=2)


def test_conv_transpose3d_f64(backend, rng):
    _check(
        backend,
        rng,
        (1, 2, 3, 2, 3),
        (2, 2, 2, 3, 2),
        dtype=DType.F64,
        stride=(2, 1, 2),
        padding=(1, 0, 1),
        padding_out=(1, 0, 0),
    )


def test_conv_transpose3d_rank_error(backend, rng):
    x = tensor(backend, rng.standard_normal((2, 3, 4, 4, 4, 4)[: 3 + 1]))
    with pytest.raises(RankError, match="conv_transpose3d"):
        conv_transpose3d(x, tensor(backend, rng.standard_normal((2, 2, 2, 3, 2))))


def test_conv_transpose3d_channel_mismatch(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 5, 4, 4, 4)[: 3 + 2]))
    with pytest.raises(ShapeError, match="conv_transpose3d.*channels"):
        conv_transpose3d(x, tensor(backend, rng.standard_normal((2, 2, 2, 3, 2))))


def test_conv_transpose3d_padding_out_too_large(backend, rng):
    x = tensor(backend, rng.standard_normal((1, 2, 3, 2, 3)))
    with pytest.raises(ShapeError, match="padding_out"):
        conv_transpose3d(
            x,
            tensor(backend, rng.standard_normal((2, 2, 2, 3, 2))),
            options=ConvTransposeOptions(padding_out=1),
        )
