"""The article's flow: a PyTorch MNIST network exported to ONNX becomes Python source and
weights, trains on MNIST with the Learner (cross-entropy, AdaGrad), then classifies a digit.

`uv run python examples/onnx-import/main.py [--epochs N] [--artifact-dir DIR]`. It runs on the
default backend (`BURN_BACKEND` chooses another) wrapped in `Autodiff`, offline.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn.backend import Autodiff, default  # noqa: E402
from burn.data import DataLoaderBuilder, MnistDataset, PartialDataset  # noqa: E402
from burn.onnx import ModelGen  # noqa: E402
from burn.onnx.modelgen import load_source  # noqa: E402
from burn.optim import AdaGradConfig  # noqa: E402
from burn.record import CompactRecorder  # noqa: E402
from burn.train import LearnerBuilder  # noqa: E402
from burn.train.metric import AccuracyMetric, LossMetric  # noqa: E402
from classifier import Classifier, MnistBatcher  # noqa: E402

# Exported from the article's PyTorch network by tools/gen_onnx_fixtures.py.
ONNX_FILE = (
    Path(__file__).resolve().parents[2] / "packages/burn-import/tests/fixtures/mnist_net.onnx"
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact-dir", default="/tmp/onnx-import")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--train-items", type=int, default=None, help="default: all 60000")
    parser.add_argument("--valid-items", type=int, default=None, help="default: all 10000")
    args = parser.parse_args(argv)
    artifacts = Path(args.artifact_dir)

    # ANCHOR: generate
    ModelGen().input(ONNX_FILE).out_dir(artifacts / "model").run()
    generated = load_source(artifacts / "model" / "mnist_net.py")
    # ANCHOR_END: generate

    backend = Autodiff(default())
    device = backend.device()
    backend.seed(42)
    train_set, test_set = MnistDataset.train(), MnistDataset.test()
    if args.train_items is not None:
        train_set = PartialDataset(train_set, 0, args.train_items)
    if args.valid_items is not None:
        test_set = PartialDataset(test_set, 0, args.valid_items)
    batcher = MnistBatcher()
    train_loader = (
        DataLoaderBuilder(batcher).batch_size(args.batch_size).shuffle(42).set_device(device)
    ).build(train_set)
    test_loader = (
        DataLoaderBuilder(batcher).batch_size(args.batch_size).set_device(device.inner)
    ).build(test_set)

    # ANCHOR: train
    learner = (
        LearnerBuilder(str(artifacts / "training"))
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .devices([device])
        .num_epochs(args.epochs)
        .summary()
        .build(
            Classifier(generated.Model.default(device)), AdaGradConfig().init(), args.learning_rate
        )
    )
    started = time.perf_counter()
    trained = learner.fit(train_loader, test_loader)
    # ANCHOR_END: train
    print(f"trained on {backend!r} in {time.perf_counter() - started:.1f} s")
    trained.save_file(artifacts / "trained", CompactRecorder())

    # ANCHOR: infer
    model = Classifier(generated.Model.new(device.inner))
    model = model.load_file(artifacts / "trained", CompactRecorder(), device.inner)
    item = MnistDataset.test().get(42)
    images = batcher.batch([item], device.inner).images
    predicted = int(model.forward(images).argmax(1).flatten(0, 1).into_scalar())
    print(f"Predicted {predicted} Expected {item.label}")
    # ANCHOR_END: infer


if __name__ == "__main__":
    main()
