"""Where a training epoch's time goes: the guide's Learner loop, part by part.

One epoch of the guide (its model, batcher and config from `examples/guide`, MNIST from the
offline cache, batch 64, Adam, accuracy and loss metrics, no logger or renderer output) on one
backend, with the Learner's parts and the device's queue operations timed by wrappers: the
training step (forward and backward), the optimizer step, the metrics (which read the step's
outputs back), getting the next batch, and, on Wgpu, reads, uploads and batch submissions.
A part that calls another includes it (the metrics include their reads).

    python benches/bench_learner.py --backend fusion-wgpu --items 38400
    uv run python benches/bench_learner.py --backend ndarray --items 6400

On a GPU the first epoch of a process also compiles the step's kernels: run a short epoch
first (`--warmup-items`, default 6400) so that the timed one measures the loop, not the
compiler. Nothing is written; the table goes to stdout.
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_data_parallel as dp  # noqa: E402
from burn.optim.simple import OptimizerAdaptor  # noqa: E402
from burn.train.learner import learner as learner_module  # noqa: E402

BATCH = 64


class PartTimer:
    """Seconds and calls per labelled method; a method called inside itself counts once."""

    def __init__(self) -> None:
        self.seconds: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self._active: set[str] = set()

    def wrap(self, owner, name: str, label: str) -> None:
        method = getattr(owner, name)
        timer = self

        @functools.wraps(method)
        def timed(*args, **kwargs):
            if label in timer._active:
                return method(*args, **kwargs)
            timer._active.add(label)
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                timer.seconds[label] += time.perf_counter() - start
                timer.calls[label] += 1
                timer._active.discard(label)

        setattr(owner, name, timed)


def instrument(timer: PartTimer, backend: str) -> None:
    learner = learner_module.Learner
    timer.wrap(learner, "local_train_step", "training step")
    timer.wrap(OptimizerAdaptor, "step", "optimizer step")
    timer.wrap(learner, "_update_metrics", "metrics")
    timer.wrap(learner_module._Epoch, "__next__", "next batch")
    timer.wrap(learner_module._Epoch, "prefetch", "next batch, loaded early")
    if "wgpu" in backend:
        from burn.wgpu.runtime import Runtime

        # Every read goes through `read_many` (a tree from before it wraps `read`).
        reads = "read_many" if hasattr(Runtime, "read_many") else "read"
        timer.wrap(Runtime, reads, "device reads")
        timer.wrap(Runtime, "upload", "uploads")
        timer.wrap(Runtime, "flush", "batch submissions")


def epoch(backend: str, items: int) -> float:
    """Seconds of `fit` for one epoch of `items` training items."""
    from burn.collective import Communicator

    args = types.SimpleNamespace(backend=backend, train_items=items, valid_items=BATCH * 10)
    return dp.run_guide(args, Communicator.world(), None)["epoch_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["wgpu", "fusion-wgpu", "ndarray"], default="wgpu")
    parser.add_argument("--items", type=int, default=38400, help="training items timed")
    parser.add_argument("--warmup-items", type=int, default=6400, help="an untimed epoch first")
    args = parser.parse_args()
    if args.warmup_items:
        epoch(args.backend, args.warmup_items)
    timer = PartTimer()
    instrument(timer, args.backend)
    seconds = epoch(args.backend, args.items)
    steps = args.items // BATCH
    print(f"{args.backend}: {steps} steps, {seconds:.2f} s, {seconds / steps * 1e3:.2f} ms/step")
    print("| part | ms per step | calls per step |")
    print("|---|---|---|")
    for label, total in timer.seconds.most_common():
        print(f"| {label} | {total / steps * 1e3:.3f} | {timer.calls[label] / steps:.2f} |")


if __name__ == "__main__":
    main()
