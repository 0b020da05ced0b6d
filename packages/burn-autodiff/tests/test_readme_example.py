"""The first example a user meets: gradients of a small expression, exactly as documented."""

import numpy as np


def test_gradient_example_runs_verbatim():
    from burn.backend import Autodiff, NdArray
    from burn.tensor import Distribution, Tensor

    B = Autodiff(NdArray)
    device = B.device()
    x = Tensor[B, 2].random([4, 4], Distribution.Normal(0.0, 1.0), device).require_grad()
    y = (x.matmul(x.transpose()) + x.exp()).sum()
    grads = y.backward()
    gx = x.grad(grads)
    assert gx.dims() == [4, 4] and not gx.is_require_grad()

    # d/dx sum(x x^T + exp(x)) = 2 * (column sums of x, on every row) + exp(x)
    values = x.inner().to_data().array.astype(np.float64)
    expected = 2 * values.sum(axis=0, keepdims=True).repeat(4, axis=0) + np.exp(values)
    np.testing.assert_allclose(gx.to_data().array, expected, rtol=1e-5, atol=1e-5)
