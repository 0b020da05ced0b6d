"""The gradients of `module.linear` (one node, the contract's three backward ops) against
central differences: every input tracked, with and without a bias, ranks 1 to 3, contiguous
and strided; and an untracked input gets no gradient."""

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.backend_tests.helpers import tensor
from burn.tensor import module


@pytest.mark.parametrize("lead", [(), (4,), (2, 3)], ids=str)
@pytest.mark.parametrize("strided_inputs", [False, True])
def test_should_diff_linear(ad_backend, rng, lead, strided_inputs):
    check_grads(
        ad_backend,
        module.linear,
        rng.normal(size=(*lead, 5)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(3,)),
        strided_inputs=strided_inputs,
    )


def test_should_diff_linear_without_bias(ad_backend, rng):
    check_grads(
        ad_backend,
        lambda x, w: module.linear(x, w),
        rng.normal(size=(2, 3, 4)),
        rng.normal(size=(4, 2)),
    )


def test_linear_untracked_input_gets_no_gradient(ad_backend, rng):
    x = tensor(ad_backend, rng.normal(size=(6, 4)))  # data: no gradient asked
    w = tensor(ad_backend, rng.normal(size=(4, 2))).require_grad()
    b = tensor(ad_backend, rng.normal(size=(2,))).require_grad()
    grads = module.linear(x, w, b).sum().backward()
    assert x.grad(grads) is None
    np.testing.assert_allclose(
        w.grad(grads).numpy(), np.repeat(x.numpy().sum(0)[:, None], 2, 1), rtol=1e-5
    )
    np.testing.assert_allclose(b.grad(grads).numpy(), [6.0, 6.0])
