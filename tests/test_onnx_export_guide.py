"""The guide's model (examples/guide/model.py), trained the Autodiff way, exported to ONNX and
run in onnxruntime: the same predictions as `model.valid()` within 1e-5."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.onnx.exporter import export
from burn.tensor import Tensor

ort = pytest.importorskip("onnxruntime")
GUIDE_MODEL = Path(__file__).resolve().parents[1] / "examples" / "guide" / "model.py"


def _guide_model_module():
    spec = importlib.util.spec_from_file_location("guide_model_for_export", GUIDE_MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_guide_model_exports_and_runs_in_onnxruntime(tmp_path):
    guide = _guide_model_module()
    backend = Autodiff(NdArray)
    model = guide.ModelConfig(num_classes=10, hidden_size=32).init(backend.device())
    images = np.random.default_rng(0).random((3, 28, 28), dtype=np.float32)
    path = export(model, Tensor.from_data(images, backend.device()), tmp_path / "guide.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (theirs,) = session.run(None, {"input": images})
    ours = model.valid().forward(Tensor.from_data(images)).to_data().as_array()
    assert theirs.shape == (3, 10)
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-5)
