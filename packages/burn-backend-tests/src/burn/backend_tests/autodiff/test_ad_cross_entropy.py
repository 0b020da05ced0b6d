"""The gradient of `module.cross_entropy` for its scores, against central differences, for
contiguous and strided scores (the targets carry no gradient)."""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor
from burn.tensor import Int, module


@pytest.mark.parametrize("strided_inputs", [False, True])
def test_should_diff_cross_entropy(ad_backend, rng, strided_inputs):
    targets = tensor(ad_backend, [2, 0, 3, 3, 1], kind=Int)
    (grad,) = check_grads(
        ad_backend,
        lambda logits: module.cross_entropy(logits, targets),
        rng.normal(size=(5, 4)),
        strided_inputs=strided_inputs,
    )
    np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-6)  # softmax - one_hot per row
