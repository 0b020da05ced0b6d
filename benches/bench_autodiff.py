"""Forward + backward of two small models: Autodiff(NdArray) against PyTorch on the CPU.

The question is what the graph recording and the backward rules cost on top of the numpy
kernels, and how the whole training step compares with a mature autograd. Each model runs
forward only on plain NdArray, forward only on Autodiff(NdArray), and forward + backward on
Autodiff(NdArray), then the same in PyTorch when it is importable, in the same process. The
gradients of both are checked to agree before anything is timed. Times are medians after
warm-up runs, reported with ratios, never as targets.

    uv run python benches/bench_autodiff.py            # prints the table, updates RESULTS.md
    uv run python benches/bench_autodiff.py --quick    # fewer repeats, nothing written

PyTorch is not a project dependency; to include it, run this file with an interpreter that has
torch installed and the burn-tensor, burn-ndarray and burn-autodiff sources importable.
"""

from __future__ import annotations

import numpy as np
from burn.autodiff import Autodiff
from burn.ndarray import NdArray
from burn.tensor import Int, Tensor, activation
from burn.tensor.module import adaptive_avg_pool2d, conv2d

try:
    import torch
    import torch.nn.functional as F  # noqa: N812
except ImportError:
    torch = None

from common import (
    median_ms,
    parse_run_args,
    print_start,
    publish,
    ratio,
    torch_machine,
)

SECTION = "## burn-autodiff: forward and backward of small models"
B = Autodiff(NdArray)


# ---------------------------------------------------------------------- the models


def init_mlp(rng: np.random.Generator) -> dict[str, np.ndarray]:
    params = {}
    for i, (n_in, n_out) in enumerate([(784, 512), (512, 512), (512, 10)], start=1):
        bound = 1.0 / np.sqrt(n_in)
        params[f"w{i}"] = rng.uniform(-bound, bound, (n_in, n_out)).astype(np.float32)
        params[f"b{i}"] = rng.uniform(-bound, bound, (1, n_out)).astype(np.float32)
    return params


def init_cnn(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return {
        "c1": uniform((8, 1, 3, 3), 9),
        "cb1": uniform((8,), 9),
        "c2": uniform((16, 8, 3, 3), 72),
        "cb2": uniform((16,), 72),
        "w1": uniform((1024, 512), 1024),
        "b1": uniform((1, 512), 1024),
        "w2": uniform((512, 10), 512),
        "b2": uniform((1, 10), 512),
    }


def burn_mlp(p: dict[str, Tensor], x: Tensor, targets: Tensor) -> Tensor:
    h = activation.relu(x.matmul(p["w1"]) + p["b1"])
    h = activation.relu(h.matmul(p["w2"]) + p["b2"])
    logits = h.matmul(p["w3"]) + p["b3"]
    return activation.log_softmax(logits, 1).gather(1, targets).mean().neg()


def burn_cnn(p: dict[str, Tensor], x: Tensor, targets: Tensor) -> Tensor:
    h = activation.relu(conv2d(x, p["c1"], p["cb1"]))
    h = activation.relu(conv2d(h, p["c2"], p["cb2"]))
    h = adaptive_avg_pool2d(h, (8, 8)).flatten(1, 3)
    h = activation.relu(h.matmul(p["w1"]) + p["b1"])
    logits = h.matmul(p["w2"]) + p["b2"]
    return activation.log_softmax(logits, 1).gather(1, targets).mean().neg()


def torch_mlp(p, x, targets):
    h = F.relu(x @ p["w1"] + p["b1"])
    h = F.relu(h @ p["w2"] + p["b2"])
    return F.cross_entropy(h @ p["w3"] + p["b3"], targets)


def torch_cnn(p, x, targets):
    h = F.relu(F.conv2d(x, p["c1"], p["cb1"]))
    h = F.relu(F.conv2d(h, p["c2"], p["cb2"]))
    h = F.adaptive_avg_pool2d(h, (8, 8)).flatten(1)
    h = F.relu(h @ p["w1"] + p["b1"])
    return F.cross_entropy(h @ p["w2"] + p["b2"], targets)


# ---------------------------------------------------------------------- one training step


class BurnStep:
    """The model's loss on a backend; `step()` also runs backward and reads every gradient."""

    def __init__(self, model, params, x, targets, backend, track: bool):
        device = backend.device()
        self.model = model
        self.params = {k: (Tensor[backend, v.ndim].from_data(v, device)) for k, v in params.items()}
        if track:
            self.params = {k: v.require_grad() for k, v in self.params.items()}
        self.x = Tensor[backend, x.ndim].from_data(x, device)
        self.targets = Tensor[backend, 2, Int].from_data(targets.reshape(-1, 1), device)

    def forward(self) -> Tensor:
        return self.model(self.params, self.x, self.targets)

    def step(self) -> dict[str, np.ndarray]:
        grads = self.forward().backward()
        return {k: v.grad(grads) for k, v in self.params.items()}


class TorchStep:
    def __init__(self, model, params, x, targets):
        self.model = model
        self.params = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        self.x = torch.tensor(x)
        self.targets = torch.tensor(targets, dtype=torch.long)

    def forward(self):
        with torch.no_grad():
            return self.model(self.params, self.x, self.targets)

    def step(self):
        for v in self.params.values():
            v.grad = None
        self.model(self.params, self.x, self.targets).backward()
        return {k: v.grad for k, v in self.params.items()}


def check_agreement(ours: BurnStep, theirs: TorchStep | None) -> None:
    """Both frameworks must compute the same gradients before their speed is compared."""
    if theirs is None:
        return
    got, want = ours.step(), theirs.step()
    for k in got:
        np.testing.assert_allclose(
            got[k].to_data().array, want[k].numpy(), rtol=2e-3, atol=2e-5, err_msg=k
        )


def models(rng: np.random.Generator):
    x = rng.normal(size=(256, 784)).astype(np.float32)
    y = rng.integers(0, 10, size=256)
    yield "MLP 784-512-512-10", "batch 256", burn_mlp, torch_mlp, init_mlp(rng), x, y
    x = rng.normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=64)
    yield "CNN (guide)", "batch 64, 1x28x28", burn_cnn, torch_cnn, init_cnn(rng), x, y


HEADER = [
    "model",
    "input",
    "NdArray fwd ms",
    "Autodiff fwd ms",
    "Autodiff fwd+bwd ms",
    "torch fwd ms",
    "torch fwd+bwd ms",
    "fwd+bwd burn/torch",
]


def run(repeats: int, warmup: int) -> list[list[str]]:
    rng = np.random.default_rng(0)
    rows = []
    for name, shape, ours, theirs, params, x, y in models(rng):
        plain = BurnStep(ours, params, x, y, NdArray, track=False)
        tracked = BurnStep(ours, params, x, y, B, track=True)
        peer = TorchStep(theirs, params, x, y) if torch is not None else None
        check_agreement(tracked, peer)
        times = [
            median_ms(plain.forward, repeats, warmup),
            median_ms(tracked.forward, repeats, warmup),
            median_ms(tracked.step, repeats, warmup),
            median_ms(peer.forward if peer else None, repeats, warmup),
            median_ms(peer.step if peer else None, repeats, warmup),
        ]
        row = [name, shape, *("-" if t is None else f"{t:.2f}" for t in times)]
        row.append(ratio(times[2], times[4]))
        print(" | ".join(row), flush=True)
        rows.append(row)
    return rows


NOTES = """How to read it:

- "fwd" is the loss alone; "fwd+bwd" is the loss, `backward()` and reading every parameter's
  gradient (PyTorch: the same with `.grad`). Both sides run float32 and agree on the gradients
  (checked before timing).
- Autodiff fwd against NdArray fwd is the price of recording the graph: one node and one
  closure per op, a few microseconds each, invisible next to these matmuls and convolutions.
- The backward of a matmul is two matmuls, so fwd+bwd is roughly three forwards for the MLP,
  on both sides. The CNN's time goes mostly to the convolutions and their two backward ops,
  where PyTorch's dedicated CPU kernels lead already in the forward (see the conv2d rows of
  the NdArray table).
"""


def main() -> None:
    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], 15, 3, quick=(3, 1))

    info = torch_machine(torch)
    print_start(info, HEADER)
    publish(
        SECTION,
        "bench_autodiff.py",
        f"median of {repeats} repeats after {warmup} warm-up runs, times in milliseconds, "
        "float32. Ratios above 1 mean Autodiff(NdArray) is slower.",
        info,
        HEADER,
        run(repeats, warmup),
        f"{NOTES}\nReproduce: `uv run python benches/bench_autodiff.py` (no torch columns), or "
        "with an interpreter that has torch installed and the packages' `src` folders "
        "importable.\n",
        args.quick,
    )


if __name__ == "__main__":
    main()
