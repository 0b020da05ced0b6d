"""ONNX export run in onnxruntime: outputs within 1e-5 of ours, names and errors checked."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from burn.autodiff import Autodiff
from burn.module import Module
from burn.ndarray import NdArray
from burn.nn import (
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    Conv1dConfig,
    Conv2dConfig,
    ConvTranspose2dConfig,
    DropoutConfig,
    EmbeddingConfig,
    Gelu,
    GroupNormConfig,
    GruConfig,
    HardSigmoidConfig,
    InstanceNormConfig,
    LayerNormConfig,
    LeakyReluConfig,
    LinearConfig,
    LstmConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
    MhaInput,
    MultiHeadAttentionConfig,
    PaddingConfig1d,
    PaddingConfig2d,
    PositionalEncodingConfig,
    PReluConfig,
    Relu,
    RmsNormConfig,
    Sigmoid,
    Silu,
    Tanh,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from burn.onnx.exporter import ExportError, export
from burn.tensor import Int, Tensor
from burn.tensor import activation as F  # noqa: N812
from burn_import_reference import CnnBn

ort = pytest.importorskip("onnxruntime")


def run_onnx(path, *inputs: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs, strict=True)))


def check(model, tmp_path, *arrays, kinds=None, atol=1e-5):
    kinds = kinds or [None] * len(arrays)
    tensors = [
        Tensor[NdArray, a.ndim, Int].from_data(a) if k is Int else Tensor.from_data(a)
        for a, k in zip(arrays, kinds, strict=True)
    ]
    ours = model.forward(*tensors)
    ours = ours if isinstance(ours, tuple) else (ours,)
    path = export(model, tensors, tmp_path / "model.onnx")
    theirs = run_onnx(path, *arrays)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(b, a.to_data().as_array(), rtol=1e-5, atol=atol)
    return onnx.load(str(path))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_cnn_with_batchnorm(tmp_path):
    model = CnnBn()
    model.norm.running_mean = model.norm.running_mean.with_value(Tensor.from_data(rand(3)))
    model.norm.running_var = model.norm.running_var.with_value(
        Tensor.from_data(np.abs(rand(3, seed=1)) + 0.5)
    )
    proto = check(model, tmp_path, rand(2, 2, 6, 6))
    names = [i.name for i in proto.graph.initializer]
    assert names[:8] == [
        "conv.weight",
        "conv.bias",
        "norm.gamma",
        "norm.beta",
        "norm.running_mean",
        "norm.running_var",
        "fc.weight",
        "fc.bias",
    ]
    assert proto.opset_import[0].version == 17 and proto.ir_version <= 13
    assert any(n.op_type == "Conv" and n.name.startswith("/conv/") for n in proto.graph.node)


class Encoder(Module):
    def __init__(self):
        self.encoder = TransformerEncoderConfig(16, 32, 4, 2, dropout=0.1).init()

    def forward(self, x: Tensor) -> Tensor:
        return self.encoder.forward(TransformerEncoderInput(x))


def test_two_layer_transformer_encoder(tmp_path):
    proto = check(Encoder(), tmp_path, rand(2, 5, 16))
    names = {i.name for i in proto.graph.initializer}
    assert "encoder.layers.1.mha.query.weight" in names


class Attention(Module):
    def __init__(self):
        self.mha = MultiHeadAttentionConfig(8, 2).init()

    def forward(self, q: Tensor, kv: Tensor) -> tuple[Tensor, Tensor]:
        out = self.mha.forward(MhaInput(q, kv, kv))
        return out.context, out.weights


def test_multi_head_attention_with_two_outputs(tmp_path):
    check(Attention(), tmp_path, rand(2, 3, 8), rand(2, 4, 8, seed=1))


class Layers(Module):
    """Every layer kind ONNX has a node or a composition for, in one network."""

    def __init__(self):
        self.conv1d = Conv1dConfig(3, 4, 3).init()
        self.conv = Conv2dConfig([3, 4], [3, 3]).with_padding(PaddingConfig2d.Explicit(1, 1)).init()
        self.deconv = ConvTranspose2dConfig([4, 3], [3, 3], stride=[2, 2], padding=[1, 1]).init()
        self.max_pool = MaxPool2dConfig([2, 2], strides=[2, 2]).init()
        self.avg_pool = AvgPool2dConfig([3, 3], padding=PaddingConfig2d.Explicit(1, 1)).init()
        self.adaptive = AdaptiveAvgPool2dConfig([3, 2]).init()
        self.group_norm = GroupNormConfig(2, 4).init()
        self.layer_norm = LayerNormConfig(6).init()
        self.embedding = EmbeddingConfig(10, 6).init()
        self.prelu = PReluConfig(num_parameters=4, alpha=0.2).init()
        self.leaky = LeakyReluConfig(negative_slope=0.1).init()
        self.hard = HardSigmoidConfig().init()
        self.gelu, self.sigmoid, self.tanh, self.silu, self.relu = (
            Gelu(),
            Sigmoid(),
            Tanh(),
            Silu(),
            Relu(),
        )
        self.dropout = DropoutConfig(0.5).init()

    def forward(self, image: Tensor, series: Tensor, tokens: Tensor) -> tuple[Tensor, ...]:
        x = self.relu(self.conv(image))  # [2, 4, 6, 6]
        x = self.group_norm(self.dropout(x))
        x = self.prelu(self.max_pool(x))  # [2, 4, 3, 3]
        up = self.deconv(x)  # [2, 3, 5, 5]
        pooled = self.adaptive(self.avg_pool(self.leaky(up)))  # [2, 3, 3, 2]
        s = self.hard(self.conv1d(series))  # [2, 4, 5]
        e = self.layer_norm(self.gelu(self.embedding(tokens)))  # [2, 3, 6]
        e = self.silu(self.tanh(e) + self.sigmoid(e))
        return pooled, s, F.softmax(e, 2), F.log_softmax(e, 1)


def test_every_layer_kind(tmp_path):
    tokens = np.array([[1, 4, 9], [0, 2, 2]], dtype=np.int64)
    proto = check(
        Layers(),
        tmp_path,
        rand(2, 3, 6, 6),
        rand(2, 3, 7, seed=1),
        tokens,
        kinds=[None, None, Int],
    )
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "Gather"} <= ops


def test_global_pool_and_autodiff_models_export_for_inference(tmp_path):
    class Net(Module):
        def __init__(self, device=None):
            self.conv = Conv2dConfig([1, 2], [3, 3]).init(device)
            self.pool = AdaptiveAvgPool2dConfig([1, 1]).init()
            self.dropout = DropoutConfig(0.9).init()

        def forward(self, x):
            return self.pool(self.dropout(self.conv(x)))

    backend = Autodiff(NdArray)
    model = Net(backend.device())
    x = rand(1, 1, 5, 5)
    path = export(model, Tensor.from_data(x, backend.device()), tmp_path / "m.onnx")
    want = model.valid().forward(Tensor.from_data(x)).to_data().as_array()
    np.testing.assert_allclose(run_onnx(path, x)[0], want, rtol=1e-5, atol=1e-6)
    assert "GlobalAveragePool" in {n.op_type for n in onnx.load(str(path)).graph.node}


class ReadsValues(Module):
    def __init__(self):
        self.fc = LinearConfig(2, 2).init()

    def forward(self, x):
        y = self.fc(x)
        if float(y.sum()) > 0:  # a branch on a value: ONNX cannot follow it
            return y
        return -y


def test_host_reads_are_an_error_naming_the_layer(tmp_path):
    with pytest.raises(ExportError, match=r"the model \(ReadsValues\) uses tensor values"):
        export(ReadsValues(), Tensor.from_data(rand(1, 2)), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_ops_without_onnx_form_name_the_layer(tmp_path):
    class Angle(Module):
        def forward(self, x):
            return x.atan2(x)

    class Outer(Module):
        def __init__(self):
            self.fc = LinearConfig(2, 2).init()
            self.angle = Angle()

        def forward(self, x):
            return self.angle.forward(self.fc(x))

    with pytest.raises(ExportError, match=r"layer 'angle' \(Angle\) uses `atan2`"):
        export(Outer(), Tensor.from_data(rand(1, 2)), tmp_path / "m.onnx")


def test_arguments_are_checked(tmp_path):
    x = Tensor.from_data(rand(1, 2))
    model = ReadsValues()
    with pytest.raises(ExportError, match="opset 11"):
        export(model, x, tmp_path / "m.onnx", opset=11)
    with pytest.raises(ExportError, match="not a Tensor"):
        export(model, [rand(1, 2)], tmp_path / "m.onnx")
    with pytest.raises(ExportError, match="1 input names for 2"):
        export(Attention(), [x, x], tmp_path / "m.onnx", input_names=["a"])


class Sequences(Module):
    """1-d pools, instance and RMS norms, and the recurrent layers (unrolled over the steps)."""

    def __init__(self):
        self.max_pool = MaxPool1dConfig(2, stride=2).init()
        self.avg_pool = AvgPool1dConfig(3, padding=PaddingConfig1d.Explicit(1)).init()
        self.instance_norm = InstanceNormConfig(4).init()
        self.rms_norm = RmsNormConfig(4).init()
        self.lstm = LstmConfig(4, 5, True).init()
        self.gru = GruConfig(5, 3, True).init()

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        y = self.instance_norm(self.avg_pool(self.max_pool(x)))  # [2, 4, 4]
        y = self.rms_norm(y.swap_dims(1, 2))  # [2, 4 steps, 4 features]
        hidden, state = self.lstm(y)
        return self.gru(hidden), state.hidden


def test_sequence_layers(tmp_path):
    check(Sequences(), tmp_path, rand(2, 4, 8))


def test_a_shared_parameter_is_one_initializer(tmp_path):
    class Tied(Module):
        def __init__(self):
            self.first = LinearConfig(3, 3).init()
            self.second = self.first  # the same layer twice: tied weights

        def forward(self, x):
            return self.second(F.relu(self.first(x)))

    proto = check(Tied(), tmp_path, rand(2, 3))
    assert [i.name for i in proto.graph.initializer][:2] == ["first.weight", "first.bias"]
    assert "second.weight" not in {i.name for i in proto.graph.initializer}


def test_plain_tensors_and_positional_encoding_become_constants(tmp_path):
    class Shifted(Module):
        def __init__(self):
            self.encoding = PositionalEncodingConfig(4, max_sequence_size=16).init()
            self.offset = Tensor.from_data(rand(1, 1, 4, seed=3))  # a constant, not a Param
            self.fc = LinearConfig(4, 4).init()

        def forward(self, x):
            return self.fc(self.encoding(x) + self.offset)

    model = Shifted()
    offset = model.offset
    check(model, tmp_path, rand(2, 5, 4))
    assert model.offset is offset  # the user's module is left as it was


def test_integer_and_bool_results(tmp_path):
    class Classify(Module):
        def __init__(self):
            self.fc = LinearConfig(4, 3).init()

        def forward(self, x):
            logits = self.fc(x)
            masked = logits.mask_fill(logits.lower_elem(0.0), 0.0)
            return logits.argmax(1), masked.greater_elem(0.1), (x * 10).int() % 3

    model = Classify()
    x = rand(5, 4)
    ours = model.forward(Tensor.from_data(x))
    path = export(model, Tensor.from_data(x), tmp_path / "m.onnx")
    theirs = run_onnx(path, x)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(b, a.to_data().as_array())
