"""Matmul tile selection (autotuned later)."""

from __future__ import annotations

SMALL = (16, 16, 8, 2, 2)
MEDIUM = (64, 64, 16, 4, 4)


def matmul_config(backend, rt, dtype, m: int, n: int, k: int, batches: int):
    if m * n <= 64 * 64:
        return SMALL
    return MEDIUM
