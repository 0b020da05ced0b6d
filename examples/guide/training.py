"""The guide's training: a config with the book's defaults and a `train` function that runs the
Learner on MNIST and saves the trained weights."""

from __future__ import annotations

import shutil
from pathlib import Path

from burn.data import DataLoaderBuilder, MnistDataset, PartialDataset
from burn.optim import AdamConfig
from burn.prelude import config
from burn.record import CompactRecorder
from burn.train import EvaluatorBuilder, LearnerBuilder
from burn.train.metric import AccuracyMetric, LossMetric
from burn.train.tracking import TensorBoardLogger
from data import MnistBatcher
from model import ModelConfig


# ANCHOR: config
@config
class TrainingConfig:
    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 10
    batch_size: int = 64
    # The book uses 4 workers. Reading an MNIST row costs microseconds, so here loader threads
    # only compete with the training step for the GIL: benches/RESULTS.md measured 2600
    # batches/s in the main thread, 2285 with one thread worker and 534 with two on a 2-core
    # machine, and one epoch of this guide took 25 s with 0 workers against 30 s with 1.
    num_workers: int = 0
    seed: int = 42
    learning_rate: float = 1.0e-4


# ANCHOR_END: config


class ArtifactFolderError(FileExistsError):
    """The artifact folder holds an earlier run (without `overwrite`) or files of others."""


#: What a run of the guide writes into its artifact folder: `overwrite` removes these only.
ARTIFACTS = (
    "config.json",
    "experiment.log",
    "model.mpk",
    "checkpoint",
    "train",
    "valid",
    "test",
    "tensorboard",
    "plots",
)


def fresh_artifact_dir(base: str) -> str:
    """`base` when it is free (absent or empty), else the first free `base-2`, `base-3`, ...:
    the default folder of a run that names none, so a second run neither clobbers the first
    nor stops to ask for `--overwrite`."""
    candidate, n = Path(base), 1
    while candidate.exists() and (not candidate.is_dir() or any(candidate.iterdir())):
        n += 1
        candidate = Path(f"{base}-{n}")
    return str(candidate)


def create_artifact_dir(artifact_dir: str, overwrite: bool = False) -> None:
    """An empty folder for this run, so the learner's summary covers this run only.

    Nothing the guide did not write is ever deleted: a folder holding an earlier run is
    refused unless `overwrite`, which removes that run's artifacts (`ARTIFACTS`) and nothing
    else, and a folder holding anything else is refused either way.
    """
    folder = Path(artifact_dir)
    if folder.exists() and not folder.is_dir():
        raise ArtifactFolderError(f"artifact folder {folder} is a file")
    entries = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    foreign = [name for name in entries if name not in ARTIFACTS]
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise ArtifactFolderError(
            f"artifact folder {folder} holds files that are not the guide's ({shown}); "
            "it is left as it is: choose another --artifact-dir"
        )
    if entries and not overwrite:
        raise ArtifactFolderError(
            f"artifact folder {folder} holds an earlier run; pass --overwrite to replace "
            "that run's artifacts, or choose another --artifact-dir"
        )
    for name in entries:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    folder.mkdir(parents=True, exist_ok=True)


# ANCHOR: train
def train(
    artifact_dir: str,
    config: TrainingConfig,
    device,
    *,
    train_items=None,
    valid_items=None,
    renderer=None,
    strategy=None,
    overwrite=False,
):
    """Train on the MNIST training set, validate on the test set, save the weights, and
    evaluate them on the test set.

    `device` is a device of an autodiff backend; validation runs on its inner backend.
    `train_items` and `valid_items` take the first items only (for quick runs); `overwrite`
    replaces an earlier run's artifacts in `artifact_dir` (refused otherwise). With a
    `strategy` (burn-collective's `DataParallel`), every process of the job runs this and the
    main one alone writes the artifacts.
    """
    main_process = strategy is None or strategy.is_main()
    if main_process:
        create_artifact_dir(artifact_dir, overwrite)
        config.save(f"{artifact_dir}/config.json")
        # The first use builds the MNIST cache: once, before the other processes read it.
        MnistDataset.train(), MnistDataset.test()
    if strategy is not None:
        strategy.comm.barrier()
    # Each process its own dropout draws (the model itself starts as the main process's).
    device.backend.seed(config.seed + (strategy.rank if strategy is not None else 0))

    dataset_train = MnistDataset.train()
    dataset_test = MnistDataset.test()
    if train_items is not None:
        dataset_train = PartialDataset(dataset_train, 0, train_items)
    if valid_items is not None:
        dataset_test = PartialDataset(dataset_test, 0, valid_items)

    dataloader_train = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .set_device(device)
        .build(dataset_train)
    )
    # Validation batches live on the inner backend: no gradients are tracked there.
    dataloader_test = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(config.batch_size)
        .num_workers(config.num_workers)
        .set_device(device.inner)
        .build(dataset_test)
    )

    builder = (
        LearnerBuilder(artifact_dir)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .with_metric_logger(TensorBoardLogger(hyperparameters=config))
        .with_metric_plots()
        .devices([device])
        .num_epochs(config.num_epochs)
        .summary()
    )
    if renderer is not None:
        builder = builder.renderer(renderer)
    if strategy is not None:
        builder = builder.with_training_strategy(strategy)
    learner = builder.build(
        config.model.init(device),
        config.optimizer.init(),
        config.learning_rate,
    )

    model_trained = learner.fit(dataloader_train, dataloader_test)

    if main_process:
        model_trained.save_file(f"{artifact_dir}/model", CompactRecorder())

        # The trained model on the test split, logged under test/: the same numbers as the
        # last validation epoch, since the guide validates on the test split.
        evaluator = (
            EvaluatorBuilder(artifact_dir)
            .metric_numeric(AccuracyMetric())
            .metric_numeric(LossMetric())
            .build(model_trained)
        )
        print(evaluator.eval(dataloader_test, name="test"))
    return model_trained


# ANCHOR_END: train
