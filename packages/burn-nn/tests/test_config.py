"""`@config`: constructor, defaults, with_<field>, JSON save/load with validation, equality."""

from __future__ import annotations

import enum
import json

import pytest
from burn.config import ConfigError, config, is_config


@config
class MlpConfig:
    d_in: int
    d_out: int
    dropout: float = 0.1
    hidden: list[int] = [16]
    name: str | None = None


class Activation(enum.Enum):
    RELU = "relu"
    GELU = "gelu"


@config
class ModelConfig:
    encoder: MlpConfig
    heads: list[MlpConfig] = []
    activation: Activation = Activation.RELU
    seed: int = 42


def test_the_issue_snippet_runs_verbatim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = """
from burn.prelude import *
from burn.backend import NdArray
from burn.record import NamedMpkFileRecorder, FullPrecisionSettings, CompactRecorder

@config
class MlpConfig:
    d_in: int
    d_out: int
    dropout: float = 0.1

cfg = MlpConfig(4, 2).with_dropout(0.2)
cfg.save("mlp.json")
assert MlpConfig.load("mlp.json") == cfg
"""
    exec(compile(code, "issue_snippet", "exec"), {})
    assert json.loads((tmp_path / "mlp.json").read_text()) == {
        "d_in": 4,
        "d_out": 2,
        "dropout": 0.2,
    }


def test_required_fields_by_position_and_keyword():
    assert MlpConfig(4, 2) == MlpConfig(d_out=2, d_in=4)
    cfg = MlpConfig(4, 2, dropout=0.5)
    assert (cfg.d_in, cfg.d_out, cfg.dropout, cfg.hidden, cfg.name) == (4, 2, 0.5, [16], None)


def test_constructor_errors():
    with pytest.raises(TypeError, match=r"missing required field\(s\) \['d_out'\]"):
        MlpConfig(4)
    with pytest.raises(TypeError, match="positional"):
        MlpConfig(4, 2, 0.3)
    with pytest.raises(TypeError, match="no field 'dropot'"):
        MlpConfig(4, 2, dropot=0.3)
    with pytest.raises(ConfigError, match=r"MlpConfig.d_in: expected int, got str"):
        MlpConfig("4", 2)
    with pytest.raises(ConfigError, match="expected int, got bool"):
        MlpConfig(True, 2)


def test_ints_are_accepted_for_floats():
    cfg = MlpConfig(4, 2, dropout=1)
    assert cfg.dropout == 1.0 and isinstance(cfg.dropout, float)


def test_with_field_returns_a_changed_copy():
    cfg = MlpConfig(4, 2)
    other = cfg.with_dropout(0.3).with_name("mlp")
    assert cfg.dropout == 0.1 and cfg.name is None
    assert other.dropout == 0.3 and other.name == "mlp"
    with pytest.raises(ConfigError):
        cfg.with_d_in("x")


def test_mutable_defaults_are_not_shared():
    a, b = MlpConfig(1, 1), MlpConfig(1, 1)
    a.hidden.append(3)
    assert b.hidden == [16]


def test_scalar_defaults_are_checked_once_and_stay_checked():
    """Scalar defaults are converted and checked on the first instance and reused after
    (a loss's config is built in every training step); a bad one fails every time."""

    @config
    class Scaled:
        factor: float = 2
        label: str = "x"

    first, second = Scaled(), Scaled(factor=3)
    assert type(first.factor) is float and first.factor == 2.0
    assert second.factor == 3.0 and Scaled().factor == 2.0 and Scaled().label == "x"

    @config
    class Broken:
        count: int = "many"

    for _ in range(2):
        with pytest.raises(ConfigError, match="Broken.count"):
            Broken()


def test_equality_and_repr():
    assert MlpConfig(4, 2) == MlpConfig(4, 2)
    assert MlpConfig(4, 2) != MlpConfig(4, 3)
    assert (
        repr(MlpConfig(4, 2)) == "MlpConfig(d_in=4, d_out=2, dropout=0.1, hidden=[16], name=None)"
    )
    assert is_config(MlpConfig) and is_config(MlpConfig(1, 1)) and not is_config(3)


def test_nested_configs_and_lists_round_trip(tmp_path):
    cfg = ModelConfig(MlpConfig(4, 8), heads=[MlpConfig(8, 2), MlpConfig(8, 3, name="b")])
    cfg = cfg.with_activation(Activation.GELU)
    path = cfg.save(tmp_path / "model.json")
    data = json.loads(path.read_text())
    assert data["activation"] == "gelu"
    assert data["heads"][1] == {"d_in": 8, "d_out": 3, "dropout": 0.1, "hidden": [16], "name": "b"}
    loaded = ModelConfig.load(path)
    assert loaded == cfg
    assert isinstance(loaded.heads[0], MlpConfig)
    assert loaded.activation is Activation.GELU


def test_nested_config_from_a_dict_is_converted():
    cfg = ModelConfig({"d_in": 1, "d_out": 2})
    assert cfg.encoder == MlpConfig(1, 2)


def _write(tmp_path, data) -> str:
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_load_errors_name_the_file_and_field(tmp_path):
    path = _write(tmp_path, {"d_in": 1})
    with pytest.raises(
        ConfigError, match=r"cfg.json: MlpConfig: missing required field\(s\) \['d_out'\]"
    ):
        MlpConfig.load(path)
    path = _write(tmp_path, {"d_in": 1, "d_out": 2, "dropot": 0.1})
    with pytest.raises(ConfigError, match=r"cfg.json: MlpConfig: unknown field\(s\) \['dropot'\]"):
        MlpConfig.load(path)
    path = _write(tmp_path, {"d_in": 1, "d_out": "2"})
    with pytest.raises(ConfigError, match="cfg.json: MlpConfig.d_out: expected int, got str"):
        MlpConfig.load(path)
    path = _write(tmp_path, {"encoder": {"d_in": 1, "d_out": 2}, "heads": [{"d_in": 1}]})
    with pytest.raises(ConfigError, match=r"ModelConfig.heads\[0\]: missing required field"):
        ModelConfig.load(path)
    path = _write(tmp_path, {"encoder": {"d_in": 1, "d_out": 2}, "activation": "tanh"})
    with pytest.raises(ConfigError, match="activation: expected one of Activation"):
        ModelConfig.load(path)
    path = _write(tmp_path, "{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        MlpConfig.load(path)
    with pytest.raises(ConfigError, match="not found"):
        MlpConfig.load(tmp_path / "absent.json")


def test_user_methods_and_post_init_are_kept():
    @config
    class RangeConfig:
        low: float
        high: float

        def __post_init__(self):
            if self.low > self.high:
                raise ValueError("low must not exceed high")

        def width(self) -> float:
            return self.high - self.low

    assert RangeConfig(1, 3).width() == 2.0
    with pytest.raises(ValueError):
        RangeConfig(3, 1)


def test_required_fields_may_follow_defaulted_ones():
    @config
    class Odd:
        a: int = 1
        b: int

    assert Odd(5) == Odd(b=5, a=1)


def test_a_config_subclass_inherits_fields_and_defaults():
    @config
    class Wider(MlpConfig):
        width: int = 128

        def init(self):
            return self.d_in * self.width

    cfg = Wider(2, 3, width=4)
    assert (cfg.dropout, cfg.hidden, cfg.init()) == (0.1, [16], 8)
    assert list(Wider.__config_fields__) == ["d_in", "d_out", "dropout", "hidden", "name", "width"]
