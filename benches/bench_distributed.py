"""Data-parallel training on MPI: the gradient all-reduce, and the guide's step on 1 and 2 ranks.

Two measurements, each launched by this script under `mpiexec -n N` from the mpich wheel:

1. All-reduce throughput on 2 ranks. `GradientBuckets.all_reduce` (what `DataParallel` runs
   after each backward pass: a small header reduction, gradients packed into buckets of 25 MB,
   reduced, unpacked into gradients; also with `overlap=True`, which called after backward
   starts each bucket without blocking while the next is packed; `DataParallel(overlap=True)`
   starts them during backward instead, as `bench_data_parallel.py --overlap` measures)
   against a bare `mpi4py` `Allreduce` of the same bytes in one
   contiguous float32 buffer, and against one `Allreduce` per tensor (what the buckets avoid).
   The gradients are the guide's model's shapes, repeated to reach each total size.
2. The time per training step of the guide's model (batch of 64 MNIST digits, Adam) with 1 and
   2 CPU ranks on NdArray: each rank's share of the batch through `train_step`, the bucketed
   all-reduce, the optimizer step.

    uv run python benches/bench_distributed.py            # prints the tables, updates RESULTS.md
    uv run python benches/bench_distributed.py --quick    # fewer repeats, nothing written

`--step-ranks 1,2,4` times the step on more ranks; `--label TEXT` writes the results to a
section of their own (for a run on another machine).

Every rank runs with one BLAS thread (OPENBLAS_NUM_THREADS=1), so 2 ranks use the 2 cores
that one process with two threads would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT / "examples" / "guide"))

import numpy as np  # noqa: E402
from common import machine, median_ms, parse_run_args, print_start, publish  # noqa: E402

MB = 1024 * 1024
SIZES_MB = (4, 40)


def _mpiexec() -> str:
    return str(Path(sys.executable).with_name("mpiexec"))


def _launch(ranks: int, mode: str, repeats: int, warmup: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [
            _mpiexec(),
            "-n",
            str(ranks),
            "-env",
            "OPENBLAS_NUM_THREADS",
            "1",
            sys.executable,
            __file__,
            "--worker",
            mode,
            "--out",
            str(out),
            "--repeats",
            str(repeats),
            "--warmup",
            str(warmup),
        ]
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        subprocess.run(command, check=True, env=env, timeout=900)
        return json.loads(out.read_text())


# ---------------------------------------------------------------------------- worker side
def _guide_shapes() -> list[list[int]]:
    from burn.backend import NdArray
    from model import ModelConfig

    model = ModelConfig(num_classes=10, hidden_size=512).init(NdArray.device())
    return [p.dims() for p in model.params()]


def _timed(comm, fn, repeats: int, warmup: int) -> float:
    """Median ms of `fn` on this rank, every call started together (barrier first)."""

    def call():
        comm.barrier()
        fn()

    return median_ms(call, repeats, warmup)


def _round_robin(comm, fns: dict, repeats: int, warmup: int) -> dict[str, float]:
    """Median ms of each of `fns`, taking turns call by call (barrier first), so that the
    machine's load and the caches' state weigh on all of them alike; timed blocks one after
    the other favoured whichever ran while the machine was quieter."""
    for _ in range(warmup):
        for fn in fns.values():
            comm.barrier()
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            comm.barrier()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) * 1e3 for name, t in times.items()}


def worker_allreduce(repeats: int, warmup: int) -> dict:
    from burn.backend import Autodiff, NdArray
    from burn.collective import Communicator, GradientBuckets
    from burn.optim import GradientsParams
    from burn.tensor import Tensor
    from mpi4py import MPI

    comm = Communicator.world()
    device = Autodiff(NdArray).device()
    shapes = _guide_shapes()
    rows = {}
    for size_mb in SIZES_MB:
        rng = np.random.default_rng(comm.rank)
        model, grads, total = {}, GradientsParams(), 0
        while total < size_mb * MB:
            for i, shape in enumerate(shapes):
                if total >= size_mb * MB:
                    break
                pid = f"p{len(model)}-{i}"
                value = rng.standard_normal(shape).astype(np.float32)
                model[pid] = Tensor.from_data(value, device)
                grads.register(pid, Tensor.from_data(value.copy(), device.inner))
                total += value.nbytes
        flat = np.concatenate(
            [np.asarray(g.to_data().as_array()).reshape(-1) for _, g in grads.items()]
        )
        arrays = [np.asarray(g.to_data().as_array()).copy() for _, g in grads.items()]
        buckets = GradientBuckets(comm)
        overlapped = GradientBuckets(comm, overlap=True)

        def bare(flat=flat):
            comm.comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)

        def per_tensor(arrays=arrays):
            for a in arrays:
                comm.comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)

        def bucketed(model=model, grads=grads, buckets=buckets):
            buckets.all_reduce(model, grads, items=32)

        def bucketed_overlap(model=model, grads=grads, buckets=overlapped):
            buckets.all_reduce(model, grads, items=32)

        rows[size_mb] = {
            "bytes": int(flat.nbytes),
            "tensors": len(arrays),
            **_round_robin(
                comm,
                {
                    "bare": bare,
                    "bucketed": bucketed,
                    "overlapped": bucketed_overlap,
                    "per_tensor": per_tensor,
                },
                repeats,
                warmup,
            ),
        }
    return rows


def worker_guide_step(repeats: int, warmup: int) -> dict:
    from burn.backend import Autodiff, NdArray
    from burn.collective import DataParallel, broadcast_module, shard_range
    from burn.data import MnistDataset
    from burn.optim import AdamConfig
    from data import MnistBatcher
    from model import ModelConfig

    strategy = DataParallel()
    comm = strategy.comm
    backend = Autodiff(NdArray)
    device = strategy.device(backend)
    backend.seed(42 + comm.rank)
    model = broadcast_module(ModelConfig(num_classes=10, hidden_size=512).init(device), comm)
    optim = AdamConfig().init()
    if comm.rank == 0:  # the first use builds the cache: once, before the others read it
        MnistDataset.train()
    comm.barrier()
    dataset = MnistDataset.train()
    batches = []
    for b in range(8):
        start, length = shard_range(64, comm.rank, comm.size)
        items = [dataset.get(b * 64 + start + i) for i in range(length)]
        batches.append((MnistBatcher().batch(items, device), length))
    state = {"model": model, "i": 0}

    def step():
        batch, items = batches[state["i"] % len(batches)]
        state["i"] += 1
        output = state["model"].train_step(batch)
        grads = strategy.buckets.all_reduce(state["model"], output.grads, items)
        state["model"] = optim.step(1e-4, state["model"], grads)

    return {"step_ms": _timed(comm, step, repeats, warmup), "ranks": comm.size}


def worker(mode: str, out: str, repeats: int, warmup: int) -> None:
    from mpi4py import MPI

    result = worker_allreduce(repeats, warmup) if mode == "allreduce" else None
    if mode == "guide":
        result = worker_guide_step(repeats, warmup)
    if MPI.COMM_WORLD.Get_rank() == 0:
        Path(out).write_text(json.dumps(result))


# ---------------------------------------------------------------------------- driver side
def main() -> None:
    if "--worker" in sys.argv:
        args = sys.argv
        worker(
            args[args.index("--worker") + 1],
            args[args.index("--out") + 1],
            int(args[args.index("--repeats") + 1]),
            int(args[args.index("--warmup") + 1]),
        )
        return

    def options(parser) -> None:
        parser.add_argument("--step-ranks", default="1,2", help="rank counts for the step")
        parser.add_argument("--label", default=None, help="a section of its own, e.g. a host")

    args, repeats, warmup = parse_run_args(
        __doc__.splitlines()[0], 30, 5, quick=(5, 2), extra=options
    )
    step_ranks = [int(n) for n in args.step_ranks.split(",")]
    import mpi4py

    info = machine(
        **{
            "mpi4py": mpi4py.__version__,
            "MPI": "mpich wheel, ranks on one host",
            "BLAS threads per rank": "1 (OPENBLAS_NUM_THREADS=1 for every rank)",
        }
    )
    header = [
        "gradients",
        "tensors",
        "bare Allreduce ms",
        "bucketed ms",
        "bucketed, overlap ms",
        "per-tensor ms",
        "bucketed / bare",
        "per-tensor / bucketed",
        "bucketed GB/s",
    ]
    print_start(info, header)
    started = time.perf_counter()
    reduce = _launch(2, "allreduce", repeats, warmup)
    rows = []
    for r in reduce.values():
        rows.append(
            [
                f"{r['bytes'] / MB:.1f} MB float32",
                str(r["tensors"]),
                f"{r['bare']:.2f}",
                f"{r['bucketed']:.2f}",
                f"{r['overlapped']:.2f}",
                f"{r['per_tensor']:.2f}",
                f"{r['bucketed'] / r['bare']:.2f}",
                f"{r['per_tensor'] / r['bucketed']:.2f}",
                f"{r['bytes'] / r['bucketed'] / 1e6:.2f}",
            ]
        )
    steps = [_launch(n, "guide", max(repeats // 3, 3), warmup) for n in step_ranks]
    step_rows = [
        [str(s["ranks"]), f"{s['step_ms']:.1f}", f"{steps[0]['step_ms'] / s['step_ms']:.2f}"]
        for s in steps
    ]
    elapsed = time.perf_counter() - started
    notes = (
        "The guide's step (batch of 64, Autodiff(NdArray), Adam; each rank's share, the bucketed "
        "all-reduce and the optimizer step):\n\n"
        + "\n".join(
            [
                "| ranks | ms per step | speed-up over 1 rank |",
                "|---|---|---|",
                *("| " + " | ".join(r) + " |" for r in step_rows),
            ]
        )
        + f"\n\nMedians of {repeats} all-reduces of each kind (taken in turns) and "
        f"{max(repeats // 3, 3)} steps after "
        f"{warmup} warm-up calls, each started after a barrier; {elapsed:.0f} s in all. The "
        "machine is shared with other work, so absolute times move from run to run; the ratios "
        "within one run are what to compare."
    )
    section = "## burn-collective: gradient all-reduce and data-parallel steps on MPI"
    publish(
        section if args.label is None else f"{section} ({args.label})",
        "bench_distributed.py",
        "2 ranks under the mpich wheel's `mpiexec` on one host.",
        info,
        header,
        rows,
        notes,
        args.quick,
    )
    print(notes)


if __name__ == "__main__":
    main()
