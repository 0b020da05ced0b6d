"""One training step of the guide's model: Autodiff(NdArray) against PyTorch on the CPU.

The first row of the headline comparison. A step is what the Learner does per batch: forward,
cross-entropy loss, backward, one Adam step. Ours runs the guide's own code
(examples/guide/model.py and data.py: `model.train_step(batch)`, then `optim.step`); PyTorch runs
the same architecture with the same weights (copied across), the same batch of 64 MNIST-shaped
images and Adam with the same settings. Two variants: the book's model with its dropout (one
module applied three times, p = 0.5), and the same model with dropout off (p = 0, which both
sides skip). Before timing, both sides must compute the same loss from the same weights, and
the same loss again after one Adam step.

    uv run python benches/bench_guide.py            # prints the table, updates RESULTS.md
    uv run python benches/bench_guide.py --quick    # fewer repeats, nothing written
    uv run python benches/bench_guide.py --under-load    # quiet vs one competing busy process
    uv run python benches/bench_guide.py --interleaved   # steps of each library in turn

Both libraries get the same thread count: OMP_NUM_THREADS and OPENBLAS_NUM_THREADS default to
the number of usable cores (set them to choose another), and torch.set_num_threads follows.
With `--under-load` each library keeps its own default instead (run it with those variables
unset): the step is timed quiet and while a busy process started by the bench competes for a
core, for ours with burn-ndarray's BLAS threads and with OpenBLAS's own default, and for
PyTorch. PyTorch is not a project dependency; without it only our column is measured.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Thread counts must be fixed before numpy's BLAS or torch start their pools.
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
UNDER_LOAD = "--under-load" in sys.argv  # each library's own default thread counts
if not UNDER_LOAD:
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, str(_CORES))
THREADS = int(os.environ.get("OMP_NUM_THREADS", "0")) or None

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT / "examples" / "guide"))
sys.path.insert(0, str(_ROOT / "tools"))


import numpy as np  # noqa: E402
from burn.autodiff import Autodiff  # noqa: E402
from burn.ndarray import NdArray  # noqa: E402
from burn.optim import AdamConfig  # noqa: E402
from common import (  # noqa: E402
    median_ms,
    parse_run_args,
    print_start,
    publish,
    ratio,
    torch_machine,
)
from data import MNIST_MEAN, MNIST_STD, MnistBatcher  # noqa: E402
from model import ModelConfig  # noqa: E402

try:
    import torch
    import torch.nn.functional as F  # noqa: N812
    from torch_guide_reference import Model as TorchModel  # the reference run's network

    if THREADS:
        torch.set_num_threads(THREADS)
except ImportError:
    torch = None

SECTION = "## The guide: one training step against PyTorch CPU"
B = Autodiff(NdArray)
BATCH = 64
LEARNING_RATE = 1.0e-4
ADAM = {"betas": (0.9, 0.999), "eps": 1e-5}  # burn.optim.AdamConfig's defaults


# ---------------------------------------------------------------------- both sides


class BurnStep:
    """The guide's model and batch on Autodiff(NdArray); `step()` is one Learner iteration."""

    def __init__(self, dropout: float, images: np.ndarray, labels: np.ndarray):
        device = B.device()
        B.seed(42)
        self.model = ModelConfig(num_classes=10, hidden_size=512, dropout=dropout).init(device)
        self.optim = AdamConfig().init()
        self.items = [_Item(im, int(label)) for im, label in zip(images, labels, strict=True)]
        self.batch = MnistBatcher().batch(self.items, device)

    def loss(self) -> float:
        """The loss without dropout (on the inner backend, as validation runs)."""
        batch = MnistBatcher().batch(self.items, B.device().inner)
        output = self.model.valid().forward_classification(batch.images, batch.targets)
        return float(output.loss.into_scalar())

    def step(self) -> float:
        output = self.model.train_step(self.batch)
        self.model = self.optim.step(LEARNING_RATE, self.model, output.grads)
        return output.item.loss

    def weights(self) -> dict[str, np.ndarray]:
        """The parameters as PyTorch names and lays them out (linear weights transposed)."""
        m = self.model
        out = {}
        for name in ("conv1", "conv2", "linear1", "linear2"):
            layer = getattr(m, name)
            weight = layer.weight.val().to_data().array
            out[f"{name}.weight"] = weight.T if name.startswith("linear") else weight
            out[f"{name}.bias"] = layer.bias.val().to_data().array
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


class _Item:
    """What MnistBatcher reads from an MNIST item: raw pixels 0..255 and a label."""

    def __init__(self, image: np.ndarray, label: int):
        self.image = image
        self.label = label


class TorchStep:
    def __init__(self, dropout: float, weights: dict[str, np.ndarray], images, labels):
        torch.manual_seed(42)
        self.model = TorchModel(dropout=dropout)
        self.model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
        self.optim = torch.optim.Adam(self.model.parameters(), lr=LEARNING_RATE, **ADAM)
        normalised = ((images / 255.0 - MNIST_MEAN) / MNIST_STD).astype(np.float32)
        self.images = torch.from_numpy(normalised)
        self.labels = torch.from_numpy(labels.astype(np.int64))

    def loss(self) -> float:
        self.model.eval()
        with torch.no_grad():
            loss = F.cross_entropy(self.model(self.images), self.labels).item()
        self.model.train()
        return loss

    def step(self):
        self.optim.zero_grad()
        loss = F.cross_entropy(self.model(self.images), self.labels)
        loss.backward()
        self.optim.step()
        return loss


def check_agreement(ours: BurnStep, theirs: TorchStep | None) -> str:
    """Same weights, same loss; and after one Adam step (dropout off) the same loss again."""
    if theirs is None:
        return "no peer"
    a, b = ours.loss(), theirs.loss()
    np.testing.assert_allclose(a, b, rtol=1e-4, err_msg="loss from the same weights")
    if ours.model.dropout.prob == 0.0:
        ours.step()
        theirs.step()
        a2, b2 = ours.loss(), theirs.loss()
        np.testing.assert_allclose(a2, b2, rtol=1e-4, err_msg="loss after one Adam step")
        return f"{a:.5f} vs {b:.5f}; after a step {a2:.5f} vs {b2:.5f}"
    return f"{a:.5f} vs {b:.5f}"


HEADER = ["model", "burn ms", "torch ms", "burn/torch", "loss check (burn vs torch)"]
VARIANTS = [("the book's model, dropout 0.5 (three uses)", 0.5), ("the same, dropout off", 0.0)]


def interleaved_ms(ours, theirs, repeats: int, warmup: int) -> list[float]:
    """Median ms of two steps timed alternately, one of each per round, so that a shared
    machine's drifts (a neighbour's burst, the clock) reach both libraries alike."""
    for _ in range(warmup):
        ours()
        theirs()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, record in ((ours, times[0]), (theirs, times[1])):
            start = time.perf_counter()
            fn()
            record.append(time.perf_counter() - start)
    return [statistics.median(t) * 1e3 for t in times]


def run(repeats: int, warmup: int, interleaved: bool = False) -> list[list[str]]:
    rng = np.random.default_rng(0)
    images = (rng.random((BATCH, 28, 28)) * 255.0).astype(np.float32)
    labels = rng.integers(0, 10, size=BATCH)
    rows = []
    for name, dropout in VARIANTS:
        ours = BurnStep(dropout, images, labels)
        theirs = TorchStep(dropout, ours.weights(), images, labels) if torch else None
        check = check_agreement(ours, theirs)
        if interleaved and theirs is not None:
            times: list[float | None] = list(
                interleaved_ms(ours.step, theirs.step, repeats, warmup)
            )
        else:
            times = [
                median_ms(ours.step, repeats, warmup),
                median_ms(theirs.step if theirs else None, repeats, warmup),
            ]
        row = [name, *("-" if t is None else f"{t:.2f}" for t in times)]
        row += [ratio(times[0], times[1]), check]
        print(" | ".join(row), flush=True)
        rows.append(row)
    return rows


NOTES = """How to read it:

- A step is one Learner iteration: `model.train_step(batch)` (forward, cross-entropy,
  backward) and `optim.step(lr, model, grads)`; PyTorch's is `zero_grad`, forward,
  `cross_entropy`, `backward`, `Adam.step`. Batch 64 of random 28x28 images normalised as the
  guide's batcher does, float32 on both sides.
- The guide applies one dropout module three times (after each convolution and after the first
  linear layer); "dropout off" builds the same model with p = 0, which both libraries skip.
- The loss check runs before timing: both sides get the same weights (ours, copied into
  PyTorch) and must agree on the loss without dropout; with dropout off they must also agree
  after one Adam step. Dropout masks come from different generators, so that variant is
  checked on the weights only.
- The machine is shared with other work; a ratio is more trustworthy than an absolute time,
  and both sides of a row were measured seconds apart in the same process.
"""


LOAD_SECTION = "## The guide under a competing CPU load"
LOAD_HEADER = ["library and threads", "quiet ms", "loaded ms", "loaded / quiet"]


def _busy_process() -> subprocess.Popen:
    """One process that keeps a core busy until it is killed (the competing load)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run_under_load(
    repeats: int, warmup: int, rounds: int
) -> tuple[list[list[str]], dict[bool, list[float]]]:
    """Each variant's step quiet and loaded, the conditions alternating `rounds` times."""
    from burn.ndarray import threads as blas

    rng = np.random.default_rng(0)
    images = (rng.random((BATCH, 28, 28)) * 255.0).astype(np.float32)
    labels = rng.integers(0, 10, size=BATCH)
    ours = BurnStep(0.5, images, labels)
    theirs = TorchStep(0.5, ours.weights(), images, labels) if torch else None
    check_agreement(ours, theirs)
    ours_threads = blas.blas_threads()
    # (name, step, BLAS threads set before ours runs, torch threads set before theirs runs)
    variants: list[tuple[str, Any, int | None, int | None]] = [
        (
            f"burn, burn-ndarray's default ({ours_threads} BLAS thread(s))",
            ours.step,
            ours_threads,
            None,
        ),
        (f"burn, OpenBLAS's own default ({_CORES} threads)", ours.step, _CORES, None),
    ]
    if theirs is not None:
        torch_threads = torch.get_num_threads()
        variants.append(
            (f"torch, its default ({torch_threads} threads)", theirs.step, None, torch_threads)
        )
        variants.append(("torch, 1 thread (`torch.set_num_threads(1)`)", theirs.step, None, 1))
    times: dict[tuple[int, bool], list[float]] = {}
    loads: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for loaded in (False, True):
            busy = _busy_process() if loaded else None
            try:
                time.sleep(0.5)  # the busy process is running, or the last one has gone
                loads[loaded].append(os.getloadavg()[0])
                for i, (_, step, blas_threads, torch_threads) in enumerate(variants):
                    if blas_threads is not None:
                        blas.set_blas_threads(blas_threads)
                    if torch_threads is not None:
                        torch.set_num_threads(torch_threads)
                    times.setdefault((i, loaded), []).append(median_ms(step, repeats, warmup))
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()
    blas.set_blas_threads(ours_threads)
    rows = []
    for i, (name, *_) in enumerate(variants):
        quiet = statistics.median(times[i, False])
        loaded = statistics.median(times[i, True])
        rows.append([name, f"{quiet:.2f}", f"{loaded:.2f}", f"{loaded / quiet:.2f}"])
        print(" | ".join(rows[-1]), flush=True)
    return rows, loads


LOAD_NOTES = """How to read it:

- The step is the guide's (the book's model with its dropout, batch 64), as in "The guide:
  one training step against PyTorch CPU". "loaded": while one extra process spins on a core
  (`while True: pass`, started by the bench and killed after). Quiet and loaded alternate,
  every variant measured in each.
- Each library runs with its own default thread counts (the bench sets none):
  burn-ndarray sets numpy's BLAS to half the usable cores at import (see
  `burn.ndarray.threads`), the second row puts OpenBLAS back to its own default of one thread
  per core, the way our step ran before; PyTorch uses one thread per core, and the last row
  is PyTorch with one thread, the same count as ours.
- OpenBLAS's threads busy-wait for each other (and PyTorch's OpenMP threads spin for a while
  before they sleep): whenever the machine has more runnable threads than cores, a thread that
  is not running holds up the others at every matmul. The busy process is such a load, and so
  are the other jobs of a shared machine, in the quiet column too (load averages above): the
  rows with two threads pay for both. "loaded / quiet" is the number to compare between
  libraries.
"""


def main() -> None:
    def extra(parser) -> None:
        parser.add_argument(
            "--under-load", action="store_true", help="quiet vs one competing busy process"
        )
        parser.add_argument("--rounds", type=int, default=8, help="with --under-load")
        parser.add_argument(
            "--interleaved",
            action="store_true",
            help="time one step of each library in turn; prints the table, writes nothing",
        )

    args, repeats, warmup = parse_run_args(
        __doc__.splitlines()[0], 30, 5, quick=(5, 2), extra=extra
    )
    if args.under_load:
        rounds = 1 if args.quick else args.rounds
        repeats, warmup = (5, 1) if args.quick else (min(repeats, 7), min(warmup, 2))
        info = torch_machine(torch)
        print_start(info, LOAD_HEADER)
        rows, loads = run_under_load(repeats, warmup, rounds)
        publish(
            LOAD_SECTION,
            "bench_guide.py --under-load",
            f"median of {repeats} steps after {warmup} warm-up steps per measurement, median "
            f"of {rounds} measurements per cell, quiet and loaded alternating, times in "
            "milliseconds. 1-minute load average before the quiet measurements "
            f"{min(loads[False]):.2f}..{max(loads[False]):.2f}, before the loaded ones "
            f"{min(loads[True]):.2f}..{max(loads[True]):.2f}.",
            info,
            LOAD_HEADER,
            rows,
            f"{LOAD_NOTES}\nReproduce: `env -u OPENBLAS_NUM_THREADS -u OMP_NUM_THREADS uv run "
            "python benches/bench_guide.py --under-load`.\n",
            args.quick,
        )
        return

    info = torch_machine(torch)
    print_start(info, HEADER)
    if args.interleaved:
        run(repeats, warmup, interleaved=True)
        return
    publish(
        SECTION,
        "bench_guide.py",
        f"median of {repeats} steps after {warmup} warm-up steps, times in milliseconds. "
        f"Ratios above 1 mean Autodiff(NdArray) is slower. Both libraries ran with {THREADS} "
        "thread(s) (OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set for the whole process, "
        "`torch.set_num_threads` to match).",
        info,
        HEADER,
        run(repeats, warmup),
        f"{NOTES}\nReproduce: `OMP_NUM_THREADS={THREADS} OPENBLAS_NUM_THREADS={THREADS} uv run "
        "python benches/bench_guide.py` (with torch importable for the PyTorch column).\n",
        args.quick,
    )


if __name__ == "__main__":
    main()
