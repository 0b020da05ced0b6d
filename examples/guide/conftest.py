"""The guide's files import each other by plain name (`from data import MnistBatcher`), as
when run with `python examples/guide/main.py`; pytest collects them with this folder on the
path so it can read their docstrings."""

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
