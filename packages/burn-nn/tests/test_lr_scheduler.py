"""LR schedulers against `torch.optim.lr_scheduler` (fixtures from tools/gen_optim_fixtures.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from burn.optim.lr_scheduler import (
    ConstantLr,
    CosineAnnealingLrSchedulerConfig,
    ExponentialLrSchedulerConfig,
    LinearLrSchedulerConfig,
    LrScheduler,
    NoamLrSchedulerConfig,
    StepLrSchedulerConfig,
    as_scheduler,
)
from burn.record import NamedMpkBytesRecorder

CASES = json.loads((Path(__file__).parent / "fixtures" / "schedulers.json").read_text())

BUILD = {
    "exponential": lambda c: ExponentialLrSchedulerConfig(c["initial_lr"], c["gamma"]).init(),
    "step": lambda c: (
        StepLrSchedulerConfig(c["initial_lr"], c["step_size"]).with_gamma(c["gamma"]).init()
    ),
    "linear": lambda c: LinearLrSchedulerConfig(
        c["initial_lr"], c["final_lr"], c["num_iters"]
    ).init(),
    "cosine": lambda c: (
        CosineAnnealingLrSchedulerConfig(c["initial_lr"], c["num_iters"])
        .with_min_lr(c["min_lr"])
        .init()
    ),
    "noam": lambda c: (
        NoamLrSchedulerConfig(c["init_lr"])
        .with_warmup_steps(c["warmup_steps"])
        .with_model_size(c["model_size"])
        .init()
    ),
    "constant": lambda c: c["lr"],  # a plain float is a constant schedule
}


@pytest.mark.parametrize("name", sorted(BUILD))
def test_scheduler_matches_torch(name):
    case = CASES[name]
    scheduler = as_scheduler(BUILD[name](case["config"]))
    ours = [scheduler.step() for _ in case["rates"]]
    for i, (a, b) in enumerate(zip(ours, case["rates"], strict=True)):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), f"step {i}: {a} != {b}"


def test_noam_formula():
    scheduler = NoamLrSchedulerConfig(1.0).init()  # Burn's defaults: 4000 warm-up steps, 512
    rates = [scheduler.step() for _ in range(8000)]
    peak = max(range(len(rates)), key=rates.__getitem__)
    assert peak == 3999  # the 4000th step
    assert math.isclose(rates[3999], 512**-0.5 * 4000**-0.5)
    assert math.isclose(rates[0], 512**-0.5 * 4000**-1.5)


@pytest.mark.parametrize("name", sorted(BUILD))
def test_resume_from_record(name):
    """Save after 30 steps, load into a fresh scheduler: the sequence continues unchanged."""
    config = CASES[name]["config"]
    straight = as_scheduler(BUILD[name](config))
    expected = [straight.step() for _ in range(60)]
    first = as_scheduler(BUILD[name](config))
    got = [first.step() for _ in range(30)]
    recorder = NamedMpkBytesRecorder()
    record = recorder.load(recorder.record({"scheduler": first.to_record()}))["scheduler"]
    resumed = as_scheduler(BUILD[name](config)).load_record(record)
    got += [resumed.step() for _ in range(30)]
    assert got == expected


def test_linear_stays_at_final_and_cosine_restarts():
    linear = LinearLrSchedulerConfig(0.5, 0.1, 4).init()
    assert [round(linear.step(), 12) for _ in range(7)] == [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1]
    cosine = CosineAnnealingLrSchedulerConfig(1.0, 2).init()
    assert [round(cosine.step(), 12) for _ in range(6)] == [1.0, 0.5, 0.0, 1.0, 0.5, 0.0]


def test_invalid_configs_are_refused():
    with pytest.raises(ValueError, match="Initial learning rate"):
        ExponentialLrSchedulerConfig(0.0, 0.5).init()
    with pytest.raises(ValueError, match="Gamma"):
        ExponentialLrSchedulerConfig(0.1, 1.5).init()
    with pytest.raises(ValueError, match="Minimum learning rate"):
        CosineAnnealingLrSchedulerConfig(0.1, 10).with_min_lr(0.5).init()
    # Sizes are refused when the config is built (ConfigError names the field).
    with pytest.raises(ValueError, match=r"LinearLrSchedulerConfig\.num_iters: must be"):
        LinearLrSchedulerConfig(0.1, 0.01, 0)
    with pytest.raises(ValueError, match=r"StepLrSchedulerConfig\.step_size: must be"):
        StepLrSchedulerConfig(0.1, 0)
    with pytest.raises(ValueError, match=r"NoamLrSchedulerConfig\.model_size: must be"):
        NoamLrSchedulerConfig(1.0).with_model_size(0)


def test_constant_and_float():
    assert isinstance(as_scheduler(0.01), ConstantLr)
    assert as_scheduler(0.01).step() == 0.01
    assert isinstance(ConstantLr(0.1), LrScheduler)
    with pytest.raises(TypeError):
        as_scheduler("fast")


def test_configs_serialise():
    config = CosineAnnealingLrSchedulerConfig(0.1, 10).with_min_lr(0.01)
    assert CosineAnnealingLrSchedulerConfig.from_json(config.to_json()) == config
    assert NoamLrSchedulerConfig(1.0).warmup_steps == 4000
    assert StepLrSchedulerConfig(0.1, 5).gamma == 0.1


def test_live_against_torch():
    torch = pytest.importorskip("torch")
    param = torch.zeros(1, requires_grad=True)
    optim = torch.optim.SGD([param], lr=0.3)
    sched = torch.optim.lr_scheduler.StepLR(optim, step_size=3, gamma=0.7)
    ours = StepLrSchedulerConfig(0.3, 3).with_gamma(0.7).init()
    for _ in range(20):
        assert math.isclose(ours.step(), sched.get_last_lr()[0], rel_tol=1e-12)
        optim.step()
        sched.step()
