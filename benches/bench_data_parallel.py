"""Data-parallel scaling: the guide's CNN for one epoch, and a 6-layer Transformer encoder.

Run under `mpiexec` with one GPU per rank (`rank_device`), as 1 and as 2 ranks, and compare:

    mpiexec -n 2 python benches/bench_data_parallel.py guide [--out guide-2.json]
    mpiexec -n 2 python benches/bench_data_parallel.py transformer --steps 30 [--out t-2.json]
    mpiexec -n 2 python benches/bench_data_parallel.py transformer --compare-loss
    uv run mpiexec -n 2 python benches/bench_data_parallel.py guide --backend ndarray --quick

`guide`: the guide's model, batcher and config (imported from `examples/guide`), one epoch of
MNIST at the global batch of 64 with the Learner and `DataParallel`; no logger, plots or
evaluator. It reports the time of `fit` and the validation accuracy of the trained model.

`transformer`: an embedding, burn.nn's TransformerEncoder (6 layers, d_model 512, 8 heads,
d_ff 2048, dropout 0) and a linear head on synthetic tokens, `--batch` sequences of `--seq`
tokens per rank, Adam. A hand-written loop times each step's parts, each ended by a device
sync: forward and backward, the bucketed all-reduce (`GradientBuckets`), the optimizer.
`--bucket-mb`, `--overlap` and `--wire-dtype bfloat16` (gradients sent in 2 bytes) vary the
all-reduce, to measure what limits the scaling.
`--compare-loss` halves the per-rank batch, trains the job, then trains the same global batch
on rank 0 alone (same seeds, no all-reduce) and prints both loss curves and the largest
parameter difference.

`--plain` (one process, no mpiexec) trains without `DataParallel` or any all-reduce: the
baseline a 1-rank job is compared with, since a job of one still packs, copies to the host
and back, and unpacks its gradients every step. The scaling of R ranks is the job's tokens
(or items) per second over the plain run's:

    python benches/bench_data_parallel.py transformer --plain --out t-plain.json
    mpiexec -n 1 python benches/bench_data_parallel.py transformer --out t-1.json
    mpiexec -n 2 python benches/bench_data_parallel.py transformer --out t-2.json

Both end with the parameters checked identical on every rank (`assert_identical`, and the
largest difference between ranks), a table on rank 0, and `--out FILE.json` for the results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parent.parent
_GUIDE = _ROOT / "examples" / "guide"


# ---------------------------------------------------------------------------- shared
def _backend(name: str):
    """`Autodiff` over the named backend: `wgpu`, `ndarray`, or `fusion-wgpu` for
    `Autodiff(Fusion(Wgpu))`."""
    from burn.backend import Autodiff, NdArray

    if name == "wgpu":
        from burn.backend import Wgpu

        return Autodiff(Wgpu)
    if name == "fusion-wgpu":
        from burn.backend import Fusion, Wgpu

        return Autodiff(Fusion(Wgpu))
    return Autodiff(NdArray)


def _param_spread(model, comm) -> float:
    """The largest difference of any parameter value between any two ranks."""
    arrays = [np.asarray(p.val().to_data().as_array(), np.float64).ravel() for p in model.params()]
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    if comm.size <= 1 or flat.size == 0:
        return 0.0
    from mpi4py import MPI

    high, low = flat.copy(), flat.copy()
    comm.comm.Allreduce(MPI.IN_PLACE, high, op=MPI.MAX)
    comm.comm.Allreduce(MPI.IN_PLACE, low, op=MPI.MIN)
    return float(np.max(high - low))


def _check_identical(model, comm) -> dict:
    from burn.collective import assert_identical

    spread = _param_spread(model, comm)
    assert_identical(model, comm, "after the run")  # raises CollectiveError naming the param
    return {"identical": True, "max_param_difference": spread}


def _scalar(tensor) -> float:
    return float(np.asarray(tensor.to_data().as_array()).reshape(-1)[0])


def _table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}")
    print("-" * (width + 24))
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print("-" * (width + 24), flush=True)


def _write(path: str | None, result: dict) -> None:
    if path is None:
        return
    target = Path(path)
    with tempfile.NamedTemporaryFile("w", dir=target.parent or ".", delete=False) as handle:
        json.dump(result, handle, indent=2)
    os.replace(handle.name, target)


def _device_name(device) -> str:
    inner = getattr(device, "inner", device)
    inner = inner() if callable(inner) else inner
    return str(getattr(inner, "name", None) or inner)


# ---------------------------------------------------------------------------- guide
class _Quiet:
    """A renderer that shows nothing (the timing covers training, not drawing)."""

    def update_train(self, state) -> None:
        pass

    def update_valid(self, state) -> None:
        pass

    def render_train(self, progress) -> None:
        pass

    def render_valid(self, progress) -> None:
        pass


def run_guide(args, comm, strategy) -> dict:
    sys.path.insert(0, str(_GUIDE))
    from burn.data import DataLoaderBuilder, MnistDataset, PartialDataset
    from burn.optim import AdamConfig
    from burn.train import LearnerBuilder
    from burn.train.metric import AccuracyMetric, LossMetric
    from data import MnistBatcher
    from model import ModelConfig
    from training import TrainingConfig

    backend = _backend(args.backend)
    device = backend.device() if strategy is None else strategy.device(backend)
    config = TrainingConfig(ModelConfig(num_classes=10, hidden_size=512), AdamConfig())
    config = config.with_num_epochs(1)
    if comm.rank == 0:
        MnistDataset.train(), MnistDataset.test()  # build the cache once, before the others
    comm.barrier()
    backend.seed(config.seed + comm.rank)
    train_items, valid_items = args.train_items, args.valid_items
    train_set, valid_set = MnistDataset.train(), MnistDataset.test()
    if train_items is not None:
        train_set = PartialDataset(train_set, 0, train_items)
    if valid_items is not None:
        valid_set = PartialDataset(valid_set, 0, valid_items)
    loader = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .set_device(device)
        .build(train_set)
    )
    with tempfile.TemporaryDirectory() as artifacts:
        builder = (
            LearnerBuilder(artifacts)
            .metric_train_numeric(AccuracyMetric())
            .metric_train_numeric(LossMetric())
            .renderer(_Quiet())
            .devices([device])
            .num_epochs(config.num_epochs)
        )
        if strategy is not None:
            builder = builder.with_training_strategy(strategy)
        learner = builder.build(
            config.model.init(device), config.optimizer.init(), config.learning_rate
        )
        comm.barrier()
        started = time.perf_counter()
        model = learner.fit(loader, None)
        backend.sync(device)
        comm.barrier()
        fit_s = time.perf_counter() - started
    accuracy = _accuracy(model.valid(), valid_set, device.inner, comm, config.batch_size)
    checks = _check_identical(model, comm)
    return {
        "train_items": len(train_set),
        "valid_items": len(valid_set),
        "global_batch": config.batch_size,
        "epoch_s": fit_s,
        "valid_accuracy": accuracy,
        **checks,
    }


def _accuracy(model, dataset, device, comm, batch_size: int) -> float:
    """Accuracy over `dataset`, each rank scoring a contiguous share, summed over the ranks."""
    sys.path.insert(0, str(_GUIDE))
    from data import MnistBatcher

    batcher = MnistBatcher()
    share = -(-len(dataset) // comm.size)
    start, stop = comm.rank * share, min(len(dataset), (comm.rank + 1) * share)
    counts = np.zeros(2, np.float64)
    for first in range(start, stop, batch_size):
        items = [dataset.get(i) for i in range(first, min(stop, first + batch_size))]
        batch = batcher.batch(items, device)
        predicted = model.forward(batch.images).argmax(1).reshape([-1])
        hits = (predicted.equal(batch.targets)).int().sum()
        counts += [_scalar(hits), len(items)]
    comm.all_reduce_sum(counts)
    return float(counts[0] / counts[1])


# ---------------------------------------------------------------------------- transformer
def _transformer_module():
    from burn.module import Module
    from burn.nn import (
        Embedding,
        EmbeddingConfig,
        Linear,
        LinearConfig,
        TransformerEncoder,
        TransformerEncoderConfig,
        TransformerEncoderInput,
    )
    from burn.nn.loss import CrossEntropyLossConfig

    class TokenEncoder(Module):
        """Tokens -> embedding -> encoder -> scores over the vocabulary, per position."""

        embedding: Embedding
        encoder: TransformerEncoder
        head: Linear

        def __init__(self, embedding, encoder, head):
            self.embedding = embedding
            self.encoder = encoder
            self.head = head

        def loss(self, tokens, targets):
            batch, seq = tokens.dims()
            x = self.encoder.forward(TransformerEncoderInput(self.embedding.forward(tokens)))
            scores = self.head.forward(x).reshape([batch * seq, -1])
            return CrossEntropyLossConfig().init().forward(scores, targets.reshape([batch * seq]))

    def build(args, device):
        return TokenEncoder(
            EmbeddingConfig(args.vocab, args.d_model).init(device),
            TransformerEncoderConfig(
                args.d_model, args.d_ff, args.heads, args.layers, dropout=0.0
            ).init(device),
            LinearConfig(args.d_model, args.vocab).init(device),
        )

    return build


def _tokens(step: int, rows: int, seq: int, vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """Global batch `step`: random tokens, each to be mapped to a fixed other token (so the
    loss has something to learn and falls)."""
    rng = np.random.default_rng(1000 + step)
    tokens = rng.integers(0, vocab, (rows, seq))
    return tokens, (tokens * 7 + 3) % vocab


def _train_transformer(
    args, comm, per_rank: int, steps: int, warmup: int, wire_dtype: str | None
) -> dict:
    """Train `warmup + steps` steps; `wire_dtype` None trains without any all-reduce (plain
    one-process training, the baseline of the scaling)."""
    from burn.collective import GradientBuckets, broadcast_module, rank_device
    from burn.optim import AdamConfig, GradientsParams
    from burn.tensor import Int, Tensor

    backend = _backend(args.backend)
    device = rank_device(backend, comm)
    backend.seed(args.seed)
    model = broadcast_module(_transformer_module()(args, device), comm)
    optimizer = AdamConfig().init()
    buckets = None
    if wire_dtype is not None:
        bucket_bytes = max(1, int(args.bucket_mb * 2**20))
        buckets = GradientBuckets(comm, bucket_bytes, args.overlap, wire_dtype)
    global_rows = per_rank * comm.size
    parts: dict[str, list[float]] = {"step": [], "forward_backward": [], "all_reduce": []}
    parts["optimizer"] = []
    losses = []
    for step in range(warmup + steps):
        tokens, targets = _tokens(step, global_rows, args.seq, args.vocab)
        mine = slice(comm.rank * per_rank, (comm.rank + 1) * per_rank)
        x = Tensor[2, Int].from_data(tokens[mine], device)
        y = Tensor[2, Int].from_data(targets[mine], device)
        backend.sync(device)
        t0 = time.perf_counter()
        # With --overlap the buckets' reductions start during backward (as DataParallel does);
        # "all_reduce" is then what is left to wait for once backward has returned.
        overlapped = buckets.overlapped(model, per_rank) if buckets and args.overlap else None
        if overlapped is not None:
            with overlapped:
                loss = model.loss(x, y)
                grads = GradientsParams.from_grads(loss.backward(), model)
        else:
            loss = model.loss(x, y)
            grads = GradientsParams.from_grads(loss.backward(), model)
        backend.sync(device)
        t1 = time.perf_counter()
        if overlapped is not None:
            grads = overlapped.finish(grads)
        elif buckets is not None:
            grads = buckets.all_reduce(model, grads, per_rank)
        backend.sync(device)
        t2 = time.perf_counter()
        model = optimizer.step(args.lr, model, grads)
        backend.sync(device)
        t3 = time.perf_counter()
        local = np.array([_scalar(loss) * per_rank, per_rank], np.float64)
        comm.all_reduce_sum(local)
        losses.append(float(local[0] / local[1]))
        if step >= warmup:
            for name, value in zip(parts, (t3 - t0, t1 - t0, t2 - t1, t3 - t2), strict=True):
                parts[name].append(value * 1000.0)
    return {
        "model": model,
        "losses": losses,
        "ms": {name: statistics.median(values) for name, values in parts.items()},
        "bytes_all_reduced": 0 if buckets is None else buckets.wire_bytes,
        "buckets": 0 if buckets is None else buckets.num_buckets,
        "device": _device_name(device),
    }


def run_transformer(args, comm) -> dict:
    from burn.collective import Communicator

    per_rank = args.batch // 2 if args.compare_loss else args.batch
    if per_rank < 1:
        raise SystemExit("--batch must be at least 2 with --compare-loss")
    wire = None if args.plain else args.wire_dtype
    run = _train_transformer(args, comm, per_rank, args.steps, args.warmup, wire)
    model = run.pop("model")
    count = sum(int(np.prod(p.dims())) for p in model.params())
    step_s = run["ms"]["step"] / 1000.0
    tokens = per_rank * comm.size * args.seq
    result = {
        "parameters": count,
        "per_rank_batch": per_rank,
        "global_batch": per_rank * comm.size,
        "seq": args.seq,
        "steps_per_s": 1.0 / step_s,
        "tokens_per_s": tokens / step_s,
        **run,
        **_check_identical(model, comm),
    }
    if args.compare_loss:
        # The same global batch on rank 0 alone, from the same seed: the curve one process
        # draws, and how far its parameters end from the job's (float32 gradients there).
        from mpi4py import MPI

        comm.barrier()
        if comm.rank == 0:
            alone_comm = Communicator(MPI.COMM_SELF)
            global_batch = per_rank * comm.size
            # no all-reduce, float32 gradients: what one process computes
            single = _train_transformer(
                args, alone_comm, global_batch, args.steps, args.warmup, None
            )
            alone = single.pop("model")
            diffs = [
                float(
                    np.max(
                        np.abs(
                            np.asarray(a.val().to_data().as_array(), np.float64)
                            - np.asarray(b.val().to_data().as_array(), np.float64)
                        )
                    )
                )
                for a, b in zip(model.params(), alone.params(), strict=True)
            ]
            result["single_process_losses"] = single["losses"]
            result["max_param_difference_vs_single"] = max(diffs)
            result["max_loss_difference_vs_single"] = float(
                np.max(np.abs(np.array(single["losses"]) - np.array(run["losses"])))
            )
        comm.barrier()
    return result


# ---------------------------------------------------------------------------- main
def _reduction(args, result: dict) -> str:
    if args.plain:
        return "none (--plain)"
    return f"{result['buckets']}, {args.overlap}, {args.wire_dtype}"


def _report(args, comm, result: dict) -> None:
    ranks = "1 (plain: no DataParallel)" if args.plain else str(comm.size)
    rows = [("ranks", ranks), ("backend", repr(_backend(args.backend)))]
    if args.mode == "guide":
        rows += [
            ("train items, global batch", f"{result['train_items']}, {result['global_batch']}"),
            ("epoch (fit) s", f"{result['epoch_s']:.2f}"),
            ("valid accuracy", f"{result['valid_accuracy']:.4f} ({result['valid_items']} items)"),
        ]
    else:
        ms = result["ms"]
        rows += [
            ("device (rank 0)", result["device"]),
            ("parameters", f"{result['parameters']:,}"),
            ("batch per rank x seq", f"{result['per_rank_batch']} x {result['seq']}"),
            ("ms per step (median)", f"{ms['step']:.1f}"),
            ("  forward+backward", f"{ms['forward_backward']:.1f}"),
            ("  all-reduce", f"{ms['all_reduce']:.1f}"),
            ("  optimizer", f"{ms['optimizer']:.1f}"),
            ("steps/s", f"{result['steps_per_s']:.2f}"),
            ("tokens/s (job)", f"{result['tokens_per_s']:,.0f}"),
            ("bytes all-reduced / step", f"{result['bytes_all_reduced']:,}"),
            ("buckets, overlap, wire", _reduction(args, result)),
            ("loss first -> last", f"{result['losses'][0]:.4f} -> {result['losses'][-1]:.4f}"),
        ]
    rows.append(("max param diff (ranks)", f"{result['max_param_difference']:.3g}"))
    _table(f"bench_data_parallel {args.mode}", rows)
    if "single_process_losses" in result:
        print("\nstep  loss (job)   loss (1 process, same global batch)")
        for i, (a, b) in enumerate(
            zip(result["losses"], result["single_process_losses"], strict=True)
        ):
            print(f"{i:>4}  {a:.6f}    {b:.6f}")
        print(f"max loss difference: {result['max_loss_difference_vs_single']:.3g}")
        print(f"max param difference vs 1 process: {result['max_param_difference_vs_single']:.3g}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["guide", "transformer"])
    parser.add_argument("--backend", choices=["wgpu", "fusion-wgpu", "ndarray"], default="wgpu")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a CPU smoke run")
    parser.add_argument("--out", default=None, help="write the results here as JSON (rank 0)")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    parser.add_argument("--overlap", action="store_true", help="bucket reductions during backward")
    parser.add_argument(
        "--wire-dtype",
        choices=["float32", "bfloat16", "float16"],
        default="float32",
        help="the format gradients travel in (2-byte ones halve the bytes, rounded)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="one process without DataParallel or all-reduce: the baseline of the scaling",
    )
    parser.add_argument("--compare-loss", action="store_true")
    parser.add_argument("--steps", type=int, default=None, help="timed steps (default 20)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps (default 3)")
    parser.add_argument("--batch", type=int, default=None, help="sequences per rank (32)")
    parser.add_argument("--seq", type=int, default=None, help="tokens per sequence (128)")
    parser.add_argument("--layers", type=int, default=None)
    parser.add_argument("--d-model", type=int, default=None)
    parser.add_argument("--heads", type=int, default=None)
    parser.add_argument("--d-ff", type=int, default=None)
    parser.add_argument("--vocab", type=int, default=None)
    parser.add_argument("--train-items", type=int, default=None, help="guide: default all")
    parser.add_argument("--valid-items", type=int, default=None, help="guide: default all")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    full = dict(steps=20, warmup=3, batch=32, seq=128, layers=6, d_model=512, heads=8)
    full.update(d_ff=2048, vocab=1000)
    quick = dict(steps=3, warmup=1, batch=4, seq=8, layers=2, d_model=32, heads=4)
    quick.update(d_ff=64, vocab=50, train_items=512, valid_items=256)
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    from burn.collective import Communicator, DataParallel, abort_on_error

    comm = Communicator.world()
    if args.plain and comm.size > 1:
        raise SystemExit("--plain is one process's training: run it without mpiexec -n > 1")
    abort_on_error(comm)
    if args.mode == "guide":
        strategy = None
        if not args.plain:
            strategy = DataParallel(
                comm,
                bucket_size_mb=args.bucket_mb,
                overlap=args.overlap,
                wire_dtype=args.wire_dtype,
            )
        result = run_guide(args, comm, strategy)
    else:
        result = run_transformer(args, comm)
    if comm.rank == 0:
        result = {"mode": args.mode, "ranks": comm.size, "args": vars(args), **result}
        _report(args, comm, result)
        _write(args.out, result)


if __name__ == "__main__":
    main()
