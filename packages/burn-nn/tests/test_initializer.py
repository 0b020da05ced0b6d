"""Initializers draw from the distributions they document (statistical checks, fixed seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.nn import Initializer
from burn.tensor import DType

N = 100_000  # samples per check: the KS bound below is ~4x its 1% critical value
KS_BOUND = 0.02


@pytest.fixture(autouse=True)
def _seed():
    NdArray.seed(1234)


def draw(init, shape=(200, 500), fan_in=None, fan_out=None) -> np.ndarray:
    t = init.init(list(shape), fan_in=fan_in, fan_out=fan_out)
    assert t.dims() == list(shape)
    return t.to_data().as_array().astype(np.float64).ravel()


def ks_uniform(x: np.ndarray, low: float, high: float) -> float:
    x = np.sort(x)
    cdf = np.clip((x - low) / (high - low), 0, 1)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


def ks_normal(x: np.ndarray, mean: float, std: float) -> float:
    x = np.sort(x)
    erf = np.vectorize(math.erf)
    cdf = 0.5 * (1 + erf((x - mean) / (std * math.sqrt(2))))
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


def check_uniform(x: np.ndarray, low: float, high: float) -> None:
    assert x.min() >= low and x.max() <= high
    width = high - low
    assert x.min() < low + 0.001 * width and x.max() > high - 0.001 * width  # spans the range
    assert abs(x.mean() - (low + high) / 2) < 0.01 * width
    assert x.std() == pytest.approx(width / math.sqrt(12), rel=0.01)
    assert ks_uniform(x[:20_000], low, high) < KS_BOUND


def check_normal(x: np.ndarray, mean: float, std: float) -> None:
    assert abs(x.mean() - mean) < 0.01 * std
    assert x.std() == pytest.approx(std, rel=0.01)
    assert ks_normal(x[:20_000], mean, std) < KS_BOUND


def test_constant_ones_zeros():
    assert np.all(draw(Initializer.Constant(0.25), (3, 4)) == 0.25)
    assert np.all(draw(Initializer.Ones, (5,)) == 1.0)
    assert np.all(draw(Initializer.Zeros, (2, 2, 2)) == 0.0)


def test_uniform():
    check_uniform(draw(Initializer.Uniform(-0.5, 2.0)), -0.5, 2.0)


def test_normal():
    check_normal(draw(Initializer.Normal(1.5, 0.3)), 1.5, 0.3)


@pytest.mark.parametrize("fan_out_only", [False, True])
@pytest.mark.parametrize("gain", [1.0, 1 / math.sqrt(3), math.sqrt(2)])
def test_kaiming_uniform(gain, fan_out_only):
    fan_in, fan_out = 64, 256
    fan = fan_out if fan_out_only else fan_in
    bound = gain * math.sqrt(3.0 / fan)
    x = draw(Initializer.KaimingUniform(gain, fan_out_only), fan_in=fan_in, fan_out=fan_out)
    check_uniform(x, -bound, bound)


@pytest.mark.parametrize("fan_out_only", [False, True])
def test_kaiming_normal(fan_out_only):
    fan_in, fan_out = 50, 200
    fan = fan_out if fan_out_only else fan_in
    x = draw(Initializer.KaimingNormal(math.sqrt(2), fan_out_only), fan_in=fan_in, fan_out=fan_out)
    check_normal(x, 0.0, math.sqrt(2) / math.sqrt(fan))


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_uniform(gain):
    bound = gain * math.sqrt(6.0 / (30 + 70))
    check_uniform(draw(Initializer.XavierUniform(gain), fan_in=30, fan_out=70), -bound, bound)


def test_xavier_normal():
    std = 0.5 * math.sqrt(2.0 / (30 + 70))
    check_normal(draw(Initializer.XavierNormal(0.5), fan_in=30, fan_out=70), 0.0, std)


def test_fans_are_required_where_used():
    with pytest.raises(ValueError, match="fan_in"):
        Initializer.KaimingUniform(1.0).init([3, 3])
    with pytest.raises(ValueError, match="fan_out"):
        Initializer.KaimingNormal(1.0, fan_out_only=True).init([3, 3], fan_in=3)
    with pytest.raises(ValueError, match="fan_out"):
        Initializer.XavierUniform(1.0).init([3, 3], fan_in=3)
    Initializer.Normal(0.0, 1.0).init([3, 3])  # needs no fan


def test_seed_makes_draws_reproducible():
    a = draw(Initializer.Normal(0.0, 1.0), (10,))
    NdArray.seed(1234)
    assert np.array_equal(a, draw(Initializer.Normal(0.0, 1.0), (10,)))


def test_device_dtype_and_burn_argument_order():
    B = Autodiff(NdArray)
    t = Initializer.XavierUniform(1.0).init_with([4, 2], 4, 2, B.device(), DType.F64)
    assert t.backend is B and t.dtype is DType.F64
    assert Initializer.Ones.init([2], dtype=DType.F64).dtype is DType.F64


def test_variants_compare_by_value():
    assert Initializer.KaimingUniform(0.5, True) == Initializer.KaimingUniform(0.5, True)
    assert Initializer.KaimingUniform(0.5) != Initializer.KaimingNormal(0.5)


def test_bounds_agree_with_torch_init():
    """Where torch is installed: the same widths as torch.nn.init's formulas."""
    torch = pytest.importorskip("torch")
    w = torch.empty(400, 300, dtype=torch.float64)
    torch.nn.init.kaiming_uniform_(w, nonlinearity="relu")  # fan_in = 300
    ours = draw(Initializer.KaimingUniform(math.sqrt(2)), (400, 300), fan_in=300)
    assert abs(w.abs().max().item() - np.abs(ours).max()) < 1e-3
    torch.nn.init.xavier_normal_(w)  # fan_in 300, fan_out 400
    ours = draw(Initializer.XavierNormal(1.0), (400, 300), fan_in=300, fan_out=400)
    assert ours.std() == pytest.approx(w.std().item(), rel=0.02)


def test_initializers_save_and_load_inside_a_config():
    from burn.config import ConfigError, config

    @config
    class LayerConfig:
        d: int
        initializer: Initializer = Initializer.KaimingUniform(1 / math.sqrt(3))

    for init in (Initializer.Ones, Initializer.Constant(0.5), Initializer.XavierNormal(2.0)):
        cfg = LayerConfig(3).with_initializer(init)
        assert LayerConfig.from_json(cfg.to_json()) == cfg
    assert LayerConfig(1).to_dict()["initializer"] == {
        "KaimingUniform": {"gain": 1 / math.sqrt(3), "fan_out_only": False}
    }
    with pytest.raises(ConfigError, match="unknown variant"):
        LayerConfig.from_dict({"d": 1, "initializer": {"Orthogonal": {}}})
