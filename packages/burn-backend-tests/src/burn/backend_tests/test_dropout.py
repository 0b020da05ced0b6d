"""Dropout as one op (`module.dropout`, the contract's `dropout`): every element is either
dropped or scaled by `1 / (1 - prob)`, about `prob` of them dropped, the same bits as the
composition it replaces (a Bernoulli draw, a scale, a product) after the same seed, for
contiguous and strided inputs; the backend op's mask is what the output was multiplied by.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    TOLERANCE,
    float_dtypes,
    ref,
    require_dtype,
    strided,
    tensor,
)
from burn.tensor import Distribution, KindError, Tensor, UsageError, module

SHAPE = (200, 100)


def _composed(x: Tensor, prob: float) -> Tensor:
    """Dropout as `burn.nn.Dropout` wrote it before it became one op."""
    keep = 1.0 - prob
    mask = Tensor.random(x.dims(), Distribution.Bernoulli(keep), x.device(), x.dtype)
    return x * (mask * (1.0 / keep))


@float_dtypes
def test_dropout_drops_about_prob_and_scales_the_rest(backend, rng, dtype):
    require_dtype(backend, dtype)
    x = tensor(backend, rng.uniform(0.5, 2.0, SHAPE), dtype)
    backend.seed(11)
    out = ref(module.dropout(x, 0.25))
    kept = out != 0
    assert abs(1.0 - kept.mean() - 0.25) < 0.02
    tol = max(TOLERANCE[dtype], 1e-6)
    np.testing.assert_allclose(out[kept], ref(x)[kept] / 0.75, rtol=tol)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("prob", [0.1, 0.5, 0.9])
def test_dropout_is_the_composition_bit_for_bit(backend, rng, layout, prob):
    make = tensor if layout == "contiguous" else strided
    x = make(backend, rng.normal(size=(3, 70, 33)))
    backend.seed(5)
    got = module.dropout(x, prob)
    backend.seed(5)
    want = _composed(x, prob)
    np.testing.assert_array_equal(ref(got), ref(want))


def test_dropout_mask_is_what_the_output_was_multiplied_by(backend, rng):
    x = tensor(backend, rng.normal(size=(4, 50)))
    out, mask = (x._new(p) for p in backend.dropout(x.primitive, 0.4))
    scale = float(np.asarray(1 / 0.6).astype(x.dtype.numpy))  # in the tensor's dtype
    assert set(np.unique(ref(mask)).tolist()) <= {0.0, scale}
    np.testing.assert_array_equal(ref(out), ref(x * mask))  # the backend's own product


def test_dropout_repeats_after_seed_and_moves_on_without(backend, rng):
    x = tensor(backend, rng.uniform(1.0, 2.0, SHAPE))
    backend.seed(3)
    first = ref(module.dropout(x, 0.5))
    second = ref(module.dropout(x, 0.5))
    backend.seed(3)
    np.testing.assert_array_equal(ref(module.dropout(x, 0.5)), first)
    assert not np.array_equal(first, second)


def test_dropout_of_nothing_and_of_everything(backend, rng):
    x = tensor(backend, rng.normal(size=(6, 7)))
    np.testing.assert_array_equal(ref(module.dropout(x, 0.0)), ref(x))
    np.testing.assert_array_equal(ref(module.dropout(x, 1.0)), np.zeros((6, 7)))


def test_dropout_checks_its_inputs(backend):
    x = tensor(backend, np.ones((2, 3)))
    for prob in (-0.1, 1.5, "0.5", True, None):
        with pytest.raises(UsageError, match="dropout: prob must be a number in"):
            module.dropout(x, prob)  # type: ignore[arg-type]
    with pytest.raises(KindError, match="dropout: input must be a Float tensor"):
        module.dropout(tensor(backend, np.ones((2, 3), np.int64)), 0.5)
