"""Gradients of the convolutions (Burn's conv1d.rs ... conv_transpose3d.rs), for the input,
the weight and the bias, against finite differences on tiny shapes."""

from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.tensor import module

ConvOptions, ConvTransposeOptions = module.ConvOptions, module.ConvTransposeOptions


def _conv(ad_backend, rng, op, x, w, bias=True, strided=False, **options):
    fn = getattr(module, op)
    opts = (ConvTransposeOptions if "transpose" in op else ConvOptions)(**options)
    out_channels = w[1] * options.get("groups", 1) if "transpose" in op else w[0]
    arrays = [rng.normal(size=x), rng.normal(size=w)]
    if bias:
        arrays.append(rng.normal(size=(out_channels,)))
    return check_grads(
        ad_backend,
        lambda *t: fn(*t[:2], t[2] if bias else None, opts),
        *arrays,
        strided_inputs=strided,
    )


def test_conv1d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (2, 2, 4), (2, 2, 3), padding=1)


def test_conv1d_different_channels(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (1, 2, 4), (3, 2, 3))


def test_conv1d_with_padding(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (1, 2, 4), (2, 2, 3), padding=2)


def test_conv1d_with_stride(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (1, 2, 5), (2, 2, 2), stride=2, padding=1)


def test_conv1d_dilation(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (1, 2, 6), (2, 2, 2), dilation=2, padding=1)


def test_conv1d_groups(ad_backend, rng):
    _conv(ad_backend, rng, "conv1d", (1, 4, 5), (4, 2, 2), groups=2, bias=False)


def test_conv2d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv2d", (1, 2, 4, 4), (3, 2, 2, 2), padding=1)


def test_conv2d_no_bias_strided_input(ad_backend, rng):
    _conv(ad_backend, rng, "conv2d", (1, 2, 3, 4), (2, 2, 2, 2), bias=False, strided=True)


def test_conv2d_different_stride(ad_backend, rng):
    _conv(ad_backend, rng, "conv2d", (1, 1, 5, 4), (2, 1, 2, 2), stride=(2, 1), padding=(1, 0))


def test_conv2d_different_dilation(ad_backend, rng):
    _conv(ad_backend, rng, "conv2d", (1, 1, 5, 5), (1, 1, 2, 2), dilation=(2, 1))


def test_conv2d_groups(ad_backend, rng):
    _conv(ad_backend, rng, "conv2d", (1, 2, 4, 3), (2, 1, 2, 2), groups=2, padding=1)


def test_conv2d_complex(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv2d",
        (2, 4, 4, 5),
        (2, 2, 2, 3),
        stride=(1, 2),
        padding=(1, 1),
        dilation=(2, 1),
        groups=2,
    )


def test_conv3d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv3d", (1, 1, 3, 3, 3), (2, 1, 2, 2, 2), padding=1)


def test_conv3d_complex(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv3d",
        (1, 2, 3, 4, 3),
        (2, 1, 2, 2, 1),
        stride=(1, 2, 1),
        padding=(0, 1, 1),
        groups=2,
    )


def test_conv_transpose1d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose1d", (1, 2, 3), (2, 2, 2))


def test_conv_transpose1d_padding(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose1d", (1, 2, 4), (2, 1, 3), padding=1)


def test_conv_transpose1d_stride(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose1d", (1, 2, 3), (2, 2, 2), stride=2)


def test_conv_transpose1d_stride_padding_out(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose1d", (1, 2, 3), (2, 2, 2), stride=2, padding_out=1)


def test_conv_transpose1d_dilation(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose1d", (1, 1, 3), (1, 2, 2), dilation=2)


def test_conv_transpose1d_complex(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv_transpose1d",
        (2, 2, 3),
        (2, 2, 3),
        stride=2,
        padding=1,
        padding_out=1,
        dilation=1,
        groups=2,
    )


def test_conv_transpose2d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose2d", (1, 2, 2, 3), (2, 2, 2, 2))


def test_conv_transpose2d_stride_padding_out(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv_transpose2d",
        (1, 1, 2, 2),
        (1, 2, 2, 2),
        stride=2,
        padding_out=1,
        strided=True,
    )


def test_conv_transpose2d_groups(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose2d", (1, 2, 2, 3), (2, 1, 2, 2), groups=2, padding=1)


def test_conv_transpose2d_complex_groups(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv_transpose2d",
        (1, 4, 2, 3),
        (4, 1, 2, 3),
        stride=(2, 1),
        padding=(1, 0),
        padding_out=(1, 0),
        dilation=(1, 2),
        groups=2,
    )


def test_conv_transpose3d_basic(ad_backend, rng):
    _conv(ad_backend, rng, "conv_transpose3d", (1, 1, 2, 2, 2), (1, 2, 2, 2, 2))


def test_conv_transpose3d_complex_groups(ad_backend, rng):
    _conv(
        ad_backend,
        rng,
        "conv_transpose3d",
        (1, 2, 2, 2, 1),
        (2, 1, 2, 1, 2),
        stride=(2, 1, 1),
        padding=(1, 0, 0),
        padding_out=(1, 0, 0),
        groups=2,
    )
