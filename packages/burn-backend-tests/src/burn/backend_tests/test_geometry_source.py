"""The output sizes of every convolution, pool and unfold come from one place:
`burn.backend.ops.module_geometry` (`conv_output_size`, `conv_transpose_output_size`).

Each test swaps that function for one that answers one less per dim and checks that the op's
shape follows, in the checks of `burn.tensor.module` and in the backend alike, and that the
values are the reference's cropped to the smaller size (an output position does not depend on
how many there are). A backend or check that kept a formula of its own would disagree.
"""

import numpy as np
import pytest
from burn.backend.ops import module_geometry
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, assert_equal, tensor
from burn.tensor.module import (
    ConvOptions,
    ConvTransposeOptions,
    UnfoldOptions,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    unfold4d,
)


@pytest.fixture
def one_less(monkeypatch):
    """Make every conv/pool/unfold output one shorter along each dim (where it has > 1)."""
    calls = []
    plain = module_geometry.conv_output_size

    def shorter(*args: int) -> int:
        calls.append(args)
        size = plain(*args)
        return size - 1 if size > 1 else size

    monkeypatch.setattr(module_geometry, "conv_output_size", shorter)
    return calls


@pytest.fixture
def one_less_transposed(monkeypatch):
    """Make every transposed-convolution output one shorter along each dim."""
    calls = []
    plain = module_geometry.conv_transpose_output_size

    def shorter(*args: int) -> int:
        calls.append(args)
        return plain(*args) - 1

    monkeypatch.setattr(module_geometry, "conv_transpose_output_size", shorter)
    return calls


def _crop(expected: np.ndarray, spatial: int) -> np.ndarray:
    """`expected` less its last position along each of its last `spatial` dims (if > 1)."""
    index = [slice(None)] * (expected.ndim - spatial)
    index += [slice(0, n - 1 if n > 1 else n) for n in expected.shape[-spatial:]]
    return expected[tuple(index)]


@pytest.mark.parametrize(
    ("conv", "x_shape", "w_shape", "stride", "padding", "dilation"),
    [
        (conv1d, (2, 3, 11), (4, 3, 3), (2,), (1,), (1,)),
        (conv2d, (1, 2, 9, 8), (3, 2, 3, 2), (2, 1), (1, 0), (1, 2)),
        (conv3d, (1, 2, 6, 7, 5), (2, 2, 2, 3, 2), (1, 2, 1), (0, 1, 1), (2, 1, 1)),
    ],
)
def test_conv_sizes_come_from_the_geometry(
    backend, rng, one_less, conv, x_shape, w_shape, stride, padding, dilation
):
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0])
    options = ConvOptions(stride, padding, dilation)
    out = conv(tensor(backend, x), tensor(backend, w), tensor(backend, b), options)
    expected = ref.conv(x, w, b, stride, padding, dilation)
    assert one_less
    assert out.dims() == list(_crop(expected, len(stride)).shape)
    assert_close(out, _crop(expected, len(stride)))


@pytest.mark.parametrize(
    ("conv", "x_shape", "w_shape", "stride", "padding", "padding_out"),
    [
        (conv_transpose1d, (2, 3, 5), (3, 2, 3), (2,), (1,), (1,)),
        (conv_transpose2d, (1, 2, 4, 3), (2, 3, 3, 2), (2, 1), (1, 0), (1, 0)),
        (conv_transpose3d, (1, 2, 3, 2, 3), (2, 2, 2, 3, 2), (1, 2, 1), (0, 1, 0), (0, 1, 0)),
    ],
)
def test_conv_transpose_sizes_come_from_the_geometry(
    backend, rng, one_less_transposed, conv, x_shape, w_shape, stride, padding, padding_out
):
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    options = ConvTransposeOptions(stride, padding, padding_out)
    out = conv(tensor(backend, x), tensor(backend, w), None, options)
    expected = ref.conv_transpose(x, w, None, stride, padding, padding_out)
    assert one_less_transposed
    assert out.dims() == list(_crop(expected, len(stride)).shape)
    assert_close(out, _crop(expected, len(stride)))


def test_pool_sizes_come_from_the_geometry(backend, rng, one_less):
    x1, x2 = rng.standard_normal((2, 3, 10)), rng.standard_normal((1, 2, 9, 7))
    t1, t2 = tensor(backend, x1), tensor(backend, x2)
    assert_close(avg_pool1d(t1, 3, 2, 1), _crop(ref.avg_pool(x1, 3, 2, 1), 1))
    assert_close(avg_pool2d(t2, (3, 2), 1, 1), _crop(ref.avg_pool(x2, (3, 2), 1, 1), 2))
    assert_close(
        avg_pool2d(t2, 2, 2, 1, count_include_pad=False),
        _crop(ref.avg_pool(x2, 2, 2, 1, count_include_pad=False), 2),
    )
    want1, want1_idx = ref.max_pool_with_indices(x1, 3, 2, 1, 2)
    assert_close(max_pool1d(t1, 3, 2, 1, 2), _crop(want1, 1))
    out1, idx1 = max_pool1d_with_indices(t1, 3, 2, 1, 2)
    assert_close(out1, _crop(want1, 1))
    assert_equal(idx1, _crop(want1_idx, 1))
    want2, want2_idx = ref.max_pool_with_indices(x2, (3, 2), (2, 1), (1, 1), (1, 2))
    assert_close(max_pool2d(t2, (3, 2), (2, 1), (1, 1), (1, 2)), _crop(want2, 2))
    out2, idx2 = max_pool2d_with_indices(t2, (3, 2), (2, 1), (1, 1), (1, 2))
    assert out2.dims() == list(_crop(want2, 2).shape)
    assert_close(out2, _crop(want2, 2))
    assert_equal(idx2, _crop(want2_idx, 2))
    assert one_less


def test_unfold_sizes_come_from_the_geometry(backend, rng, one_less):
    x = rng.standard_normal((2, 3, 7, 6))
    out = unfold4d(tensor(backend, x), (3, 2), UnfoldOptions((2, 1), (1, 0), (1, 2)))
    blocks = ref.unfold4d(x, (3, 2), (2, 1), (1, 0), (1, 2))  # [N, C * KH * KW, H' * W']
    # Unpatched, the blocks form a 4 x 4 grid ((7 + 2 - 2 - 1) // 2 + 1 by (6 - 2 - 1) + 1).
    kept = blocks.reshape(2, 3 * 3 * 2, 4, 4)[..., :3, :3]
    assert one_less
    assert_close(out, kept.reshape(2, 3 * 3 * 2, 9))
