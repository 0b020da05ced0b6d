"""PyTorch weights into a burn.nn model, then out to ONNX.

1. Read the checkpoint's config and build the same network with burn.nn.
2. Load the PyTorch weights, renaming PyTorch's `features.<i>` keys to our field names.
3. Check that our predictions equal the ones PyTorch computed (kept in sample.npz).
4. Export the model to ONNX and run it in onnxruntime (when installed) with the same inputs.

    uv run python examples/pytorch-import/main.py [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from burn.onnx.exporter import export
from burn.pytorch import LoadArgs, PyTorchFileRecorder, config_from_file
from burn.record import FullPrecisionSettings
from burn.tensor import Tensor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pytorch_net import NetConfig  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for model.onnx")
    args = parser.parse_args()

    # ANCHOR: load
    checkpoint = HERE / "model.pt"
    cfg = NetConfig.from_dict(config_from_file(checkpoint, "config"))
    load_args = (
        LoadArgs(checkpoint)
        .with_top_level_key("state_dict")
        .with_key_remap(r"^features\.0\.", "conv1.")
        .with_key_remap(r"^features\.1\.", "norm.")
        .with_key_remap(r"^features\.3\.", "conv2.")
        .with_key_remap(r"^classifier\.", "fc.")
    )
    record = PyTorchFileRecorder(FullPrecisionSettings).load(load_args)
    model = cfg.init().load_record(record)
    # ANCHOR_END: load

    sample = np.load(HERE / "sample.npz")
    images = Tensor.from_data(sample["images"])
    logits = model.forward(images).to_data().as_array()
    difference = float(np.abs(logits - sample["logits"]).max())
    print(f"PyTorch vs burn: max |difference| {difference:.2e}")
    assert difference < 1e-5, difference
    print("predicted classes:", logits.argmax(1).tolist())

    if args.out is None:
        with tempfile.TemporaryDirectory() as folder:
            check_onnx(model, images, logits, Path(folder))
    else:
        check_onnx(model, images, logits, args.out)


def check_onnx(model, images: Tensor, logits: np.ndarray, out: Path) -> None:
    # ANCHOR: export
    path = export(model, images, out / "model.onnx")
    # ANCHOR_END: export
    print(f"exported {path}")
    try:
        import onnxruntime
    except ImportError:
        print("onnxruntime is not installed: the exported file was not run")
        return
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (onnx_logits,) = session.run(None, {"input": images.to_data().as_array()})
    difference = float(np.abs(onnx_logits - logits).max())
    print(f"onnxruntime vs burn: max |difference| {difference:.2e}")
    assert difference < 1e-5, difference


if __name__ == "__main__":
    main()
