"""Write the `.pt` and safetensors fixtures of burn-import's tests, and the values torch reads.

Each file is written by `torch.save` (the zip archive, and the legacy format where the case
names it) and read back by torch itself; the values torch returns go to `expected.npz`, keyed
`<file>/<dotted key>`, so the tests compare against torch without importing it.

    uv run python tools/gen_pytorch_fixtures.py

torch is not a project dependency; run it with an interpreter that has torch installed. The
fixtures are small (a few kB) and committed.
"""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

OUT = Path(__file__).resolve().parents[1] / "packages" / "burn-import" / "tests" / "fixtures"


class CnnBn(nn.Module):
    """conv -> batch norm -> relu -> mean -> linear: BatchNorm's running statistics and Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3)
        self.norm = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.norm(self.conv(x))).mean((2, 3)))


class EnumNet(nn.Module):
    """A field that is one of several module types: here a conv, in the other file a linear."""

    def __init__(self, use_conv: bool):
        super().__init__()
        self.block = nn.Conv1d(2, 2, 1) if use_conv else nn.Linear(2, 2)
        self.norm = nn.LayerNorm(2)


def _every_dtype() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    base = torch.randn(2, 3, generator=g) * 100
    return {
        "f32": base.float(),
        "f64": base.double() / 3,
        "f16": base.half(),
        "bf16": base.bfloat16(),
        "i64": base.long() * 1_000_000_007,
        "i32": base.int(),
        "i16": base.short(),
        "i8": base.clamp(-128, 127).to(torch.int8),
        "u8": base.abs().clamp(0, 255).to(torch.uint8),
        "bool": base > 0,
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 4),
    }


def _views() -> dict[str, torch.Tensor]:
    """Non-contiguous tensors and tensors sharing one storage."""
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    return {
        "base": base,
        "transposed": base.t(),
        "strided": base[:, ::2],
        "offset_row": base[2],
        "column": base[:, 3],
        "narrowed": base[1:3, 2:5],
        "expanded": torch.arange(3.0).reshape(3, 1).expand(3, 4),
    }


def main() -> None:
    torch.manual_seed(0)
    OUT.mkdir(parents=True, exist_ok=True)
    expected: dict[str, np.ndarray] = {}

    def save(obj, name: str, legacy: bool = False) -> None:
        path = OUT / name
        torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
        loaded = torch.load(path, weights_only=True)

        def walk(value, key: str) -> None:
            if isinstance(value, torch.Tensor):
                array = value.detach().contiguous()
                if array.dtype == torch.bfloat16:  # numpy lacks bf16: keep its bits
                    expected[f"{name}/{key}#bf16"] = array.view(torch.int16).numpy()
                else:
                    expected[f"{name}/{key}"] = array.numpy()
            elif isinstance(value, dict):
                for k, v in value.items():
                    walk(v, f"{key}.{k}" if key else k)

        walk(loaded, "")

    dtypes = _every_dtype()
    save(dtypes, "dtypes.pt")
    save(dtypes, "dtypes_legacy.pt", legacy=True)
    views = _views()
    save(views, "views.pt")
    save(views, "views_legacy.pt", legacy=True)
    nested = {"encoder": {"layer": {"weight": torch.randn(2, 2)}, "scale": torch.ones(1)}}
    save({"outer": nested, "epoch": 3}, "nested.pt")

    cnn = CnnBn()
    with torch.no_grad():
        cnn.norm.running_mean.uniform_(-1, 1)
        cnn.norm.running_var.uniform_(0.5, 2)
        cnn.norm.weight.uniform_(0.5, 1.5)
        cnn.norm.bias.uniform_(-0.5, 0.5)
    cnn.eval()
    config = {"channels": 3, "classes": 4, "name": "cnn", "dropout": 0.25}
    save({"state_dict": cnn.state_dict(), "config": config}, "cnn_checkpoint.pt")
    save(cnn.state_dict(), "cnn_legacy.pt", legacy=True)
    x = torch.randn(2, 2, 6, 6)
    expected["cnn/input"] = x.numpy()
    expected["cnn/output"] = cnn(x).detach().numpy()
    save_file({k: v.contiguous() for k, v in cnn.state_dict().items()}, OUT / "cnn.safetensors")

    for use_conv, name in ((True, "enum_conv.pt"), (False, "enum_linear.pt")):
        save(EnumNet(use_conv).state_dict(), name)

    params = collections.OrderedDict(weight=nn.Parameter(torch.randn(3, 2)))
    save(params, "parameters.pt")

    np.savez(OUT / "expected.npz", **expected)
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


if __name__ == "__main__":
    main()
