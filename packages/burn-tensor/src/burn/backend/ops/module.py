"""Burn's ModuleOps: convolution, pooling, interpolation, embedding and their backward ops."""

from __future__ import annotations


class ModuleOps:
    """Module ops with defaults built from `PrimitiveOps` (filled in by the module-ops work)."""
