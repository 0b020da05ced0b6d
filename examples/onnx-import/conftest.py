"""The example's files import each other by plain name, as when run with
`python examples/onnx-import/main.py`; pytest collects them with this folder on the path."""

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
