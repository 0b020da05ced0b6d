"""What experiment tracking costs a training run: the Learner with and without a TensorBoard or
MLflow logger, and the logger's own cost per metric entry.

The question is whether `with_metric_logger` slows training, so each configuration trains the
same small classifier (an MLP on random 28x28 inputs, two numeric metrics per split, every
step's value logged) for one epoch, and the times are reported as ratios to the run with the
text logs only. The second table times the loggers alone, 5000 entries through the view the
Learner uses, against the in-memory logger.

    uv run python benches/bench_tracking.py            # writes its RESULTS.md section
    uv run python benches/bench_tracking.py --quick    # few repeats, no file written

MLflow rows are skipped when mlflow is not importable. All its runs share one SQLite store,
created in the warm-up, as a user's existing store would be; starting a run is excluded from
the per-entry times and included in the epoch times.
"""

from __future__ import annotations

import io
import logging
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn.backend import Autodiff, NdArray  # noqa: E402
from burn.data import DataLoaderBuilder, InMemDataset  # noqa: E402
from burn.module import Module  # noqa: E402
from burn.nn import LinearConfig  # noqa: E402
from burn.nn.loss import CrossEntropyLossConfig  # noqa: E402
from burn.optim import AdamConfig  # noqa: E402
from burn.tensor import Int, Tensor  # noqa: E402
from burn.tensor.activation import relu  # noqa: E402
from burn.train import ClassificationOutput, CliMetricsRenderer, LearnerBuilder, TrainOutput  # noqa: E402
from burn.train.logger import InMemoryMetricLogger, Split  # noqa: E402
from burn.train.metric import AccuracyMetric, LossMetric  # noqa: E402
from burn.train.metric.base import MetricEntry, NumericEntry  # noqa: E402
from common import machine, parse_run_args, print_start, publish, ratio  # noqa: E402

SECTION = "## burn-train: the cost of experiment tracking"
B = Autodiff(NdArray)

try:
    import mlflow  # noqa: F401

    HAVE_MLFLOW = True
except ImportError:
    HAVE_MLFLOW = False


@dataclass
class Batch:
    images: Tensor
    targets: Tensor


def batcher(items, device) -> Batch:
    images = np.stack([x for x, _ in items]).astype(np.float32)
    targets = np.array([y for _, y in items], dtype=np.int64)
    return Batch(Tensor.from_data(images, device), Tensor[1, Int].from_data(targets, device))


class Mlp(Module):
    def __init__(self, device):
        self.hidden = LinearConfig(784, 256).init(device)
        self.output = LinearConfig(256, 10).init(device)

    def classify(self, batch: Batch) -> ClassificationOutput:
        scores = self.output.forward(relu(self.hidden.forward(batch.images)))
        loss = CrossEntropyLossConfig().init(scores.device()).forward(scores, batch.targets)
        return ClassificationOutput(loss, scores, batch.targets)

    def train_step(self, batch: Batch) -> TrainOutput:
        item = self.classify(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch: Batch) -> ClassificationOutput:
        return self.classify(batch)


def dataset(n: int, seed: int) -> InMemDataset:
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(n, 784)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    return InMemDataset(list(zip(images, labels.tolist(), strict=True)))


# One MLflow store for every run, so its tables are created once (in the warm-up), as for a
# user's store that already exists; each run then pays for starting a run only.
MLFLOW_STORE = tempfile.mkdtemp(prefix="bench-mlflow-")


def make_logger(kind: str, directory: str):
    if kind == "tensorboard":
        from burn.train.tracking import TensorBoardLogger

        return TensorBoardLogger(hyperparameters={"lr": 1e-3, "hidden": 256})
    if kind == "mlflow":
        from burn.train.tracking import MlflowLogger

        return MlflowLogger(
            f"sqlite:///{MLFLOW_STORE}/mlflow.db",
            artifact_location=Path(MLFLOW_STORE, "artifacts").as_uri(),
            hyperparameters={"lr": 1e-3, "hidden": 256},
            log_model=False,
        )
    return None


def fit_once(kind: str, steps: int) -> None:
    device = B.device()
    train = (
        DataLoaderBuilder(batcher).batch_size(64).set_device(device).build(dataset(64 * steps, 1))
    )
    valid = (
        DataLoaderBuilder(batcher).batch_size(64).set_device(device.inner).build(dataset(640, 2))
    )
    with tempfile.TemporaryDirectory() as directory:
        builder = (
            LearnerBuilder(directory)
            .metric_train_numeric(AccuracyMetric())
            .metric_valid_numeric(AccuracyMetric())
            .metric_train_numeric(LossMetric())
            .metric_valid_numeric(LossMetric())
            .renderer(CliMetricsRenderer(io.StringIO(), interval=float("inf")))
            .with_application_logger(None)
            .num_epochs(1)
        )
        logger = make_logger(kind, directory)
        if logger is not None:
            builder = builder.with_metric_logger(logger)
        B.seed(0)
        builder.build(Mlp(device), AdamConfig().init(), 1e-3).fit(train, valid)


def per_entry_us(kind: str, entries: int, repeats: int) -> float | None:
    records = [
        MetricEntry("Loss", "", NumericEntry(0.5 + i * 1e-4, 64).serialize())
        for i in range(entries)
    ]
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as directory:
            if kind == "memory":
                owner, view = None, InMemoryMetricLogger()
            else:
                owner = make_logger(kind, directory)
                owner.bind(directory)
                owner._start()  # the run's start is not a per-entry cost
                view = owner.for_split(Split.Train)
            start = time.perf_counter()
            for i, record in enumerate(records):
                view.log(record, 1 + i // 1000)
                if (i + 1) % 1000 == 0:
                    view.end_epoch(1 + i // 1000)
            if owner is not None:
                owner.end_training(None, "finished")
            times.append(time.perf_counter() - start)
    return float(np.median(times)) / entries * 1e6


def main() -> None:
    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], repeats=7, warmup=1)
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    steps = 100
    kinds = ["text logs only", "tensorboard"] + (["mlflow"] if HAVE_MLFLOW else [])
    info = machine(steps=f"{steps} training steps of batch 64 + 10 validation steps")
    header = ["configuration", "epoch ms (median)", "fastest-slowest ms", "ratio to text logs only"]
    print_start(info, header)
    # Rounds alternate the configurations, so a change of the machine's load during the run
    # falls on all of them alike.
    for kind in kinds:
        for _ in range(warmup):
            fit_once(kind, steps)
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(repeats):
        for kind in kinds:
            start = time.perf_counter()
            fit_once(kind, steps)
            times[kind].append((time.perf_counter() - start) * 1e3)
    epoch = {kind: float(np.median(values)) for kind, values in times.items()}
    for kind in kinds:
        print(kind, f"{epoch[kind]:.0f} ms", [f"{t:.0f}" for t in times[kind]])
    rows = [
        [
            kind,
            f"{epoch[kind]:.0f}",
            f"{min(times[kind]):.0f}-{max(times[kind]):.0f}",
            ratio(epoch[kind], epoch["text logs only"]),
        ]
        for kind in kinds
    ]
    entry = {
        kind: per_entry_us(kind, 5000, max(repeats, 3))
        for kind in ["memory", "tensorboard"] + (["mlflow"] if HAVE_MLFLOW else [])
    }
    for kind, value in entry.items():
        print(f"{kind}: {value:.1f} us per entry")
    entry_rows = "\n".join(
        f"| {kind} | {value:.1f} | {ratio(value, entry['memory'])} |"
        for kind, value in entry.items()
    )
    notes = (
        "Each logger alone, 5000 numeric entries (5 epochs of 1000) through the per-split "
        "view the Learner uses, median of the runs, microseconds per entry:\n\n"
        "| logger | us per entry | ratio to in-memory |\n|---|---|---|\n"
        f"{entry_rows}\n\n"
        "How to read it: TensorBoard's writer queues each event for a background thread, so "
        "a step pays for one protobuf per metric; MLflow's entries are buffered and sent in "
        "batches of up to 1000 to its SQLite store, and starting a run costs a fixed time per "
        "fit. On a small model the per-entry cost shows; on the guide's step (tens of "
        "milliseconds, two metrics) it is a fraction of a percent. The machine is shared "
        "with other jobs (see the load above and the spread of the rounds): compare rows "
        "of one run, not across runs."
    )
    publish(
        SECTION,
        "bench_tracking.py",
        f"one epoch of an MLP (784-256-10) on random data, median of {repeats} rounds (each "
        f"round runs every configuration once, in turn) after {warmup} warm-up, every step's "
        "Accuracy and Loss logged in both splits.",
        info,
        header,
        rows,
        notes,
        args.quick,
    )


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(MLFLOW_STORE, ignore_errors=True)
