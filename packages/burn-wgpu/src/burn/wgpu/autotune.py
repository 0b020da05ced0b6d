"""Autotune: time candidate kernel configurations once per device and shape class, keep the winner.

Two op families are tuned: matmul (tile shapes) and reductions (one thread per row against a
workgroup tree per row, the workgroup size, and how long rows are split). A *shape class* rounds
the problem's sizes up to powers of two and notes what changes the kernel (batching, the
operand layout), so a model's many similar ops share one measurement. The first op of a class
on a device runs every candidate on its real operands, for at least `MIN_SECONDS` each (the
output of the last run is the one returned, so nothing is wasted but time) and records the
fastest; the tables are saved under the user cache directory with an atomic write (temporary
file + rename), one file per family and adapter, so later processes skip the measurement.

Small problems skip tuning altogether: there, launch overhead dominates and the heuristic
choice is as good as any. `BURN_WGPU_AUTOTUNE=0` turns tuning off (the heuristic is used);
the variable is read once, when the process first asks.
"""

from __future__ import annotations

import functools
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
    (64, 64, 32, 4, 4),
    (64, 128, 8, 4, 8),
    (64, 128, 16, 4, 8),
    (128, 64, 16, 8, 4),
    (128, 128, 8, 8, 8),
    (128, 128, 16, 8, 8),
    (128, 256, 8, 8, 16),  # the H100's best at n = 4096 and 8192 (41 TFLOP/s)
    (256, 128, 8, 16, 8),
    (32, 32, 16, 2, 2),
    (32, 64, 16, 4, 4),
)
TUNE_MIN_FLOPS = 2 * 256**3  # below this, launch overhead dominates: no tuning
VEC_MIN_FLOPS = 2 * 64**3  # below this the vec4 kernel is not worth a copy to contiguous
MIN_SECONDS = 0.01  # each candidate runs until this much GPU time has been measured
MAX_REPEATS = 256

# Reductions: (mode, workgroup size, chunk length); mode 0 = one thread per row, 1 = one
# workgroup tree per row (chunk length 0) or per chunk of a row (then a second pass).
REDUCE_SERIAL = (0, 256, 0)
REDUCE_CANDIDATES = (
    REDUCE_SERIAL,
    (0, 64, 0),
    (1, 64, 0),
    (1, 128, 0),
    (1, 256, 0),
    (1, 256, 4096),
    (1, 256, 16384),
)
REDUCE_TUNE_MIN = 1 << 18  # elements read: below this, launch overhead dominates
SERIAL_MIN_ROWS = 1024

_lock = threading.Lock()
_tables: dict[tuple[str, str], dict[str, list[int]]] = {}


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
    """The adapter's name as a file name part (computed once per runtime: every op asks)."""
    key = rt.__dict__.get("_autotune_key")
    if key is None:
        info = rt.info
        raw = f"{info.get('device', '')}-{info.get('backend_type', '')}-{info.get('vendor_id', '')}"
        key = rt.__dict__["_autotune_key"] = "".join(c if c.isalnum() else "_" for c in raw)
    return key


def _path(rt, family: str) -> Path:
    return cache_dir() / "wgpu-autotune" / f"{family}-{_device_key(rt)}.json"


def _table(rt, family: str) -> dict[str, list[int]]:
    key = (family, _device_key(rt))
    table = _tables.get(key)
    if table is None:
        try:
            table = json.loads(_path(rt, family).read_text())
        except (OSError, ValueError):
            table = {}
        _tables[key] = table
    return table


def _record(rt, family: str, shape_key: str, winner) -> None:
    """Remember a winner and write the family's table atomically (a crash mid-write leaves the
    previous file intact)."""
    with _lock:
        table = _table(rt, family)
        table[shape_key] = list(winner)
        path = _path(rt, family)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{family}-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(table, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache only costs a re-tune next time


def _fastest(rt, candidates, launch_with) -> tuple[int, ...]:
    """The candidate whose launch takes the least GPU time (each runs on the real operands)."""
    best, best_time = None, float("inf")
    for cfg in candidates:
        seconds = _seconds_per_launch(rt, lambda cfg=cfg: launch_with(cfg))
        if seconds < best_time:
            best, best_time = cfg, seconds
    return best


def variant(layout, m: int, n: int, k: int) -> str:
    """Which kernel a shape runs: `g` generic, else `v` + the vec4 operand layout; `x` marks
    sizes that the large tiles divide (their bounds-check-free form applies)."""
    if layout is None:
        return "g"
    aligned = "x" if m % 128 == 0 and n % 128 == 0 and k % 16 == 0 else ""
    return "v" + "".join("k" if x else "m" for x in layout) + aligned


@functools.lru_cache(maxsize=4096)  # every matmul asks; a program has few shape classes
def shape_class(dtype, m: int, n: int, k: int, batches: int, variant: str = "g") -> str:
    return f"{dtype.value}-{_up(m)}x{_up(n)}x{_up(k)}-{'b' if batches > 1 else '1'}-{variant}"


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


@functools.cache
def enabled() -> bool:
    """`BURN_WGPU_AUTOTUNE`, read once: every matmul and reduction asks, and a lookup in
    `os.environ` of a variable that is not set (an exception caught inside it) cost a training
    step on the GPU more host time than the rest of these decisions together."""
    return os.environ.get("BURN_WGPU_AUTOTUNE", "1") not in ("0", "false", "no")


def matmul_config(backend, rt, dtype, m: int, n: int, k: int, batches: int, variant: str = "g"):
    """The tile shape for this matmul: cached, tuned now, or the heuristic for small ones."""
    if not enabled() or 2 * m * n * k * batches < TUNE_MIN_FLOPS:
        return heuristic(m, n, variant)
    found = _table(rt, "matmul").get(shape_class(dtype, m, n, k, batches, variant))
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
    """Time every matmul candidate on the real operands; record and return the fastest."""
    candidates = [
        cfg for cfg in CANDIDATES if _fits(rt, cfg) and backend.matmul_variant_ok(cfg, layout)
    ]
    plans = {cfg: backend._matmul_plan(lhs, rhs, out, batch, cfg, layout) for cfg in candidates}
    best = _fastest(rt, candidates, lambda cfg: rt.launch(*plans[cfg]))
    # The last candidate's output is as correct as the winner's: any config computes the product.
    batches = int(out.numel // max(1, m * n))
    _record(rt, "matmul", shape_class(dtype, m, n, k, batches, variant(layout, m, n, k)), best)
    return best


# ---------------------------------------------------------------------- reductions
@functools.lru_cache(maxsize=4096)  # every reduction asks
def reduce_class(op: str, dtype, rows: int, length: int, contiguous: bool, vec: bool) -> str:
    """Arg reductions carry an index; the layout of the reduced dim decides coalescing."""
    kind = "arg" if op in ("argmax", "argmin") else "val"
    layout = "v" if vec else "c" if contiguous else "s"
    return f"{kind}-{dtype.value}-{_up(rows)}x{_up(length)}-{layout}"


def _up(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def reduce_heuristic(op: str, rows: int, length: int) -> tuple[int, int, int]:
    """Short rows: a thread each; long rows with few of them: split into chunks; else a tree."""
    if length <= 16:
        return REDUCE_SERIAL
    if op not in ("argmax", "argmin") and length > 8192 and rows < 1024:
        return (1, 256, 4096)
    return (1, 256, 0)


def reduce_candidates(rt, op: str, rows: int, length: int) -> list[tuple[int, int, int]]:
    """What is worth trying: a thread per row only with rows enough to fill a GPU (one thread
    walking a long row alone takes seconds); chunks only for value reductions of rows longer
    than two chunks."""
    arg = op in ("argmax", "argmin")
    limit = int(rt.limits.get("max-compute-invocations-per-workgroup", 256))
    return [
        cfg
        for cfg in REDUCE_CANDIDATES
        if cfg[1] <= limit
        and (cfg[0] == 1 or rows >= SERIAL_MIN_ROWS)
        and (cfg[2] == 0 or (not arg and length > 2 * cfg[2]))
    ]


def reduce_config(rt, op: str, dtype, rows: int, length: int, contiguous: bool, vec: bool):
    """The reduction strategy: cached, the heuristic for small ones, or None (tune now)."""
    if not enabled() or rows * length < REDUCE_TUNE_MIN:
        return reduce_heuristic(op, rows, length)
    found = _table(rt, "reduce").get(reduce_class(op, dtype, rows, length, contiguous, vec))
    return None if found is None else tuple(found)


def tune_reduce(rt, shape_key: str, candidates, launch_with) -> tuple[int, int, int]:
    """Time each reduction strategy on the real operand; record and return the fastest."""
    best = _fastest(rt, candidates, launch_with)
    _record(rt, "reduce", shape_key, best)
    return best
