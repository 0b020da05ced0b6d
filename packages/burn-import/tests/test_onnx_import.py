"""burn.onnx end to end: ModelGen and the CLI on the committed fixtures, checked against
onnxruntime; the generated model trains and saves; unsupported ops are all reported at once."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from burn.backend import NdArray
from burn.onnx import ModelGen, UnsupportedOpsError
from burn.onnx.__main__ import main as cli
from burn.onnx.graph import load_graph
from burn.onnx.modelgen import load_source
from burn.onnx.passes import run_passes
from burn.tensor import Int, Tensor
from onnx import TensorProto, helper

FIXTURES = Path(__file__).with_name("fixtures")
MNIST = FIXTURES / "mnist_net.onnx"
TRANSFORMER = FIXTURES / "transformer_encoder.onnx"

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")


def reference(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("model")
    ModelGen().input(MNIST).input(TRANSFORMER).out_dir(out).run()
    return out


def test_modelgen_writes_source_and_weights(generated):
    assert (generated / "mnist_net.py").is_file()
    assert (generated / "mnist_net.mpk").is_file()
    source = (generated / "mnist_net.py").read_text()
    for layer in ("Conv2dConfig([1, 8], [3, 3])", "BatchNormConfig(24)", "LinearConfig(11616, 32)"):
        assert layer in source
    assert "# Conv /conv1/Conv" in source  # the ONNX op and node name of each step


def test_shape_arithmetic_is_lists_and_ranks_are_known(generated):
    """The encoder's attention reshapes come from `Shape`: lists of ints in the source, and
    every rank the runtime helpers are given is known (from the lists' lengths where shape
    inference left it out)."""
    source = (generated / "transformer_encoder.py").read_text()
    assert ".dims()" in source and "rt.shape_of" not in source and "rt.concat" not in source
    assert "rank=None" not in source


def test_generated_source_is_ruff_clean(generated):
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed")
    for name in ("mnist_net.py", "transformer_encoder.py"):
        path = generated / name
        check = subprocess.run(
            [ruff, "check", "--isolated", "--line-length", "100", str(path)], capture_output=True
        )
        assert check.returncode == 0, check.stdout.decode()
        fmt = subprocess.run(
            [ruff, "format", "--isolated", "--check", "--line-length", "100", str(path)],
            capture_output=True,
        )
        assert fmt.returncode == 0, fmt.stdout.decode()


@pytest.mark.parametrize(
    ("name", "path", "shape"),
    [("mnist_net", MNIST, (3, 1, 28, 28)), ("transformer_encoder", TRANSFORMER, (1, 8, 32))],
)
def test_default_weights_match_onnxruntime(generated, name, path, shape):
    module = load_source(generated / f"{name}.py")
    model = module.Model.default(NdArray.device())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = model(Tensor.from_data(x, device=NdArray.device())).numpy()
    np.testing.assert_allclose(out, reference(path, x), atol=1e-4, rtol=1e-4)


def test_model_new_from_file_and_record_round_trip(generated, tmp_path):
    from burn.record import FullPrecisionSettings, NamedMpkFileRecorder

    module = load_source(generated / "mnist_net.py")
    fresh = module.Model.new(NdArray.device())
    imported = module.Model.from_file(generated / "mnist_net", NdArray.device())
    x = Tensor.from_data(np.ones((2, 1, 28, 28), np.float32), device=NdArray.device())
    assert not np.allclose(fresh(x).numpy(), imported(x).numpy())
    recorder = NamedMpkFileRecorder(FullPrecisionSettings)
    imported.save_file(tmp_path / "again", recorder)
    again = module.Model.new(NdArray.device()).load_file(tmp_path / "again", recorder)
    np.testing.assert_array_equal(again(x).numpy(), imported(x).numpy())


def test_generated_model_trains_under_autodiff(generated):
    from burn.backend import Autodiff
    from burn.nn.loss import CrossEntropyLossConfig
    from burn.optim import AdaGradConfig, GradientsParams

    backend = Autodiff(NdArray)
    device = backend.device()
    module = load_source(generated / "mnist_net.py")
    model = module.Model.default(device)
    rng = np.random.default_rng(1)
    x = Tensor.from_data(rng.standard_normal((8, 1, 28, 28)).astype(np.float32), device=device)
    y = Tensor[None, None, Int].from_data(rng.integers(0, 10, 8), device=device)
    loss_fn = CrossEntropyLossConfig().init(device)
    optim = AdaGradConfig().init()
    losses = []
    for _ in range(3):
        loss = loss_fn(model(x), y)
        losses.append(float(loss))
        grads = GradientsParams.from_grads(loss.backward(), model)
        model = optim.step(0.05, model, grads)
    assert losses[-1] < losses[0]


def test_generated_encoder_trains_through_its_shape_arithmetic(generated):
    """The encoder's attention splits heads with shape lists, host-index gathers and reshapes:
    gradients flow back through them to the input projection, and a few steps lower a loss."""
    from burn.backend import Autodiff
    from burn.optim import GradientsParams, SgdConfig

    device = Autodiff(NdArray).device()
    model = load_source(generated / "transformer_encoder.py").Model.default(device)
    x = Tensor.from_data(
        np.random.default_rng(4).standard_normal((1, 8, 32)).astype(np.float32), device=device
    )
    optim = SgdConfig().init()
    losses = []
    for _ in range(4):
        loss = (model(x) * model(x)).mean()
        losses.append(float(loss))
        grads = GradientsParams.from_grads(loss.backward(), model)
        assert grads.get(model.linear1.weight.id) is not None  # the head-splitting projection
        model = optim.step(0.05, model, grads)
    assert losses[-1] < losses[0]


def test_cli_writes_the_same_files(tmp_path):
    assert cli([str(MNIST), "--out-dir", str(tmp_path), "--development"]) == 0
    assert (tmp_path / "mnist_net.py").is_file()
    assert (tmp_path / "mnist_net.mpk").is_file()
    assert "Conv" in (tmp_path / "mnist_net.graph.txt").read_text()


def test_half_precision_and_record_type(tmp_path):
    gen = ModelGen().input(MNIST).out_dir(tmp_path).half_precision(True)
    gen.record_type("BinFileRecorder").run()
    assert (tmp_path / "mnist_net.bin").is_file()
    module = load_source(tmp_path / "mnist_net.py")
    model = module.Model.default(NdArray.device())
    x = np.random.default_rng(2).standard_normal((1, 1, 28, 28)).astype(np.float32)
    out = model(Tensor.from_data(x, device=NdArray.device())).numpy()
    np.testing.assert_allclose(out, reference(MNIST, x), atol=5e-2)


def _unsupported_model(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])
    ml = {"domain": "ai.onnx.ml"}
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("SVMClassifier", ["a"], ["b", "sb"], name="svm_first", **ml),
        helper.make_node("SVMClassifier", ["b"], ["c", "sc"], name="svm_second", **ml),
        helper.make_node("ZipMap", ["c"], ["d"], name="zip", classlabels_int64s=[0], **ml),
        helper.make_node("Warp", ["d"], ["y"], name="warp", domain="com.example"),
    ]
    graph = helper.make_graph(nodes, "unsupported", [x], [y])
    opsets = [
        helper.make_opsetid("", 21),
        helper.make_opsetid("ai.onnx.ml", 3),
        helper.make_opsetid("com.example", 1),
    ]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_every_unsupported_op_is_reported_at_once(tmp_path):
    source = _unsupported_model(tmp_path / "bad.onnx")
    out = tmp_path / "out"
    with pytest.raises(UnsupportedOpsError) as info:
        ModelGen().input(source).out_dir(out).run()
    error = info.value
    assert error.unsupported == {
        "ai.onnx.ml:SVMClassifier": (2, "svm_first"),
        "ai.onnx.ml:ZipMap": (1, "zip"),
        "com.example:Warp": (1, "warp"),
    }
    text = str(error)
    assert "3 unsupported op type(s) in 4 node(s)" in text
    assert "ai.onnx.ml:SVMClassifier: 2 node(s), first 'svm_first'" in text
    assert not out.exists()  # nothing was written


def test_passes_fold_constants_drop_dead_nodes_and_make_linear():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 4], np.arange(12, dtype=np.float32))
    nodes = [
        helper.make_node("Constant", [], ["b0"], value=helper.make_tensor("v", 1, [4], [1] * 4)),
        helper.make_node("Mul", ["b0", "b0"], ["b"], name="folded"),
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Add", ["m", "b"], ["y"], name="add"),
        helper.make_node("Relu", ["x"], ["unused"], name="dead"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    g = run_passes(load_graph(model))
    assert [n.op_type for n in g.nodes] == ["Linear"]
    np.testing.assert_array_equal(g.nodes[0].attrs["bias"], np.ones(4, np.float32))


def test_export_is_exposed_lazily():
    import burn.onnx

    assert "export" in burn.onnx.__all__
    with pytest.raises(AttributeError):
        burn.onnx.no_such_name  # noqa: B018


def test_bad_input_raises_onnx_import_errors_naming_the_file(tmp_path):
    from burn.onnx import OnnxImportError

    with pytest.raises(OnnxImportError, match="no such ONNX file"):
        ModelGen().input(tmp_path / "missing.onnx").out_dir(tmp_path / "out").run()
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model\xff" * 10)
    with pytest.raises(OnnxImportError, match="junk.onnx"):
        ModelGen().input(junk).out_dir(tmp_path / "out").run()
    with pytest.raises(OnnxImportError, match="no input"):
        ModelGen().out_dir(tmp_path / "out").run()
    with pytest.raises(OnnxImportError, match="no output folder"):
        ModelGen().input(MNIST).run()
    with pytest.raises(OnnxImportError, match="record_type"):
        ModelGen().record_type("PickleRecorder")
    assert not (tmp_path / "out").exists()
    assert cli([str(junk), "--out-dir", str(tmp_path / "out")]) == 1


def test_backend_runs_a_model_with_a_computed_condition_and_loop():
    import burn.onnx.backend as backend

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    then_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", 1, [3])],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", 1, [3])],
    )
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", 1, [], [0.0])),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    graph = helper.make_graph(nodes, "branch", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = backend.prepare(model)
    assert "if bool(" in rep.source
    (positive,) = rep.run([np.array([1.0, 2.0, -1.0], np.float32)])
    (negative,) = rep.run([np.array([-1.0, -2.0, 1.0], np.float32)])
    np.testing.assert_array_equal(positive, [-1.0, -2.0, 1.0])
    np.testing.assert_array_equal(negative, [1.0, 2.0, 1.0])


def test_attribute_values_that_are_not_finite_become_valid_source():
    from burn.onnx.emitters.common import attr_args
    from burn.onnx.graph import Node

    attrs = {
        "alpha": float("nan"),
        "beta": float("-inf"),
        "splits": np.array([1.5, np.nan, np.inf], np.float32),
        "members": [2.0, float("nan")],
        "modes": np.array([0, 6], np.uint8),
        "mode": "avg",
    }
    text = attr_args(Node("Op", "op", [], [], attrs))
    values = eval(f"dict({text})")  # noqa: S307 - source the importer wrote, checked here
    assert np.isnan(values["alpha"]) and values["beta"] == -np.inf
    np.testing.assert_array_equal(values["splits"], [1.5, np.nan, np.inf])
    np.testing.assert_array_equal(values["members"], [2.0, np.nan])
    assert values["modes"] == [0, 6] and values["mode"] == "avg"


def test_scalar_constants_on_either_side_of_arithmetic():
    """One-element constants become Python numbers in the source, NaN and infinities too,
    on the right or (floats) on the left of the operator."""
    import burn.onnx.backend as backend

    consts = {"inf": np.inf, "nan": np.nan, "two": 2.0, "neg": -np.inf}
    nodes = [
        helper.make_node("Add", ["x", "inf"], ["a"]),
        helper.make_node("Mul", ["nan", "x"], ["b"]),
        helper.make_node("Div", ["two", "x"], ["c"]),
        helper.make_node("Sub", ["neg", "x"], ["d"]),
    ]
    graph = helper.make_graph(
        nodes,
        "scalars",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "abcd"],
        [helper.make_tensor(k, TensorProto.FLOAT, [], [v]) for k, v in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = backend.prepare(model)
    assert "rt.const" not in rep.source and 'float("inf")' in rep.source
    x = np.array([1.0, -4.0, 0.5], np.float32)
    a, b, c, d = rep.run([x])
    np.testing.assert_array_equal(a, x + np.inf)
    assert np.isnan(b).all()
    np.testing.assert_allclose(c, 2.0 / x)
    np.testing.assert_array_equal(d, -np.inf - x)


def test_a_cast_to_the_type_a_value_has_is_no_op():
    import burn.onnx.backend as backend

    nodes = [
        helper.make_node("Cast", ["x"], ["same"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["same"], ["half"], to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(
        nodes,
        "casts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [
            helper.make_tensor_value_info("same", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("half", TensorProto.FLOAT16, [2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = backend.prepare(model)
    assert rep.source.count("rt.cast(") == 1  # only the one to float16
    same, half = rep.run([np.array([1.5, -2.25], np.float32)])
    np.testing.assert_array_equal(same, [1.5, -2.25])
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, [1.5, -2.25])


def test_clip_between_constants_is_a_clamp():
    """ReLU6 as MobileNet exports it becomes `x.clamp(0.0, 6.0)`; a one-sided clip is
    `clamp_min`; min above max (max everywhere, as ONNX says) keeps the general helper."""
    import burn.onnx.backend as backend

    nodes = [
        helper.make_node("Clip", ["x", "zero", "six"], ["relu6"]),
        helper.make_node("Clip", ["x", "zero"], ["relu"]),
        helper.make_node("Clip", ["x", "six", "zero"], ["crossed"]),
    ]
    graph = helper.make_graph(
        nodes,
        "clips",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])
            for n in ("relu6", "relu", "crossed")
        ],
        [
            helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
            helper.make_tensor("six", TensorProto.FLOAT, [], [6.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = backend.prepare(model)
    assert ".clamp(0.0, 6.0)" in rep.source and ".clamp_min(0.0)" in rep.source
    assert "rt.clip(" in rep.source
    x = np.array([-1.0, 3.0, 9.0, np.nan], np.float32)
    relu6, relu, crossed = rep.run([x])
    np.testing.assert_array_equal(relu6, [0.0, 3.0, 6.0, np.nan])
    np.testing.assert_array_equal(relu, [0.0, 3.0, 9.0, np.nan])
    np.testing.assert_array_equal(crossed[:3], [0.0, 0.0, 0.0])


@pytest.mark.parametrize("with_lengths", [True, False])
@pytest.mark.parametrize("reverse", [0, 1])
def test_opset8_scan_runs_each_batch_entry_to_its_own_length(reverse, with_lengths):
    import burn.onnx.backend as backend

    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["scan_out"]),
        ],
        "body",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("sum_in", "next")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("sum_out", "scan_out")],
    )
    node = helper.make_node(
        "Scan",
        ["lens" if with_lengths else "", "initial", "x"],
        ["y", "z"],
        num_scan_inputs=1,
        body=body,
        directions=[reverse],
    )
    graph = helper.make_graph(
        [node],
        "scan8",
        [helper.make_tensor_value_info("lens", TensorProto.INT32, [2])] * with_lengths
        + [
            helper.make_tensor_value_info("initial", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 2]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3, 2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    lens = np.array([3, 1] if with_lengths else [3, 3], np.int32)
    initial = np.array([[0.0, 0.0], [10.0, 20.0]], np.float32)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    want_y, want_z = np.zeros((2, 2), np.float32), np.zeros((2, 3, 2), np.float32)
    for b in range(2):  # the spec's loop, per batch entry, as far as its own length
        state = initial[b].copy()
        for i in range(lens[b]):
            state = state + x[b, lens[b] - 1 - i if reverse else i]
            want_z[b, i] = state
        want_y[b] = state
    inputs = [lens, initial, x] if with_lengths else [initial, x]
    y, z = backend.prepare(model, "CPU").run(inputs)
    np.testing.assert_allclose(y, want_y)
    np.testing.assert_allclose(z, want_z)
