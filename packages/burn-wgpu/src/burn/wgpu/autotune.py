"""Matmul autotune: time candidate tile shapes once per device and shape class, keep the winner.

A *shape class* rounds each of m, n, k up to a power of two (and notes whether there is a batch
and which kernel variant applies: the generic strided one, or the vec4 one for a layout of the
operands), so a model's many similar matmuls share one measurement. The first matmul of a class
on a device runs every candidate on its real operands, for at least `MIN_SECONDS` each (the output
of the last run is the one returned, so nothing is wasted but time) and records the fastest; the
table is saved under the user cache directory with an atomic write (temporary file + rename),
keyed by adapter, so later processes skip the measurement.

Small problems skip tuning altogether: there, launch overhead dominates and the small tile is
best. `BURN_WGPU_AUTOTUNE=0` turns tuning off (the heuristic choice is used).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path

# (BM, BN, BK, TM, TN): output tile, depth of a k step, per-thread register block.
SMALL = (16, 16, 8, 2, 2)
MEDIUM = (64, 64, 16, 4, 4)
CANDIDATES = (
    MEDIUM,
    (64, 64, 8, 4, 4),
    (64, 128, 8, 4, 8),
    (128, 64, 8, 8, 4),
    (128, 128, 8, 8, 8),
    (128, 128, 16, 8, 8),
    (32, 32, 16, 2, 2),
    (32, 64, 16, 4, 4),
)
TUNE_MIN_FLOPS = 2 * 256**3  # below this, launch overhead dominates: no tuning
VEC_MIN_FLOPS = 2 * 64**3  # below this the vec4 kernel is not worth a copy to contiguous
MIN_SECONDS = 0.01  # each candidate runs until this much GPU time has been measured
MAX_REPEATS = 256

_lock = threading.Lock()
_tables: dict[str, dict[str, list[int]]] = {}


def cache_dir() -> Path:
    """Where tuning results live: $BURN_CACHE_DIR, else the platform's user cache dir."""
    root = os.environ.get("BURN_CACHE_DIR")
    if root:
        return Path(root)
    if os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif os.uname().sysname == "Darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "burn"


def _device_key(rt) -> str:
    info = rt.info
    raw = f"{info.get('device', '')}-{info.get('backend_type', '')}-{info.get('vendor_id', '')}"
    return "".join(c if c.isalnum() else "_" for c in raw)


def _path(rt) -> Path:
    return cache_dir() / "wgpu-autotune" / f"matmul-{_device_key(rt)}.json"


def _table(rt) -> dict[str, list[int]]:
    key = _device_key(rt)
    table = _tables.get(key)
    if table is None:
        try:
            table = json.loads(_path(rt).read_text())
        except (OSError, ValueError):
            table = {}
        _tables[key] = table
    return table


def _save(rt, table: dict) -> None:
    """Write the table atomically: a crash mid-write leaves the previous file intact."""
    path = _path(rt)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".matmul-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(table, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a re-tune next time


def shape_class(dtype, m: int, n: int, k: int, batches: int, variant: str = "g") -> str:
    def up(x: int) -> int:
        return 1 << max(0, (x - 1).bit_length())

    return f"{dtype.value}-{up(m)}x{up(n)}x{up(k)}-{'b' if batches > 1 else '1'}-{variant}"


def heuristic(m: int, n: int, variant: str = "g") -> tuple[int, ...]:
    if variant != "g":
        return MEDIUM
    return SMALL if m * n <= 64 * 64 else MEDIUM


def _fits(rt, cfg) -> bool:
    bm, bn, bk, tm, tn = cfg
    threads = (bm // tm) * (bn // tn)
    shared = (bm + bn) * bk * 4
    return threads <= int(
        rt.limits.get("max-compute-invocations-per-workgroup", 256)
    ) and shared <= int(rt.limits.get("max-compute-workgroup-storage-size", 16384))


def enabled() -> bool:
    return os.environ.get("BURN_WGPU_AUTOTUNE", "1") not in ("0", "false", "no")


def matmul_config(backend, rt, dtype, m: int, n: int, k: int, batches: int, variant: str = "g"):
    """The tile shape for this matmul: cached, tuned now, or the heuristic for small ones."""
    if not enabled() or 2 * m * n * k * batches < TUNE_MIN_FLOPS:
        return heuristic(m, n, variant)
    table = _table(rt)
    key = shape_class(dtype, m, n, k, batches, variant)
    found = table.get(key)
    if found is not None:
        return tuple(found)
    return None  # the caller tunes on its operands


def _seconds_per_launch(rt, launch) -> float:
    """GPU seconds per launch: repeated (x4 per round) until `MIN_SECONDS` of work is timed,
    so the fixed cost of a synchronisation does not decide between fast candidates."""
    launch()  # warm-up (and compile)
    rt.sync()
    repeats = 1
    while True:
        start = time.perf_counter()
        for _ in range(repeats):
            launch()
        rt.sync()
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_SECONDS or repeats >= MAX_REPEATS:
            return elapsed / repeats
        repeats *= 4


def tune(
    backend, rt, dtype, lhs, rhs, out, batch, m: int, n: int, k: int, layout=None
) -> tuple[int, ...]:
    """Time every candidate on the real operands; record and return the fastest."""
    best, best_time = None, float("inf")
    for cfg in CANDIDATES:
        if not _fits(rt, cfg) or not backend.matmul_variant_ok(cfg, layout):
            continue

        def launch(cfg=cfg):
            backend._matmul_launch(lhs, rhs, out, batch, cfg, layout)

        seconds = _seconds_per_launch(rt, launch)
        if seconds < best_time:
            best, best_time = cfg, seconds
    # The last candidate's output is as correct as the winner's: any config computes the product.
    variant = "g" if layout is None else "v" + "".join("k" if x else "m" for x in layout)
    batches = int(out.numel // max(1, m * n))
    with _lock:
        table = _table(rt)
        table[shape_class(dtype, m, n, k, batches, variant)] = list(best)
        _save(rt, table)
    return best
