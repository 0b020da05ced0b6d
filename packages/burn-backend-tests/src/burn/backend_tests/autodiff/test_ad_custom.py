"""The custom-op API: a forward on the inner backend, a backward written with tensor ops.

The example is the one of the book's Backend Extension chapter: matmul + bias + relu as one
op, whose hand-written gradients must match both the composed ops and finite differences.
"""

import importlib

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import (
    backward_grads,
    check_grads,
    grad_dtype,
    grad_tolerance,
)
from burn.backend_tests.helpers import tensor
from burn.tensor import activation
from burn.tensor.errors import BackendError, ShapeError

try:
    # burn-autodiff is optional for the suite (not a declared dependency, so imported by name);
    # an import error inside it is a failure, not a skip.
    CustomOp = importlib.import_module("burn.autodiff").CustomOp
except ModuleNotFoundError as missing:
    if missing.name != "burn.autodiff":
        raise
    pytest.skip("burn-autodiff is not installed", allow_module_level=True)


class FusedMatmulAddRelu(CustomOp):
    """relu(lhs @ rhs + bias), with bias [1, n] broadcast over the rows."""

    @staticmethod
    def forward(ctx, lhs, rhs, bias):
        out = activation.relu(lhs.matmul(rhs) + bias)
        ctx.save_for_backward(lhs, rhs, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        lhs, rhs, out = ctx.saved
        g = grad.mask_fill(out.lower_equal_elem(0.0), 0.0)
        return g.matmul(rhs.transpose()), lhs.transpose().matmul(g), g.sum_dim(0)


def _composed(lhs, rhs, bias):
    return activation.relu(lhs.matmul(rhs) + bias)


def _inputs(rng):
    # Shift the bias so no pre-activation sits at relu's kink.
    return rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(1, 2)) + 0.05


def test_custom_op_matches_composed_ops(ad_backend, rng):
    arrays = _inputs(rng)
    fused = backward_grads(ad_backend, FusedMatmulAddRelu.apply, *arrays)
    composed = backward_grads(ad_backend, _composed, *arrays)
    for got, want in zip(fused, composed, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_custom_op_matches_finite_differences(ad_backend, rng):
    check_grads(ad_backend, FusedMatmulAddRelu.apply, *_inputs(rng))


def test_custom_op_forward_values(ad_backend, rng):
    arrays = _inputs(rng)
    xs = [tensor(ad_backend, a, grad_dtype(ad_backend)) for a in arrays]
    out = FusedMatmulAddRelu.apply(*xs)
    assert out.backend is ad_backend
    want = np.maximum(arrays[0] @ arrays[1] + arrays[2], 0.0)
    tol = grad_tolerance(ad_backend) * 1e-2
    np.testing.assert_allclose(out.to_data().array, want, rtol=tol, atol=tol)


def test_custom_op_inside_a_larger_graph(ad_backend, rng):
    def f(lhs, rhs, bias):
        return FusedMatmulAddRelu.apply(lhs.tanh(), rhs * 2.0, bias).exp()

    check_grads(ad_backend, f, *_inputs(rng))


def test_custom_op_untracked_inputs_get_no_gradient(ad_backend, rng):
    lhs, rhs, bias = _inputs(rng)
    dtype = grad_dtype(ad_backend)
    x = tensor(ad_backend, lhs, dtype).require_grad()
    w = tensor(ad_backend, rhs, dtype)
    b = tensor(ad_backend, bias, dtype)
    seen = {}

    class Spy(FusedMatmulAddRelu):
        @staticmethod
        def forward(ctx, lhs, rhs, bias):
            seen["needs"] = ctx.needs_grad
            seen["backend"] = lhs.backend
            return FusedMatmulAddRelu.forward(ctx, lhs, rhs, bias)

    grads = Spy.apply(x, w, b).sum().backward()
    assert seen["needs"] == (True, False, False)
    assert seen["backend"] is ad_backend.inner(), "forward runs on the inner backend"
    assert x.grad(grads) is not None and w.grad(grads) is None and b.grad(grads) is None


def test_custom_op_on_a_plain_backend_just_runs_forward(backend, rng):
    plain = backend.inner()
    xs = [tensor(plain, a) for a in _inputs(rng)]
    out = FusedMatmulAddRelu.apply(*xs)
    assert out.backend is plain


def test_custom_op_backward_errors(ad_backend, rng):
    dtype = grad_dtype(ad_backend)
    xs = [tensor(ad_backend, a, dtype).require_grad() for a in _inputs(rng)]

    class TooFew(FusedMatmulAddRelu):
        @staticmethod
        def backward(ctx, grad):
            return (grad,)

    class WrongShape(FusedMatmulAddRelu):
        @staticmethod
        def backward(ctx, grad):
            return grad, grad, grad

    with pytest.raises(BackendError, match="gradients"):
        TooFew.apply(*xs).sum().backward()
    with pytest.raises(ShapeError, match="shape"):
        WrongShape.apply(*xs).sum().backward()
