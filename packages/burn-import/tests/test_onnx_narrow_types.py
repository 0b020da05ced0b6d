"""Element types narrower than any burn computes in (float8, float4, the 8-bit exponent type,
int4, int2): held in float32 or int64, rounded as the type rounds by a cast, and handed back by
`burn.onnx.backend` in the ONNX type. The onnx node suite covers every cast between them; these
tests cover what it does not: weights of such types, the generated code, Wgpu, and refusals."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from burn.onnx import backend
from burn.onnx.errors import OnnxImportError
from burn.onnx.graph import held_array, load_graph, stored_dtype
from onnx import TensorProto, helper

F32 = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "narrow", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def _devices():
    return ["CPU", "GPU"] if backend.supports_device("GPU") else ["CPU"]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize(
    ("elem", "dtype"),
    [
        (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
        (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
        (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
    ],
)
def test_a_cast_to_a_narrow_float_rounds_and_saturates_as_the_type(device, elem, dtype):
    nodes = [
        helper.make_node("Cast", ["x"], ["narrow"], to=elem),
        helper.make_node("Cast", ["narrow"], ["back"], to=F32),
        helper.make_node("Mul", ["back", "x"], ["y"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, [6])],
        [
            helper.make_tensor_value_info("narrow", elem, [6]),
            helper.make_tensor_value_info("y", F32, [6]),
        ],
    )
    x = np.array([0.3, -1.7, 3.14159, 1e6, -1e6, 0.0], np.float32)
    rep = backend.prepare(model, device)
    assert "rt.narrow(" in rep.source
    narrow, y = rep.run([x])
    finite = float(ml_dtypes.finfo(dtype).max)
    expected = np.clip(x, -finite, finite).astype(dtype)  # saturating, as Cast's default
    assert narrow.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(narrow.astype(np.float32), expected.astype(np.float32))
    np.testing.assert_allclose(y, expected.astype(np.float32) * x, rtol=1e-6)


def test_weights_of_narrow_types_are_held_exactly():
    """A float8 weight and a packed int4 weight (values stored two to a word) dequantized."""
    w8 = np.array([1.0, 288.0, -0.1015625], np.float32)
    nodes = [
        helper.make_node("Cast", ["w8"], ["w8f"], to=F32),
        helper.make_node("Add", ["x", "w8f"], ["y"]),
        helper.make_node("DequantizeLinear", ["q4", "scale"], ["deq"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, [3])],
        [
            helper.make_tensor_value_info("y", F32, [3]),
            helper.make_tensor_value_info("deq", F32, [5]),
        ],
        [
            helper.make_tensor("w8", TensorProto.FLOAT8E4M3FN, [3], [1.0, 300.0, -0.1]),
            helper.make_tensor("q4", TensorProto.INT4, [5], [1, -2, 3, -8, 7]),
            helper.make_tensor("scale", F32, [], [0.5]),
        ],
    )
    graph = load_graph(model)
    assert graph.constants["w8"].dtype == np.float32
    np.testing.assert_array_equal(graph.constants["w8"], w8)
    np.testing.assert_array_equal(graph.constants["q4"], [1, -2, 3, -8, 7])
    y, deq = backend.prepare(model).run([np.zeros(3, np.float32)])
    np.testing.assert_array_equal(y, w8)
    np.testing.assert_array_equal(deq, [0.5, -1.0, 1.5, -4.0, 3.5])


def test_quantize_to_int4_clips_to_its_range():
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"])]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, [5])],
        [helper.make_tensor_value_info("q", TensorProto.INT4, [5])],
        [
            helper.make_tensor("scale", F32, [], [0.5]),
            helper.make_tensor("zero", TensorProto.INT4, [], [1]),
        ],
    )
    (q,) = backend.prepare(model).run([np.array([-100.0, -1.0, 0.25, 1.0, 100.0], np.float32)])
    assert q.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(q.astype(np.int64), [-8, -1, 1, 3, 7])


def test_held_and_stored_dtypes():
    e4m3 = np.array([1.0, -2.5], ml_dtypes.float8_e4m3fn)
    assert held_array(e4m3).dtype == np.float32
    assert held_array(np.array([3, -4], ml_dtypes.int4)).dtype == np.int64
    plain = np.array([1.0], np.float32)
    assert held_array(plain) is plain
    assert stored_dtype(TensorProto.UINT2) == np.dtype(ml_dtypes.uint2)
    assert stored_dtype(F32) == np.dtype(np.float32)


def test_a_packed_weight_with_the_wrong_count_is_refused():
    tensor = helper.make_tensor("q4", TensorProto.INT4, [5], [1, 2, 3, 4, 5])
    del tensor.int32_data[:]
    tensor.int32_data.extend([1, 2, 3, 4, 5, 6, 7])  # neither 5 values nor 3 packed words
    nodes = [helper.make_node("DequantizeLinear", ["q4", "scale"], ["y"])]
    model = _model(
        nodes,
        [],
        [helper.make_tensor_value_info("y", F32, [5])],
        [tensor, helper.make_tensor("scale", F32, [], [1.0])],
    )
    with pytest.raises(OnnxImportError, match="declares 5 values"):
        load_graph(model)


def test_raw_narrow_data_of_the_wrong_size_is_refused():
    tensor = helper.make_tensor("w8", TensorProto.FLOAT8E4M3FN, [1000], [0.0] * 1000)
    tensor.raw_data = bytes(10)  # 1,000 one-byte values declared, 10 bytes stored
    del tensor.int32_data[:]
    nodes = [helper.make_node("Cast", ["w8"], ["y"], to=F32)]
    model = _model(nodes, [], [helper.make_tensor_value_info("y", F32, [1000])], [tensor])
    with pytest.raises(OnnxImportError, match="1000 bytes"):
        load_graph(model)


def test_bitcast_of_a_narrow_type_is_refused():
    nodes = [helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN)]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])],
    )
    model.opset_import[0].version = 26
    with pytest.raises(OnnxImportError, match="does not compute in"):
        backend.prepare(model)
