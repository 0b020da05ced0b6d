"""`python -m burn.onnx model.onnx --out-dir model/`: the command line of `ModelGen`."""

from __future__ import annotations

import argparse
import sys

from burn.onnx.errors import OnnxImportError
from burn.onnx.modelgen import ModelGen
from burn.onnx.render import RECORDERS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m burn.onnx",
        description="Generate Python model source and weights from ONNX files.",
    )
    parser.add_argument("inputs", nargs="+", help="ONNX model files")
    parser.add_argument("--out-dir", required=True, help="folder for the generated files")
    parser.add_argument(
        "--record-type",
        default="NamedMpkFileRecorder",
        choices=sorted(RECORDERS),
        help="recorder of the weights (default NamedMpkFileRecorder)",
    )
    parser.add_argument("--half-precision", action="store_true", help="save weights as f16")
    parser.add_argument(
        "--development", action="store_true", help="also write a readable dump of each graph"
    )
    parser.add_argument("--opset", type=int, default=17, help="opset older models are raised to")
    args = parser.parse_args(argv)
    gen = ModelGen().out_dir(args.out_dir).record_type(args.record_type).opset(args.opset)
    gen.half_precision(args.half_precision).development(args.development)
    for path in args.inputs:
        gen.input(path)
    try:
        written = gen.run()
    except OnnxImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
