"""The guide's inference: load the saved config and weights, classify one test digit."""

from __future__ import annotations

from burn.data import MnistItem
from burn.record import CompactRecorder
from data import MnistBatcher
from training import TrainingConfig


# ANCHOR: infer
def infer(artifact_dir: str, device, item: MnistItem) -> int:
    """Print and return the predicted digit of `item`, using the weights in `artifact_dir`."""
    config = TrainingConfig.load(f"{artifact_dir}/config.json")
    model = config.model.init(device).load_file(f"{artifact_dir}/model", CompactRecorder(), device)

    label = item.label
    batch = MnistBatcher().batch([item], device)
    output = model.forward(batch.images)
    predicted = int(output.argmax(1).flatten(0, 1).into_scalar())

    print(f"Predicted {predicted} Expected {label}")
    return predicted


# ANCHOR_END: infer
