"""onnx's own backend node tests, run through burn.onnx.backend (NdArray on the CPU).

Each of the 1,884 node tests either runs here and passes, or is listed with its reason in
onnx_node_exclusions.txt (rewritten by tools/onnx_node_exclusions.py).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import burn.onnx.backend as burn_backend
import onnx.backend.test

EXCLUSIONS = Path(__file__).with_name("onnx_node_exclusions.txt")


def excluded_names() -> list[str]:
    names = []
    for line in EXCLUSIONS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the suite's expected outputs overflow on purpose
    _suite = onnx.backend.test.BackendTest(burn_backend, __name__)
    _names = excluded_names()
    if _names:
        _suite.exclude("^(" + "|".join(re.escape(n) for n in _names) + ")_(cpu|cuda)$")
    OnnxBackendNodeModelTest = _suite.test_cases["OnnxBackendNodeModelTest"]
