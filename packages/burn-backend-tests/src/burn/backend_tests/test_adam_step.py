"""Adam's update as one op (`float_adam_step`, through `burn.tensor.optim.adam_step`), against
a float64 numpy reference written out below: the first step (moments from zero), later steps
fed the moments the op returned, Adam's L2 weight decay and AdamW's decoupled one.

The update of many parameters at once (`float_adam_step_many`, through `adam_step_many`) must
give each parameter, to the bit, what the one-parameter op gives it: for a model's worth of
parameters of different sizes (more than a GPU launch takes at once), strided and broadcast
views among them, and for every weight decay.

Each step's reference is computed from what the op's inputs actually hold (`ref`), so a
low-precision dtype is judged on the step, not on the rounding of its inputs. The op must
return new tensors and leave its inputs alone: an optimizer's old state may still be referenced
(a checkpoint being written, a second optimizer).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend_tests.helpers import (
    TOLERANCE,
    assert_close,
    float_dtypes,
    ref,
    tensor,
)
from burn.tensor import DType, DTypeError, KindError, ShapeError, UsageError
from burn.tensor.optim import adam_step, adam_step_many

_LOW_PRECISION = {DType.F16: 1e-2, DType.BF16: 6e-2}
BETAS = (0.9, 0.999)
EPSILON = 1e-5


def _tol(dtype: DType) -> float:
    # A step is ten chained float32 roundings; the update divides by sqrt(v) + epsilon.
    return _LOW_PRECISION.get(dtype, max(TOLERANCE[dtype], 1e-10 if dtype is DType.F64 else 2e-5))


def _reference(p, g, m, v, time, lr, weight_decay=0.0, decoupled=False):
    """Adam in float64 (Kingma and Ba; AdamW's decay as Loshchilov and Hutter, PyTorch's)."""
    b1, b2 = BETAS
    if weight_decay and not decoupled:
        g = g + weight_decay * p
    m = (1 - b1) * g if m is None else b1 * m + (1 - b1) * g
    v = (1 - b2) * g * g if v is None else b2 * v + (1 - b2) * g * g
    delta = (m / (1 - b1**time)) / (np.sqrt(v / (1 - b2**time)) + EPSILON)
    if decoupled:
        p = p * (1 - lr * weight_decay)
    return p - lr * delta, m, v


def _steps(backend, rng, dtype, shape, steps, lr, weight_decay=0.0, decoupled=False):
    param = tensor(backend, rng.normal(size=shape), dtype)
    m1 = m2 = None
    tol = _tol(dtype)
    for time in range(1, steps + 1):
        grad = tensor(backend, rng.normal(size=shape), dtype)
        want = _reference(
            ref(param),
            ref(grad),
            None if m1 is None else ref(m1),
            None if m2 is None else ref(m2),
            time,
            lr,
            weight_decay,
            decoupled,
        )
        param, m1, m2 = adam_step(
            param, grad, m1, m2, time, lr, *BETAS, EPSILON, weight_decay, decoupled
        )
        for got, expected in zip((param, m1, m2), want, strict=True):
            assert got.dtype == dtype
            assert_close(got, expected, tol=tol)


@float_dtypes
def test_adam_step_first_step(backend, rng, dtype):
    _steps(backend, rng, dtype, (3, 5), 1, lr=0.01)


@float_dtypes
def test_adam_step_later_steps(backend, rng, dtype):
    _steps(backend, rng, dtype, (4, 3, 2), 4, lr=0.01)


def test_adam_step_many_elements(backend, rng):
    """More elements than a kernel's block (NdArray works in blocks of 65536)."""
    _steps(backend, rng, backend.capabilities.float_dtype, (70_001,), 2, lr=0.001)


@float_dtypes
def test_adam_step_weight_decay(backend, rng, dtype):
    """Adam's L2 penalty: `weight_decay * param` added to the gradient."""
    _steps(backend, rng, dtype, (2, 7), 3, lr=0.01, weight_decay=0.1)


@float_dtypes
def test_adamw_step_decoupled_weight_decay(backend, rng, dtype):
    """AdamW: the parameter shrinks by `lr * weight_decay` of itself; the moments see `g`."""
    _steps(backend, rng, dtype, (2, 7), 3, lr=0.01, weight_decay=0.1, decoupled=True)


def test_adam_step_leaves_its_inputs_alone(backend, rng):
    values = [rng.normal(size=(3, 4)) for _ in range(4)]
    values[3] = np.abs(values[3])  # a second moment is never negative
    param, grad, m1, m2 = (tensor(backend, v) for v in values)
    before = [ref(t) for t in (param, grad, m1, m2)]
    out = adam_step(param, grad, m1, m2, 3, 0.1, *BETAS, EPSILON, 0.01, True)
    for t, was in zip((param, grad, m1, m2), before, strict=True):
        np.testing.assert_array_equal(ref(t), was)
    assert not np.array_equal(ref(out[0]), before[0])


def test_adam_step_checks_its_inputs(backend):
    param = tensor(backend, np.ones((2, 3)))
    grad = tensor(backend, np.ones((2, 3)))
    with pytest.raises(ShapeError, match=r"adam_step: grad must be \[2, 3\]"):
        adam_step(param, tensor(backend, np.ones((3, 2))), None, None, 1, 0.1)
    with pytest.raises(KindError, match="adam_step: moment_1 must be a Float tensor"):
        adam_step(param, grad, tensor(backend, np.ones((2, 3), np.int64)), grad, 2, 0.1)
    with pytest.raises(UsageError, match="both None"):
        adam_step(param, grad, grad, None, 2, 0.1)
    with pytest.raises(UsageError, match="time must be an int counted from 1"):
        adam_step(param, grad, None, None, 0, 0.1)
    with pytest.raises(UsageError, match="step 2 needs the moments of step 1"):
        adam_step(param, grad, None, None, 2, 0.1)
    other = next(
        (
            d
            for d in (DType.F64, DType.F32)
            if d != param.dtype and backend.capabilities.supports(d)
        ),
        None,
    )
    if other is not None:
        with pytest.raises(DTypeError, match="adam_step: grad is"):
            adam_step(param, tensor(backend, np.ones((2, 3)), other), None, None, 1, 0.1)


# A model's parameters: sizes from 1 to past a kernel's block, enough of them that a GPU
# backend splits them into several launches (Wgpu takes at most 16 at once).
_MODEL = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (300, 70), (70,), (70, 10), (10,), (1,)]
_MANY = _MODEL * 2 + [(70_001,)]


def _assert_same(got, want):
    assert got.dtype == want.dtype and got.dims() == want.dims()
    np.testing.assert_array_equal(ref(got), ref(want))


@pytest.mark.parametrize(
    "weight_decay, decoupled", [(0.0, False), (0.1, False), (0.1, True)], ids=["plain", "l2", "w"]
)
def test_adam_step_many_is_adam_step_for_each(backend, rng, weight_decay, decoupled):
    """Three steps of 19 parameters: each result is bit for bit the one-parameter op's, and
    against the float64 reference."""
    dtype = backend.capabilities.float_dtype
    params = [tensor(backend, rng.normal(size=s), dtype) for s in _MANY]
    alone = [(p, None, None) for p in params]
    m1s = m2s = None
    for time in range(1, 4):
        grads = [tensor(backend, rng.normal(size=s), dtype) for s in _MANY]
        args = (time, 0.01, *BETAS, EPSILON, weight_decay, decoupled)
        params, m1s, m2s = adam_step_many(params, grads, m1s, m2s, *args)
        alone = [
            adam_step(p, g, m1, m2, *args) for (p, m1, m2), g in zip(alone, grads, strict=True)
        ]
        for k, want in enumerate(alone):
            for got, expected in zip((params[k], m1s[k], m2s[k]), want, strict=True):
                _assert_same(got, expected)
    want = _reference(ref(alone[0][0]), ref(grads[0]), ref(m1s[0]), ref(m2s[0]), 4, 0.01)
    got = adam_step_many(params[:1], grads[:1], m1s[:1], m2s[:1], 4, 0.01, *BETAS, EPSILON)
    assert_close(got[0][0], want[0], tol=_tol(dtype))


def test_adam_step_many_takes_views(backend, rng):
    """Parameters and moments that are views (a transposed matrix, a broadcast row, a slice)
    next to plain ones: each is updated as the one-parameter op updates it."""
    dtype = backend.capabilities.float_dtype
    base = tensor(backend, rng.normal(size=(6, 4)), dtype)
    params = [
        base.transpose(),
        tensor(backend, rng.normal(size=(1, 4)), dtype).expand([3, 4]),
        base.slice([slice(1, 4)]),
        tensor(backend, rng.normal(size=(4, 6)), dtype),
    ]
    grads = [tensor(backend, rng.normal(size=p.dims()), dtype) for p in params]
    m1s = [tensor(backend, np.abs(rng.normal(size=p.dims())), dtype) for p in params]
    m2s = [m.transpose().transpose() * 0.5 for m in m1s]
    args = (5, 0.01, *BETAS, EPSILON)
    got = adam_step_many(params, grads, m1s, m2s, *args)
    for k in range(len(params)):
        want = adam_step(params[k], grads[k], m1s[k], m2s[k], *args)
        for j in range(3):
            _assert_same(got[j][k], want[j])


def test_adam_step_many_of_nothing_and_of_one(backend, rng):
    assert adam_step_many([], [], None, None, 1, 0.1) == ([], [], [])
    param = tensor(backend, rng.normal(size=(3,)))
    grad = tensor(backend, rng.normal(size=(3,)))
    got = adam_step_many([param], [grad], None, None, 1, 0.1)
    want = adam_step(param, grad, None, None, 1, 0.1)
    for j in range(3):
        _assert_same(got[j][0], want[j])


def test_adam_step_many_checks_its_inputs(backend):
    param = tensor(backend, np.ones((2, 3)))
    grad = tensor(backend, np.ones((2, 3)))
    with pytest.raises(UsageError, match="adam_step_many: 2 tensors but 1 grads"):
        adam_step_many([param, param], [grad], None, None, 1, 0.1)
    with pytest.raises(ShapeError, match=r"adam_step_many: grad\[1\] must be \[2, 3\]"):
        adam_step_many([param, param], [grad, tensor(backend, np.ones((3, 2)))], None, None, 1, 0.1)
    with pytest.raises(KindError, match=r"adam_step_many: moment_1\[0\] must be a Float"):
        adam_step_many(
            [param], [grad], [tensor(backend, np.ones((2, 3), np.int64))], [grad], 2, 0.1
        )
    with pytest.raises(UsageError, match="both None"):
        adam_step_many([param], [grad], [grad], None, 2, 0.1)
    with pytest.raises(UsageError, match="step 2 needs the moments of step 1"):
        adam_step_many([param], [grad], None, None, 2, 0.1)
    with pytest.raises(KindError, match=r"adam_step_many: tensor\[1\] must be a Tensor"):
        adam_step_many([param, "param"], [grad, grad], None, None, 1, 0.1)
