"""Generate the PyTorch reference fixtures of burn-nn's optimizer, scheduler and loss tests.

The suite compares against these files so it needs no torch; run this script (in an
environment with torch and numpy) only to regenerate them:

    python tools/gen_optim_fixtures.py

It writes, under packages/burn-nn/tests/fixtures/:

- optim.npz: a small linear regression (inputs, targets, initial weight and bias) and, for each
  optimizer case, the weight and bias after steps 1, 10, 50 and 100 of `torch.optim`, in
  float64 and float32; the cases and their options are in optim_cases.json.
- losses.npz: for each loss case, its inputs, the loss and its gradient in float64.
- schedulers.json: 100 learning rates of each `torch.optim.lr_scheduler` case.
- layers.npz: inputs, weights and outputs of torch layers (Linear, Embedding, activations).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's convention

OUT = Path(__file__).resolve().parent.parent / "packages" / "burn-nn" / "tests" / "fixtures"
CHECKPOINTS = (1, 10, 50, 100)
STEPS = 100

# name -> (our optimizer spec, learning rate, torch factory, clipping)
# The spec is plain data the test turns into our configs.
OPTIM_CASES = {
    "sgd": ({"kind": "sgd"}, 0.05, lambda p, lr: torch.optim.SGD(p, lr=lr), None),
    "sgd_momentum": (
        {"kind": "sgd", "momentum": [0.9, 0.1, False]},
        0.05,
        lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.9, dampening=0.1),
        None,
    ),
    "sgd_nesterov": (
        {"kind": "sgd", "momentum": [0.8, 0.0, True]},
        0.05,
        lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.8, dampening=0.0, nesterov=True),
        None,
    ),
    "sgd_weight_decay_momentum": (
        {"kind": "sgd", "momentum": [0.7, 0.2, False], "weight_decay": 0.05},
        0.05,
        lambda p, lr: torch.optim.SGD(p, lr=lr, momentum=0.7, dampening=0.2, weight_decay=0.05),
        None,
    ),
    "sgd_clip_value": (
        {"kind": "sgd", "clip": ["value", 0.1]},
        0.05,
        lambda p, lr: torch.optim.SGD(p, lr=lr),
        ("value", 0.1),
    ),
    "adam": ({"kind": "adam"}, 0.02, lambda p, lr: torch.optim.Adam(p, lr=lr, eps=1e-5), None),
    "adam_options": (
        {"kind": "adam", "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-8, "weight_decay": 0.05},
        0.02,
        lambda p, lr: torch.optim.Adam(p, lr=lr, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.05),
        None,
    ),
    "adam_clip_norm": (
        {"kind": "adam", "clip": ["norm", 0.5]},
        0.02,
        lambda p, lr: torch.optim.Adam(p, lr=lr, eps=1e-5),
        ("norm", 0.5),
    ),
    "adamw": (
        {"kind": "adamw"},
        0.02,
        lambda p, lr: torch.optim.AdamW(p, lr=lr, eps=1e-5, weight_decay=1e-4),
        None,
    ),
    "adamw_options": (
        {"kind": "adamw", "beta_1": 0.85, "beta_2": 0.995, "epsilon": 1e-7, "weight_decay": 0.1},
        0.02,
        lambda p, lr: torch.optim.AdamW(p, lr=lr, betas=(0.85, 0.995), eps=1e-7, weight_decay=0.1),
        None,
    ),
    "adagrad": (
        {"kind": "adagrad"},
        0.1,
        lambda p, lr: torch.optim.Adagrad(p, lr=lr, eps=1e-5),
        None,
    ),
    "adagrad_options": (
        {"kind": "adagrad", "lr_decay": 0.01, "epsilon": 1e-7, "weight_decay": 0.02},
        0.1,
        lambda p, lr: torch.optim.Adagrad(p, lr=lr, lr_decay=0.01, eps=1e-7, weight_decay=0.02),
        None,
    ),
    "rmsprop": (
        {"kind": "rmsprop"},
        0.002,
        lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.99, eps=1e-5, momentum=0.9),
        None,
    ),
    "rmsprop_centered": (
        # Centering divides by the gradient's variance, which vanishes as training settles and
        # magnifies rounding; a larger epsilon keeps the comparison meaningful.
        {"kind": "rmsprop", "centered": True, "momentum": 0.5, "alpha": 0.9, "epsilon": 1e-2},
        0.002,
        lambda p, lr: torch.optim.RMSprop(
            p, lr=lr, alpha=0.9, eps=1e-2, momentum=0.5, centered=True
        ),
        None,
    ),
    "rmsprop_no_momentum": (
        {"kind": "rmsprop", "momentum": 0.0, "weight_decay": 0.01, "epsilon": 1e-8},
        0.01,
        lambda p, lr: torch.optim.RMSprop(p, lr=lr, alpha=0.99, eps=1e-8, weight_decay=0.01),
        None,
    ),
}


def regression_problem(rng: np.random.Generator) -> dict:
    x = rng.normal(size=(16, 4))
    true_w = rng.normal(size=(3, 4))
    y = x @ true_w.T + 0.1 * rng.normal(size=(16, 3))
    return {
        "x": x,
        "y": y,
        "weight": rng.normal(scale=0.5, size=(3, 4)),
        "bias": rng.normal(scale=0.5, size=(3,)),
    }


def run_torch_optimizer(problem: dict, dtype, lr: float, factory, clip) -> dict:
    x = torch.tensor(problem["x"], dtype=dtype)
    y = torch.tensor(problem["y"], dtype=dtype)
    weight = torch.tensor(problem["weight"], dtype=dtype, requires_grad=True)
    bias = torch.tensor(problem["bias"], dtype=dtype, requires_grad=True)
    optim = factory([weight, bias], lr)
    out = {}
    for step in range(1, STEPS + 1):
        optim.zero_grad()
        loss = ((x @ weight.T + bias - y) ** 2).mean()
        loss.backward()
        if clip is not None:
            for p in (weight, bias):  # Burn clips each parameter's gradient on its own
                if clip[0] == "value":
                    torch.nn.utils.clip_grad_value_([p], clip[1])
                else:
                    # clip_grad_norm_ divides by (norm + 1e-6); Burn by the norm itself
                    norm = p.grad.norm()
                    if norm > clip[1]:
                        p.grad.mul_(clip[1] / norm)
        optim.step()
        if step in CHECKPOINTS:
            out[f"weight_{step}"] = weight.detach().numpy().copy()
            out[f"bias_{step}"] = bias.detach().numpy().copy()
    return out


def optimizer_fixtures() -> None:
    problem = regression_problem(np.random.default_rng(5))
    arrays = {f"problem_{k}": v for k, v in problem.items()}
    cases = {}
    for name, (spec, lr, factory, clip) in OPTIM_CASES.items():
        cases[name] = {"spec": spec, "lr": lr}
        for dtype, tag in ((torch.float64, "f64"), (torch.float32, "f32")):
            for key, value in run_torch_optimizer(problem, dtype, lr, factory, clip).items():
                arrays[f"{name}_{tag}_{key}"] = value
    # Adam driven by a cosine schedule: the optimizer and the scheduler together.
    x = torch.tensor(problem["x"])
    y = torch.tensor(problem["y"])
    weight = torch.tensor(problem["weight"], requires_grad=True)
    bias = torch.tensor(problem["bias"], requires_grad=True)
    optim = torch.optim.Adam([weight, bias], lr=0.05, eps=1e-5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optim, T_max=STEPS, eta_min=0.001)
    for _ in range(STEPS):
        optim.zero_grad()
        ((x @ weight.T + bias - y) ** 2).mean().backward()
        optim.step()
        sched.step()
    arrays["adam_cosine_f64_weight_100"] = weight.detach().numpy().copy()
    arrays["adam_cosine_f64_bias_100"] = bias.detach().numpy().copy()
    np.savez_compressed(OUT / "optim.npz", **arrays)
    (OUT / "optim_cases.json").write_text(json.dumps(cases, indent=2) + "\n")


def lr_sequence(sched_factory, n: int = STEPS) -> list[float]:
    param = torch.zeros(1, requires_grad=True)
    optim = torch.optim.SGD([param], lr=1.0)
    sched = sched_factory(optim)
    rates = []
    for _ in range(n):
        rates.append(sched.get_last_lr()[0])
        optim.step()
        sched.step()
    return rates


def scheduler_fixtures() -> None:
    sched = torch.optim.lr_scheduler

    def with_lr(lr, make):
        def factory(optim):
            for group in optim.param_groups:
                group["lr"] = lr
                group["initial_lr"] = lr
            return make(optim)

        return factory

    def noam(step: int, init_lr: float, warmup: int, size: int) -> float:
        return init_lr * size**-0.5 * min(step**-0.5, step * warmup**-1.5)

    out = {
        "exponential": {
            "config": {"initial_lr": 0.1, "gamma": 0.95},
            "rates": lr_sequence(with_lr(0.1, lambda o: sched.ExponentialLR(o, gamma=0.95))),
        },
        "step": {
            "config": {"initial_lr": 0.1, "step_size": 7, "gamma": 0.5},
            "rates": lr_sequence(with_lr(0.1, lambda o: sched.StepLR(o, step_size=7, gamma=0.5))),
        },
        "linear": {
            "config": {"initial_lr": 0.1, "final_lr": 0.02, "num_iters": 40},
            "rates": lr_sequence(
                with_lr(
                    0.1,
                    lambda o: sched.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=40),
                )
            ),
        },
        "cosine": {
            "config": {"initial_lr": 0.1, "min_lr": 0.001, "num_iters": 99},
            "rates": lr_sequence(
                with_lr(0.1, lambda o: sched.CosineAnnealingLR(o, T_max=99, eta_min=0.001))
            ),
        },
        "noam": {
            "config": {"init_lr": 2.0, "warmup_steps": 20, "model_size": 64},
            # torch has no Noam scheduler: LambdaLR with the paper's formula
            "rates": lr_sequence(
                with_lr(1.0, lambda o: sched.LambdaLR(o, lambda e: noam(e + 1, 2.0, 20, 64)))
            ),
        },
        "constant": {
            "config": {"lr": 0.01},
            "rates": lr_sequence(with_lr(0.01, lambda o: sched.ConstantLR(o, factor=1.0))),
        },
    }
    for name, case in out.items():
        assert all(math.isfinite(r) for r in case["rates"]), name
    (OUT / "schedulers.json").write_text(json.dumps(out, indent=1) + "\n")


def bce_case(data, logits_in: bool, weight: bool, smoothing: float | None):
    """Torch's binary cross-entropy with Burn's meaning of weights and smoothing."""
    z_np, y_np, w_np = data
    classes = z_np.shape[-1] if z_np.ndim > 1 else 2
    y = torch.tensor(y_np, dtype=torch.float64)
    if smoothing is not None:
        y = y * (1 - smoothing) + smoothing / classes
    w = None
    if weight:  # 1-D: one weight per label value; 2-D: one per class
        w = torch.tensor(w_np)[torch.tensor(y_np)] if z_np.ndim == 1 else torch.tensor(w_np)
    if logits_in:
        wrt = torch.tensor(z_np, requires_grad=True)
        loss = F.binary_cross_entropy_with_logits(wrt, y, weight=w)
        x = z_np
    else:
        wrt = torch.sigmoid(torch.tensor(z_np)).requires_grad_(True)
        loss = F.binary_cross_entropy(wrt, y, weight=w)
        x = wrt.detach().numpy().copy()
    inputs = {"input": x, "targets": y_np}
    if weight:
        inputs["weights"] = w_np
    return inputs, loss, wrt


def loss_fixtures() -> None:
    rng = np.random.default_rng(7)
    arrays: dict[str, np.ndarray] = {}

    def record(name: str, inputs: dict, loss, wrt) -> None:
        loss.backward()
        for key, value in inputs.items():
            arrays[f"{name}__{key}"] = np.asarray(value)
        arrays[f"{name}__loss"] = np.asarray(loss.item())
        arrays[f"{name}__grad"] = wrt.grad.numpy().copy()

    # ---- cross-entropy: logits [10, 5], targets in 0..5
    logits = rng.normal(scale=2.0, size=(10, 5))
    targets = np.array([0, 1, 4, 2, 1, 3, 3, 0, 1, 2])
    weights = np.array([1.0, 2.0, 0.5, 3.0, 1.5])

    def ce(name, *, weight=None, smoothing=0.0, pads=(), probs=False):
        z = torch.tensor(logits, requires_grad=True)
        t = torch.tensor(targets)
        if pads:
            t = t.clone()
            t[np.isin(targets, pads)] = -100
        w = torch.tensor(weight) if weight is not None else None
        if probs:
            # cross-entropy of probabilities: -sum_c w_c q_c log p_c over the weight of the
            # targets (F.cross_entropy(log p) would renormalise p and change the gradient)
            p = torch.tensor(F.softmax(torch.tensor(logits), 1).numpy(), requires_grad=True)
            classes = p.shape[1]
            q = F.one_hot(torch.tensor(targets), classes).double()
            q = q * (1 - smoothing) + smoothing / classes
            wc = w if w is not None else torch.ones(classes, dtype=torch.float64)
            loss = -(q * torch.log(p) * wc).sum() / wc[torch.tensor(targets)].sum()
            wrt, x = p, p.detach().numpy()
        else:
            loss = F.cross_entropy(z, t, weight=w, label_smoothing=smoothing)
            wrt, x = z, logits
        record(name, {"input": x, "targets": targets}, loss, wrt)

    ce("ce")
    ce("ce_weights", weight=weights)
    ce("ce_smoothing", smoothing=0.1)
    ce("ce_smoothing_weights", weight=weights, smoothing=0.2)
    ce("ce_pad", pads=(1,))
    ce("ce_pads", pads=(1, 3))
    ce("ce_pad_weights", weight=weights, pads=(1,))
    ce("ce_pad_smoothing", pads=(0, 4), smoothing=0.1)
    ce("ce_pad_smoothing_weights", weight=weights, pads=(2,), smoothing=0.3)
    ce("ce_probs", probs=True)
    ce("ce_probs_smoothing_weights", probs=True, weight=weights, smoothing=0.1)

    # ---- binary cross-entropy: 1-D [12] and multi-label [6, 4]
    for shape, tag in (((12,), "1d"), ((6, 4), "2d")):
        z_np = rng.normal(scale=2.0, size=shape)
        y_np = rng.integers(0, 2, size=shape)
        w_np = np.array([0.7, 1.6]) if len(shape) == 1 else np.array([1.0, 0.5, 2.0, 1.5])
        data = (z_np, y_np, w_np)
        for name, logits_in, weight, smoothing in (
            ("logits", True, False, None),
            ("probs", False, False, None),
            ("logits_weights", True, True, None),
            ("probs_weights", False, True, None),
            ("logits_smoothing", True, False, 0.1),
            ("probs_smoothing_weights", False, True, 0.2),
        ):
            inputs, loss, wrt = bce_case(data, logits_in, weight, smoothing)
            record(f"bce_{tag}_{name}", inputs, loss, wrt)

    # ---- MSE and Huber on [4, 6], residuals on both sides of the Huber bands
    pred_np = rng.normal(scale=2.0, size=(4, 6))
    target_np = rng.normal(scale=2.0, size=(4, 6))
    for reduction in ("mean", "sum"):
        p = torch.tensor(pred_np, requires_grad=True)
        loss = F.mse_loss(p, torch.tensor(target_np), reduction=reduction)
        record(f"mse_{reduction}", {"input": pred_np, "targets": target_np}, loss, p)
        for delta in (1.0, 0.5):
            p = torch.tensor(pred_np, requires_grad=True)
            loss = F.huber_loss(p, torch.tensor(target_np), reduction=reduction, delta=delta)
            name = f"huber_{reduction}_{str(delta).replace('.', '_')}"
            record(name, {"input": pred_np, "targets": target_np}, loss, p)
    np.savez_compressed(OUT / "losses.npz", **arrays)


def layer_fixtures() -> None:
    """Forward passes of torch layers with their weights, in float64."""
    rng = np.random.default_rng(11)
    arrays: dict[str, np.ndarray] = {}
    torch.set_default_dtype(torch.float64)
    x = rng.normal(size=(3, 5, 4))
    for bias in (True, False):
        layer = torch.nn.Linear(4, 6, bias=bias)
        name = f"linear_bias_{bias}".lower()
        arrays[f"{name}__x"] = x
        arrays[f"{name}__weight"] = layer.weight.detach().numpy().T.copy()  # Burn: [in, out]
        if bias:
            arrays[f"{name}__bias"] = layer.bias.detach().numpy().copy()
        arrays[f"{name}__out"] = layer(torch.tensor(x)).detach().numpy()
    emb = torch.nn.Embedding(10, 3)
    idx = rng.integers(0, 10, size=(2, 4))
    arrays["embedding__weight"] = emb.weight.detach().numpy().copy()
    arrays["embedding__indices"] = idx
    arrays["embedding__out"] = emb(torch.tensor(idx)).detach().numpy()
    a = rng.normal(scale=3.0, size=(4, 7))
    arrays["activation__x"] = a
    for name, fn in (
        ("relu", torch.nn.ReLU()),
        ("gelu", torch.nn.GELU()),
        ("sigmoid", torch.nn.Sigmoid()),
        ("tanh", torch.nn.Tanh()),
        ("leaky_relu", torch.nn.LeakyReLU()),
        ("leaky_relu_0_2", torch.nn.LeakyReLU(0.2)),
    ):
        arrays[f"activation__{name}"] = fn(torch.tensor(a)).numpy()
    torch.set_default_dtype(torch.float32)
    np.savez_compressed(OUT / "layers.npz", **arrays)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    optimizer_fixtures()
    scheduler_fixtures()
    loss_fixtures()
    layer_fixtures()
    print(f"wrote fixtures with torch {torch.__version__} to {OUT}")


if __name__ == "__main__":
    main()
