"""A tiny training job run by the tests, alone or under `mpiexec -n N` with `--parallel`.

It trains a two-layer classifier on 2-D blobs with the Learner (Adam, a decaying learning rate,
gradient clipping, optional accumulation and resume) and writes the final parameters, in the
order of `named_params`, to `--out` (rank 0 only). `--fail-rank R --fail-step S` makes rank R
raise at its S-th training step; `--perturb-rank R` changes one parameter on rank R after the
broadcast, which the debug check must catch.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

import numpy as np
from burn.backend import Autodiff, NdArray
from burn.data import DataLoaderBuilder, InMemDataset
from burn.module import Module
from burn.nn import Linear, LinearConfig
from burn.nn.loss import CrossEntropyLossConfig
from burn.optim import AdamConfig
from burn.optim.grad_clipping import GradientClippingConfig
from burn.optim.lr_scheduler.linear import LinearLrSchedulerConfig
from burn.record import DefaultRecorder
from burn.tensor import Int, Tensor
from burn.tensor.activation import relu
from burn.train import (
    Aggregate,
    ClassificationOutput,
    Direction,
    KeepLastNCheckpoints,
    LearnerBuilder,
    MetricEarlyStoppingStrategy,
    Split,
    StoppingCondition,
    TrainOutput,
)
from burn.train.metric import AccuracyMetric, LossMetric

B = Autodiff(NdArray)
# (rank's step at which to ask the Learner to stop, the builder's interrupter)
STOP: dict = {}


@dataclass
class Batch:
    inputs: Tensor
    targets: Tensor


class Batcher:
    def batch(self, items, device) -> Batch:
        xs = np.stack([x for x, _ in items]).astype(np.float32)
        ys = np.array([y for _, y in items], dtype=np.int64)
        return Batch(Tensor.from_data(xs, device), Tensor[1, Int].from_data(ys, device))


class Model(Module):
    def __init__(self, fc1: Linear, fc2: Linear, fail_at: int | None = None):
        self.fc1 = fc1
        self.fc2 = fc2
        self._fail_at = fail_at
        self._steps = 0

    def forward(self, batch: Batch) -> ClassificationOutput:
        output = self.fc2.forward(relu(self.fc1.forward(batch.inputs)))
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(self, batch: Batch) -> TrainOutput:
        Model._count = getattr(Model, "_count", 0) + 1
        if self._fail_at is not None and Model._count >= self._fail_at:
            raise RuntimeError(f"toy job: failing on purpose at step {Model._count}")
        if STOP.get("step") == Model._count:
            STOP["interrupter"].stop()  # as `q` in the dashboard does
        if STOP.get("sleep"):
            import time

            time.sleep(STOP["sleep"])
        item = self.forward(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch: Batch) -> ClassificationOutput:
        return self.forward(batch)


def blobs(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    labels = rng.integers(0, 3, n)
    points = centers[labels] + rng.normal(0.0, 1.6, (n, 2))
    return [(points[i], int(labels[i])) for i in range(n)]


class Quiet:
    def update_train(self, state):
        pass

    def update_valid(self, state):
        pass

    def render_train(self, progress):
        pass

    def render_valid(self, progress):
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--out", default=None)
    parser.add_argument("--parallel", action="store_true")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--items", type=int, default=65)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--accumulation", type=int, default=1)
    parser.add_argument("--resume", type=int, default=None)
    parser.add_argument("--bucket-mb", type=float, default=4.0)
    parser.add_argument("--overlap", action="store_true")
    parser.add_argument("--backend", choices=["ndarray", "wgpu"], default="ndarray")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fail-rank", type=int, default=None)
    parser.add_argument("--fail-step", type=int, default=3)
    parser.add_argument("--perturb-rank", type=int, default=None)
    parser.add_argument("--early-stop", action="store_true", help="stop once valid loss falls")
    parser.add_argument("--stop-rank", type=int, default=None)
    parser.add_argument("--stop-step", type=int, default=3)
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds per step")
    parser.add_argument("--started", default=None, help="a file rank 0 creates at its 1st step")
    args = parser.parse_args()

    global B
    if args.backend == "wgpu":
        from burn.backend import Wgpu

        B = Autodiff(Wgpu)
    rank = 0
    strategy = None
    if args.parallel:
        from burn.collective import DataParallel

        strategy = DataParallel(
            bucket_size_mb=args.bucket_mb, overlap=args.overlap, debug=args.debug
        )
        rank = strategy.rank
        device = strategy.device(B)
    else:
        device = B.device()

    # Every rank seeds differently on purpose: the broadcast must make the models equal.
    B.seed(args.seed + 1000 * rank)
    fail_at = args.fail_step if args.fail_rank == rank else None
    model = Model(LinearConfig(2, 16).init(device), LinearConfig(16, 3).init(device), fail_at)
    train = (
        DataLoaderBuilder(Batcher())
        .batch_size(args.batch)
        .shuffle(3)
        .set_device(device)
        .build(InMemDataset(blobs(args.items, 1)))
    )
    valid = (
        DataLoaderBuilder(Batcher())
        .batch_size(args.batch)
        .set_device(device.inner)
        .build(InMemDataset(blobs(21, 2)))
    )
    builder = (
        LearnerBuilder(args.artifacts)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .with_file_checkpointer(DefaultRecorder())
        .with_checkpointing_strategy(KeepLastNCheckpoints(5))
        .renderer(Quiet())
        .num_epochs(args.epochs)
        .grads_accumulation(args.accumulation)
    )
    if strategy is not None:
        builder = builder.with_training_strategy(strategy)
    if args.stop_rank == rank:
        STOP.update(step=args.stop_step, interrupter=builder.interrupter())
    STOP["sleep"] = args.sleep
    if args.started and rank == 0:
        open(args.started, "w").close()
    if args.resume is not None:
        builder = builder.checkpoint(args.resume)
    if args.early_stop:
        # "Highest" on a falling loss: no improvement after the first epoch, so rank 0's logs
        # say stop after the second.
        builder = builder.early_stopping(
            MetricEarlyStoppingStrategy(
                LossMetric(),
                Aggregate.Mean,
                Direction.Highest,
                Split.Valid,
                StoppingCondition.NoImprovementSince(1),
            )
        )
    optim = AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(0.5)).init()
    # The same schedule whatever --epochs says, so a run resumed for more epochs continues it.
    scheduler = LinearLrSchedulerConfig(5e-2, 1e-2, 20).init()
    learner = builder.build(model, optim, scheduler)
    if args.perturb_rank is not None and args.perturb_rank == rank:
        # Changes the model after `prepare` broadcast it: wrap prepare.
        original = strategy.prepare

        def prepare(lrn, train_loader, valid_loader):
            loaders = original(lrn, train_loader, valid_loader)
            lrn.model = lrn.model.map(lambda _id, t: t + 1e-3)
            return loaders

        strategy.prepare = prepare
    trained = learner.fit(train, valid)
    if rank == 0 and args.out:
        arrays = {path: p.val().to_data().as_array() for path, p in trained.named_params()}
        np.savez(args.out, **arrays)
        with open(args.out + ".json", "w") as f:
            json.dump({"rank": rank, "size": 1 if strategy is None else strategy.size}, f)


if __name__ == "__main__":
    main()
