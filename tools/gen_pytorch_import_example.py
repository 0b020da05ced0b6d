"""Write examples/pytorch-import's checkpoint: a small PyTorch CNN and its own predictions.

The network is written the PyTorch way (an `nn.Sequential` of features, then a classifier), so
the example shows key remapping; its checkpoint holds `{"config": ..., "state_dict": ...}`.
`sample.npz` keeps four inputs and the logits PyTorch computes for them.

    uv run python tools/gen_pytorch_import_example.py

torch is not a project dependency; run it with an interpreter that has torch installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

OUT = Path(__file__).resolve().parents[1] / "examples" / "pytorch-import"
CONFIG = {"channels": 4, "hidden": 8, "num_classes": 10}


class Net(nn.Module):
    def __init__(self, channels: int, hidden: int, num_classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Conv2d(channels, hidden, 3, stride=2),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(hidden, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main() -> None:
    torch.manual_seed(7)
    net = Net(**CONFIG)
    with torch.no_grad():  # statistics as if trained, so batch norm does something
        norm = net.features[1]
        norm.running_mean.uniform_(-0.5, 0.5)
        norm.running_var.uniform_(0.5, 1.5)
        norm.weight.uniform_(0.8, 1.2)
    net.eval()
    images = torch.randn(4, 1, 12, 12)
    logits = net(images).detach()
    OUT.mkdir(parents=True, exist_ok=True)
    torch.save({"config": CONFIG, "state_dict": net.state_dict()}, OUT / "model.pt")
    np.savez(OUT / "sample.npz", images=images.numpy(), logits=logits.numpy())
    print(f"wrote {OUT / 'model.pt'} and {OUT / 'sample.npz'}")


if __name__ == "__main__":
    main()
