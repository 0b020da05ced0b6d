"""Optimizers against `torch.optim`: 100 steps of a small linear regression, same start.

The references come from `tools/gen_optim_fixtures.py` (committed under fixtures/), so torch is
not needed; where torch is installed, a live comparison runs too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.module import Module, Param
from burn.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    GradientsAccumulator,
    GradientsParams,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)
from burn.optim.lr_scheduler import CosineAnnealingLrSchedulerConfig
from burn.record import NamedMpkBytesRecorder
from burn.tensor import DType, Tensor

FIXTURES = Path(__file__).parent / "fixtures"
CASES = json.loads((FIXTURES / "optim_cases.json").read_text())
B = Autodiff(NdArray)
DEVICE = B.device()
DTYPES = {"f64": DType.F64, "f32": DType.F32}
# f64 shows the rules are the same to rounding; f32 is what training runs in (parameters are
# O(1), so an absolute 1e-5 after 100 steps of f32 rounding is the same bound in practice).
TOLERANCE = {"f64": dict(rtol=1e-9, atol=1e-12), "f32": dict(rtol=1e-5, atol=1e-5)}


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURES / "optim.npz") as data:
        return dict(data)


def build(spec: dict):
    """Our optimizer for a case of the fixture file."""
    kind = spec["kind"]
    clip = None
    if "clip" in spec:
        how, value = spec["clip"]
        clip = (GradientClippingConfig.Value if how == "value" else GradientClippingConfig.Norm)(
            value
        )
    decay = WeightDecayConfig(spec["weight_decay"]) if "weight_decay" in spec else None
    if kind == "sgd":
        momentum = None
        if "momentum" in spec:
            value, dampening, nesterov = spec["momentum"]
            momentum = MomentumConfig(momentum=value, dampening=dampening, nesterov=nesterov)
        return SgdConfig(weight_decay=decay, momentum=momentum, gradient_clipping=clip).init()
    if kind == "adam":
        config = AdamConfig(weight_decay=decay, grad_clipping=clip)
    elif kind == "adamw":
        config = AdamWConfig(grad_clipping=clip)
        if "weight_decay" in spec:
            config = config.with_weight_decay(spec["weight_decay"])
    elif kind == "adagrad":
        config = AdaGradConfig(weight_decay=decay, grad_clipping=clip)
    else:
        config = RmsPropConfig(weight_decay=decay, grad_clipping=clip)
    for field in ("beta_1", "beta_2", "epsilon", "lr_decay", "alpha", "momentum", "centered"):
        if field in spec:
            config = getattr(config, f"with_{field}")(spec[field])
    return config.init()


class Regression(Module):
    """y = x W^T + b, as `torch.nn.Linear` stores it."""

    def __init__(self, weight: Tensor, bias: Tensor):
        self.weight = Param(weight)
        self.bias = Param(bias)

    def forward(self, x: Tensor) -> Tensor:
        return x.matmul(self.weight.val().transpose()) + self.bias.val().unsqueeze()


def problem(reference, tag: str):
    dtype = DTYPES[tag]

    def tensor(name):
        return Tensor.from_data(reference[f"problem_{name}"], DEVICE, dtype=dtype)

    return Regression(tensor("weight"), tensor("bias")), tensor("x"), tensor("y")


def train(model, x, y, optim, lr, steps: int, on_step=None):
    for step in range(1, steps + 1):
        loss = (model.forward(x) - y).square().mean()
        grads = GradientsParams.from_grads(loss.backward(), model)
        model = optim.step(lr() if callable(lr) else lr, model, grads)
        if on_step is not None:
            on_step(step, model)
    return model


@pytest.mark.parametrize("tag", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_torch(reference, name, tag):
    case = CASES[name]
    model, x, y = problem(reference, tag)
    checked = []

    def check(step, model):
        key = f"{name}_{tag}_weight_{step}"
        if key in reference:
            for field in ("weight", "bias"):
                ours = getattr(model, field).val().to_data().as_array()
                expected = reference[f"{name}_{tag}_{field}_{step}"]
                np.testing.assert_allclose(ours, expected, **TOLERANCE[tag], err_msg=f"step {step}")
            checked.append(step)

    train(model, x, y, build(case["spec"]), case["lr"], 100, check)
    assert checked == [1, 10, 50, 100]


def test_adam_with_cosine_schedule_matches_torch(reference):
    model, x, y = problem(reference, "f64")
    scheduler = CosineAnnealingLrSchedulerConfig(0.05, 100).with_min_lr(0.001).init()
    model = train(model, x, y, AdamConfig().init(), scheduler.step, 100)
    for field in ("weight", "bias"):
        np.testing.assert_allclose(
            getattr(model, field).val().to_data().as_array(),
            reference[f"adam_cosine_f64_{field}_100"],
            rtol=1e-9,
        )


@pytest.mark.parametrize(
    ("case", "lr", "steps"), [("rmsprop_centered", 0.002, 50), ("adam_options", 0.01, 30)]
)
def test_state_record_resumes_bit_exact(reference, case, lr, steps):
    """`steps` steps, save the optimizer state through a recorder, load it, `steps` more: the
    same as `2 * steps` straight (Adam's moments and time included)."""
    model, x, y = problem(reference, "f32")
    spec = CASES[case]["spec"]
    straight = train(model, x, y, build(spec), lr, 2 * steps)

    optim = build(spec)
    half = train(model, x, y, optim, lr, steps)
    recorder = NamedMpkBytesRecorder()
    saved = recorder.record(optim.to_record())
    resumed_optim = build(spec).load_record(recorder.load(saved))
    resumed = train(half, x, y, resumed_optim, lr, steps)
    for field in ("weight", "bias"):
        a = getattr(straight, field).val().to_data().as_array()
        b = getattr(resumed, field).val().to_data().as_array()
        assert np.array_equal(a, b)


def test_record_is_plain_data_keyed_by_param_id(reference):
    model, x, y = problem(reference, "f32")
    optim = AdamConfig().init()
    model = train(model, x, y, optim, 0.01, 3)
    record = optim.to_record()
    assert set(record) == {model.weight.id.serialize(), model.bias.id.serialize()}
    state = record[model.weight.id.serialize()]["momentum"]
    assert state["time"] == 3
    assert state["moment_1"].shape == [3, 4]
    assert state["moment_1"].dtype is DType.F32


def test_frozen_params_are_not_updated(reference):
    model, x, y = problem(reference, "f32")
    model.bias = model.bias.set_require_grad(False)
    before = model.bias.val().to_data().as_array().copy()
    model = train(model, x, y, AdamConfig().init(), 0.05, 5)
    assert np.array_equal(model.bias.val().to_data().as_array(), before)
    assert not model.bias.require_grad
    assert not np.array_equal(
        model.weight.val().to_data().as_array(), reference["problem_weight"].astype(np.float32)
    )


def test_frozen_param_with_a_gradient_is_skipped(reference):
    """Even when a gradient for it is present (e.g. registered by hand)."""
    model, x, y = problem(reference, "f32")
    model.bias = model.bias.set_require_grad(False)
    grads = GradientsParams()
    grads.register(model.bias.id, Tensor.ones([3], NdArray.device()))
    new = SgdConfig().init().step(1.0, model, grads)
    assert np.array_equal(
        new.bias.val().to_data().as_array(), model.bias.val().to_data().as_array()
    )


def test_params_keep_ids_and_require_grad(reference):
    model, x, y = problem(reference, "f32")
    new = train(model, x, y, SgdConfig().init(), 0.1, 2)
    assert new.weight.id == model.weight.id
    assert new.weight.val().is_require_grad()
    assert new.weight.val().backend is B


def test_step_on_a_dict_of_tensors():
    """Code without modules can keep its parameters in a dict keyed by any id."""
    w = Tensor.from_data([1.0, -2.0], DEVICE).require_grad()
    params = {"w": w}
    optim = SgdConfig().init()
    for _ in range(50):
        loss = params["w"].square().sum()
        grads = GradientsParams.from_grads(loss.backward(), params)
        params = optim.step(0.1, params, grads)
    np.testing.assert_allclose(params["w"].to_data().as_array(), [0.8**50, -2 * 0.8**50], rtol=1e-5)


def test_gradients_params_from_grads(reference):
    model, x, y = problem(reference, "f64")
    loss = (model.forward(x) - y).square().mean()
    grads = GradientsParams.from_grads(loss.backward(), model)
    assert len(grads) == 2 and model.weight.id in grads
    g = grads.get(model.weight.id)
    assert g.backend is NdArray and g.dims() == [3, 4]
    xs, ys = reference["problem_x"], reference["problem_y"]
    w, b = reference["problem_weight"], reference["problem_bias"]
    residual = xs @ w.T + b - ys
    np.testing.assert_allclose(g.to_data().as_array(), 2 * residual.T @ xs / residual.size)
    only = GradientsParams.from_params(
        (model.forward(x) - y).square().mean().backward(), model, [model.bias.id]
    )
    assert only.ids() == [model.bias.id]


def test_gradients_accumulator_sums_batches(reference):
    model, x, y = problem(reference, "f64")
    accumulator = GradientsAccumulator()
    for rows in (slice(0, 8), slice(8, 16)):
        xb = Tensor.from_data(reference["problem_x"][rows], DEVICE, dtype=DType.F64)
        yb = Tensor.from_data(reference["problem_y"][rows], DEVICE, dtype=DType.F64)
        loss = (model.forward(xb) - yb).square().mean() * 0.5
        accumulator.accumulate(model, GradientsParams.from_grads(loss.backward(), model))
    summed = accumulator.grads()
    full = GradientsParams.from_grads((model.forward(x) - y).square().mean().backward(), model)
    for p in (model.weight, model.bias):
        np.testing.assert_allclose(
            summed.get(p.id).to_data().as_array(), full.get(p.id).to_data().as_array(), rtol=1e-12
        )
    assert accumulator.grads().is_empty()


def test_gradient_clipping_rules():
    g = Tensor.from_data([3.0, -4.0, 0.5])
    value = GradientClippingConfig.Value(1.0).init().clip_gradient(g)
    assert value.to_data().to_list() == [1.0, -1.0, 0.5]
    norm = GradientClippingConfig.Norm(2.6).init().clip_gradient(g)
    np.testing.assert_allclose(np.linalg.norm(norm.to_data().as_array()), 2.6, rtol=1e-6)
    small = GradientClippingConfig.Norm(100.0).init().clip_gradient(g)
    assert small.to_data().to_list() == g.to_data().to_list()


def test_configs_have_burns_defaults_and_serialise():
    adam = AdamConfig()
    assert (adam.beta_1, adam.beta_2, adam.epsilon, adam.weight_decay) == (0.9, 0.999, 1e-5, None)
    assert AdamWConfig().weight_decay == 1e-4
    assert (AdaGradConfig().lr_decay, AdaGradConfig().epsilon) == (0.0, 1e-5)
    rms = RmsPropConfig()
    assert (rms.alpha, rms.momentum, rms.epsilon, rms.centered) == (0.99, 0.9, 1e-5, False)
    m = MomentumConfig()
    assert (m.momentum, m.dampening, m.nesterov) == (0.9, 0.1, False)
    assert AdamConfig().with_beta_1(0.8).beta_1 == 0.8
    sgd = SgdConfig(momentum=MomentumConfig(nesterov=True), weight_decay=WeightDecayConfig(0.01))
    assert SgdConfig.from_json(sgd.to_json()) == sgd


def test_optimizer_matches_torch_live():
    """The same run against torch itself, where it is installed."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x_np, y_np = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    w_np, b_np = rng.normal(size=(2, 3)), rng.normal(size=(2,))
    makers = {
        "adamw": (
            AdamWConfig().with_weight_decay(0.02),
            lambda p: torch.optim.AdamW(p, lr=0.01, eps=1e-5, weight_decay=0.02),
        ),
        "rmsprop": (
            RmsPropConfig().with_centered(True),
            lambda p: torch.optim.RMSprop(p, lr=0.01, eps=1e-5, momentum=0.9, centered=True),
        ),
        "sgd": (
            SgdConfig(momentum=MomentumConfig(dampening=0.0, nesterov=True)),
            lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True),
        ),
    }
    for name, (config, make) in makers.items():
        wt = torch.tensor(w_np, requires_grad=True)
        bt = torch.tensor(b_np, requires_grad=True)
        topt = make([wt, bt])
        for _ in range(30):
            topt.zero_grad()
            ((torch.tensor(x_np) @ wt.T + bt - torch.tensor(y_np)) ** 2).mean().backward()
            topt.step()
        model = Regression(
            Tensor.from_data(w_np, DEVICE, dtype=DType.F64),
            Tensor.from_data(b_np, DEVICE, dtype=DType.F64),
        )
        x = Tensor.from_data(x_np, DEVICE, dtype=DType.F64)
        y = Tensor.from_data(y_np, DEVICE, dtype=DType.F64)
        model = train(model, x, y, config.init(), 0.01, 30)
        np.testing.assert_allclose(
            model.weight.val().to_data().as_array(), wt.detach().numpy(), rtol=1e-9, err_msg=name
        )


def test_clipping_config_saves_as_burn_does():
    config = AdamConfig().with_grad_clipping(GradientClippingConfig.Value(0.5))
    assert config.to_dict()["grad_clipping"] == {"Value": 0.5}
    assert AdamConfig.from_json(config.to_json()) == config


def _composed_adam_step(momentum, lr, tensor, grad, state, penalty, decoupled):
    """Adam and AdamW written with tensor ops, as the optimizers computed them before
    their update became one backend op."""
    if penalty and not decoupled:
        grad = tensor * penalty + grad
    delta, moments = momentum.transform(grad, state)
    if decoupled:
        tensor = tensor - tensor * (lr * penalty)
    return tensor - delta * lr, moments


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
@pytest.mark.parametrize("name", ["adam", "adam_options", "adamw", "adamw_options"])
def test_adam_update_is_the_tensor_op_composition_bit_for_bit(name, dtype):
    """The one-op update changed no number: five steps equal the composition's exactly."""
    spec = CASES[name]["spec"]
    rule = build(spec).optim
    decoupled = spec["kind"] == "adamw"
    penalty = rule.weight_decay if decoupled else spec.get("weight_decay", 0.0)
    rng = np.random.default_rng(5)
    param = Tensor.from_data(rng.normal(size=(7, 5)), DEVICE, dtype=dtype)
    ours, theirs = param, param
    state = moments = None
    for _ in range(5):
        grad = Tensor.from_data(rng.normal(size=(7, 5)), DEVICE, dtype=dtype)
        ours, state = rule.step(0.01, ours, grad, state)
        theirs, moments = _composed_adam_step(
            rule.momentum, 0.01, theirs, grad, moments, penalty, decoupled
        )
        assert state["momentum"]["time"] == moments["time"]
        pairs = [(ours, theirs)] + [
            (state["momentum"][key], moments[key]) for key in ("moment_1", "moment_2")
        ]
        for a, b in pairs:
            assert a.dtype == dtype
            assert np.array_equal(a.to_data().as_array(), b.to_data().as_array())


def test_adam_moments_in_another_dtype_are_cast_to_the_parameters():
    """Moments restored at another precision continue in the parameter's dtype."""
    rule = AdamConfig().init().optim
    rng = np.random.default_rng(9)
    param = Tensor.from_data(rng.normal(size=(4, 3)), DEVICE, dtype=DType.F32)
    grad = Tensor.from_data(rng.normal(size=(4, 3)), DEVICE, dtype=DType.F32)
    _, state = rule.step(0.01, param, grad, None)
    wide = {
        "momentum": {
            "time": state["momentum"]["time"],
            "moment_1": state["momentum"]["moment_1"].cast(DType.F64),
            "moment_2": state["momentum"]["moment_2"].cast(DType.F64),
        }
    }
    stepped, after = rule.step(0.01, param, grad, wide)
    expected, _ = rule.step(0.01, param, grad, state)
    assert stepped.dtype == DType.F32
    assert after["momentum"]["moment_1"].dtype == DType.F32
    assert after["momentum"]["time"] == 2
    assert np.array_equal(stepped.to_data().as_array(), expected.to_data().as_array())


@pytest.mark.parametrize("name", ["adam_options", "adamw_options"])
def test_adam_updates_every_parameter_of_a_step_in_one_op(reference, name, monkeypatch):
    """`OptimizerAdaptor` hands Adam and AdamW the whole step (`step_many`), which updates all
    parameters at the same step count with one `adam_step_many`; the numbers are those of
    `step` one parameter at a time, to the bit."""
    from burn.optim import adam as adam_module
    from burn.optim.simple import SimpleOptimizer

    calls = []
    many = adam_module.adam_step_many

    def counted(tensors, *args, **kwargs):
        calls.append(len(tensors))
        return many(tensors, *args, **kwargs)

    monkeypatch.setattr(adam_module, "adam_step_many", counted)
    spec = CASES[name]["spec"]
    batched, single = build(spec), build(spec)
    single.optim.step_many = lambda lr, items: SimpleOptimizer.step_many(single.optim, lr, items)
    model, x, y = problem(reference, "f32")
    ours = train(model, x, y, batched, 0.01, 3)
    assert calls == [2, 2, 2]
    theirs = train(model, x, y, single, 0.01, 3)
    assert calls == [2, 2, 2] + [1] * 6  # then one parameter at a time, 3 steps of 2
    for a, b in zip(ours.params(), theirs.params(), strict=True):
        assert np.array_equal(a.val().to_data().as_array(), b.val().to_data().as_array())
    for key, state in batched.to_record().items():
        other = single.to_record()[key]["momentum"]
        for part in ("moment_1", "moment_2"):
            assert state["momentum"][part] == other[part]


def test_adam_step_many_groups_parameters_by_step_count():
    """Parameters at different step counts (one joined the training later) are updated in
    one op per count, each as `step` alone would."""
    rule = AdamConfig().init().optim
    rng = np.random.default_rng(11)

    def t(shape):
        return Tensor.from_data(rng.normal(size=shape), DEVICE, dtype=DType.F32)

    params = [t((3, 2)), t((4,)), t((2, 2))]
    grads = [t((3, 2)), t((4,)), t((2, 2))]
    _, older = rule.step(0.01, params[0], grads[0], None)
    _, older = rule.step(0.01, params[0], grads[0], older)
    _, newer = rule.step(0.01, params[2], grads[2], None)
    states = [older, None, newer]
    items = list(zip(params, grads, states, strict=True))
    got = rule.step_many(0.01, items)
    for (tensor, grad, state), (new, new_state) in zip(items, got, strict=True):
        want, want_state = rule.step(0.01, tensor, grad, state)
        assert new_state["momentum"]["time"] == want_state["momentum"]["time"]
        assert np.array_equal(new.to_data().as_array(), want.to_data().as_array())
    assert [s["momentum"]["time"] for _, s in got] == [3, 1, 2]


def test_a_parameter_shared_by_two_fields_is_updated_at_both():
    """A parameter reached twice while walking the model (tied weights) gets one update, and
    both places hold it."""

    class Tied(Module):
        def __init__(self, weight: Tensor):
            self.first = Param(weight)
            self.second = self.first

        def forward(self, x: Tensor) -> Tensor:
            return (x * self.first.val()).sum() + (x * self.second.val()).sum()

    model = Tied(Tensor.from_data(np.array([1.0, 2.0]), DEVICE, dtype=DType.F32))
    x = Tensor.from_data(np.array([3.0, 4.0]), DEVICE, dtype=DType.F32)
    grads = GradientsParams.from_grads(model.forward(x).backward(), model)
    stepped = AdamConfig().init().step(0.1, model, grads)
    first, second = (p.val().to_data().as_array() for p in (stepped.first, stepped.second))
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, [1.0, 2.0])
