"""Per-op overhead: a 4x4 `matmul` and `add` through `Tensor`, against the same numpy call.

On arrays this small the numpy kernel takes well under a microsecond, so what is measured is
the Python between `Tensor` and numpy: argument checks, the backend's named op, and under
`Autodiff(NdArray)` the wrapper primitives and (for a tensor that requires a gradient) the
graph node. Times are microseconds per call: the median of several batches of calls.

With `--before DIR`, where DIR holds another checkout's `packages/` (for example one made with
`git archive <commit> packages | tar -x -C DIR`), each round times that checkout (in a child
process whose import path puts its sources first) and this one, alternately, so both sides see
the same load; the table shows the medians of the rounds side by side.

    OPENBLAS_NUM_THREADS=1 uv run python benches/bench_overhead.py
    OPENBLAS_NUM_THREADS=1 uv run python benches/bench_overhead.py --before DIR
    uv run python benches/bench_overhead.py --quick    # fewer rounds, nothing written
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import machine, print_start, publish

SECTION = "## burn-tensor: per-op overhead of small ops"
CALLS = 20000
CASES = ("matmul", "add")
SETUPS = ("numpy", "NdArray", "Autodiff(NdArray)", "Autodiff(NdArray), tracked")


def _per_call_us(fn, batches: int) -> float:
    """Median over `batches` of the mean time of `CALLS` calls, in microseconds."""
    fn()
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        times.append((time.perf_counter() - start) / CALLS * 1e6)
    return statistics.median(times)


def measure(batches: int) -> dict[str, float]:
    """`{"<case> <setup>": microseconds}` for this process's `burn` sources."""
    from burn.autodiff import Autodiff
    from burn.ndarray import NdArray
    from burn.tensor import Tensor

    rng = np.random.default_rng(0)
    a, b = (rng.random((4, 4)).astype(np.float32) for _ in range(2))
    ad = Autodiff(NdArray)
    pairs = {
        "numpy": (a, b),
        "NdArray": (Tensor[NdArray, 2].from_data(a), Tensor[NdArray, 2].from_data(b)),
        "Autodiff(NdArray)": (Tensor[ad, 2].from_data(a), Tensor[ad, 2].from_data(b)),
        "Autodiff(NdArray), tracked": (
            Tensor[ad, 2].from_data(a).require_grad(),
            Tensor[ad, 2].from_data(b),
        ),
    }
    out = {}
    for setup, (x, y) in pairs.items():
        matmul = (lambda x=x, y=y: x @ y) if setup == "numpy" else (lambda x=x, y=y: x.matmul(y))
        out[f"matmul {setup}"] = _per_call_us(matmul, batches)
        out[f"add {setup}"] = _per_call_us(lambda x=x, y=y: x + y, batches)
    return out


def _child(before: Path, batches: int) -> dict[str, float]:
    """`measure` run on the checkout in `before`, in a fresh interpreter."""
    sources = [str(p) for p in sorted((before / "packages").glob("*/src"))]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sources))
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_overhead as b; "
        "print(json.dumps(b.measure(int(sys.argv[2]))))"
    )
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, here, str(batches)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a directory holding another packages/")
    parser.add_argument(
        "--before-name", default="another checkout", help="what --before holds, for the notes"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="few rounds, no file written")
    args = parser.parse_args()
    rounds, batches = (2, 3) if args.quick else (args.rounds, args.batches)
    load = os.getloadavg()[0]
    header = ["op (4x4, float32)", "setup"]
    header += ["before us", "after us", "after / before"] if args.before else ["us"]
    header.append("after / numpy" if args.before else "/ numpy")
    info = machine()
    print_start(info, header)
    before: list[dict[str, float]] = []
    after: list[dict[str, float]] = []
    for _ in range(rounds):
        if args.before:
            before.append(_child(args.before, batches))
        after.append(measure(batches))

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    rows = []
    for case in CASES:
        numpy_us = med(after, f"{case} numpy")
        for setup in SETUPS:
            key = f"{case} {setup}"
            row = [case, setup]
            if args.before:
                old, new = med(before, key), med(after, key)
                row += [f"{old:.2f}", f"{new:.2f}", f"{new / old:.2f}"]
            else:
                new = med(after, key)
                row.append(f"{new:.2f}")
            row.append(f"{new / numpy_us:.1f}")
            rows.append(row)
    end_load = os.getloadavg()[0]
    how = (
        f"median of {rounds} rounds, each the median of {batches} batches of {CALLS} calls; "
        f"microseconds per call; load average {load:.2f} at the start, {end_load:.2f} at the end "
        "(the machine was shared with other jobs)."
    )
    if args.before:
        how += (
            f" Before: {args.before_name}; after: this checkout. They ran alternately, round by "
            "round, in the same run."
        )
    notes = (
        "How to read it: numpy is the floor (the same call on the same arrays). The rest is the "
        "Python a call goes through: `Tensor`'s checks (kind, backend, device, shapes), the "
        "backend's named op, and under Autodiff the wrapper primitive and, for a tracked "
        "tensor, the graph node. Single runs move by 10-20% on the shared machine; the "
        "ratios within a run are what to compare.\n\n"
        "Reproduce: `OPENBLAS_NUM_THREADS=1 uv run python benches/bench_overhead.py "
        "[--before DIR]`.\n"
    )
    publish(SECTION, "bench_overhead.py", how, info, header, rows, notes, args.quick)


if __name__ == "__main__":
    main()
