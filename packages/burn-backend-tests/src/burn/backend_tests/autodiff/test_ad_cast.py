"""Gradients across dtype casts (Burn's cast.rs): a float cast passes the gradient back in the
input's dtype; a cast to Int or Bool leaves the graph."""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads, grad_dtype
from burn.backend_tests.helpers import require_dtype, tensor
from burn.tensor import DType


@pytest.mark.parametrize("target", [DType.F32, DType.F16, DType.BF16], ids=lambda d: d.value)
def test_should_diff_cast(ad_backend, rng, target):
    require_dtype(ad_backend, target)
    source = grad_dtype(ad_backend)
    x = tensor(ad_backend, rng.normal(size=(2, 3)), source).require_grad()
    w = rng.uniform(-1, 1, size=(2, 3))
    y = x.cast(target)
    assert y.dtype == target and y.is_require_grad()
    grads = (y * tensor(ad_backend, w, target)).sum().backward()
    g = x.grad(grads)
    assert g.dtype == source
    want = tensor(ad_backend, w, target).to_data().array.astype(np.float64)
    np.testing.assert_allclose(g.to_data().array.astype(np.float64), want, rtol=1e-6)


def test_should_diff_cast_round_trip(ad_backend, rng):
    """Down and back up: the composite is the identity (up to rounding) and so is its gradient."""
    require_dtype(ad_backend, DType.F32)
    # A step far above f32's rounding keeps the quotient accurate.
    check_grads(
        ad_backend,
        lambda x: x.cast(DType.F32).cast(x.dtype) * 1.0,
        rng.normal(size=(2, 3)),
        step=1e-2,
        tol=1e-4,
    )


def test_cast_to_int_is_not_differentiable(ad_backend, rng):
    x = tensor(ad_backend, rng.normal(size=(2, 3)), grad_dtype(ad_backend)).require_grad()
    i = x.int()
    assert not i.is_require_grad()
    b = x.greater_elem(0.0)
    assert not b.is_require_grad()
    # Using them as constants keeps the graph to x intact.
    y = x * i.float(x.dtype) + x.mask_fill(b, 0.0)
    grads = y.sum().backward()
    want = i.to_data().array + ~b.to_data().array
    np.testing.assert_allclose(x.grad(grads).to_data().array, want)
