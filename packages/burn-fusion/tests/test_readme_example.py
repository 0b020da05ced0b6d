"""The README's example: gradients through Fusion(NdArray), checked against numpy."""

import numpy as np


def test_readme_example_runs_verbatim():
    from burn.backend import Autodiff, Fusion, NdArray
    from burn.tensor import Tensor

    B = Autodiff(Fusion(NdArray))
    x = Tensor[B, 1].from_data([1.0, 2.0, 3.0], B.device()).require_grad()
    loss = ((x * 2.0).exp() + 1.0).sum()
    grads = loss.backward()
    gx = x.grad(grads)
    np.testing.assert_allclose(gx.to_data().array, 2 * np.exp([2.0, 4.0, 6.0]), rtol=1e-6)
