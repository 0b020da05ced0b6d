"""Soak test: run the guide's training loop for a long time and sample the process's resources.

    OPENBLAS_NUM_THREADS=1 nice uv run python tools/soak_guide.py --minutes 60 --out soak.csv

Trains the guide's model on NdArray (short epochs over the first `--train-items` items, as many
as fit in the time), with `--num-workers` DataLoader thread workers, and writes one CSV row per
`--every` seconds: elapsed seconds, epochs begun, resident memory (MiB), Python threads, OS
threads and open file descriptors (Linux /proc). Flat columns after warm-up mean no leak. The
summary at the end compares the first and the last quarter of the run.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "examples" / "guide"
sys.path.insert(0, str(GUIDE))


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def sample() -> dict[str, float]:
    return {
        "rss_mib": round(_status("VmRSS") / 1024, 1),
        "py_threads": threading.active_count(),
        "os_threads": _status("Threads"),
        "open_fds": len(os.listdir("/proc/self/fd")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=15.0, help="seconds between samples")
    parser.add_argument("--train-items", type=int, default=3200)
    parser.add_argument("--valid-items", type=int, default=640)
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--out", default="soak.csv")
    args = parser.parse_args()
    os.environ.setdefault("BURN_BACKEND", "NdArray")

    import burn.train.learner.learner as learner_module
    from burn.backend import Autodiff, NdArray
    from burn.optim import AdamConfig
    from model import ModelConfig
    from training import TrainingConfig, train

    epochs = {"begun": 0}
    original_epoch = getattr(learner_module.Learner, "_train_epoch", None)
    if original_epoch is not None:

        def counted(self, *a, **k):
            epochs["begun"] += 1
            return original_epoch(self, *a, **k)

        learner_module.Learner._train_epoch = counted

    started = time.monotonic()
    stop = threading.Event()
    rows: list[dict] = []

    def sampler() -> None:
        with open(args.out, "w", newline="") as f:
            writer = None
            while True:
                row = {"elapsed_s": round(time.monotonic() - started), "epochs": epochs["begun"]}
                row.update(sample())
                rows.append(row)
                if writer is None:
                    writer = csv.DictWriter(f, fieldnames=list(row))
                    writer.writeheader()
                writer.writerow(row)
                f.flush()
                if stop.wait(args.every):
                    return

    thread = threading.Thread(target=sampler, name="soak-sampler", daemon=True)
    thread.start()
    device = Autodiff(NdArray).device()
    config = TrainingConfig(ModelConfig(num_classes=10, hidden_size=512), AdamConfig())
    config = config.with_num_workers(args.num_workers).with_learning_rate(1e-3)
    deadline = started + args.minutes * 60
    runs = 0
    with tempfile.TemporaryDirectory(prefix="burn-soak-") as tmp:
        while time.monotonic() < deadline:
            runs += 1
            folder = Path(tmp) / f"run-{runs}"
            train(
                str(folder),
                config.with_num_epochs(3),
                device,
                train_items=args.train_items,
                valid_items=args.valid_items,
            )
            shutil.rmtree(folder)
    stop.set()
    thread.join()
    quarter = max(1, len(rows) // 4)
    first, last = rows[quarter : 2 * quarter] or rows[:1], rows[-quarter:]
    print(f"{runs} training runs, {len(rows)} samples over {rows[-1]['elapsed_s']} s")
    for key in ("rss_mib", "py_threads", "os_threads", "open_fds"):
        a = sum(r[key] for r in first) / len(first)
        b = sum(r[key] for r in last) / len(last)
        lo = min(r[key] for r in rows[quarter:])
        hi = max(r[key] for r in rows[quarter:])
        print(f"{key:>10}: second quarter {a:.1f}, last quarter {b:.1f} (min {lo}, max {hi})")


if __name__ == "__main__":
    main()
