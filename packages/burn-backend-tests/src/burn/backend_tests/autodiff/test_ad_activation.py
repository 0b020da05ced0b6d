"""Gradients of `burn.tensor.activation` (Burn's relu.rs, gelu.rs, sigmoid.rs, softmax.rs ...)."""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import backward_grads, check_grads, grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import activation

SHAPE = (2, 4)


def _nonzero(rng, shape=SHAPE):
    return rng.uniform(0.2, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def test_should_diff_relu(ad_backend, rng):
    (g,) = check_grads(ad_backend, activation.relu, _nonzero(rng))
    check_grads(ad_backend, activation.relu, _nonzero(rng), strided_inputs=True)
    assert np.count_nonzero(g) < g.size


def test_should_diff_gelu(ad_backend, rng):
    check_grads(ad_backend, activation.gelu, rng.uniform(-3, 3, SHAPE))


def test_should_diff_sigmoid(ad_backend, rng):
    check_grads(ad_backend, activation.sigmoid, rng.uniform(-4, 4, SHAPE))


def test_small_neg_val_should_not_cause_grad_overflow(ad_backend):
    (g,) = backward_grads(ad_backend, activation.sigmoid, [-90.0, 90.0, -800.0])
    assert np.all(np.isfinite(g))


def test_should_diff_silu(ad_backend, rng):
    check_grads(ad_backend, activation.silu, rng.uniform(-3, 3, SHAPE))


def test_should_diff_tanh(ad_backend, rng):
    check_grads(ad_backend, activation.tanh, rng.uniform(-2, 2, SHAPE))


def test_should_diff_softplus(ad_backend, rng):
    check_grads(ad_backend, activation.softplus, _nonzero(rng))
    check_grads(ad_backend, lambda x: activation.softplus(x, beta=2.0), _nonzero(rng))


def test_should_diff_mish(ad_backend, rng):
    check_grads(ad_backend, activation.mish, _nonzero(rng))


def test_should_diff_leaky_relu(ad_backend, rng):
    check_grads(ad_backend, activation.leaky_relu, _nonzero(rng))
    check_grads(ad_backend, lambda x: activation.leaky_relu(x, 0.2), _nonzero(rng))


def test_should_diff_log_sigmoid(ad_backend, rng):
    check_grads(ad_backend, activation.log_sigmoid, rng.uniform(-4, 4, SHAPE))
    # Far out on both sides the slope is 1 and 0: finite, no overflow in exp.
    (g,) = backward_grads(ad_backend, activation.log_sigmoid, [-200.0, 200.0])
    assert np.all(np.isfinite(g))


def test_should_diff_hard_sigmoid(ad_backend):
    """Slope alpha inside the linear part, zero where it saturates (|x| > 2.5 for the default)."""
    x = np.array([[-3.0, -2.0, -0.4, 0.3, 1.7, 4.0]])
    (g,) = check_grads(ad_backend, activation.hard_sigmoid, x)
    assert g[0, 0] == 0.0 and g[0, -1] == 0.0
    check_grads(ad_backend, lambda t: activation.hard_sigmoid(t, 0.5, 0.3), x)


def test_should_diff_prelu(ad_backend, rng):
    check_grads(ad_backend, activation.prelu, _nonzero(rng, (2, 3, 2)), [0.25, -0.5, 0.1])
    check_grads(ad_backend, activation.prelu, _nonzero(rng, (2, 3)), [0.3])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_grad(ad_backend, rng, dim):
    check_grads(ad_backend, lambda x: activation.softmax(x, dim), rng.normal(size=(3, 4)))


def test_log_softmax_grad(ad_backend, rng):
    check_grads(ad_backend, lambda x: activation.log_softmax(x, 1), rng.normal(size=(3, 4)))
    check_grads(
        ad_backend,
        lambda x: activation.log_softmax(x, 0),
        rng.normal(size=(3, 4)),
        strided_inputs=True,
    )


def test_quiet_softmax_grad(ad_backend, rng):
    check_grads(ad_backend, lambda x: activation.quiet_softmax(x, 1), rng.normal(size=(3, 4)))


def test_softmax_grad_is_finite_for_large_inputs(ad_backend):
    (g,) = backward_grads(ad_backend, lambda x: activation.softmax(x, 1), [[1000.0, 0.0, -1000.0]])
    assert np.all(np.isfinite(g))


def test_cross_entropy_loss_grad(ad_backend, rng):
    """-mean(log_softmax(logits)[target]): its gradient is (softmax - one_hot) / batch."""
    targets = tensor(ad_backend, np.array([[2], [0], [1]]))

    def loss(logits):
        return activation.log_softmax(logits, 1).gather(1, targets).mean().neg()

    logits = rng.normal(size=(3, 4))
    check_grads(ad_backend, loss, logits)
    x = tensor(ad_backend, logits, grad_dtype(ad_backend)).require_grad()
    g = x.grad(loss(x).backward()).to_data().array
    e = np.exp(logits - logits.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    want[np.arange(3), [2, 0, 1]] -= 1.0
    np.testing.assert_allclose(g, want / 3.0, rtol=1e-5, atol=1e-6)
