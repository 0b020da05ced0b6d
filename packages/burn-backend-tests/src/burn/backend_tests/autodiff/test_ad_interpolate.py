"""Gradients of interpolate (Burn's nearest_interpolate.rs, and bilinear/bicubic)."""

import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.tensor import module


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_upsample_interpolation(ad_backend, rng, mode):
    check_grads(
        ad_backend, lambda x: module.interpolate(x, (5, 6), mode), rng.normal(size=(1, 2, 3, 3))
    )


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_downsample_interpolation(ad_backend, rng, mode):
    check_grads(
        ad_backend,
        lambda x: module.interpolate(x, (2, 3), mode),
        rng.normal(size=(1, 1, 4, 5)),
        strided_inputs=True,
    )
