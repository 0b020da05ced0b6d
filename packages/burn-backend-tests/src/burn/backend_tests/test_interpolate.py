"""interpolate (nearest, bilinear, bicubic) against Burn's per-element formulas in float64
(Burn's tests/module/nearest_interpolate.rs, bilinear_interpolate.rs, bicubic_interpolate.rs)."""

import pytest
from burn.backend_tests import references as ref
from burn.backend_tests.helpers import assert_close, strided, tensor
from burn.tensor import DType, RankError, ShapeError
from burn.tensor.module import InterpolateMode, InterpolateOptions, interpolate

MODES = [InterpolateMode.Nearest, InterpolateMode.Bilinear, InterpolateMode.Bicubic]
SIZES = [((4, 4), (8, 8)), ((6, 5), (3, 2)), ((5, 7), (9, 4)), ((3, 3), (1, 1)), ((1, 4), (3, 6))]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(("size", "out"), SIZES)
def test_interpolate_modes(backend, rng, mode, size, out):
    x = rng.standard_normal((2, 3, *size))
    y = interpolate(tensor(backend, x), out, InterpolateOptions(mode))
    assert_close(y, ref.interpolate(x, out, mode.value), tol=1e-5)


def test_interpolate_nearest_simple(backend):
    x = [[[[1.0, 2.0], [3.0, 4.0]]]]
    y = interpolate(tensor(backend, x), (4, 4))
    want = [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]]
    assert_close(y, want)


def test_interpolate_bilinear_align_corners(backend):
    x = [[[[0.0, 1.0], [2.0, 3.0]]]]
    y = interpolate(tensor(backend, x), (3, 3), "bilinear")
    assert_close(y, [[[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]]])


def test_interpolate_strided_input(backend, rng):
    x = rng.standard_normal((1, 2, 5, 6))
    y = interpolate(strided(backend, x), (7, 4), InterpolateOptions(InterpolateMode.Bicubic))
    assert_close(y, ref.interpolate(x, (7, 4), "bicubic"), tol=1e-5)


def test_interpolate_f64(backend, rng):
    x = rng.standard_normal((1, 2, 4, 5))
    y = interpolate(tensor(backend, x, DType.F64), (6, 3), "bilinear")
    assert y.dtype is DType.F64
    assert_close(y, ref.interpolate(x, (6, 3), "bilinear"))


def test_interpolate_errors(backend, rng):
    with pytest.raises(RankError, match="interpolate"):
        interpolate(tensor(backend, rng.standard_normal((2, 4, 4))), (2, 2))
    x = tensor(backend, rng.standard_normal((1, 1, 4, 4)))
    with pytest.raises(ShapeError, match="output_size"):
        interpolate(x, (0, 2))
    with pytest.raises(ShapeError, match="mode"):
        interpolate(x, (2, 2), "trilinear")
