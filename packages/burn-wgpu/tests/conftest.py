"""Skip this package's tests where no WebGPU adapter exists, except in CI, where that fails."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config, items):
    from burn.wgpu.runtime import adapter_available

    here = os.path.dirname(__file__)
    mine = [item for item in items if str(item.path).startswith(here)]
    if not mine:
        return
    reason = adapter_available()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise pytest.UsageError(f"burn-wgpu tests need a WebGPU adapter in CI: {reason}")
    for item in mine:
        item.add_marker(pytest.mark.skip(reason=reason))
