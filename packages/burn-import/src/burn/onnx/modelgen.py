"""`ModelGen`: an ONNX file in, a Python model file and its weights out (Burn's builder)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from burn.onnx.errors import OnnxImportError
from burn.onnx.graph import DEFAULT_OPSET, load_graph
from burn.onnx.passes import run_passes
from burn.onnx.render import RECORDERS, Generated, apply_weights, generate


def translate(source, opset: int = DEFAULT_OPSET, **options) -> Generated:
    """The generated source and weights of a model (path, bytes or `onnx.ModelProto`)."""
    graph = run_passes(load_graph(source, opset))
    return generate(graph, **options)


def load_source(path: Path, name: str | None = None) -> ModuleType:
    """Import a generated model file as a module (it is our own generated code)."""
    name = name or f"burn_onnx_generated_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _format(path: Path) -> None:
    """Run ruff's formatter on the file when ruff is installed (the code is valid either way)."""
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff:
        style = ["--isolated", "--line-length", "100"]
        fix = [ruff, "check", "-q", *style, "--fix", "--select", "I,F401", str(path)]
        subprocess.run(fix, check=False, capture_output=True)
        subprocess.run([ruff, "format", "-q", *style, str(path)], check=False, capture_output=True)


class ModelGen:
    """Generate `<out_dir>/<name>.py` and its weights from an ONNX file.

    ```python notest
    from burn.onnx import ModelGen
    ModelGen().input("mnist.onnx").out_dir("model/").run()
    ```
    """

    def __init__(self):
        self._inputs: list[Path] = []
        self._out_dir: Path | None = None
        self._record_type = "NamedMpkFileRecorder"
        self._half = False
        self._development = False
        self._opset = DEFAULT_OPSET

    def input(self, path) -> ModelGen:  # noqa: A003 - Burn's name
        """Add an ONNX file to translate (several may be given)."""
        self._inputs.append(Path(path))
        return self

    def out_dir(self, path) -> ModelGen:
        """The folder the model files and their weights go to (created if needed)."""
        self._out_dir = Path(path)
        return self

    def record_type(self, recorder) -> ModelGen:
        """The recorder of the weights: a recorder class of `burn.record` or its name."""
        name = recorder if isinstance(recorder, str) else getattr(recorder, "__name__", "")
        if name not in RECORDERS:
            raise OnnxImportError(
                f"record_type: {recorder!r} is not one of {', '.join(sorted(RECORDERS))}"
            )
        self._record_type = name
        return self

    def half_precision(self, flag: bool = True) -> ModelGen:
        """Save float weights as f16 (`HalfPrecisionSettings`)."""
        self._half = bool(flag)
        return self

    def development(self, flag: bool = True) -> ModelGen:
        """Also write `<name>.graph.txt`: the graph after the passes, for reading."""
        self._development = bool(flag)
        return self

    def opset(self, version: int) -> ModelGen:
        """The opset older models are converted to before translation (default 17)."""
        self._opset = int(version)
        return self

    def run(self) -> list[Path]:
        """Translate every input; returns the paths of the model files written.

        Every input is translated before anything is written, so an unsupported op leaves the
        output folder untouched.
        """
        if not self._inputs:
            raise OnnxImportError("ModelGen: no input (call .input(path) first)")
        if self._out_dir is None:
            raise OnnxImportError("ModelGen: no output folder (call .out_dir(path) first)")
        jobs = []
        for path in self._inputs:
            graph = run_passes(load_graph(path, self._opset))
            name = _module_name(path)
            generated = generate(graph, name, self._record_type, self._half)
            jobs.append((name, graph, generated))
        self._out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name, graph, generated in jobs:
            written.append(self._write(name, graph, generated))
        return written

    def _write(self, name: str, graph, generated: Generated) -> Path:
        import burn.record as record
        from burn.backend import NdArray
        from burn.record import FullPrecisionSettings, HalfPrecisionSettings, atomic_write

        target = self._out_dir / f"{name}.py"
        with tempfile.TemporaryDirectory() as tmp:
            draft = Path(tmp) / f"{name}.py"
            draft.write_text(generated.source, encoding="utf-8")
            _format(draft)
            text = draft.read_text(encoding="utf-8")
            module = load_source(draft)
        model = apply_weights(module.Model.new(NdArray.device()), generated.weights)
        settings = HalfPrecisionSettings if self._half else FullPrecisionSettings
        recorder = getattr(record, self._record_type)(settings)
        model.save_file(self._out_dir / name, recorder)
        atomic_write(target, [text.encode("utf-8")])
        if self._development:
            atomic_write(self._out_dir / f"{name}.graph.txt", [describe(graph).encode("utf-8")])
        return target


def _module_name(path: Path) -> str:
    from burn.onnx.codegen import snake

    return snake(path.stem)


def describe(graph) -> str:
    """A readable dump of a graph after the passes: inputs, constants, nodes, outputs."""
    lines = [f"graph {graph.name} (opset {graph.opset}) from {graph.source}", "inputs:"]
    for info in graph.inputs:
        lines.append(f"  {info.name}: {info.dtype} {info.shape}")
    lines.append("constants:")
    for name, array in graph.constants.items():
        lines.append(f"  {name}: {array.dtype} {list(array.shape)}")
    lines.append("nodes:")
    for node in graph.nodes:
        attrs = {
            k: (f"array{list(v.shape)}" if hasattr(v, "shape") else v)
            for k, v in node.attrs.items()
        }
        attrs = {k: v for k, v in attrs.items() if not hasattr(v, "SerializeToString")}
        lines.append(
            f"  {node.name}: {node.qualified_op}({', '.join(node.inputs)}) -> "
            f"{', '.join(node.outputs)} {attrs if attrs else ''}".rstrip()
        )
    lines.append("outputs:")
    for info in graph.outputs:
        lines.append(f"  {info.name}: {info.dtype} {info.shape}")
    return "\n".join(lines) + "\n"


__all__ = ["ModelGen", "describe", "load_source", "translate"]
