"""Registers `reference.py` as the module `burn_import_reference` for the test files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "burn_import_reference", Path(__file__).with_name("reference.py")
)
_module = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("burn_import_reference", _module)
_spec.loader.exec_module(_module)
