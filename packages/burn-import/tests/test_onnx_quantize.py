"""DynamicQuantizeLinear and QuantizeLinear (`burn.onnx.runtime`) against onnx's reference
implementation, element for element, on inputs full of rounding ties: the spec computes in
float32, and a float64 quotient sends a value near a tie to the other integer."""

from __future__ import annotations

import numpy as np
import pytest
from burn.ndarray import NdArray
from burn.onnx import runtime as rt
from burn.tensor import Tensor
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


def _reference(op: str, inputs: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8}
    node = helper.make_node(op, list(inputs), outputs)
    graph = helper.make_graph(
        [node],
        "q",
        [helper.make_tensor_value_info(k, types[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.UNDEFINED, None) for k in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, inputs)


def _tensor(a: np.ndarray) -> Tensor:
    dtype = {np.dtype(np.float32): "f32", np.dtype(np.uint8): "u8"}[a.dtype]
    return Tensor.from_data(a, device=NdArray.device(), dtype=dtype)


def _ties(seed: int) -> np.ndarray:
    """Values on and next to the half-integers of a scale, and the range's own ends."""
    rng = np.random.default_rng(seed)
    halves = (rng.integers(-100, 150, 200) + 0.5).astype(np.float32) * np.float32(0.0371)
    near = np.nextafter(halves, (np.inf * rng.choice([-1, 1], 200)).astype(np.float32))
    return np.concatenate([halves, near, rng.normal(size=100).astype(np.float32) * 4])


@pytest.mark.parametrize("seed", range(4))
def test_dynamic_quantize_linear_matches_the_reference(seed):
    x = _ties(seed)
    y, scale, zero = (t.to_data().array for t in rt.dynamic_quantize_linear(_tensor(x)))
    want = _reference("DynamicQuantizeLinear", {"x": x}, ["y", "scale", "zero"])
    np.testing.assert_array_equal(y, want[0])
    assert scale.item() == want[1].item() and zero.item() == want[2].item()


def test_dynamic_quantize_linear_of_zeros_has_scale_one():
    x = np.zeros(5, np.float32)
    y, scale, zero = (t.to_data().array for t in rt.dynamic_quantize_linear(_tensor(x)))
    assert y.tolist() == [0] * 5 and scale.item() == 1.0 and zero.item() == 0


@pytest.mark.parametrize("seed", range(4))
def test_quantize_linear_divides_in_float32(seed):
    x = _ties(seed)
    scale = np.array(0.0371, np.float32)
    zero = np.array(97, np.uint8)
    got = rt.quantize_linear(_tensor(x), _tensor(scale.reshape(1)), _tensor(zero.reshape(1)))
    want = _reference("QuantizeLinear", {"x": x, "s": scale, "z": zero}, ["y"])[0]
    np.testing.assert_array_equal(got.to_data().array, want)
