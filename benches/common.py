"""What every benchmark script shares: timing, the machine's description, the results file.

Scripts run as `python benches/<name>.py`, so this module is importable as `common`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def median_ms(
    fn: Callable[[], object] | None, repeats: int, warmup: int, min_seconds: float = 0.0
) -> float | None:
    """Median milliseconds of `fn` after `warmup` calls; None passes through (absent peer).

    A pause first lets the previous library's BLAS threads go idle, which on few cores
    would otherwise queue the next library behind them. Fast ops repeat until `min_seconds`.
    """
    if fn is None:
        return None
    time.sleep(0.3)
    for _ in range(warmup):
        fn()
    times: list[float] = []
    while len(times) < repeats or (sum(times) < min_seconds and len(times) < 1000):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_name() -> str:
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except Exception:  # older numpy, or a build without the dict form
        return "unknown"


def machine(**extra: str) -> dict[str, str]:
    """The facts a reader needs to compare runs: CPU, cores, load, versions, thread settings."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    return {
        "CPU": cpu_name(),
        "cores usable": str(usable),
        "load average at start": f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?",
        "Python": platform.python_version(),
        "numpy": np.__version__,
        "BLAS": blas_name(),
        **{name: os.environ.get(name, "(unset)") for name in threads},
        **extra,
    }


def machine_lines(info: dict[str, str]) -> str:
    return "\n".join(f"- {key}: {value}" for key, value in info.items())


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def emit(intro: list[str], header: list[str], rows: list[list[str]], out, section) -> None:
    """Print `intro` and the table; write them to the file `out` and to RESULTS.md as `section`
    when those are given (the GPU scripts' `--out` and `--results`)."""
    text = "\n".join([*intro, "", markdown_table(header, rows)])
    print(text)
    if out:
        Path(out).write_text(text + "\n")
    if section:
        write_section(section, text)


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}"


# Ends what a benchmark writes in its section; what follows it (measurements written by hand
# under the table, subsections) stays when the benchmark writes its section again.
HAND_WRITTEN_BELOW = "<!-- written by the benchmark above; notes added by hand below are kept -->"


def write_section(section: str, body: str, path: Path = RESULTS) -> None:
    """Replace the benchmark's part of the `section` heading in RESULTS.md (or append the
    section), atomically.

    Each benchmark owns one `## ...` section, so running one never erases another's numbers.
    Within it, the benchmark owns what comes before `HAND_WRITTEN_BELOW`; what follows the
    marker is kept. A section written before the marker existed is kept whole, below the new
    table, as the earlier results it is.
    """
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    text = f"{section}\n\n{body.strip()}\n\n{HAND_WRITTEN_BELOW}\n"
    if section in old:
        head, _, rest = old.partition(section)
        nxt = rest.find("\n## ")
        kept, tail = (rest[:nxt], rest[nxt:]) if nxt >= 0 else (rest, "")
        if HAND_WRITTEN_BELOW in kept:
            kept = kept.partition(HAND_WRITTEN_BELOW)[2].strip("\n")
        elif kept.strip():
            kept = (
                "Earlier results of this section, as they stood before this run:\n\n"
                + kept.strip("\n")
            )
        new = head.rstrip() + "\n\n" + text + (f"\n{kept}\n" if kept.strip() else "") + tail
    else:
        new = old.rstrip() + "\n\n" + text
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(new)
    os.replace(tmp, path)


def parse_run_args(
    description: str,
    repeats: int,
    warmup: int,
    quick: tuple[int, int] = (3, 1),
    extra=None,
) -> tuple[argparse.Namespace, int, int]:
    """The options every benchmark takes; returns (args, repeats, warmup), `--quick` applied.
    `extra(parser)` adds a benchmark's own options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--quick", action="store_true", help="few repeats, no file written")
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    return (args, *quick) if args.quick else (args, args.repeats, args.warmup)


def torch_machine(torch) -> dict[str, str]:
    """`machine()` plus the torch version and its thread count (or 'absent')."""
    return machine(
        torch=f"{torch.__version__} ({torch.get_num_threads()} threads)" if torch else "absent"
    )


def print_start(info: dict[str, str], header: list[str]) -> None:
    for key, value in info.items():
        print(f"{key}: {value}")
    print(" | ".join(header))


def publish(
    section: str,
    script: str,
    how: str,
    info: dict[str, str],
    header: list[str],
    rows: list[list[str]],
    notes: str,
    quick: bool,
) -> None:
    """Print the table; unless `quick`, write it to RESULTS.md as `section`, introduced by the
    script's name, today's date and `how` it measured, with the machine lines and `notes`."""
    table = markdown_table(header, rows)
    print()
    print(table)
    if quick:
        return
    today = datetime.date.today().isoformat()
    write_section(
        section,
        f"`benches/{script}`, run on {today}: {how}\n\n{machine_lines(info)}\n\n{table}\n\n{notes}",
    )
    print("\nsection written to RESULTS.md")
