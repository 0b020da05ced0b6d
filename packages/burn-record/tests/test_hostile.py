"""Hostile record files and failing writes: every failure is a `RecordError` naming the file."""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
import time
import tracemalloc
import zlib

import msgpack
import numpy as np
import pytest
from burn.record import (
    BinGzFileRecorder,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    ParamRecord,
    PrettyJsonFileRecorder,
    RecordError,
    atomic_write,
)
from burn.record import limits as record_limits
from burn.record.atomic import remove_stale_temp_files, temp_files_of
from burn.tensor import TensorData


def _named(item) -> bytes:
    tree = {"metadata": NamedMpkFileRecorder().metadata(), "item": item, "_b": []}
    return msgpack.packb(tree, use_bin_type=True)


def _tensor(shape, raw=b"", dtype="F32") -> dict:
    return {"bytes": raw, "shape": shape, "dtype": dtype}


# ------------------------------------------------------------------------------ decoding
@pytest.mark.parametrize(
    ("item", "match"),
    [
        ({"w": _tensor([1] * 65)}, "rank 65"),
        ({"w": _tensor([0, 2**63, 2**63])}, "too large"),
        ({"w": _tensor([2**40, 2**40], b"\0" * 8)}, "needs"),
        ({"w": _tensor([-1])}, "malformed tensor shape"),
        ({"w": _tensor([2], b"\0" * 8, dtype="Q8")}, "dtype 'Q8'"),
    ],
)
def test_absurd_shapes_and_dtypes_are_record_errors(item, match):
    with pytest.raises(RecordError, match=match):
        NamedMpkBytesRecorder().load(_named(item))


def test_deep_nesting_is_a_record_error_in_msgpack_and_json(tmp_path):
    deep: object = 1
    for _ in range(600):
        deep = [deep]
    with pytest.raises(RecordError, match="nested|corrupt"):
        NamedMpkBytesRecorder().load(_named({"x": deep}))
    text = '{"metadata": ' + json.dumps(PrettyJsonFileRecorder().metadata()) + ', "item": '
    text += "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "deep.json").write_text(text)
    with pytest.raises(RecordError, match="deep.json"):
        PrettyJsonFileRecorder().load(tmp_path / "deep")


def test_json_integer_of_thousands_of_digits_is_a_record_error(tmp_path):
    meta = json.dumps(PrettyJsonFileRecorder().metadata())
    (tmp_path / "big.json").write_text('{"metadata": ' + meta + ', "item": ' + "9" * 5000 + "}")
    with pytest.raises(RecordError, match="big.json"):
        PrettyJsonFileRecorder().load(tmp_path / "big")


def test_map_keys_that_are_not_text_are_a_record_error():
    raw = _named({b"weight": 1, "bias": 2})
    with pytest.raises(RecordError, match="map key b'weight' is not text"):
        NamedMpkBytesRecorder().load(raw)


# ------------------------------------------------------------------------------ compression
def _bomb(size: int) -> bytes:
    """A valid gzip stream of `size` zero bytes (about 1000 times smaller than it inflates)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(size >> 20)]
    return b"".join(parts) + compressor.flush()


def test_a_decompression_bomb_is_refused_early_and_small(tmp_path, monkeypatch):
    bomb = _bomb(256 << 20)  # 256 MiB of zeros in about 250 KB
    assert len(bomb) < 300_000
    path = tmp_path / "bomb.mpk.gz"
    path.write_bytes(bomb)
    tracemalloc.start()
    try:
        start = time.perf_counter()
        with pytest.raises(RecordError, match="bomb.mpk.gz: the compressed data does not start"):
            NamedMpkGzFileRecorder().load(tmp_path / "bomb")
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak  # the first chunk, not the 256 MiB it asks for
    assert elapsed < 30  # a sanity bound only: it stops after the first chunk


def test_a_bomb_with_a_record_header_stops_at_the_limit(tmp_path, monkeypatch):
    # A plausible start (a map header) followed by megabytes of zeros: only the bound stops it.
    monkeypatch.setenv("BURN_RECORD_MAX_BYTES", str(4 << 20))
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = compressor.compress(b"\x83") + compressor.compress(bytes(32 << 20))
    path = tmp_path / "bomb.mpk.gz"
    path.write_bytes(body + compressor.flush())
    with pytest.raises(RecordError, match="over the limit of 4194304 bytes"):
        NamedMpkGzFileRecorder().load(tmp_path / "bomb")


def test_a_gzip_trailer_that_lies_about_the_size_stops_the_stream(tmp_path):
    data = gzip.compress(b"\x83" + bytes(8 << 20))
    lying = data[:-4] + (100).to_bytes(4, "little")
    with pytest.raises(RecordError, match="more than its gzip trailer declares"):
        record_limits.gunzip_bounded(lying, "lying.gz")


def test_truncated_and_padded_gzip_are_record_errors(tmp_path):
    good = NamedMpkGzFileRecorder().record(
        {"w": ParamRecord("w", TensorData(np.ones(8, np.float32)))}, tmp_path / "m"
    )
    raw = good.read_bytes()
    for name, bad in [("cut", raw[: len(raw) // 2]), ("padded", raw + b"\0junk")]:
        (tmp_path / f"{name}.mpk.gz").write_bytes(bad)
        with pytest.raises(RecordError, match=f"{name}.mpk.gz"):
            NamedMpkGzFileRecorder().load(tmp_path / name)
    for recorder in (BinGzFileRecorder(), JsonGzFileRecorder()):
        path = tmp_path / f"zeros.{recorder.extension}"
        path.write_bytes(gzip.compress(bytes(1 << 20)))
        with pytest.raises(RecordError, match="zeros"):
            recorder.load(tmp_path / "zeros")


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_RECORD_MAX_BYTES", "1000")
    path = NamedMpkFileRecorder().record(
        {"w": ParamRecord("w", TensorData(np.ones(1000, np.float32)))}, tmp_path / "m"
    )
    with pytest.raises(RecordError, match=r"m\.mpk: the file is \d+ bytes, over the limit"):
        NamedMpkFileRecorder().load(path)
    monkeypatch.setenv("BURN_RECORD_MAX_BYTES", "lots")
    with pytest.raises(RecordError, match="BURN_RECORD_MAX_BYTES='lots'"):
        NamedMpkFileRecorder().load(path)


# ------------------------------------------------------------------------------ writing
def test_saved_files_get_the_mode_an_ordinary_write_gives(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "new", [b"x"])
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        os.chmod(path, 0o640)
        atomic_write(path, [b"y"])  # re-saving keeps the file's mode
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_saving_through_a_symlink_updates_its_target(tmp_path):
    real = tmp_path / "store" / "model.mpk"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "model.mpk"
    link.symlink_to(real)
    atomic_write(link, [b"new"])
    assert link.is_symlink()
    assert real.read_bytes() == b"new"


def test_write_failures_are_record_errors_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with pytest.raises(RecordError, match="file/sub"):
        atomic_write(blocker / "sub" / "x", [b"x"])
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running with permissions that ignore the folder's mode")
        with pytest.raises(RecordError, match="locked/x"):
            atomic_write(locked / "x", [b"x"])
    finally:
        os.chmod(locked, 0o700)


def test_temp_files_of_dead_writers_are_removed_by_the_next_save(tmp_path):
    target = tmp_path / "model.mpk"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    stale = tmp_path / f".model.mpk.{pid}.abc123.tmp"
    stale.write_bytes(b"partial")
    live = tmp_path / f".model.mpk.{os.getppid()}.def456.tmp"  # a live writer's: kept
    live.write_bytes(b"partial")
    other = tmp_path / ".other.mpk.1.abc.tmp"  # another file's: never ours to touch
    other.write_bytes(b"x")
    assert set(temp_files_of(target)) == {stale, live}
    atomic_write(target, [b"data"])
    assert not stale.exists()
    assert live.exists() and other.exists()
    old = time.time() - 2 * 24 * 3600
    os.utime(live, (old, old))  # long abandoned, whoever has that id now
    assert remove_stale_temp_files(target) == 1
