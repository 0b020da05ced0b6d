"""Shared by the tests: the fixtures' folder, the values torch read from them, a CNN.

`conftest.py` registers this file as the module `burn_import_reference`, so the test files
import it by that name under pytest's importlib import mode.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
from burn.module import Module
from burn.nn import BatchNormConfig, Conv2dConfig, LinearConfig
from burn.tensor import Tensor
from burn.tensor import activation as F  # noqa: N812

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = dict(np.load(FIXTURES / "expected.npz"))


def expected_of(name: str) -> dict[str, np.ndarray]:
    out = {}
    for key, value in EXPECTED.items():
        file, _, rest = key.partition("/")
        if file != name:
            continue
        if rest.endswith("#bf16"):
            out[rest[: -len("#bf16")]] = value.view(ml_dtypes.bfloat16)
        else:
            out[rest] = value
    return out


class CnnBn(Module):
    def __init__(self, device=None):
        self.conv = Conv2dConfig([2, 3], [3, 3]).init(device)
        self.norm = BatchNormConfig(3).init(device)
        self.fc = LinearConfig(3, 4).init(device)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.norm(self.conv(x)))
        return self.fc(x.mean_dim(3).mean_dim(2).flatten(1, 3))


def predict(model, name="cnn") -> tuple[np.ndarray, np.ndarray]:
    x = Tensor.from_data(EXPECTED[f"{name}/input"])
    return model.forward(x).to_data().as_array(), EXPECTED[f"{name}/output"]


def same_as_onnxruntime(model, *runs, device: str = "CPU", atol: float = 1e-5) -> str:
    """Run `model` with burn.onnx.backend on `device` and with onnxruntime, once per run (a
    list of input arrays), and compare every output (string outputs exactly); the generated
    source, for checks of its own."""
    import onnxruntime as ort
    from burn.onnx import backend

    rep = backend.prepare(model, device)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    for feeds in runs:
        expected = session.run(None, dict(zip(names, feeds, strict=True)))
        for got, want in zip(rep.run(feeds), expected, strict=True):
            assert got.shape == want.shape
            if want.dtype == object:
                assert got.tolist() == want.tolist()
            else:
                np.testing.assert_allclose(got, want, atol=atol, rtol=1e-5)
    return rep.source
