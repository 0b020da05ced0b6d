"""Configs with wrong types inside nested payloads and out-of-range sizes: `ConfigError`s naming
the field, at construction and at load."""

from __future__ import annotations

import json

import pytest
from burn.config import ConfigError
from burn.nn import Conv2dConfig, DropoutConfig, Initializer, LinearConfig
from burn.optim import AdamConfig, GradientClippingConfig


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: LinearConfig(-3, 2), r"LinearConfig\.d_input: must be an integer >= 1, got -3"),
        (lambda: LinearConfig(3, 0), r"LinearConfig\.d_output: must be an integer >= 1, got 0"),
        (lambda: Conv2dConfig([1, 8], [3, -3]), r"Conv2dConfig\.kernel_size\[1\]: must be"),
        (lambda: DropoutConfig(1.5), r"DropoutConfig\.prob: must be between 0 and 1"),
        (lambda: DropoutConfig(float("nan")), r"DropoutConfig\.prob"),
        (lambda: AdamConfig().with_beta_1(1.0), r"AdamConfig\.beta_1: must be in \[0, 1\)"),
        (lambda: AdamConfig().with_epsilon(-1e-8), r"AdamConfig\.epsilon: must be >= 0"),
        (lambda: Initializer.KaimingUniform(gain="big"), r"KaimingUniform\.gain: expected float"),
        (lambda: Initializer.Normal(0.0, -1.0), r"Normal\.std: must be >= 0"),
        (lambda: GradientClippingConfig.Norm("1"), r"Norm\.max_norm: expected float"),
        (lambda: GradientClippingConfig.Value(0.0), r"Value\.threshold: must be > 0"),
    ],
)
def test_bad_values_are_refused_when_the_config_is_built(build, match):
    with pytest.raises(ConfigError, match=match):
        build()


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ({"d_input": 3, "d_output": -1}, r"LinearConfig\.d_output: must be"),
        (
            {"d_input": 3, "d_output": 2, "initializer": {"KaimingUniform": {"gain": [1]}}},
            r"LinearConfig\.initializer\.KaimingUniform: KaimingUniform\.gain: expected float",
        ),
        (
            {"d_input": 3, "d_output": 2, "initializer": {"Constant": {"value": None}}},
            r"initializer\.Constant: Constant\.value: expected float",
        ),
        (
            {"d_input": 3, "d_output": 2, "initializer": {"Normal": {"mean": 0.0}}},
            r"initializer\.Normal: .*std",
        ),
        (
            {"d_input": 3, "d_output": 2, "initializer": {"Zeros": {"extra": 1}}},
            r"initializer\.Zeros: .*extra",
        ),
    ],
)
def test_bad_nested_payloads_are_refused_at_load(tmp_path, payload, match):
    path = tmp_path / "linear.json"
    path.write_text(json.dumps(payload))
    with pytest.raises(ConfigError, match=match) as caught:
        LinearConfig.load(path)
    assert "linear.json" in str(caught.value)


@pytest.mark.parametrize(
    "clipping",
    [{"Norm": "big"}, {"Norm": None}, {"Norm": -1.0}, {"Value": [1.0]}, {"Bogus": 1.0}, "Norm"],
)
def test_bad_gradient_clipping_payloads_are_refused_at_load(clipping):
    data = AdamConfig().to_dict()
    data["grad_clipping"] = clipping
    with pytest.raises(ConfigError, match="AdamConfig.grad_clipping"):
        AdamConfig.from_dict(data)


def test_bad_padding_payloads_are_refused_at_load():
    data = Conv2dConfig([1, 8], [3, 3]).to_dict()
    for padding in ({"Explicit": None}, {"Explicit": [1, -1]}, {"Explicit": ["a", "b"]}, 7):
        data["padding"] = padding
        with pytest.raises(ConfigError, match="Conv2dConfig.padding"):
            Conv2dConfig.from_dict(data)


def test_a_failed_save_is_a_config_error_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"cannot save config LinearConfig: .*file/sub"):
        LinearConfig(2, 3).save(blocker / "sub" / "config.json")
