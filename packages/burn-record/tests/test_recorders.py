"""Round trips, precision, extensions, atomic writes and bad input for every recorder."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from burn.record import (
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    CompactRecorder,
    DefaultRecorder,
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    ParamRecord,
    PrettyJsonFileRecorder,
    RecordError,
    RecordNotFoundError,
    SensitiveCompactRecorder,
    Some,
)
from burn.tensor import BurnError, DType, TensorData

FILE_RECORDERS = [
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    PrettyJsonFileRecorder,
    JsonGzFileRecorder,
]
BYTES_RECORDERS = [NamedMpkBytesRecorder, BinBytesRecorder]
SETTINGS = [FullPrecisionSettings, HalfPrecisionSettings, DoublePrecisionSettings]
EXTENSIONS = {
    NamedMpkFileRecorder: "mpk",
    NamedMpkGzFileRecorder: "mpk.gz",
    BinFileRecorder: "bin",
    BinGzFileRecorder: "bin.gz",
    PrettyJsonFileRecorder: "json",
    JsonGzFileRecorder: "json.gz",
}


def make_record(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "encoder": {
            "layers": [
                {
                    "weight": ParamRecord(
                        f"w{i}", TensorData(rng.standard_normal((3, 4)).astype(np.float32))
                    ),
                    "bias": Some(
                        ParamRecord(f"b{i}", TensorData(rng.standard_normal(4).astype(np.float32)))
                    ),
                    "d_in": None,
                }
                for i in range(2)
            ],
        },
        "steps": ParamRecord("steps", TensorData(np.arange(5, dtype=np.int64))),
        "mask": ParamRecord("mask", TensorData(np.array([True, False, True]))),
        "kernel": (None, None),
        "norm": None,
    }


def schema_of(record):
    if isinstance(record, ParamRecord):
        return ParamRecord(record.id, None)
    if isinstance(record, Some):
        return Some(schema_of(record.value))
    if isinstance(record, dict):
        return {k: schema_of(v) for k, v in record.items()}
    if isinstance(record, list):
        return [schema_of(v) for v in record]
    if isinstance(record, tuple):
        return tuple(schema_of(v) for v in record)
    return record


def flat(node, path=""):
    """path -> TensorData of every parameter, ignoring Some wrappers."""
    if isinstance(node, Some):
        node = node.value
    if isinstance(node, ParamRecord):
        return {path: (node.id, node.data)}
    out = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(flat(v, f"{path}.{k}"))
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            out.update(flat(v, f"{path}.{i}"))
    return out


def check_same(original, loaded, settings):
    a, b = flat(original), flat(loaded)
    assert a.keys() == b.keys()
    for path, (pid, data) in a.items():
        lid, ldata = b[path]
        assert lid == pid
        assert ldata.shape == data.shape
        if data.dtype.is_float:
            assert ldata.dtype is settings.float, path
            if settings is HalfPrecisionSettings:
                # within f16 rounding: relative 2^-11
                np.testing.assert_allclose(
                    ldata.array.astype(np.float64), data.array, rtol=1e-3, atol=1e-4
                )
            else:
                np.testing.assert_array_equal(ldata.array.astype(np.float32), data.array)
        elif data.dtype.is_int:
            assert ldata.dtype is settings.int, path
            np.testing.assert_array_equal(ldata.array, data.array)
        else:
            assert ldata.dtype is DType.BOOL
            np.testing.assert_array_equal(ldata.array, data.array)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda r: r.__name__)
def test_file_round_trip(tmp_path, recorder_cls, settings):
    record = make_record()
    recorder = recorder_cls(settings)
    path = recorder.record(record, tmp_path / "model")
    assert path.name == f"model.{EXTENSIONS[recorder_cls]}"
    loaded = recorder.load(tmp_path / "model", schema_of(record))
    check_same(record, loaded, settings)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: s.__name__)
@pytest.mark.parametrize("recorder_cls", BYTES_RECORDERS, ids=lambda r: r.__name__)
def test_bytes_round_trip(recorder_cls, settings):
    record = make_record()
    recorder = recorder_cls(settings())  # an instance of the settings works too
    raw = recorder.record(record)
    assert isinstance(raw, bytes)
    check_same(record, recorder.load(raw, schema_of(record)), settings)


def test_full_precision_keeps_f32_bits_exactly(tmp_path):
    values = np.array([np.pi, 1e-38, -3.4e38, np.nan, np.inf], np.float32)
    record = {"w": ParamRecord("w", TensorData(values))}
    for cls in FILE_RECORDERS:
        rec = cls(FullPrecisionSettings)
        loaded = rec.load(rec.record(record, tmp_path / "x"), schema_of(record))
        assert loaded["w"].data.array.tobytes() == values.tobytes(), cls.__name__


def test_aliases_pick_their_recorder_and_precision():
    assert isinstance(DefaultRecorder(), NamedMpkFileRecorder)
    assert DefaultRecorder().settings is FullPrecisionSettings
    assert isinstance(CompactRecorder(), NamedMpkFileRecorder)
    assert CompactRecorder().settings is HalfPrecisionSettings
    assert isinstance(SensitiveCompactRecorder(), BinGzFileRecorder)
    assert SensitiveCompactRecorder().settings is HalfPrecisionSettings
    assert (
        "NamedMpkFileRecorder<burn_core::record::settings::HalfPrecisionSettings>"
        in (CompactRecorder().metadata()["format"])
    )


def test_extension_is_not_doubled(tmp_path):
    rec = NamedMpkGzFileRecorder()
    assert rec.record(make_record(), tmp_path / "m.mpk.gz").name == "m.mpk.gz"
    assert rec.file_path(tmp_path / "m").name == "m.mpk.gz"


def test_overwrite_replaces_atomically(tmp_path):
    rec = NamedMpkFileRecorder()
    rec.record(make_record(0), tmp_path / "m")
    rec.record(make_record(1), tmp_path / "m")
    check_same(make_record(1), rec.load(tmp_path / "m"), FullPrecisionSettings)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mpk"]


# ------------------------------------------------------------------------------ bad input
def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(RecordNotFoundError, match="nothing.mpk"):
        NamedMpkFileRecorder().load(tmp_path / "nothing")


def test_missing_file_hints_at_another_recorder(tmp_path):
    BinFileRecorder().record(make_record(), tmp_path / "m")
    with pytest.raises(RecordNotFoundError, match="another recorder"):
        NamedMpkFileRecorder().load(tmp_path / "m.bin")


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda r: r.__name__)
def test_truncated_file_is_a_record_error(tmp_path, recorder_cls):
    rec = recorder_cls()
    record = make_record()
    path = rec.record(record, tmp_path / "m")
    raw = path.read_bytes()
    for cut in (len(raw) // 2, len(raw) - 3, 5):
        path.write_bytes(raw[:cut])
        with pytest.raises(RecordError, match=str(path.name)):
            rec.load(path, schema_of(record))


@pytest.mark.parametrize("recorder_cls", FILE_RECORDERS, ids=lambda r: r.__name__)
def test_random_bytes_are_a_record_error(tmp_path, recorder_cls):
    rec = recorder_cls()
    path = rec.file_path(tmp_path / "m")
    rng = np.random.default_rng(7)
    for size in (0, 1, 17, 4096):
        path.write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        with pytest.raises(BurnError) as info:
            rec.load(path, schema_of(make_record()))
        assert isinstance(info.value, RecordError)
        assert path.name in str(info.value)


def test_json_given_to_the_messagepack_recorder_says_so(tmp_path):
    path = PrettyJsonFileRecorder().record(make_record(), tmp_path / "m")
    target = tmp_path / "m.mpk"
    target.write_bytes(path.read_bytes())
    with pytest.raises(RecordError, match="looks JSON: use PrettyJsonFileRecorder"):
        NamedMpkFileRecorder().load(target)


def test_gzip_given_to_a_plain_recorder_says_so(tmp_path):
    path = NamedMpkGzFileRecorder().record(make_record(), tmp_path / "m")
    target = tmp_path / "m.mpk"
    target.write_bytes(path.read_bytes())
    with pytest.raises(RecordError, match="gzip"):
        NamedMpkFileRecorder().load(target)


def test_messagepack_given_to_the_bincode_recorder_says_so(tmp_path):
    path = NamedMpkFileRecorder().record(make_record(), tmp_path / "m")
    target = tmp_path / "m.bin"
    target.write_bytes(path.read_bytes())
    with pytest.raises(RecordError, match="named MessagePack"):
        BinFileRecorder().load(target, schema_of(make_record()))


def test_bincode_needs_a_schema(tmp_path):
    BinFileRecorder().record(make_record(), tmp_path / "m")
    with pytest.raises(RecordError, match="no field names"):
        BinFileRecorder().load(tmp_path / "m")


def test_bincode_with_another_structure_is_a_record_error():
    record = make_record()
    raw = BinBytesRecorder().record(record)
    schema = schema_of(record)
    schema["encoder"]["layers"][0]["bias"] = None  # the module has no bias where the file has one
    with pytest.raises(RecordError, match="encoder.layers.0.bias"):
        BinBytesRecorder().load(raw, schema)


def test_tensor_bytes_that_do_not_fit_the_shape(tmp_path):
    rec = PrettyJsonFileRecorder()
    path = rec.record(
        {"w": ParamRecord("w", TensorData(np.zeros((2, 2), np.float32)))}, tmp_path / "m"
    )
    tree = json.loads(path.read_text())
    tree["item"]["w"]["param"]["shape"] = [3, 2]
    path.write_text(json.dumps(tree))
    with pytest.raises(RecordError, match=r"shape \[3, 2\].*needs 24 bytes.*holds 16"):
        rec.load(path)


def test_records_of_burn_before_0_14_are_refused(tmp_path):
    rec = PrettyJsonFileRecorder()
    path = rec.record({"w": ParamRecord("w", TensorData(np.zeros(2, np.float32)))}, tmp_path / "m")
    tree = json.loads(path.read_text())
    tree["metadata"]["version"] = "0.13.2"
    path.write_text(json.dumps(tree))
    with pytest.raises(RecordError, match="version '0.13.2' is not supported.*0.14 to 0.21"):
        rec.load(path)


def test_unsupported_dtype_is_named(tmp_path):
    rec = PrettyJsonFileRecorder()
    path = rec.record({"w": ParamRecord("w", TensorData(np.zeros(2, np.float32)))}, tmp_path / "m")
    tree = json.loads(path.read_text())
    tree["item"]["w"]["param"]["dtype"] = "U32"
    path.write_text(json.dumps(tree))
    with pytest.raises(RecordError, match="U32"):
        rec.load(path)


def test_loading_never_builds_objects_named_by_the_file(tmp_path):
    # A msgpack ext type (what an object-reviving format would use) is refused, never revived.
    import msgpack

    raw = msgpack.packb(
        {
            "metadata": NamedMpkFileRecorder().metadata(),
            "item": {"x": msgpack.ExtType(1, b"os.system")},
        },
        use_bin_type=True,
    )
    with pytest.raises(RecordError, match=r"item\.x: a value of type ExtType is not record data"):
        NamedMpkBytesRecorder().load(raw)


def test_gzip_layouts_are_real_gzip(tmp_path):
    path = NamedMpkGzFileRecorder().record(make_record(), tmp_path / "m")
    assert gzip.decompress(path.read_bytes())[:1] == b"\x83"


# ------------------------------------------------------------------------------ crash safety
CHILD = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    from burn.record import NamedMpkFileRecorder, ParamRecord
    from burn.tensor import TensorData

    real_fsync = os.fsync
    def slow_fsync(fd):  # the data is written; stall before the rename, then get killed
        print("writing", flush=True)
        time.sleep(60)
    os.fsync = slow_fsync
    values = np.full((256, 1024), 2.0, np.float32)
    NamedMpkFileRecorder().record({"w": ParamRecord("w", TensorData(values))}, sys.argv[1])
    """
)


def test_a_save_killed_mid_write_leaves_the_previous_file(tmp_path):
    rec = NamedMpkFileRecorder()
    old = {"w": ParamRecord("w", TensorData(np.ones((256, 1024), np.float32)))}
    path = rec.record(old, tmp_path / "model")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "model")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "writing"
        temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert temps and temps[0].stat().st_size > 0  # the new file was part-way
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    loaded = rec.load(path)
    np.testing.assert_array_equal(loaded["w"].data.array, 1.0)


def test_atomic_write_removes_its_temp_file_on_error(tmp_path):
    from burn.record import atomic_write

    def chunks():
        yield b"partial"
        raise RuntimeError("disk full")

    (tmp_path / "f").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        atomic_write(tmp_path / "f", chunks())
    assert (tmp_path / "f").read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]
