"""Export the small ONNX fixtures of burn.onnx's tests with PyTorch (random weights, seeded).

The suite reads the committed files and needs no torch; run this only to regenerate them:

    uv run python tools/gen_onnx_fixtures.py

It writes, under packages/burn-import/tests/fixtures/:

- mnist_net.onnx: the MNIST network of the article the project started from (three 3x3 convs
  1->8->16->24, BatchNorm2d, dropout 0.3, Linear 24*22*22->32, Linear 32->10, BatchNorm1d,
  log-softmax), input `input` [batch, 1, 28, 28] with a dynamic batch.
- transformer_encoder.onnx: a 4-layer `torch.nn.TransformerEncoder` (d_model 32, 4 heads,
  feed-forward 64, batch first), input [1, 8, 32]; each layer with weights of its own.

`export_model` is also used by the tests that export torchvision models on the fly.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 - torch's convention
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "packages" / "burn-import" / "tests" / "fixtures"


class MnistNet(nn.Module):
    """The article's network, layer for layer."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.conv3 = nn.Conv2d(16, 24, 3)
        self.norm1 = nn.BatchNorm2d(24)
        self.dropout1 = nn.Dropout(0.3)
        self.fc1 = nn.Linear(24 * 22 * 22, 32)
        self.fc2 = nn.Linear(32, 10)
        self.norm2 = nn.BatchNorm1d(10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = self.norm1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout1(x)
        x = self.norm2(self.fc2(x))
        return F.log_softmax(x, dim=1)


def _randomize_norms(model: nn.Module, seed: int) -> None:
    """Non-trivial running statistics, so batch norm is really tested."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


def transformer_encoder(d_model: int = 32, heads: int = 4, ff: int = 64, layers: int = 4):
    layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    for i, sub in enumerate(model.layers):  # the deep copy made every layer identical
        g = torch.Generator().manual_seed(100 + i)
        with torch.no_grad():
            for p in sub.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    return model


def export_model(model: nn.Module, example: torch.Tensor, path: Path, dynamic_batch=False) -> Path:
    """torch.onnx.export at opset 17 (the TorchScript exporter), in eval mode."""
    model.eval()
    axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    fastpath = torch.backends.mha.get_fastpath_enabled()
    # The fused encoder kernel has no ONNX form; the unfused path computes the same values.
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad():
        torch.onnx.export(
            model,
            (example,),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes=axes,
            do_constant_folding=True,
        )
    torch.backends.mha.set_fastpath_enabled(fastpath)
    return path


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    net = MnistNet()
    _randomize_norms(net, 1)
    export_model(net, torch.randn(1, 1, 28, 28), OUT / "mnist_net.onnx", dynamic_batch=True)
    torch.manual_seed(1)
    export_model(transformer_encoder(), torch.randn(1, 8, 32), OUT / "transformer_encoder.onnx")
    for name in ("mnist_net.onnx", "transformer_encoder.onnx"):
        print(OUT / name, (OUT / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
