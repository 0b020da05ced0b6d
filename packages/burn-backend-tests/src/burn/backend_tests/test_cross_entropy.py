"""A classifier's loss as one op (`module.cross_entropy`, the contract's `cross_entropy` and
`cross_entropy_backward`) against float64 numpy references written out here: the mean of
`-log_softmax(logits)[b, target_b]`, and its gradient `(softmax - one_hot) * grad / batch`;
shapes from one class to more than a GPU kernel takes, strided scores, every float dtype, the
composition it replaces, targets out of range and bad inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend
from burn.backend_tests.helpers import (
    TOLERANCE,
    assert_close,
    float_dtypes,
    ref,
    require_dtype,
    strided,
    tensor,
)
from burn.tensor import DType, Int, KindError, OutOfRangeError, ShapeError, module

_LOW_PRECISION = {DType.F16: 1e-2, DType.BF16: 5e-2}
# (batch, classes): one class, one row, the guide's, and more classes than Wgpu's kernels take.
SHAPES = [(5, 1), (1, 7), (64, 10), (6, 1500)]


def _tol(dtype: DType) -> float:
    return _LOW_PRECISION.get(dtype, max(TOLERANCE[dtype], 1e-10 if dtype is DType.F64 else 2e-5))


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _loss(x: np.ndarray, t: np.ndarray) -> float:
    return float(-_log_softmax(x)[np.arange(len(t)), t].mean())


def _loss_grad(x: np.ndarray, t: np.ndarray, g: float) -> np.ndarray:
    one_hot = np.zeros_like(x)
    one_hot[np.arange(len(t)), t] = 1.0
    return (np.exp(_log_softmax(x)) - one_hot) * g / len(t)


def _targets(backend, rng, batch: int, classes: int):
    values = rng.integers(0, classes, size=batch)
    return tensor(backend, values, kind=Int), values


def _case(backend, rng, dtype, shape):
    """Scores of `shape` in `dtype` (skipped where the backend lacks it), and targets as a
    tensor and as numpy values."""
    require_dtype(backend, dtype)
    logits = tensor(backend, rng.normal(scale=3.0, size=shape), dtype)
    return (logits, *_targets(backend, rng, *shape))


@float_dtypes
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cross_entropy(backend, rng, dtype, shape):
    logits, targets, t = _case(backend, rng, dtype, shape)
    got = module.cross_entropy(logits, targets)
    assert got.dims() == [1] and got.dtype == dtype
    assert_close(got, np.array([_loss(ref(logits), t)]), tol=_tol(dtype))


@float_dtypes
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cross_entropy_backward_op(backend, rng, dtype, shape):
    logits, targets, t = _case(backend, rng, dtype, shape)
    grad = tensor(backend, [0.7], dtype)
    got = backend.cross_entropy_backward(logits.primitive, targets.primitive, grad.primitive)
    got = logits._new(got)
    assert got.dims() == list(shape) and got.dtype == dtype
    assert_close(got, _loss_grad(ref(logits), t, float(ref(grad)[0])), tol=_tol(dtype))


def test_cross_entropy_takes_strided_scores_and_extreme_values(backend, rng):
    values = rng.normal(size=(9, 12))
    values[0, 3], values[1] = 80.0, -80.0  # one class far ahead; a row of equal scores
    logits = strided(backend, values)
    targets, t = _targets(backend, rng, 9, 12)
    assert_close(module.cross_entropy(logits, targets), np.array([_loss(ref(logits), t)]))
    grad = backend.cross_entropy_backward(
        logits.primitive, targets.primitive, tensor(backend, [1.0]).primitive
    )
    assert_close(logits._new(grad), _loss_grad(ref(logits), t, 1.0))


def test_cross_entropy_is_the_composition(backend, rng):
    """A backend's own kernels agree with the contract's default composition."""
    logits = tensor(backend, rng.normal(size=(64, 10)))
    targets, _ = _targets(backend, rng, 64, 10)
    grad = tensor(backend, [1.5])
    args = (logits.primitive, targets.primitive)
    assert_close(
        logits._new(backend.cross_entropy(*args)),
        ref(logits._new(Backend.cross_entropy(backend, *args))),
    )
    assert_close(
        logits._new(backend.cross_entropy_backward(*args, grad.primitive)),
        ref(logits._new(Backend.cross_entropy_backward(backend, *args, grad.primitive))),
    )


def test_cross_entropy_refuses_targets_out_of_range(backend):
    logits = tensor(backend, np.zeros((2, 3)))
    with pytest.raises(OutOfRangeError):
        module.cross_entropy(logits, tensor(backend, [0, 3], kind=Int)).to_data()
    with pytest.raises(OutOfRangeError):
        module.cross_entropy(logits, tensor(backend, [-1, 0], kind=Int)).to_data()


def test_cross_entropy_checks_its_inputs(backend):
    logits = tensor(backend, np.zeros((2, 3)))
    targets = tensor(backend, [0, 1], kind=Int)
    with pytest.raises(KindError, match="cross_entropy: targets must be an Int tensor"):
        module.cross_entropy(logits, tensor(backend, [0.0, 1.0]))
    with pytest.raises(KindError, match="cross_entropy: logits must be a Float tensor"):
        module.cross_entropy(targets, targets)
    with pytest.raises(ShapeError, match=r"expected logits \[batch, classes\]"):
        module.cross_entropy(logits, tensor(backend, [0, 1, 2], kind=Int))
    with pytest.raises(ShapeError, match=r"expected logits \[batch, classes\]"):
        module.cross_entropy(tensor(backend, np.zeros(3)), targets)
    with pytest.raises(ShapeError, match="have no classes"):
        module.cross_entropy(tensor(backend, np.zeros((2, 0))), targets)
