"""Models whose names and doc strings carry code: generating and importing them runs none of it.

Every string of the file that reaches the generated `.py` (graph, node, initializer, input and
output names, doc strings, the file name) holds a payload that would create a marker file if
it ever ran; the tests assert the marker is absent and the model still computes its values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from burn.backend import NdArray
from burn.onnx import ModelGen, OnnxImportError
from burn.onnx.backend import BurnBackend
from burn.onnx.modelgen import load_source, translate
from burn.tensor import Tensor
from onnx import TensorProto, helper, numpy_helper

BREAKERS = ["\n", '"""', "'''", "#", "\r", "\x00", "\u2028", "\u0085", "\\", "\x0c"]
KEYWORDS = ["class", "lambda", "def", "None", "import", "len", "bool", "input", "activation"]


def payload(marker: Path, breaker: str) -> str:
    code = f"__import__('os').system('touch {marker}')"
    return f"{breaker}{code}{breaker}{code}  # {breaker}"


def hostile_model(marker: Path, breaker: str, keyword: str) -> onnx.ModelProto:
    """`out = relu(x + w) * big`: every name and doc string is a payload or a keyword."""
    bad = payload(marker, breaker)
    x, w, big, mid, out = (
        keyword,
        f"w{bad}",
        f"{keyword}{bad}",
        f"mid{bad}",
        f"out{bad}",
    )
    nodes = [
        helper.make_node("Add", [x, w], [f"sum{bad}"], name=f"add{bad}", doc_string=bad),
        helper.make_node("Relu", [f"sum{bad}"], [mid], name=keyword, doc_string=bad),
        helper.make_node("Mul", [mid, big], [out], name=bad),
    ]
    inits = [
        numpy_helper.from_array(np.array([[0.5, -2.0, 1.0]], np.float32), w),
        # more values than are inlined, so it becomes a field of the module
        numpy_helper.from_array(np.linspace(-1, 1, 48, dtype=np.float32).reshape(16, 3), big),
    ]
    graph = helper.make_graph(
        nodes,
        bad,
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [16, 3])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [16, 3])],
        inits,
        doc_string=bad,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], doc_string=bad)
    model.producer_name = bad
    onnx.checker.check_model(model)
    return model


def expected(x: np.ndarray) -> np.ndarray:
    w = np.array([[0.5, -2.0, 1.0]])
    big = np.linspace(-1, 1, 48).reshape(16, 3)
    return np.maximum(x.astype(np.float64) + w, 0) * big


CASES = [(b, KEYWORDS[i % len(KEYWORDS)]) for i, b in enumerate(BREAKERS)]


@pytest.mark.parametrize(("breaker", "keyword"), CASES)
def test_hostile_names_never_run_and_the_model_computes(tmp_path, breaker, keyword):
    marker = tmp_path / "pwned"
    model = hostile_model(marker, breaker, keyword)
    path = tmp_path / f"m{breaker.strip() and 'x'}.onnx"
    onnx.save(model, path)
    out = tmp_path / "gen"
    ModelGen().input(path).out_dir(out).run()
    (source,) = out.glob("*.py")
    compile(source.read_text(encoding="utf-8"), str(source), "exec")
    module = load_source(source)
    net = module.Model.default(NdArray.device())
    x = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)
    y = net(Tensor.from_data(x, device=NdArray.device())).numpy()
    np.testing.assert_allclose(y, expected(x), rtol=1e-6, atol=1e-6)
    # the backend path executes the generated source in memory
    (z,) = BurnBackend.prepare(model).run([x])
    np.testing.assert_allclose(z, expected(x), rtol=1e-6, atol=1e-6)
    assert not marker.exists()
    # no payload line survived as code: each one sits inside a comment or a string
    for line in source.read_text(encoding="utf-8").splitlines():
        if "__import__" in line:
            assert line.lstrip().startswith("#") or '"""' in line or line.startswith("Model"), line


def test_every_source_line_break_in_names_is_escaped(tmp_path):
    model = hostile_model(tmp_path / "pwned", "\n\r\u2028\u0085\x00", "x")
    source = translate(model).source
    assert "\x00" not in source and "\r" not in source
    assert "\u2028" not in source and "\u0085" not in source
    compile(source, "<generated>", "exec")


def test_attribute_names_that_are_not_identifiers_are_refused():
    node = helper.make_node("Einsum", ["a", "b"], ["c"], equation="ij,jk->ik")
    node.attribute[0].name = "equation=__import__('os').getcwd(),x"
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2]) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError):
        translate(model)


def test_a_tensor_larger_than_its_bytes_is_refused_before_allocation():
    from burn.onnx.graph import graph_from_proto

    init = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    del init.dims[:]
    init.dims.extend([2**40, 2**20])
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [init],
    )
    with pytest.raises(OnnxImportError, match=r"m\.onnx: tensor 'w'.*needs 4611686018427387904"):
        graph_from_proto(graph, "m.onnx", 17)


def test_a_sparse_initializer_with_a_huge_dense_shape_is_refused():
    from burn.onnx.graph import graph_from_proto

    values = numpy_helper.from_array(np.ones(2, np.float32), "s")
    indices = numpy_helper.from_array(np.array([0, 5], np.int64), "s_idx")
    sparse = helper.make_sparse_tensor(values, indices, [2**40, 2**20])
    graph = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        sparse_initializer=[sparse],
    )
    with pytest.raises(OnnxImportError, match=r"m\.onnx: sparse initializer 's'.*too large"):
        graph_from_proto(graph, "m.onnx", 17)
    # within the bound it becomes the dense constant
    del graph.sparse_initializer[0].dims[:]
    graph.sparse_initializer[0].dims.extend([2, 3])
    dense = graph_from_proto(graph, "m.onnx", 17).constants["s"]
    np.testing.assert_array_equal(dense, [[1, 0, 0], [0, 0, 1]])
