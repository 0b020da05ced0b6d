"""Losses and their gradients against PyTorch (fixtures from tools/gen_optim_fixtures.py).

Each case runs on Autodiff(NdArray) in float64 (to 1e-10) and float32 (to 1e-5 relative).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.config import ConfigError
from burn.nn.loss import (
    BinaryCrossEntropyLossConfig,
    CrossEntropyLossConfig,
    HuberLossConfig,
    MseLoss,
    Reduction,
)
from burn.tensor import DType, Int, Tensor
from burn.tensor.errors import ShapeError

B = Autodiff(NdArray)
DEVICE = B.device()
WEIGHTS = [1.0, 2.0, 0.5, 3.0, 1.5]
TOLERANCE = {"f64": dict(rtol=1e-10, atol=1e-13), "f32": dict(rtol=1e-5, atol=1e-7)}
DTYPES = {"f64": DType.F64, "f32": DType.F32}

with np.load(Path(__file__).parent / "fixtures" / "losses.npz") as _data:
    REF = dict(_data)

CE_CASES = {
    "ce": CrossEntropyLossConfig(),
    "ce_weights": CrossEntropyLossConfig(weights=WEIGHTS),
    "ce_smoothing": CrossEntropyLossConfig(smoothing=0.1),
    "ce_smoothing_weights": CrossEntropyLossConfig(weights=WEIGHTS, smoothing=0.2),
    "ce_pad": CrossEntropyLossConfig(pad_tokens=[1]),
    "ce_pads": CrossEntropyLossConfig(pad_tokens=[1, 3]),
    "ce_pad_weights": CrossEntropyLossConfig(pad_tokens=[1], weights=WEIGHTS),
    "ce_pad_smoothing": CrossEntropyLossConfig(pad_tokens=[0, 4], smoothing=0.1),
    "ce_pad_smoothing_weights": CrossEntropyLossConfig(
        pad_tokens=[2], weights=WEIGHTS, smoothing=0.3
    ),
    "ce_probs": CrossEntropyLossConfig(logits=False),
    "ce_probs_smoothing_weights": CrossEntropyLossConfig(
        logits=False, weights=WEIGHTS, smoothing=0.1
    ),
}

BCE_OPTIONS = {
    "logits": dict(logits=True),
    "probs": dict(),
    "logits_weights": dict(logits=True, weights=True),
    "probs_weights": dict(weights=True),
    "logits_smoothing": dict(logits=True, smoothing=0.1),
    "probs_smoothing_weights": dict(weights=True, smoothing=0.2),
}


def leaf(name: str, tag: str) -> Tensor:
    return Tensor.from_data(REF[f"{name}__input"], DEVICE, dtype=DTYPES[tag]).require_grad()


def targets(name: str) -> Tensor:
    return Tensor.from_data(REF[f"{name}__targets"].astype(np.int64), DEVICE)


def check(name: str, tag: str, x: Tensor, loss: Tensor) -> None:
    assert loss.dims() == [1]
    np.testing.assert_allclose(loss.to_data().as_array()[0], REF[f"{name}__loss"], **TOLERANCE[tag])
    grad = x.grad(loss.backward())
    np.testing.assert_allclose(grad.to_data().as_array(), REF[f"{name}__grad"], **TOLERANCE[tag])


@pytest.mark.parametrize("tag", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CE_CASES))
def test_cross_entropy_matches_torch(name, tag):
    x = leaf(name, tag)
    loss = CE_CASES[name].init(DEVICE).forward(x, targets(name))
    check(name, tag, x, loss)


@pytest.mark.parametrize("tag", ["f64", "f32"])
@pytest.mark.parametrize("rank", ["1d", "2d"])
@pytest.mark.parametrize("option", sorted(BCE_OPTIONS))
def test_binary_cross_entropy_matches_torch(option, rank, tag):
    name = f"bce_{rank}_{option}"
    options = dict(BCE_OPTIONS[option])
    config = BinaryCrossEntropyLossConfig(logits=options.get("logits", False))
    if options.get("weights"):
        config = config.with_weights([float(w) for w in REF[f"{name}__weights"]])
    if "smoothing" in options:
        config = config.with_smoothing(options["smoothing"])
    x = leaf(name, tag)
    check(name, tag, x, config.init(DEVICE).forward(x, targets(name)))


@pytest.mark.parametrize("tag", ["f64", "f32"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_matches_torch(reduction, tag):
    name = f"mse_{reduction}"
    x = leaf(name, tag)
    y = Tensor.from_data(REF[f"{name}__targets"], DEVICE, dtype=DTYPES[tag])
    check(name, tag, x, MseLoss().forward(x, y, Reduction(reduction)))


@pytest.mark.parametrize("tag", ["f64", "f32"])
@pytest.mark.parametrize("delta", [1.0, 0.5])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_huber_matches_torch(reduction, delta, tag):
    name = f"huber_{reduction}_{str(delta).replace('.', '_')}"
    x = leaf(name, tag)
    y = Tensor.from_data(REF[f"{name}__targets"], DEVICE, dtype=DTYPES[tag])
    loss = HuberLossConfig(delta).init().forward(x, y, Reduction(reduction))
    check(name, tag, x, loss)


def test_reduction_auto_is_mean():
    x = Tensor.from_data([[1.0, 2.0], [3.0, 5.0]])
    y = Tensor.zeros([2, 2])
    loss = MseLoss()
    assert loss.forward(x, y, Reduction.Auto).to_data().to_list() == [9.75]
    assert loss.forward(x, y, Reduction.Sum).to_data().to_list() == [39.0]
    assert loss.forward_no_reduction(x, y).dims() == [2, 2]
    huber = HuberLossConfig(1.0).init()
    assert huber.forward_no_reduction(x, y).to_data().to_list() == [[0.5, 1.5], [2.5, 4.5]]


def test_cross_entropy_is_stable_for_huge_logits():
    logits = Tensor.from_data([[1e4, -1e4, 0.0], [-5e3, 5e3, 5e3]], DEVICE).require_grad()
    t = Tensor[1, Int].from_data([1, 0], DEVICE)
    loss = CrossEntropyLossConfig().init(DEVICE).forward(logits, t)
    value = loss.to_data().as_array()[0]
    assert np.isclose(value, (2e4 + 1e4 + np.log(2)) / 2, rtol=1e-6)
    grad = logits.grad(loss.backward()).to_data().as_array()
    assert np.isfinite(grad).all()


def test_binary_cross_entropy_with_logits_is_stable():
    z = Tensor.from_data([1000.0, -1000.0, 0.0], DEVICE).require_grad()
    y = Tensor[1, Int].from_data([0, 1, 1], DEVICE)
    loss = BinaryCrossEntropyLossConfig(logits=True).init(DEVICE).forward(z, y)
    np.testing.assert_allclose(loss.to_data().as_array()[0], (2000 + np.log(2)) / 3, rtol=1e-6)
    assert np.isfinite(z.grad(loss.backward()).to_data().as_array()).all()


def test_configs_follow_burn():
    ce = CrossEntropyLossConfig()
    assert (ce.pad_tokens, ce.weights, ce.smoothing, ce.logits) == (None, None, None, True)
    bce = BinaryCrossEntropyLossConfig()
    assert (bce.weights, bce.smoothing, bce.logits) == (None, None, False)
    config = CrossEntropyLossConfig().with_pad_tokens([0]).with_smoothing(0.1)
    assert CrossEntropyLossConfig.from_json(config.to_json()) == config
    with pytest.raises(ConfigError, match="CrossEntropyLossConfig.smoothing"):
        CrossEntropyLossConfig(smoothing=1.5)
    with pytest.raises(ValueError, match="positive"):
        BinaryCrossEntropyLossConfig(weights=[1.0, 0.0]).init()
    with pytest.raises(ConfigError, match=r"HuberLossConfig\.delta: must be >= 0, got -1\.0"):
        HuberLossConfig(-1.0)  # refused when built, not when first used


def test_shape_errors_name_the_loss():
    loss = CrossEntropyLossConfig().init()
    with pytest.raises(ShapeError, match="CrossEntropyLoss"):
        loss.forward(Tensor.zeros([3, 4]), Tensor[1, Int].from_data([0, 1]))
    with pytest.raises(ShapeError, match="class weights"):
        CrossEntropyLossConfig(weights=[1.0, 2.0]).init().forward(
            Tensor.zeros([2, 4]), Tensor[1, Int].from_data([0, 1])
        )
    with pytest.raises(ShapeError, match="BinaryCrossEntropyLoss"):
        BinaryCrossEntropyLossConfig().init().forward(
            Tensor.zeros([2, 3]), Tensor[2, Int].from_data([[0, 1]])
        )


def test_losses_work_on_a_plain_backend():
    """Without autodiff (validation), the same numbers come out."""
    x = Tensor.from_data(REF["ce_pads__input"], NdArray.device(), dtype=DType.F64)
    t = Tensor.from_data(REF["ce_pads__targets"].astype(np.int64), NdArray.device())
    loss = CrossEntropyLossConfig(pad_tokens=[1, 3]).init().forward(x, t)
    np.testing.assert_allclose(loss.to_data().as_array()[0], REF["ce_pads__loss"], rtol=1e-12)


def test_live_against_torch():
    torch = pytest.importorskip("torch")
    f = torch.nn.functional
    rng = np.random.default_rng(3)
    z = rng.normal(size=(7, 4)) * 3
    t = rng.integers(0, 4, size=7)
    w = [0.5, 1.0, 2.0, 1.5]
    zt = torch.tensor(z, requires_grad=True)
    expected = f.cross_entropy(
        zt, torch.tensor(t), weight=torch.tensor(w, dtype=torch.float64), label_smoothing=0.15
    )
    expected.backward()
    x = Tensor.from_data(z, DEVICE, dtype=DType.F64).require_grad()
    loss = (
        CrossEntropyLossConfig(weights=w, smoothing=0.15)
        .init(DEVICE)
        .forward(x, Tensor.from_data(t, DEVICE))
    )
    np.testing.assert_allclose(loss.to_data().as_array()[0], expected.item(), rtol=1e-12)
    grad = x.grad(loss.backward()).to_data().as_array()
    np.testing.assert_allclose(grad, zt.grad.numpy(), rtol=1e-10, atol=1e-14)
