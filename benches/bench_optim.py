"""One Adam update of the guide's parameters: burn.optim's Adam on NdArray against PyTorch's.

The optimizer's share of the guide's training step, measured alone: the four layers' weights
and biases of `examples/guide` (the [1024, 512] linear weight is most of it), fixed gradients,
and one `Adam.step` per parameter carrying its state from step to step, as the Learner's
`optim.step` does. PyTorch runs `torch.optim.Adam` on tensors of the same shapes, once with its
per-parameter loop (`foreach=False`) and once with its default. Prints a table; nothing is
written (the guide's section of RESULTS.md quotes it).

    uv run python benches/bench_optim.py            # 200 steps per timing
    uv run python benches/bench_optim.py --quick    # 50
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Thread counts must be fixed before numpy's BLAS or torch start their pools.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT / "examples" / "guide"))

import numpy as np  # noqa: E402
from burn.ndarray import NdArray  # noqa: E402
from burn.optim import AdamConfig  # noqa: E402
from burn.tensor import Tensor  # noqa: E402
from common import median_ms, parse_run_args, print_start, ratio, torch_machine  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

# The guide's parameters (examples/guide/model.py): two convolutions, two linear layers.
SHAPES = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (1024, 512), (512,), (512, 10), (10,)]
LEARNING_RATE = 1.0e-4
HEADER = ["update", "burn ms", "torch ms", "burn/torch"]


class BurnAdam:
    """burn.optim's Adam rule applied to each parameter, its state kept between steps."""

    def __init__(self, params: list[np.ndarray], grads: list[np.ndarray]):
        self.rule = AdamConfig().init().optim
        self.params = [Tensor[NdArray].from_data(p) for p in params]
        self.grads = [Tensor[NdArray].from_data(g) for g in grads]
        self.states: list[dict | None] = [None] * len(params)

    def step(self) -> None:
        for i, (param, grad) in enumerate(zip(self.params, self.grads, strict=True)):
            self.params[i], self.states[i] = self.rule.step(
                LEARNING_RATE, param, grad, self.states[i]
            )


class TorchAdam:
    def __init__(self, params: list[np.ndarray], grads: list[np.ndarray], foreach: bool | None):
        self.params = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in params]
        for param, grad in zip(self.params, grads, strict=True):
            param.grad = torch.from_numpy(grad.copy())
        self.optim = torch.optim.Adam(
            self.params, lr=LEARNING_RATE, betas=(0.9, 0.999), eps=1e-5, foreach=foreach
        )

    def step(self) -> None:
        self.optim.step()


def main() -> None:
    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], 200, 10, quick=(50, 5))
    if torch is not None:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    print_start(torch_machine(torch), HEADER)
    rng = np.random.default_rng(0)
    params = [rng.normal(size=s).astype(np.float32) * 0.05 for s in SHAPES]
    grads = [rng.normal(size=s).astype(np.float32) * 0.01 for s in SHAPES]
    ours = median_ms(BurnAdam(params, grads).step, repeats, warmup)
    for name, foreach in (("per parameter (foreach=False)", False), ("default", None)):
        peer = TorchAdam(params, grads, foreach).step if torch is not None else None
        theirs = median_ms(peer, repeats, warmup)
        shown = "-" if theirs is None else f"{theirs:.3f}"
        print(
            f"Adam, the guide's parameters, torch {name} | {ours:.3f} | {shown} | "
            f"{ratio(ours, theirs)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
