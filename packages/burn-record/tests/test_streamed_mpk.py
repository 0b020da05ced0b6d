"""The streamed MessagePack writer and the mapped reader keep the bytes and the checks."""

import msgpack
import numpy as np
import pytest
from burn.record import NamedMpkBytesRecorder, NamedMpkFileRecorder, ParamRecord, RecordError
from burn.tensor import TensorData


def _record():
    rng = np.random.default_rng(3)
    return {
        "big": ParamRecord("a", TensorData(rng.standard_normal((300, 70), dtype=np.float32))),
        "small": ParamRecord("b", TensorData(np.arange(5, dtype=np.float32))),
        "wide": TensorData(np.arange(70_000, dtype=np.int64)[::2].reshape(5, 7000)),
        "transposed": TensorData(np.arange(20_000, dtype=np.float64).reshape(100, 200).T),
        "count": 3,
        "rate": 0.5,
        "name": "x",
        "items": [None, True, (1, 2)],
    }


def test_streamed_bytes_equal_msgpack_packb():
    recorder = NamedMpkFileRecorder()
    tree = {
        "metadata": recorder.metadata(),
        "item": {
            "big": {"id": "a", "param": None},
            "small": {"id": "b", "param": None},
            "wide": None,
            "transposed": None,
            "count": 3,
            "rate": 0.5,
            "name": "x",
            "items": [None, True, [1, 2]],
        },
        "_b": [],
    }
    record = _record()
    for key in ("big", "small"):
        data = record[key].data
        tree["item"][key]["param"] = {
            "bytes": data.bytes,
            "shape": list(data.shape),
            "dtype": "F32",
        }
    for key, dtype in (("wide", "I32"), ("transposed", "F32")):  # the settings' dtypes
        data = recorder.settings.apply(record[key])
        tree["item"][key] = {"bytes": data.bytes, "shape": list(data.shape), "dtype": dtype}
    chunks = recorder.encode(record)
    assert any(isinstance(c, memoryview) for c in chunks)  # large payloads are not copied
    assert b"".join(chunks) == msgpack.packb(tree, use_bin_type=True)


def test_mapped_load_gives_independent_arrays(tmp_path):
    recorder = NamedMpkFileRecorder()
    path = recorder.record(_record(), tmp_path / "m")
    loaded = recorder.load(path)
    path.unlink()  # nothing loaded points into the closed map of the file
    np.testing.assert_array_equal(loaded["big"].data.array, _record()["big"].data.array)
    np.testing.assert_array_equal(loaded["transposed"].array, _record()["transposed"].array)
    back = NamedMpkBytesRecorder().load(NamedMpkBytesRecorder().record(_record()))
    np.testing.assert_array_equal(back["wide"].array, _record()["wide"].array)


def test_mapped_load_refuses_truncated_and_empty_files(tmp_path):
    recorder = NamedMpkFileRecorder()
    path = recorder.record(_record(), tmp_path / "m")
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(RecordError, match="m.mpk"):
        recorder.load(path)
    path.write_bytes(b"")
    with pytest.raises(RecordError, match="m.mpk"):
        recorder.load(path)
    assert path.read_bytes() == b""


def test_mapped_load_respects_the_size_limit(tmp_path, monkeypatch):
    recorder = NamedMpkFileRecorder()
    path = recorder.record(_record(), tmp_path / "m")
    monkeypatch.setenv("BURN_RECORD_MAX_BYTES", "1000")
    with pytest.raises(RecordError, match="over the limit"):
        recorder.load(path)
