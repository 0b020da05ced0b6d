"""DataLoader workers on a decode-heavy dataset: main thread vs 2 thread vs 2 process workers.

Each item is a PNG-encoded 128x128 RGB image (made here from seeded noise over a gradient, so it
does not compress to nothing), decoded per item with Pillow when it is installed, else a
zlib-compressed array decoded with zlib. The batcher only stacks the decoded arrays, so the
rates measure decoding and the hand-over between workers and the caller.

    uv run python benches/bench_decode.py [--quick] [--no-write]

The loaders take turns epoch by epoch (so a change in the machine's load hits every row alike);
rates are medians of the epochs, reported with ratios against the main thread of the same run.
Beside each rate stands the CPU time the caller and its workers got per second of the epoch
(`resource.getrusage`: the caller's own, and its joined worker processes'), which says how many
cores the row actually had on a machine shared with other jobs.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import resource
import statistics
import sys
import time
import zlib

import numpy as np
from common import machine, write_section

SECTION = "## burn-data: DataLoader workers on a decode-heavy dataset"
SIZE = 128
BATCH = 32

try:
    from PIL import Image
except ImportError:  # the zlib fallback below also releases the GIL while decoding
    Image = None


def make_images(n: int) -> list[bytes]:
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 200, SIZE, dtype=np.float32)
    out = []
    for _ in range(n):
        noise = rng.integers(0, 56, (SIZE, SIZE, 3))
        pixels = (ramp[:, None, None] + noise).astype(np.uint8)
        if Image is not None:
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, format="PNG")
            out.append(buffer.getvalue())
        else:
            out.append(zlib.compress(pixels.tobytes(), 6))
    return out


def decode(encoded: bytes) -> np.ndarray:
    if Image is not None:
        with Image.open(io.BytesIO(encoded)) as img:
            pixels = np.asarray(img)
    else:
        pixels = np.frombuffer(zlib.decompress(encoded), np.uint8).reshape(SIZE, SIZE, 3)
    return pixels.astype(np.float32) / 255.0


def stack(items: list[np.ndarray], device) -> np.ndarray:
    return np.stack(items)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _live_children_cpu() -> dict[int, float]:
    """CPU seconds of the child processes still running (workers kept between epochs), read
    from /proc: getrusage counts a child only once it has been joined."""
    out = {}
    for child in multiprocessing.active_children():
        try:
            with open(f"/proc/{child.pid}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[child.pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def epoch(loader) -> tuple[float, float, float]:
    """(batches/s, caller cores, worker cores): CPU seconds per wall second of the epoch.

    Workers started for the epoch are joined when it ends, so their CPU time is in
    RUSAGE_CHILDREN; workers kept between epochs are read while they run.
    """
    self0, children0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    live0 = _live_children_cpu()
    start = time.perf_counter()
    count = sum(1 for _ in loader)
    wall = time.perf_counter() - start
    live1 = _live_children_cpu()
    caller = (_cpu(resource.RUSAGE_SELF) - self0) / wall
    kept = sum(cpu - live0.get(pid, 0.0) for pid, cpu in live1.items())
    workers = (_cpu(resource.RUSAGE_CHILDREN) - children0 + kept) / wall
    return count / wall, caller, workers


def _spin(_: int) -> float:
    start = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i
    return time.perf_counter() - start


def parallel_ceiling() -> float:
    """How many cores two CPU-bound processes get now: 2.0 on an idle 2-core machine.

    The workers' speed-up cannot exceed it, so it is measured next to them on the shared machine.
    """
    one = statistics.median(_spin(0) for _ in range(3))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        two = statistics.median(t for _ in range(3) for t in pool.map(_spin, [0, 1]))
    return 2 * one / two


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer items and epochs")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    from burn.data import DataLoaderBuilder, InMemDataset, MapperDataset, shared_blocks

    n, repeats = (640, 3) if args.quick else (2048, 5)
    dataset = MapperDataset(InMemDataset(make_images(n)), decode)
    # (label, workers, kind, results pickled through the queue, workers kept between epochs)
    configs = [
        ("main thread", 0, "thread", False, False),
        ("2 thread workers", 2, "thread", False, False),
        ("2 process workers (shared memory)", 2, "process", False, False),
        ("2 process workers, items pickled through the queue", 2, "process", True, False),
        ("2 process workers (shared memory), persistent_workers()", 2, "process", False, True),
    ]
    loaders = [
        DataLoaderBuilder(stack)
        .batch_size(BATCH)
        .shuffle(0)
        .num_workers(workers)
        .worker_kind(kind)
        .persistent_workers(persistent)
        .build(dataset)
        for _, workers, kind, _, persistent in configs
    ]
    shared_min = shared_blocks.SHARED_MEMORY_MIN_BYTES
    samples: list[list[tuple[float, float, float]]] = [[] for _ in configs]
    load_before = os.getloadavg()
    ceiling_before = parallel_ceiling()
    for round_ in range(repeats + 1):  # round 0 warms up and is dropped
        for i, (loader, (_, _, _, pickled, _)) in enumerate(zip(loaders, configs, strict=True)):
            # The peer of the shared memory path: every result pickled in band (the caller
            # decides per task, so the setting in this process is what counts).
            shared_blocks.SHARED_MEMORY_MIN_BYTES = 1 << 62 if pickled else shared_min
            got = epoch(loader)
            if round_:
                samples[i].append(got)
    shared_blocks.SHARED_MEMORY_MIN_BYTES = shared_min
    for loader in loaders:
        loader.shutdown_workers()
    load_after = os.getloadavg()
    ceiling_after = parallel_ceiling()

    rows = []
    for (label, *_), runs in zip(configs, samples, strict=True):
        rates = [r for r, _, _ in runs]
        caller = statistics.median(c for _, c, _ in runs)
        workers = statistics.median(w for _, _, w in runs)
        rows.append((label, statistics.median(rates), min(rates), max(rates), caller, workers))
    base = rows[0][1]
    info = machine(Pillow=Image.__version__ if Image is not None else "absent (zlib)")
    codec = "PNG via Pillow" if Image is not None else "zlib"
    lines = [
        f"`benches/bench_decode.py`{' --quick' if args.quick else ''}: {n} items, "
        f"{SIZE}x{SIZE} RGB, {codec}, batch {BATCH}, shuffled; the loaders take turns "
        f"epoch by epoch, median of {repeats} epochs each after one warm-up round.",
        "",
        *[f"- {key}: {value}" for key, value in info.items()],
        f"- load average (1, 5, 15 min): {load_before[0]:.2f} {load_before[1]:.2f} "
        f"{load_before[2]:.2f} before, {load_after[0]:.2f} {load_after[1]:.2f} "
        f"{load_after[2]:.2f} after",
        f"- cores two CPU-bound processes got (2.00 on an idle 2-core machine, the ceiling of "
        f"any 2-worker speed-up): {ceiling_before:.2f} before, {ceiling_after:.2f} after",
        "",
        "| loader | batches/s (median) | min..max | vs main thread | cores: caller | "
        "cores: worker processes | CPU ms per batch |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {lab} | {med:,.1f} | {lo:,.1f}..{hi:,.1f} | {med / base:.2f} | {caller:.2f} | "
            f"{workers:.2f} | {(caller + workers) / med * 1e3:.1f} |"
            for lab, med, lo, hi, caller, workers in rows
        ],
        "",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(SECTION, text + NOTES)


NOTES = """How to read it:

- "cores" is CPU seconds per second of the epoch: the caller's (with its threads) and its
  worker processes' together. Two workers can at best multiply the main thread's rate by the
  cores they got, less what the caller itself spends per batch (receiving, stacking); while
  other jobs hold a core, no worker kind can be faster than the main thread.
- "CPU ms per batch" is what one batch costs all the processes together (cores / batches/s).
  With C cores free, two workers can at best reach C x (the main thread's CPU ms per batch) /
  (their own CPU ms per batch) times the main thread's rate; what process workers spend above
  the main thread is their start every epoch, the hand-over and the caller's copy.
- Process workers: the third and fourth rows differ only in the hand-over: shared memory
  blocks that the caller creates, reuses and unlinks, against every batch pickled through the
  queue. The last row keeps its workers and blocks from one epoch to the next
  (`persistent_workers()`), so it does not pay for starting them every epoch.
- Thread workers decode and stack whole batches per task. Pillow and numpy release the GIL
  for the decoding itself and hold it only between their C calls, so with two free cores two
  threads come close to twice the main thread and need no hand-over at all; on busy cores a
  thread that gave the GIL up waits to get it back at every call (the convoy effect).
- The machine has 2 cores shared with other jobs while this ran: compare rows of one run, not
  across runs.
"""


if __name__ == "__main__":
    sys.exit(main())
