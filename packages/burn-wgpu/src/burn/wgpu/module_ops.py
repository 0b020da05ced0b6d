"""`WgpuModuleOps`: module ops with dedicated kernels (the rest use the contract's defaults)."""

from __future__ import annotations


class WgpuModuleOps:
    """Overrides of `ModuleOps` for the Wgpu backend."""
