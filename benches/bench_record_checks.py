"""What loading records safely costs: burn's checked loaders against unchecked peers.

Three questions, each answered as a ratio against a peer timed in the same process:

- named MessagePack: `NamedMpkBytesRecorder.load` (every length, shape, dtype, key and depth
  checked) against a bare `msgpack.unpackb` plus `np.frombuffer` per tensor;
- gzip: the bounded streaming inflater against `gzip.decompress` (unbounded);
- a checksum the uncompressed layouts could carry (Rust Burn's have none): a CRC-32 of the whole
  file against the checked load itself.

    uv run python benches/bench_record_checks.py              # 64 MB of f32 values
    uv run python benches/bench_record_checks.py --quick      # no file written
"""

from __future__ import annotations

import gzip
import zlib

import msgpack
import numpy as np
from burn.record import NamedMpkBytesRecorder, NamedMpkGzFileRecorder, ParamRecord
from burn.record.limits import gunzip_bounded
from burn.tensor import TensorData
from common import machine, median_ms, parse_run_args, publish

SECTION = "## burn-record: the cost of checked loading"


def make_record(megabytes: int) -> dict:
    rng = np.random.default_rng(0)
    per = megabytes * (1 << 20) // 4 // 8
    return {
        f"layer{i}": {
            "weight": ParamRecord(f"w{i}", TensorData(rng.standard_normal(per, np.float32)))
        }
        for i in range(8)
    }


def unchecked_load(raw: bytes) -> dict:
    tree = msgpack.unpackb(raw, raw=False)
    return {
        name: np.frombuffer(node["weight"]["param"]["bytes"], np.float32)
        for name, node in tree["item"].items()
    }


def main() -> None:
    args, repeats, warmup = parse_run_args(
        __doc__.splitlines()[0],
        repeats=7,
        warmup=1,
        extra=lambda p: p.add_argument("--megabytes", type=int, default=64),
    )
    record = make_record(args.megabytes)
    raw = NamedMpkBytesRecorder().record(record)
    packed = b"".join(NamedMpkGzFileRecorder().encode(record))
    checked = median_ms(lambda: NamedMpkBytesRecorder().load(raw), repeats, warmup)
    bare = median_ms(lambda: unchecked_load(raw), repeats, warmup)
    bounded = median_ms(lambda: gunzip_bounded(packed, "bench"), repeats, warmup)
    plain = median_ms(lambda: gzip.decompress(packed), repeats, warmup)
    crc = median_ms(lambda: zlib.crc32(raw), repeats, warmup)
    rows = [
        [
            "named mpk load (checked)",
            f"{checked:.1f}",
            "bare unpackb + frombuffer",
            f"{bare:.1f}",
            f"{checked / bare:.2f}",
        ],
        [
            "gzip inflate (bounded stream)",
            f"{bounded:.1f}",
            "gzip.decompress",
            f"{plain:.1f}",
            f"{bounded / plain:.2f}",
        ],
        [
            "CRC-32 of the file",
            f"{crc:.1f}",
            "named mpk load (checked)",
            f"{checked:.1f}",
            f"{crc / checked:.2f}",
        ],
    ]
    publish(
        SECTION,
        "bench_record_checks.py",
        f"a {len(raw) / 2**20:.0f} MiB named MessagePack record (8 f32 tensors), median of "
        f"{repeats} runs after {warmup} warm-up",
        machine(),
        ["what", "ms", "peer", "peer ms", "ratio"],
        rows,
        "The checks are per tensor and per node, not per byte, so the checked load costs about "
        "what the bare decode does; the bounded inflater works in 4 MiB steps into one buffer. "
        "A CRC-32 would add the last row's ratio to every load of an uncompressed record, and "
        "cannot be added to the Rust Burn layout without breaking it, so it is not done. The "
        "machine is shared: read the ratios, not the milliseconds.",
        args.quick,
    )


if __name__ == "__main__":
    main()
