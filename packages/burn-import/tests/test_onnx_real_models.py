"""Real models: torchvision classifiers exported with random weights by the fixture tool's
`export_model`, generated, loaded on NdArray and compared with onnxruntime; the committed
MNIST net and transformer encoder also on Wgpu.

The torchvision models are large, so they are exported in the test (skipped where torch or
torchvision is not installed: CI has torch but not torchvision).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from burn.onnx import ModelGen
from burn.onnx.modelgen import load_source
from burn.tensor import Tensor

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")
ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).with_name("fixtures")


def _torchvision():
    """torchvision's model zoo (pure Python) on a CPU-only torch: the CUDA wheel's custom ops
    are declared as schemas first, since only their registration fails."""
    torch = pytest.importorskip("torch", reason="torch exports the models")
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    for name in ("nms", "qnms"):
        try:
            torch.library.define(
                f"torchvision::{name}",
                "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            )
        except RuntimeError:
            pass  # already defined
    import torchvision

    return torch, torchvision


def _exporter_module():
    """tools/gen_onnx_fixtures.py, which builds and exports the models (it needs torch)."""
    spec = importlib.util.spec_from_file_location(
        "gen_onnx_fixtures", ROOT / "tools/gen_onnx_fixtures.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_onnx_fixtures", module)
    spec.loader.exec_module(module)
    return module


def _exporter():
    return _exporter_module().export_model


def _check(onnx_path: Path, out_dir: Path, shape, device, atol=1e-4) -> None:
    ModelGen().input(onnx_path).out_dir(out_dir).run()
    module = load_source(out_dir / f"{onnx_path.stem}.py")
    model = module.Model.default(device)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = model(Tensor.from_data(x, device=device)).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    expected = session.run(None, {session.get_inputs()[0].name: x})[0]
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(out, expected, atol=atol * scale, rtol=1e-4)


@pytest.mark.parametrize(
    "name", ["resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0"]
)
def test_torchvision_model_matches_onnxruntime(name, tmp_path):
    from burn.backend import NdArray

    torch, torchvision = _torchvision()
    torch.manual_seed(sum(map(ord, name)))
    model = getattr(torchvision.models, name)(weights=None)
    path = _exporter()(model, torch.randn(1, 3, 224, 224), tmp_path / f"{name}.onnx")
    _check(path, tmp_path / "model", (1, 3, 224, 224), NdArray.device())


def _wgpu_device():
    try:
        from burn.backend import Wgpu

        return Wgpu.device()
    except Exception as e:  # no adapter, or burn-wgpu not installed
        pytest.skip(f"Wgpu is not available: {e}")


@pytest.mark.parametrize(
    ("name", "shape"), [("mnist_net", (2, 1, 28, 28)), ("transformer_encoder", (1, 8, 32))]
)
def test_fixture_models_on_wgpu(name, shape, tmp_path):
    _check(FIXTURES / f"{name}.onnx", tmp_path, shape, _wgpu_device())


def test_full_size_transformer_encoder_matches_onnxruntime(tmp_path):
    """The 4-layer encoder at the size the issue names (d_model 256, 4 heads, feed-forward
    2048, input 1x128x256), exported with independent weights per layer."""
    from burn.backend import NdArray

    torch = pytest.importorskip("torch", reason="torch exports the model")
    module = _exporter_module()
    torch.manual_seed(7)
    model = module.transformer_encoder(d_model=256, heads=4, ff=2048, layers=4)
    path = module.export_model(model, torch.randn(1, 128, 256), tmp_path / "encoder.onnx")
    _check(path, tmp_path / "model", (1, 128, 256), NdArray.device())


def test_backend_runs_on_wgpu_with_device_gpu():
    import burn.onnx.backend as backend
    import onnx

    _wgpu_device()
    assert backend.supports_device("GPU")
    model = onnx.load(str(FIXTURES / "mnist_net.onnx"))
    x = np.random.default_rng(3).standard_normal((2, 1, 28, 28)).astype(np.float32)
    (out,) = backend.prepare(model, "GPU").run([x])
    session = ort.InferenceSession(str(FIXTURES / "mnist_net.onnx"))
    np.testing.assert_allclose(out, session.run(None, {"input": x})[0], atol=1e-4)
