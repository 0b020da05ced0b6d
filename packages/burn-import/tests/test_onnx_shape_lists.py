"""Shape arithmetic held as lists of ints in the generated code: `Shape`, and the slices,
gathers, concatenations, squeezes and casts of what it gives, become list expressions, and the
results match onnxruntime at batch sizes other than the one the graph was written for."""

from __future__ import annotations

import numpy as np
import pytest
from burn.onnx import backend
from burn.onnx.errors import OnnxImportError
from burn.onnx.runtime import gather
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError
from burn_import_reference import same_as_onnxruntime
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")

I64 = TensorProto.INT64
F32 = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "shapes", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _ints(name, values):
    return helper.make_tensor(name, I64, [len(values)], values)


def _scalar(name, value):
    return helper.make_tensor(name, I64, [], [value])


def _devices():
    devices = ["CPU"]
    if backend.supports_device("GPU"):
        devices.append("GPU")
    return devices


@pytest.mark.parametrize("device", _devices())
def test_flatten_by_the_batch_size_keeps_the_batch_dynamic(device):
    """`x.view(x.size(0), -1)` as PyTorch exports it, then a product with a weight."""
    weight = np.random.default_rng(0).standard_normal((12, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, ["n", 3, 2, 2])],
        [helper.make_tensor_value_info("y", F32, ["n", 5])],
        [
            _scalar("zero", 0),
            _ints("axes", [0]),
            _ints("minus_one", [-1]),
            helper.make_tensor("w", F32, [12, 5], weight.reshape(-1)),
        ],
    )
    rng = np.random.default_rng(1)
    feeds = [[rng.standard_normal((n, 3, 2, 2)).astype(np.float32)] for n in (1, 4, 7)]
    source = same_as_onnxruntime(model, *feeds, device=device)
    assert ".dims()" in source and "rt.shape_of" not in source
    assert "rt.concat" not in source  # the target shape is a list: [*batch, -1]


@pytest.mark.parametrize("device", _devices())
def test_head_split_with_a_scale_from_the_last_dim(device):
    """Shape, Slice, Concat with constants, Reshape; Gather at -1, Cast to float, Sqrt, Div."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "start0", "end2"], ["lead"]),
        helper.make_node("Slice", ["shape", "start3", "end_max"], ["rest"]),
        helper.make_node("Concat", ["lead", "heads", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["split"]),
        helper.make_node("Shape", ["split"], ["split_shape"], start=-1),
        helper.make_node("Squeeze", ["split_shape", "axes"], ["width"]),
        helper.make_node("Cast", ["width"], ["width_f"], to=F32),
        helper.make_node("Sqrt", ["width_f"], ["root"]),
        helper.make_node("Div", ["split", "root"], ["y"]),
        helper.make_node("Size", ["x"], ["count"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, ["b", "t", 24])],
        [
            helper.make_tensor_value_info("y", F32, ["b", "t", 4, 6]),
            helper.make_tensor_value_info("count", I64, []),
        ],
        [
            _ints("start0", [0]),
            _ints("end2", [2]),
            _ints("start3", [3]),
            _ints("end_max", [2**63 - 1]),
            _ints("heads", [4, -1]),
            _ints("axes", [0]),
        ],
    )
    rng = np.random.default_rng(2)
    feeds = [[rng.standard_normal((b, t, 24)).astype(np.float32)] for b, t in ((1, 3), (2, 5))]
    source = same_as_onnxruntime(model, *feeds, device=device)
    assert "[:2]" in source and "[3:]" in source and "[-1:]" in source
    assert ".num_elements()" in source


@pytest.mark.parametrize("device", _devices())
def test_chunk_bounds_from_shape_arithmetic(device):
    """`torch.chunk` as exported: (C + 1) / 2 from the shape, times 1 and 2, as Slice bounds;
    and arithmetic that goes negative, where integer division truncates toward zero."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["channels"], axis=0),
        helper.make_node("Add", ["channels", "one"], ["plus"]),
        helper.make_node("Div", ["plus", "two"], ["half"]),
        helper.make_node("Mul", ["half", "two"], ["end"]),
        helper.make_node("Unsqueeze", ["half", "axes"], ["start1"]),
        helper.make_node("Unsqueeze", ["end", "axes"], ["end1"]),
        helper.make_node("Slice", ["x", "start1", "end1", "one1"], ["y"]),
        helper.make_node("Sub", ["eleven", "shape"], ["gap"]),
        helper.make_node("Div", ["gap", "minus_three"], ["quotients"]),
        helper.make_node("Mul", ["shape", "quotients"], ["products"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, ["n", "c", 2])],
        [
            helper.make_tensor_value_info("y", F32, ["n", None, 2]),
            helper.make_tensor_value_info("quotients", I64, [3]),
            helper.make_tensor_value_info("products", I64, [3]),
        ],
        [
            _scalar("one", 1),
            _scalar("two", 2),
            _ints("axes", [0]),
            _ints("one1", [1]),
            _scalar("eleven", 11),
            _scalar("minus_three", -3),
        ],
    )
    rng = np.random.default_rng(3)
    feeds = [[rng.standard_normal((n, c, 2)).astype(np.float32)] for n, c in ((1, 5), (3, 8))]
    source = same_as_onnxruntime(model, *feeds, device=device)
    start = source.index("def forward")
    body = source[start : source.index("        return ", start)]
    assert "int(" in body and "rt.const(" not in body  # tensors only for the outputs


@pytest.mark.parametrize("device", _devices())
def test_range_and_constant_of_shape_from_a_shape(device):
    """Position ids `Range(0, T, 1)` and a filled tensor of the input's shape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["steps"], axis=0),
        helper.make_node("Range", ["zero", "steps", "one"], ["positions"]),
        helper.make_node(
            "ConstantOfShape",
            ["shape"],
            ["filled"],
            value=helper.make_tensor("v", F32, [1], [2.5]),
        ),
        helper.make_node("Add", ["x", "filled"], ["y"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, ["n", "t"])],
        [
            helper.make_tensor_value_info("positions", I64, ["t"]),
            helper.make_tensor_value_info("y", F32, ["n", "t"]),
        ],
        [_scalar("zero", 0), _scalar("one", 1)],
    )
    rng = np.random.default_rng(4)
    feeds = [[rng.standard_normal((n, t)).astype(np.float32)] for n, t in ((1, 4), (2, 7))]
    source = same_as_onnxruntime(model, *feeds, device=device)
    assert "rt.range_(0, gather_out1[0], 1, device=device)" in source
    assert "rt.constant_of_shape(shape_out1," in source


@pytest.mark.parametrize("device", _devices())
def test_resize_and_expand_to_sizes_taken_from_another_input(device):
    """A feature pyramid's upsampling: Resize to the size of a finer map, read by Shape."""
    nodes = [
        helper.make_node("Shape", ["fine"], ["size"]),
        helper.make_node("Resize", ["coarse", "", "", "size"], ["up"], mode="nearest"),
        helper.make_node("Add", ["up", "fine"], ["y"]),
        helper.make_node("Shape", ["up"], ["up_size"]),
        helper.make_node("Expand", ["bias", "up_size"], ["spread"]),
    ]
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("coarse", F32, ["n", 2, "h", "w"]),
            helper.make_tensor_value_info("fine", F32, ["n", 2, "H", "W"]),
        ],
        [
            helper.make_tensor_value_info("y", F32, ["n", 2, "H", "W"]),
            helper.make_tensor_value_info("spread", F32, ["n", 2, "H", "W"]),
        ],
        [helper.make_tensor("bias", F32, [2, 1, 1], [0.5, -1.5])],
    )
    rng = np.random.default_rng(5)
    feeds = [
        [rng.standard_normal(s).astype(np.float32) for s in ((n, 2, h, h), (n, 2, 2 * h, 2 * h))]
        for n, h in ((1, 3), (2, 4))
    ]
    source = same_as_onnxruntime(model, *feeds, device=device)
    assert "rt.shape_of" not in source


def test_shape_lists_reach_the_outputs_as_int64_tensors():
    nodes = [
        helper.make_node("Shape", ["x"], ["all"]),
        helper.make_node("Shape", ["x"], ["middle"], start=1, end=-1),
        helper.make_node("Gather", ["all", "picks"], ["picked"], axis=0),
        helper.make_node("Cast", ["picked"], ["same"], to=I64),
        helper.make_node("Identity", ["same"], ["copy"]),
        helper.make_node("Shape", ["s"], ["none"]),
    ]
    model = _model(
        nodes,
        [
            helper.make_tensor_value_info("x", F32, [2, 3, 4, 5]),
            helper.make_tensor_value_info("s", F32, []),
        ],
        [
            helper.make_tensor_value_info("all", I64, [4]),
            helper.make_tensor_value_info("middle", I64, [2]),
            helper.make_tensor_value_info("copy", I64, [3]),
            helper.make_tensor_value_info("none", I64, [0]),
        ],
        [_ints("picks", [-1, 0, 2])],
    )
    x = np.zeros((2, 3, 4, 5), np.float32)
    rep = backend.prepare(model)
    everything, middle, copy, none = rep.run([x, np.array(1.0, np.float32)])
    np.testing.assert_array_equal(everything, [2, 3, 4, 5])
    np.testing.assert_array_equal(middle, [3, 4])
    np.testing.assert_array_equal(copy, [5, 2, 4])
    assert none.shape == (0,)
    assert "rt.shape_of" not in rep.source and "rt.gather" not in rep.source


def test_shape_lists_are_tensors_inside_branches():
    """An outer shape list used by both branches of an `If` with a computed condition."""
    then_graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", F32, [3, 2, 1])],
    )
    else_graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["target"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", F32, [3, 2, 1])],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "start1", "end_max", "axis0", "minus_one"], ["rev"]),
        helper.make_node("Concat", ["rev", "one"], ["target"], axis=0),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, [2, 3])],
        [helper.make_tensor_value_info("y", F32, [3, 2, 1])],
        [
            _ints("start1", [-1]),
            _ints("end_max", [-(2**63)]),
            _ints("axis0", [0]),
            _ints("minus_one", [-1]),
            _ints("one", [1]),
            helper.make_tensor("zero", F32, [], [0.0]),
        ],
    )
    rep = backend.prepare(model)
    assert "[-1::-1]" in rep.source
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (positive,) = rep.run([x])
    np.testing.assert_array_equal(positive, x.reshape(3, 2, 1))
    (negative,) = rep.run([-x - 1])
    np.testing.assert_array_equal(negative, np.zeros((3, 2, 1), np.float32))


def test_a_gather_from_a_shape_out_of_range_fails_when_it_runs():
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "far"], ["y"], axis=0),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", F32, [2, 3])],
        [helper.make_tensor_value_info("y", I64, [])],
        [_scalar("far", 2)],
    )
    try:
        rep = backend.prepare(model)
    except OnnxImportError:
        return  # refusing the model up front is as good
    with pytest.raises(OutOfRangeError, match="index 2 is out of range"):
        rep.run([np.zeros((2, 3), np.float32)])


def test_gather_at_host_indices():
    from burn.backend import NdArray

    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = Tensor.from_data(data, device=NdArray.device())
    np.testing.assert_array_equal(gather(x, [-1], axis=1, index_rank=0).numpy(), data[:, -1])
    np.testing.assert_array_equal(gather(x, [2, 0, 2], axis=2).numpy(), data[:, :, [2, 0, 2]])
    assert gather(x, [], axis=0, index_rank=1).dims() == [0, 3, 4]
    with pytest.raises(OutOfRangeError, match="index -4 is out of range for axis 1 of size 3"):
        gather(x, [-4], axis=1, index_rank=0)
