"""Saving and loading a large record: burn's recorders against safetensors and torch.save.

The question is what Burn's layouts (named MessagePack, bincode) cost against the formats Python
users know, on the same record in the same process, so times are reported with ratios to
`torch.save`/`torch.load(weights_only=True)` (and safetensors when installed). Also the file size
of a 1M-parameter module under every recorder.

    uv run python benches/bench_record.py                 # 100M parameters, writes RESULTS.md
    uv run python benches/bench_record.py --params 10e6 --no-write

torch and safetensors are optional: their rows are skipped when they are not importable.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from burn.backend import NdArray
from burn.module import Module, Param
from burn.record import (
    BinFileRecorder,
    BinGzFileRecorder,
    CompactRecorder,
    JsonGzFileRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    ParamRecord,
    PrettyJsonFileRecorder,
    SensitiveCompactRecorder,
)
from burn.tensor import Tensor, TensorData
from common import machine, machine_lines, write_section

try:
    import torch
except ImportError:
    torch = None
try:
    import safetensors.numpy as safetensors_numpy
except ImportError:
    safetensors_numpy = None

HERE = Path(__file__).resolve().parent
SECTION = "## burn-record: saving and loading records"


def make_arrays(params: int) -> dict[str, np.ndarray]:
    """Ten weight matrices and ten bias vectors summing to about `params` values."""
    rng = np.random.default_rng(0)
    rows = 1000
    cols = max(1, params // (10 * rows))
    arrays = {}
    for i in range(10):
        arrays[f"layers.{i}.weight"] = rng.standard_normal((rows, cols), dtype=np.float32)
        arrays[f"layers.{i}.bias"] = rng.standard_normal(cols, dtype=np.float32)
    return arrays


def as_record(arrays: dict[str, np.ndarray]) -> dict:
    layers: dict = {}
    for key, value in arrays.items():
        _, index, name = key.split(".")
        layers.setdefault(int(index), {})[name] = ParamRecord(f"p{key}", TensorData(value))
    return {"layers": [layers[i] for i in sorted(layers)]}


def schema_of(record: dict) -> dict:
    return {
        "layers": [
            {k: ParamRecord(v.id, None) for k, v in layer.items()} for layer in record["layers"]
        ]
    }


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def timed(fn, repeats: int) -> float:
    """The median of `repeats` timed calls after one untimed call (warms the page cache)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Dense(Module):
    """A 1M-parameter module for the size table: one [1000, 999] weight and a bias."""

    def __init__(self, device):
        rng = np.random.default_rng(1)
        self.weight = Param(
            Tensor.from_data(rng.standard_normal((1000, 999), dtype=np.float32), device)
        )
        self.bias = Param(Tensor.from_data(rng.standard_normal(1000, dtype=np.float32), device))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=float, default=100e6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--no-gzip", action="store_true", help="skip the gzip recorder (zlib takes most of a run)"
    )
    args = parser.parse_args()

    arrays = make_arrays(int(args.params))
    total = sum(a.size for a in arrays.values())
    record = as_record(arrays)
    schema = schema_of(record)
    rows = []
    with tempfile.TemporaryDirectory(dir=HERE) as tmp:
        folder = Path(tmp)
        cases = [
            ("NamedMpkFileRecorder", NamedMpkFileRecorder(), args.repeats),
            ("NamedMpkGzFileRecorder", NamedMpkGzFileRecorder(), 1),
            ("BinFileRecorder", BinFileRecorder(), args.repeats),
        ]
        if args.no_gzip:
            cases = [case for case in cases if "Gz" not in case[0]]
        for name, recorder, repeats in cases:
            path = recorder.file_path(folder / "model")
            save = timed(lambda r=recorder: r.record(record, folder / "model"), repeats)
            load = timed(lambda r=recorder: r.load(folder / "model", schema), repeats)
            rows.append((name, save, load, path.stat().st_size))
            path.unlink()
            print(rows[-1], flush=True)
        if safetensors_numpy is not None:
            path = folder / "model.safetensors"

            def safetensors_save():
                safetensors_numpy.save_file(arrays, str(path))
                with open(path, "rb+") as f:  # the recorders sync to disk; make it equal
                    os.fsync(f.fileno())

            save = timed(safetensors_save, args.repeats)
            load = timed(lambda: safetensors_numpy.load_file(str(path)), args.repeats)
            rows.append(("safetensors (numpy)", save, load, path.stat().st_size))
            path.unlink()
            print(rows[-1], flush=True)
        if torch is not None:
            tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
            path = folder / "model.pt"

            def torch_save():
                torch.save(tensors, path)
                with open(path, "rb+") as f:  # the recorders sync to disk; make it equal
                    os.fsync(f.fileno())

            save = timed(torch_save, args.repeats)
            load = timed(lambda: torch.load(path, weights_only=True), args.repeats)
            rows.append(("torch.save / torch.load(weights_only)", save, load, path.stat().st_size))
            path.unlink()
            print(rows[-1], flush=True)

        module = Dense(NdArray.device())
        sizes = []
        for recorder in [
            NamedMpkFileRecorder(),
            NamedMpkGzFileRecorder(),
            BinFileRecorder(),
            BinGzFileRecorder(),
            PrettyJsonFileRecorder(),
            JsonGzFileRecorder(),
            CompactRecorder(),
            SensitiveCompactRecorder(),
        ]:
            path = module.save_file(folder / "dense", recorder)
            sizes.append((repr(recorder), path.name, path.stat().st_size))
            path.unlink()

    reference = next((r for r in rows if r[0].startswith("torch")), None)
    peer = next((r for r in rows if r[0].startswith("safetensors")), None)
    cols = arrays["layers.0.weight"].shape[1]
    lines = [
        SECTION,
        "",
        f"`benches/bench_record.py`, run on {datetime.date.today()}: a record of "
        f"{total / 1e6:.0f}M float32 parameters ({total * 4 / 1e6:.0f} MB; ten [1000, {cols}] "
        "weights and ten biases, random normal values), saved and loaded from a local disk; median "
        f"of {args.repeats} runs after a warm-up run (gzip: 1 run), seconds. Every save is synced "
        "to disk (the "
        "recorders write atomically with fsync; the safetensors and torch.save timings include an "
        "fsync too); each load follows a save, so the file is in the page cache.",
        "",
        machine_lines(
            machine(
                torch=torch.__version__ if torch is not None else "not installed",
                safetensors="installed" if safetensors_numpy is not None else "not installed",
            )
        ),
        "",
        f"Load average (`uptime`) at the end of the run: {load_average()}.",
        "",
        "| format | save s | load s | file MB | save / safetensors | load / safetensors "
        "| save / torch | load / torch |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, save, load, size in rows:
        ratios = [
            f"{value / ref[i]:.2f}" if ref else "-"
            for ref in (peer, reference)
            for i, value in ((1, save), (2, load))
        ]
        lines.append(
            f"| {name} | {save:.3f} | {load:.3f} | {size / 1e6:.1f} | " + " | ".join(ratios) + " |"
        )
    lines += [
        "",
        "File size of a 1M-parameter module (a [1000, 999] weight and a 1000 bias, f32) per",
        "recorder:",
        "",
        "| recorder | file | bytes |",
        "|---|---|---|",
    ]
    lines += [f"| `{name}` | `{file}` | {size:,} |" for name, file, size in sizes]
    lines += [
        "",
        "How to read it:",
        "",
        "- The named MessagePack and bincode layouts hold each tensor as one contiguous byte",
        "  string. `NamedMpkFileRecorder` writes each large tensor straight from its array's",
        "  memory (only the headers between tensors are packed), and loads by mapping the file:",
        "  msgpack copies each tensor's bytes once and numpy wraps them without parsing values.",
        "  `BinFileRecorder` also writes from the arrays; its load reads the file once and wraps",
        "  each tensor's bytes in place.",
        "  The gzip variants are dominated by zlib: random float weights hardly compress, so",
        "  they cost time for little gain.",
        "- JSON stores every byte as a decimal number (serde's form of bytes); the pretty form",
        "  puts each on its own line, hence its size: a format to read small records by eye.",
        "- Half precision (`CompactRecorder`, `SensitiveCompactRecorder`) halves the size.",
        "- The machine is shared with other jobs; compare rows of one run, not across runs.",
        "",
        "Reproduce: `uv run python benches/bench_record.py` (add `--params 10e6` for a quick run).",
    ]
    text = "\n".join(lines[2:]) + "\n"
    print(SECTION + "\n\n" + text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
