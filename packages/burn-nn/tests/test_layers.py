"""Layers against their PyTorch counterparts with the same weights (fixtures in layers.npz)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.module import Param
from burn.nn import (
    DropoutConfig,
    Embedding,
    EmbeddingConfig,
    Gelu,
    Identity,
    Initializer,
    LeakyRelu,
    LeakyReluConfig,
    Linear,
    LinearConfig,
    Relu,
    Sigmoid,
    Tanh,
)
from burn.tensor import DType, Tensor

with np.load(Path(__file__).parent / "fixtures" / "layers.npz") as _data:
    REF = dict(_data)

F64 = DType.F64


def t(name: str) -> Tensor:
    return Tensor.from_data(REF[name], dtype=F64)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(bias):
    name = f"linear_bias_{bias}".lower()
    layer = Linear(Param(t(f"{name}__weight")), Param(t(f"{name}__bias")) if bias else None)
    out = layer.forward(t(f"{name}__x"))
    np.testing.assert_allclose(out.to_data().as_array(), REF[f"{name}__out"], rtol=1e-12)
    one = layer.forward(t(f"{name}__x").slice([(0, 1), (0, 1)]).reshape([4]))
    np.testing.assert_allclose(one.to_data().as_array(), REF[f"{name}__out"][0, 0], rtol=1e-12)


def test_linear_config_defaults():
    config = LinearConfig(8, 3)
    assert config.bias is True
    assert config.initializer == Initializer.KaimingUniform(1 / math.sqrt(3), False)
    layer = config.init()
    assert layer.weight.dims() == [8, 3] and layer.bias.dims() == [3]
    bound = 1 / math.sqrt(8)  # torch.nn.Linear's range
    assert np.abs(layer.weight.val().to_data().as_array()).max() <= bound
    assert LinearConfig(8, 3).with_bias(False).init().bias is None
    assert LinearConfig.from_json(config.to_json()) == config
    assert layer.num_params() == 27


def test_embedding_matches_torch():
    layer = Embedding(Param(t("embedding__weight")))
    out = layer.forward(Tensor.from_data(REF["embedding__indices"].astype(np.int64)))
    np.testing.assert_allclose(out.to_data().as_array(), REF["embedding__out"], rtol=1e-12)
    config = EmbeddingConfig(10, 3)
    assert config.initializer == Initializer.Normal(0.0, 1.0)
    assert config.init().weight.dims() == [10, 3]


@pytest.mark.parametrize(
    "name, module",
    [
        ("relu", Relu()),
        ("gelu", Gelu()),
        ("sigmoid", Sigmoid()),
        ("tanh", Tanh()),
        ("leaky_relu", LeakyReluConfig().init()),
        ("leaky_relu_0_2", LeakyRelu(0.2)),
    ],
)
def test_activation_modules_match_torch(name, module):
    out = module.forward(t("activation__x"))
    np.testing.assert_allclose(
        out.to_data().as_array(), REF[f"activation__{name}"], rtol=1e-12, atol=1e-15
    )
    assert module.is_constant()


def test_identity():
    x = t("activation__x")
    assert Identity().forward(x) is x


def test_dropout_is_active_only_on_autodiff():
    dropout = DropoutConfig(0.25).init()
    x = Tensor.ones([200, 500], NdArray.device())
    assert dropout.forward(x) is x  # inference backend: the identity
    B = Autodiff(NdArray)
    B.seed(3)
    out = dropout.forward(Tensor.ones([200, 500], B.device())).to_data().as_array()
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.75)
    assert abs(out.mean() - 1.0) < 0.02


def test_dropout_config_checks_probability():
    with pytest.raises(ValueError, match="between 0 and 1"):
        DropoutConfig(1.5).init()
    assert DropoutConfig(0.0).init().forward(
        Tensor.ones([2], Autodiff(NdArray).device())
    ).dims() == [2]


def test_layers_train_and_record():
    """Params of layers are found by the optimizer and saved in the module record."""
    from burn.optim import GradientsParams, SgdConfig

    B = Autodiff(NdArray)
    layer = LinearConfig(3, 2).init(B.device())
    x = Tensor.ones([4, 3], B.device())
    loss = layer.forward(x).square().sum()
    grads = GradientsParams.from_grads(loss.backward(), layer)
    assert len(grads) == 2
    new = SgdConfig().init().step(0.01, layer, grads)
    assert new.weight.id == layer.weight.id
    assert not np.array_equal(
        new.weight.val().to_data().as_array(), layer.weight.val().to_data().as_array()
    )
    record = new.into_record()
    assert set(record) == {"weight", "bias"}


def test_live_against_torch():
    torch = pytest.importorskip("torch")
    lin = torch.nn.Linear(5, 3).double()
    ours = Linear(
        Param(Tensor.from_data(lin.weight.detach().numpy().T.copy(), dtype=F64)),
        Param(Tensor.from_data(lin.bias.detach().numpy().copy(), dtype=F64)),
    )
    x = np.random.default_rng(0).normal(size=(2, 5))
    np.testing.assert_allclose(
        ours.forward(Tensor.from_data(x, dtype=F64)).to_data().as_array(),
        lin(torch.tensor(x)).detach().numpy(),
        rtol=1e-12,
    )
