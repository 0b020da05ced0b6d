"""The host's share of a traced training step: Python, the tensor layers, fusion's recording
and planning, and command encoding, with the GPU submissions skipped.

One training step (forward, backward, Adam) of the guide CNN at batch 64, traced every step
(no whole-step capture) on `Autodiff(Fusion(Wgpu))` and on `Autodiff(Wgpu)`: host ms per step
and kernel launches per step, measured by `bench_wgpu.host_seconds` on `bench_fusion.AdamStep`.
Any adapter works (lavapipe included), since nothing waits for the GPU.

Each backend is warmed up with `--warmup` synchronised steps, then `--settle` steps with
submissions skipped (the buffer pool and its bind groups settle into the pattern they keep
under these conditions), then timed `--repeats` times over `--steps` steps: the median is
printed, with every run.

    python benches/bench_host.py                     # both backends
    python benches/bench_host.py --warmup 5 --settle 0 fusion
    python benches/bench_host.py --guide             # the guide's own model and optimizer

With `--guide` the step is what the Learner runs for the guide instead: its model
(examples/guide, dropout as in the book), `model.train_step(batch)` and `burn.optim.Adam`'s
`step`, on a batch of 64 MNIST-shaped images.

With `--interleaved ROUNDS` both backends are timed in one process instead, in turn, `--steps`
steps each per round (the order swapped every round): the medians, and the median of the
per-round differences, which a drift of the machine's speed reaches alike.

    python benches/bench_host.py --guide --interleaved 40

With `--loop N` each backend instead runs N steps with real submissions (a sync every 20 steps),
as a training loop does: ms per step, and what the garbage collector took of it (its time per
step and the full collections it ran), which a few timed steps rarely include.

    python benches/bench_host.py --guide --loop 1500
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fusion import AdamStep, Fusion  # noqa: E402
from bench_wgpu import host_seconds, init_cnn  # noqa: E402
from burn.wgpu import Wgpu  # noqa: E402

BACKENDS = {"fusion": "Autodiff(Fusion(Wgpu))", "plain": "Autodiff(Wgpu)"}


class GuideStep:
    """The guide's training step as the Learner runs it: `train_step`, then the optimizer."""

    def __init__(self, inner, rng):
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "guide"))
        from burn.autodiff import Autodiff
        from burn.optim import AdamConfig
        from data import MnistBatcher
        from model import ModelConfig

        self.inner, backend = inner, Autodiff(inner)
        backend.seed(42)
        self.model = ModelConfig(num_classes=10, hidden_size=512).init(backend.device())
        self.optim = AdamConfig().init()
        items = [
            types.SimpleNamespace(image=image, label=int(label))
            for image, label in zip(
                rng.integers(0, 256, (64, 28, 28), dtype=np.uint8),
                rng.integers(0, 10, 64),
                strict=True,
            )
        ]
        self.batch = MnistBatcher().batch(items, backend.device())

    def complete_step(self) -> None:
        output = self.model.train_step(self.batch)
        self.model = self.optim.step(1e-4, self.model, output.grads)
        self.inner.submit()


def make_step(which: str, guide: bool):
    """(the inner backend, the step) for one backend: the bench CNN, or the guide's own."""
    rng = np.random.default_rng(0)
    inner = Fusion(Wgpu) if which == "fusion" else Wgpu
    if guide:
        return inner, GuideStep(inner, rng)
    params = init_cnn(rng, 28)
    x = rng.random((64, 1, 28, 28), dtype=np.float32)
    return inner, AdamStep(inner, params, x, rng.integers(0, 10, 64), drop=False)


def measure(which: str, warmup: int, settle: int, steps: int, repeats: int, guide=False):
    """(host ms per step of each run, launches per step) for one backend."""
    inner, step = make_step(which, guide)
    for _ in range(warmup):
        step.complete_step()
    Wgpu.sync()
    if settle:
        host_seconds(step.complete_step, settle)
    runs, launches = [], 0
    for _ in range(repeats):
        seconds, launches = host_seconds(step.complete_step, steps)
        runs.append(seconds * 1e3)
    return runs, launches


def interleaved(warmup: int, settle: int, steps: int, rounds: int, guide=False) -> list[str]:
    """Both backends' host ms per step, timed in turn in one process: lines with the medians
    and the median of the per-round differences (fused minus plain)."""
    made = {which: make_step(which, guide)[1] for which in BACKENDS}
    for step in made.values():
        for _ in range(warmup):
            step.complete_step()
        Wgpu.sync()
        if settle:
            host_seconds(step.complete_step, settle)
    ms: dict[str, list[float]] = {which: [] for which in BACKENDS}
    for r in range(rounds):
        for which in list(BACKENDS)[:: 1 if r % 2 else -1]:
            seconds, _ = host_seconds(made[which].complete_step, steps)
            ms[which].append(seconds * 1e3)
    lines = [f"{BACKENDS[w]}: host ms per step {statistics.median(v):.3f}" for w, v in ms.items()]
    gaps = [f - p for f, p in zip(ms["fusion"], ms["plain"], strict=True)]
    lines.append(f"fused minus plain, median of {rounds} rounds: {statistics.median(gaps):.3f} ms")
    return lines


def loop(which: str, warmup: int, steps: int, guide=False) -> tuple[float, float, int]:
    """(ms per step, the collector's ms per step, full collections) over `steps` real steps."""
    inner, step = make_step(which, guide)
    for _ in range(warmup):
        step.complete_step()
    inner.sync()
    spent, full, started = [0.0], [0], [0.0]

    def collector(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - started[0]
            full[0] += info["generation"] == 2

    gc.callbacks.append(collector)
    try:
        start = time.perf_counter()
        for i in range(steps):
            step.complete_step()
            if i % 20 == 19:
                inner.sync()
        inner.sync()
        seconds = time.perf_counter() - start
    finally:
        gc.callbacks.remove(collector)
    return 1e3 * seconds / steps, 1e3 * spent[0] / steps, full[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", help=f"of {list(BACKENDS)} (default: both)")
    parser.add_argument("--warmup", type=int, default=30, help="synchronised steps first")
    parser.add_argument("--settle", type=int, default=30, help="then untimed host-only steps")
    parser.add_argument("--steps", type=int, default=10, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs (median printed)")
    parser.add_argument("--guide", action="store_true", help="the guide's model and optimizer")
    parser.add_argument("--loop", type=int, default=0, help="N real steps instead (see above)")
    parser.add_argument(
        "--interleaved", type=int, default=0, metavar="ROUNDS", help="both backends in turn"
    )
    args = parser.parse_args()
    unknown = [b for b in args.backends if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backends {unknown}; choose from {list(BACKENDS)}")
    if args.interleaved:
        lines = interleaved(args.warmup, args.settle, args.steps, args.interleaved, args.guide)
        print("\n".join(lines))
        return
    for which in args.backends or list(BACKENDS):
        if args.loop:
            ms, collector, full = loop(which, args.warmup, args.loop, args.guide)
            print(
                f"{BACKENDS[which]}: {ms:.3f} ms per step over {args.loop} steps; the garbage "
                f"collector {collector:.3f} ms per step, {full} full collection(s)"
            )
            continue
        runs, launches = measure(
            which, args.warmup, args.settle, args.steps, args.repeats, args.guide
        )
        shown = ", ".join(f"{r:.2f}" for r in runs)
        print(
            f"{BACKENDS[which]}: host ms per step {statistics.median(runs):.2f} "
            f"(runs {shown}), {launches} launches per step"
        )


if __name__ == "__main__":
    main()
