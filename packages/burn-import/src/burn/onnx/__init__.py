"""burn.onnx: ONNX models become Python source plus weights.

```python notest
from burn.onnx import ModelGen
ModelGen().input("model.onnx").out_dir("model/").run()
```

`burn.onnx.backend` runs ONNX models through generated code (an `onnx.backend` backend).
`burn.onnx.export` is resolved on first use from `burn.onnx.exporter`, ONNX export's own
module, so importing `burn.onnx` does not load the exporter.
"""

from burn.onnx.errors import OnnxImportError, UnsupportedOpsError
from burn.onnx.modelgen import ModelGen, describe, translate

__all__ = ["ModelGen", "OnnxImportError", "UnsupportedOpsError", "describe", "export", "translate"]


def __getattr__(name: str):
    # ONNX export lives in its own module, imported on first use.
    if name == "export":
        from burn.onnx.exporter import export

        return export
    raise AttributeError(f"module 'burn.onnx' has no attribute {name!r}")
