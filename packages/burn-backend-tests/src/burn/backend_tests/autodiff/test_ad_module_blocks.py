"""Gradients of the public module building blocks (im2col, col2im, resample and its adjoint).

Backends may override these blocks alone; the decorator then differentiates them as one node
each, with the adjoint block as the rule. Checked against finite differences.
"""

import numpy as np
from burn.backend_tests.autodiff.gradcheck import check_grads
from burn.tensor import Tensor
from burn.tensor.kind import Float

GEOMETRY = ((2, 2), (2, 1), (1, 1), (1, 0))  # kernel, stride, dilation, padding


def _call(backend, op, x, *args):
    return Tensor._make(backend, getattr(backend, op)(x.primitive, *args), Float)


def test_im2col_and_col2im(ad_backend, rng):
    out = (2, 3)  # a [5, 4] input under a 2x2 kernel, stride (2, 1), padding (1, 0)
    check_grads(
        ad_backend,
        lambda x: _call(ad_backend, "im2col", x, *GEOMETRY, out),
        rng.normal(size=(1, 2, 5, 4)),
    )
    check_grads(
        ad_backend,
        lambda c: _call(ad_backend, "col2im", c, *GEOMETRY, (5, 4)),
        rng.normal(size=(1, 2, 4, 2, 3)),
    )


def test_resample_and_its_adjoint(ad_backend, rng):
    index = np.array([[0, 1, 1, 3, 4], [1, 2, 2, 4, 4]])
    weight = np.array([[0.5, 1.0, 0.25, 0.75, 1.0], [0.5, 0.0, 0.75, 0.25, 0.0]])
    check_grads(
        ad_backend,
        lambda x: _call(ad_backend, "resample", x, 2, index, weight),
        rng.normal(size=(1, 2, 5, 3)),
    )
    check_grads(
        ad_backend,
        lambda g: _call(ad_backend, "resample_backward", g, 2, 5, index, weight),
        rng.normal(size=(1, 2, 5, 3)),
    )
