"""Damaged `.pt` and safetensors files: only burn errors, and no allocation beyond the file.

Seeded mutations of the committed fixtures (truncations, bit flips, overwritten length
fields) plus hand-made files declaring huge sizes. Each load also reads every tensor, and
tracemalloc (which sees numpy's buffers) bounds what a load may allocate by the file's size.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from burn.pytorch import PyTorchFileRecorder
from burn.safetensors import SafetensorsFileRecorder
from burn.tensor import BurnError

FIXTURES = Path(__file__).parent / "fixtures"
MAGIC = 0x1950A86A20F9469CFC6C
SLACK = 1 << 20  # interpreter bookkeeping of one load (dicts, closures, the pickle's objects)


def load_everything(path: Path) -> None:
    recorder = SafetensorsFileRecorder() if path.suffix == ".safetensors" else PyTorchFileRecorder()
    record = recorder.load(path)
    for _, tensor in record.tensors.values():
        tensor.read()


def check_load(path: Path) -> None:
    """Loading `path` succeeds or raises a BurnError, allocating at most ~3x the file's size."""
    size = path.stat().st_size
    tracemalloc.start()
    try:
        load_everything(path)
    except BurnError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak <= 3 * size + SLACK, f"{path.name}: {peak} bytes allocated for a {size}-byte file"


def mutations(raw: bytes, rng: np.random.Generator, count: int):
    for i in range(count):
        data = bytearray(raw)
        kind = i % 4
        if kind == 0:  # truncation
            yield bytes(data[: int(rng.integers(0, len(data)))])
        elif kind == 1:  # bit flips
            for _ in range(int(rng.integers(1, 8))):
                pos = int(rng.integers(0, len(data)))
                data[pos] ^= 1 << int(rng.integers(0, 8))
            yield bytes(data)
        elif kind == 2:  # a length-like field overwritten by a huge or odd value
            pos = int(rng.integers(0, max(1, len(data) - 8)))
            value = int(rng.choice([0xFFFFFFFF, 0x7FFFFFFFFFFFFFFF, 1 << 40, 3, 0]))
            data[pos : pos + 8] = struct.pack("<Q", value)
            yield bytes(data)
        else:  # bytes removed from or inserted into the middle
            pos = int(rng.integers(0, len(data)))
            n = int(rng.integers(1, 64))
            if rng.random() < 0.5:
                del data[pos : pos + n]
            else:
                data[pos:pos] = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
            yield bytes(data)


@pytest.mark.parametrize(
    "name", ["cnn_checkpoint.pt", "cnn_legacy.pt", "views_legacy.pt", "cnn.safetensors"]
)
def test_mutated_files_give_burn_errors_only(tmp_path, name):
    raw = (FIXTURES / name).read_bytes()
    rng = np.random.default_rng(sum(name.encode()))
    path = tmp_path / name
    for data in mutations(raw, rng, 300):
        path.write_bytes(data)
        check_load(path)


# ---------------------------------------------------------------------------- huge sizes
def _pickle_with_storage(numel: int, size, stride, offset: int = 0) -> bytes:
    """A data.pkl whose one tensor declares `numel` elements (written as opcodes, no torch)."""
    body = io.BytesIO()
    body.write(b"\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00w")
    body.write(b"ctorch._utils\n_rebuild_tensor_v2\n(")
    body.write(
        b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
    )
    body.write(pickle.dumps(numel, protocol=2)[2:-1] + b"tQ")
    for value in (offset, tuple(size), tuple(stride)):
        body.write(pickle.dumps(value, protocol=2)[2:-1])
    body.write(b"\x89ccollections\nOrderedDict\n)RtRu.")
    return body.getvalue()


def _zip(pickled: bytes, storage: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pickled)
        zf.writestr("archive/data/0", storage)
    return buffer.getvalue()


def test_the_pickle_builder_makes_a_valid_file(tmp_path):
    path = tmp_path / "ok.pt"
    path.write_bytes(
        _zip(_pickle_with_storage(6, (2, 3), (3, 1)), np.arange(6.0, dtype="<f4").tobytes())
    )
    record = PyTorchFileRecorder().load(path)
    np.testing.assert_array_equal(record.tensors["w"][1].read(), np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize(
    "numel,size,stride,offset,message",
    [
        (1 << 40, (1 << 20, 1 << 20), (1 << 20, 1), 0, "declares 1099511627776 elements"),
        (6, (1 << 30, 1 << 30), (1, 1), 0, "reads element"),
        (6, (2, 3), (3, 1), 1 << 50, "reads element"),
        (6, (2, 3), (3, -1), 0, "malformed tensor geometry"),
        (6, (2, 3, 4), (3, 1), 0, "malformed tensor geometry"),
    ],
)
def test_huge_or_inconsistent_declared_sizes(tmp_path, numel, size, stride, offset, message):
    path = tmp_path / "huge.pt"
    path.write_bytes(
        _zip(_pickle_with_storage(numel, size, stride, offset), np.zeros(6, "<f4").tobytes())
    )
    tracemalloc.start()
    try:
        with pytest.raises(BurnError, match=message):
            load_everything(path)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < SLACK


def test_legacy_storage_count_larger_than_the_file(tmp_path):
    header = b"".join(pickle.dumps(v, protocol=2) for v in (MAGIC, 1001, {"little_endian": True}))
    obj = _pickle_with_storage(6, (2, 3), (3, 1))
    raw = header + obj + pickle.dumps(["0"], protocol=2) + struct.pack("<q", 1 << 60) + b"\0" * 24
    path = tmp_path / "legacy.pt"
    path.write_bytes(raw)
    with pytest.raises(BurnError, match="declares 1152921504606846976 elements"):
        load_everything(path)


def _safetensors(header: dict, data: bytes, header_len: int | None = None) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text) if header_len is None else header_len) + text + data


@pytest.mark.parametrize(
    "raw",
    [
        _safetensors(
            {"w": {"dtype": "F32", "shape": [1 << 30, 1 << 30], "data_offsets": [0, 8]}}, b"\0" * 8
        ),
        _safetensors(
            {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 1 << 40]}}, b"\0" * 8
        ),
        _safetensors(
            {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8, 1 << 60
        ),
        _safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4),
        _safetensors({"w": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
        b"\x05\x00",
    ],
)
def test_safetensors_huge_or_inconsistent_headers(tmp_path, raw):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    check_load(path)
    with pytest.raises(BurnError):
        load_everything(path)


# ---------------------------------------------------------------------------- pickle bombs
def _shared_dag(levels: int):
    node: dict = {}
    for _ in range(levels):
        node = {"a": node, "b": node}  # 2**levels paths through `levels` dicts
    return node


def _self_containing():
    items: list = []
    items.append(items)
    return {"w": items}


def _deep(levels: int):
    node: list = []
    for _ in range(levels):
        node = [node]
    return {"w": node}


@pytest.mark.parametrize(
    "payload,message",
    [
        (b"\x80\x02N\x72\x00\x00\x00\x04.", "memo index 67108864"),  # LONG_BINPUT 2**26
        (b"\x80\x02Np99999999\n.", "memo index 99999999"),
        (pickle.dumps(_shared_dag(60), protocol=2), "nests or repeats"),
        (pickle.dumps(_self_containing(), protocol=2), "contains itself"),
        (pickle.dumps(_deep(300), protocol=2), "nests or repeats"),
    ],
    ids=["long-binput", "put", "shared-dag", "self-containing", "deep"],
)
def test_pickle_bombs_are_refused_quickly(tmp_path, payload, message):
    path = tmp_path / "bomb.pt"
    path.write_bytes(_zip(payload, b""))
    tracemalloc.start()
    try:
        with pytest.raises(BurnError, match=message):
            load_everything(path)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < SLACK
