"""The gradient of dropout (`module.dropout`): the output's gradient times the mask the
forward pass drew, for contiguous and strided inputs."""

import numpy as np
import pytest
from burn.backend_tests.helpers import ref, strided, tensor
from burn.tensor import module


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_should_diff_dropout(ad_backend, rng, layout):
    make = tensor if layout == "contiguous" else strided
    x = make(ad_backend, rng.uniform(0.5, 2.0, (8, 30))).require_grad()
    weights = tensor(ad_backend, rng.normal(size=(8, 30)))
    ad_backend.seed(9)
    out = module.dropout(x, 0.3)
    grads = (out * weights).sum().backward()
    mask = ref(out) / ref(x)  # 0 or 1 / 0.7 per element
    assert 0 < np.count_nonzero(mask) < mask.size
    np.testing.assert_allclose(ref(x.grad(grads)), ref(weights) * mask, rtol=1e-5, atol=1e-6)
