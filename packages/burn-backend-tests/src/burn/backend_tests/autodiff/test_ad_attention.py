"""Gradients of layer norm, batch norm and scaled dot-product attention, by finite differences."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads, grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import module


def test_layer_norm_backward(ad_backend, rng):
    """Input, gamma and beta, over the last dim of a rank-3 input."""
    check_grads(
        ad_backend,
        lambda x, g, b: module.layer_norm(x, g, b, 1e-5),
        rng.normal(size=(2, 3, 5)) * 2.0 + 1.0,
        rng.uniform(0.5, 1.5, 5),
        rng.normal(size=5),
    )


def test_batch_norm_backward(ad_backend, rng):
    """Input, gamma and beta, per channel of a rank-4 input (the statistics carry no
    gradient, so only the output is differentiated)."""
    check_grads(
        ad_backend,
        lambda x, g, b: module.batch_norm(x, g, b, 1e-5)[0],
        rng.normal(size=(3, 2, 2, 3)) * 2.0 + 1.0,
        rng.uniform(0.5, 1.5, 2),
        rng.normal(size=2),
    )


def test_attention_backward(ad_backend, rng):
    """Both outputs (weights and context) carry gradient to query, key and value."""
    shape = (2, 2, 3, 4)
    check_grads(
        ad_backend,
        lambda q, k, v: module.attention(q, k, v, scale=0.5),
        *(rng.normal(size=shape) for _ in range(3)),
    )


def test_attention_backward_masked_with_dropout(ad_backend, rng):
    """Masked scores are constants; dropped weights pass no gradient to the values."""
    mask = tensor(
        ad_backend, np.array([False, True, False, False, False, True]).reshape(2, 1, 1, 3)
    )
    drop = (rng.random((2, 2, 3, 3)) < 0.7) / 0.7
    dropout = tensor(ad_backend, drop, grad_dtype(ad_backend))
    check_grads(
        ad_backend,
        lambda q, k, v: module.attention(
            q, k, v, mask, scale=0.4, mask_value=-1.0e4, dropout_mask=dropout
        ),
        *(rng.normal(size=(2, 2, 3, 4)) for _ in range(3)),
    )


def test_attention_context_only(ad_backend, rng):
    """The weights output unused: its node gets no gradient and adds nothing."""
    check_grads(
        ad_backend,
        lambda q, k, v: module.attention(q, k, v)[1],
        *(rng.normal(size=(1, 2, 3, 4)) for _ in range(3)),
    )
