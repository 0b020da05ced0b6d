"""NdArray's Adam kernel gives the contract's composition bit for bit.

The kernel replays the composition's float ops in the same order into preallocated blocks, so
switching to it changed no number of any training run: checked here for float32 and float64,
several steps, both weight decays, sizes across block boundaries and non-contiguous inputs.
Other dtypes (and mixed ones) go to the composition itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend
from burn.ndarray import NdArray
from burn.ndarray.fused import _ADAM_BLOCK

SIZES = [(3,), (8, 1, 3, 3), (2 * _ADAM_BLOCK + 5,)]
DECAYS = [(0.0, False), (0.01, False), (0.01, True)]


def _run(step, shape, dtype, weight_decay, decoupled, transpose=False):
    rng = np.random.default_rng(7)
    param = rng.normal(size=shape).astype(dtype)
    m1 = m2 = None
    history = []
    for time in range(1, 4):
        grad = rng.normal(size=shape).astype(dtype)
        if transpose:  # a non-contiguous gradient of the same shape
            grad = np.ascontiguousarray(grad.T).T
        param, m1, m2 = step(
            param, grad, m1, m2, time, 1e-3, 0.9, 0.999, 1e-5, weight_decay, decoupled
        )
        history.append((param, m1, m2))
    return history


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SIZES, ids=str)
@pytest.mark.parametrize(("weight_decay", "decoupled"), DECAYS)
def test_kernel_matches_the_composition_bit_for_bit(dtype, shape, weight_decay, decoupled):
    def composition(*args):
        return Backend.float_adam_step(NdArray, *args)

    kernel = _run(NdArray.float_adam_step, shape, dtype, weight_decay, decoupled)
    reference = _run(composition, shape, dtype, weight_decay, decoupled)
    for got, want in zip(kernel, reference, strict=True):
        for a, b in zip(got, want, strict=True):
            assert a.dtype == dtype and a.flags.c_contiguous
            np.testing.assert_array_equal(a, b)


def test_non_contiguous_inputs():
    def composition(*args):
        return Backend.float_adam_step(NdArray, *args)

    shape = (300, 7)
    kernel = _run(NdArray.float_adam_step, shape, np.float32, 0.0, False, transpose=True)
    want = _run(composition, shape, np.float32, 0.0, False, transpose=True)
    for got, expected in zip(kernel, want, strict=True):
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)


def test_inputs_are_not_written():
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(100,)).astype(np.float32) for _ in range(4)]
    arrays[3] = np.abs(arrays[3])
    copies = [a.copy() for a in arrays]
    out = NdArray.float_adam_step(*arrays, 5, 0.1, 0.9, 0.999, 1e-5, 0.1, True)
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)
    assert not any(np.shares_memory(o, a) for o in out for a in arrays)


def test_half_precision_runs_the_composition():
    g = np.full((4,), 0.5, np.float16)
    p = np.ones((4,), np.float16)
    got = NdArray.float_adam_step(p, g, None, None, 1, 0.1, 0.9, 0.999, 1e-5)
    want = Backend.float_adam_step(NdArray, p, g, None, None, 1, 0.1, 0.9, 0.999, 1e-5)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == np.float16
        np.testing.assert_array_equal(a, b)
