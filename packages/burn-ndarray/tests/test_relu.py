"""NdArray's ReLU paths give what the plain numpy calls and the contract's composition give,
bit for bit: `max`/`min` against a constant (the ReLU itself) and ReLU's backward."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from burn.backend.ops.activation import ActivationOps
from burn.ndarray import elementwise
from burn.ndarray.backend import NdArrayBackend

SIZE = 3 * elementwise._CONSTANT_BLOCK + 123  # several blocks and a partial one


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _special(dtype, shape, seed) -> np.ndarray:
    """Random values with NaNs, infinities and both zeros sprinkled in."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16:
        flat = a.reshape(-1)
        for i, v in enumerate((np.nan, np.inf, -np.inf, 0.0, -0.0)):
            flat[i::97] = v
    return a


LAYOUTS = {
    "contiguous": lambda a: a,
    "permuted": lambda a: np.ascontiguousarray(a.transpose(1, 0, 2)).transpose(1, 0, 2),
    "reversed": lambda a: a[::-1],
    "strided": lambda a: np.repeat(a, 2, axis=2)[:, :, ::2],
    "broadcast": lambda a: np.broadcast_to(a[:1], a.shape),
}


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32, np.int64]
)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_max_min_against_a_constant_is_numpys_call(op, dtype, layout):
    a = LAYOUTS[layout](_special(dtype, (3, SIZE // 30, 10), seed=0))
    value = np.asarray(1.5).astype(dtype)
    got = elementwise.binary(op, a, value, np.dtype(dtype))
    want = elementwise.BINARY[op](a, value)
    assert got.dtype == np.dtype(dtype) and got.shape == a.shape
    np.testing.assert_array_equal(
        _bits(np.ascontiguousarray(got)), _bits(np.ascontiguousarray(want))
    )


def test_relu_on_a_large_array_is_numpys_maximum():
    x = _special(np.float32, (4, SIZE), seed=1)
    got = NdArrayBackend().relu(x)
    np.testing.assert_array_equal(_bits(got), _bits(np.maximum(x, np.float32(0))))


def _composition(output, grad):
    """The contract's default: `mask_where(grad, output <= 0, 0)`."""
    return ActivationOps.relu_backward(NdArrayBackend(), output, grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("out_layout", ["contiguous", "permuted", "reversed"])
@pytest.mark.parametrize("grad_layout", ["contiguous", "permuted", "strided"])
def test_relu_backward_is_the_composition_bit_for_bit(dtype, out_layout, grad_layout):
    # NaN outputs (from NaN inputs) keep their gradient, -0.0 and 0 clear it.
    output = LAYOUTS[out_layout](np.maximum(_special(dtype, (3, SIZE // 30, 10), seed=2), 0))
    grad = LAYOUTS[grad_layout](_special(dtype, (3, SIZE // 30, 10), seed=3))
    got = NdArrayBackend().relu_backward(output, grad)
    want = _composition(output, grad)
    assert got.dtype == np.dtype(dtype) and got.shape == grad.shape
    np.testing.assert_array_equal(
        _bits(np.ascontiguousarray(got)), _bits(np.ascontiguousarray(want))
    )


@pytest.mark.parametrize(
    ("dtype", "size"), [(np.float32, 10), (ml_dtypes.bfloat16, SIZE), (np.int32, SIZE)]
)
def test_relu_backward_small_or_other_dtypes_use_the_composition(dtype, size):
    output = np.maximum(_special(dtype, (size,), seed=4), np.asarray(0).astype(dtype))
    grad = _special(dtype, (size,), seed=5)
    got = NdArrayBackend().relu_backward(output, grad)
    np.testing.assert_array_equal(_bits(got), _bits(_composition(output, grad)))
