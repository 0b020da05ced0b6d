"""Fuzzed config files: nested configs and variants, mutated as text and as trees."""

from __future__ import annotations

import json

from burn.nn import Conv2dConfig, LinearConfig
from burn.optim import AdamConfig, GradientClippingConfig, SgdConfig
from burn.prelude import config

from .conftest import BYTE_MUTATORS, check, mutate_tree


@config
class Experiment:
    """A config nesting layer configs, variants and optimizer configs, like a training run's."""

    encoder: Conv2dConfig
    head: LinearConfig
    optimizer: AdamConfig
    fallback: SgdConfig | None = None
    layers: list[LinearConfig] = []
    seed: int = 42
    learning_rate: float = 1.0e-3


def _corpus() -> list[bytes]:
    experiment = Experiment(
        Conv2dConfig([1, 8], [3, 3]).with_stride([2, 2]),
        LinearConfig(8, 10),
        AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(1.0)),
        layers=[LinearConfig(4, 4, bias=False), LinearConfig(4, 2)],
    )
    return [experiment.to_json().encode()]


def _tree(rng, raw: bytes) -> bytes:
    tree = json.loads(raw)
    try:
        return json.dumps(mutate_tree(rng, tree)).encode()
    except (TypeError, ValueError, RecursionError):  # bytes keys, NaN: not writable as JSON
        return raw[: len(raw) // 2]


def test_fuzzed_configs_give_config_errors_only(fuzz):
    def load(raw: bytes) -> None:
        text = raw.decode("utf8", errors="replace")
        Experiment.from_json(text, where="fuzz.json")

    stats = fuzz("config .json", _corpus(), load, list(BYTE_MUTATORS) + [_tree] * 6)
    check(stats)
