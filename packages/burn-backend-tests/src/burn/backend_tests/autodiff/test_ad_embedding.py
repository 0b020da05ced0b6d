"""Gradients of embedding and unfold4d (Burn's backward.rs, unfold.rs)."""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor
from burn.tensor import module


def test_embedding_backward(ad_backend, rng):
    """Repeated indices accumulate into the same row; unused rows get zero."""
    idx = tensor(ad_backend, np.array([[0, 2, 2], [2, 1, 0]]))
    (g,) = check_grads(ad_backend, lambda w: module.embedding(w, idx), rng.normal(size=(4, 3)))
    np.testing.assert_array_equal(g[3], 0.0)


def test_unfold4d(ad_backend, rng):
    opts = module.UnfoldOptions(stride=(1, 2), padding=1, dilation=1)
    check_grads(
        ad_backend, lambda x: module.unfold4d(x, (2, 2), opts), rng.normal(size=(1, 2, 3, 4))
    )
    check_grads(
        ad_backend,
        lambda x: module.unfold4d(x, 2),
        rng.normal(size=(1, 1, 3, 3)),
        strided_inputs=True,
    )
