"""ONNX string values: numpy arrays of str on the host in the generated code. The onnx node
suite covers each string op on its own; these tests cover string constants, strings meeting
tensors on the model's device (NdArray and Wgpu), LabelEncoder's other key and value types,
and the refusals: a string reaching an op that computes only on tensors, a bad pattern."""

from __future__ import annotations

import re

import numpy as np
import pytest
from burn.onnx import backend
from burn.onnx.errors import OnnxImportError
from onnx import TensorProto, helper

STRING = TensorProto.STRING
F32 = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), ml=False):
    graph = helper.make_graph(nodes, "strings", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", 21)] + [helper.make_opsetid("ai.onnx.ml", 4)] * ml
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    return model


def _devices():
    return ["CPU", "GPU"] if backend.supports_device("GPU") else ["CPU"]


@pytest.mark.parametrize("device", _devices())
def test_strings_decide_which_numbers_pass(device):
    """Names matched against a pattern and compared with a constant choose between `x` and
    `-x` on the model's device; a constant suffix is concatenated on the host."""
    nodes = [
        helper.make_node("Neg", ["x"], ["minus"]),
        helper.make_node("RegexFullMatch", ["name"], ["is_id"], pattern=r"id_\d+"),
        helper.make_node("Where", ["is_id", "x", "minus"], ["picked"]),
        helper.make_node("Equal", ["name", "special"], ["is_special"]),
        helper.make_node("Cast", ["is_special"], ["special_f"], to=F32),
        helper.make_node("Add", ["picked", "special_f"], ["y"]),
        helper.make_node("StringConcat", ["name", "suffix"], ["tagged"]),
    ]
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("name", STRING, [4]),
            helper.make_tensor_value_info("x", F32, [4]),
        ],
        [
            helper.make_tensor_value_info("y", F32, [4]),
            helper.make_tensor_value_info("tagged", STRING, [4]),
        ],
        [
            helper.make_tensor("special", STRING, [], [b"total"]),
            helper.make_tensor("suffix", STRING, [1], [b"!"]),
        ],
    )
    rep = backend.prepare(model, device)
    assert "rt.strings(" in rep.source
    names = np.array(["id_7", "id_", "total", "id_12"], dtype=object)
    y, tagged = rep.run([names, np.array([1.0, 2.0, 3.0, 4.0], np.float32)])
    np.testing.assert_array_equal(y, [1.0, -2.0, -2.0, 4.0])
    assert tagged.tolist() == ["id_7!", "id_!", "total!", "id_12!"]


def test_label_encoder_with_int_and_float_keys():
    nodes = [
        helper.make_node(
            "LabelEncoder",
            ["codes"],
            ["labels"],
            domain="ai.onnx.ml",
            keys_int64s=[1, 2, 3],
            values_strings=["one", "two", "three"],
            default_string="many",
        ),
        helper.make_node(
            "LabelEncoder",
            ["scores"],
            ["ranks"],
            domain="ai.onnx.ml",
            keys_floats=[0.5, float("nan")],
            values_int64s=[10, 20],
        ),
    ]
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("codes", TensorProto.INT64, [4]),
            helper.make_tensor_value_info("scores", F32, [3]),
        ],
        [
            helper.make_tensor_value_info("labels", STRING, [4]),
            helper.make_tensor_value_info("ranks", TensorProto.INT64, [3]),
        ],
        ml=True,
    )
    rep = backend.prepare(model)
    codes = np.array([3, 1, 9, 2], np.int64)
    labels, ranks = rep.run([codes, np.array([0.5, np.nan, 7.0], np.float32)])
    assert labels.tolist() == ["three", "one", "many", "two"]
    np.testing.assert_array_equal(ranks, [10, 20, -1])  # -1: ONNX's default_int64


def test_split_then_normalize_a_sentence():
    nodes = [
        helper.make_node("StringSplit", ["text"], ["words", "counts"]),
        helper.make_node(
            "StringNormalizer",
            ["text"],
            ["clean"],
            case_change_action="UPPER",
            stopwords=["THE"],
            is_case_sensitive=0,
        ),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("text", STRING, [3])],
        [
            helper.make_tensor_value_info("words", STRING, [3, None]),
            helper.make_tensor_value_info("counts", TensorProto.INT64, [3]),
            helper.make_tensor_value_info("clean", STRING, [None]),
        ],
    )
    words, counts, clean = backend.prepare(model).run(
        [np.array(["the quick  fox", "", "jumps"], dtype=object)]
    )
    assert words.tolist() == [["the", "quick", "fox"], ["", "", ""], ["jumps", "", ""]]
    np.testing.assert_array_equal(counts, [3, 0, 1])
    assert clean.tolist() == ["THE QUICK  FOX", "", "JUMPS"]


def test_a_string_reaching_a_tensor_op_is_refused_by_name():
    nodes = [helper.make_node("Reshape", ["text", "shape"], ["y"], name="flatten_text")]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("text", STRING, [2, 2])],
        [helper.make_tensor_value_info("y", STRING, [4])],
        [helper.make_tensor("shape", TensorProto.INT64, [1], [4])],
    )
    with pytest.raises(OnnxImportError, match="'flatten_text' \\(Reshape\\) takes the string"):
        backend.prepare(model)


def test_an_invalid_pattern_is_refused_by_name():
    nodes = [helper.make_node("RegexFullMatch", ["s"], ["m"], name="check", pattern="(unclosed")]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("s", STRING, [1])],
        [helper.make_tensor_value_info("m", TensorProto.BOOL, [1])],
    )
    with pytest.raises(OnnxImportError, match="'check' \\(RegexFullMatch\\) has an invalid"):
        backend.prepare(model)


def test_a_label_encoder_without_matching_keys_and_values_is_refused():
    node = helper.make_node(
        "LabelEncoder",
        ["s"],
        ["y"],
        name="codes",
        domain="ai.onnx.ml",
        keys_strings=["a", "b"],
        values_int64s=[1],
    )
    model = _model(
        [node],
        [helper.make_tensor_value_info("s", STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
        ml=True,
    )
    with pytest.raises(OnnxImportError, match="'codes' \\(LabelEncoder\\) needs as many values"):
        backend.prepare(model)


def test_strings_from_the_file_stay_data(tmp_path):
    """String constants, stop words, labels and patterns carrying code reach the generated
    source as literals: the model imports and runs, and nothing in them is executed."""
    marker = tmp_path / "ran"
    bad = f"\"\"\"\n'); __import__('os').system('touch {marker}') #\u2028\\"
    nodes = [
        helper.make_node("StringConcat", ["s", "tail"], ["joined"]),
        helper.make_node(
            "StringNormalizer", ["joined"], ["clean"], stopwords=[bad], case_change_action="NONE"
        ),
        helper.make_node("RegexFullMatch", ["clean"], ["m"], pattern=re.escape(bad)),
        helper.make_node(
            "LabelEncoder",
            ["clean"],
            ["code"],
            domain="ai.onnx.ml",
            keys_strings=[bad],
            values_int64s=[7],
            default_int64=-1,
        ),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("s", STRING, [2])],
        [
            helper.make_tensor_value_info("clean", STRING, [None]),
            helper.make_tensor_value_info("m", TensorProto.BOOL, [None]),
            helper.make_tensor_value_info("code", TensorProto.INT64, [None]),
        ],
        [helper.make_tensor("tail", STRING, [], [bad.encode()])],
        ml=True,
    )
    clean, matched, code = backend.prepare(model).run([np.array(["", "x"], dtype=object)])
    assert clean.tolist() == ["x" + bad]  # "" + bad was a stop word and went
    np.testing.assert_array_equal(matched, [False])
    np.testing.assert_array_equal(code, [-1])
    assert not marker.exists()
