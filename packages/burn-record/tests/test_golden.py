"""Records written by Rust Burn decode here and re-encode to the same bytes (see fixtures/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from burn.record import (
    BinBytesRecorder,
    BinFileRecorder,
    CompactRecorder,
    FullPrecisionSettings,
    NamedMpkFileRecorder,
    ParamRecord,
    Some,
)
from burn.tensor import DType

FIXTURES = Path(__file__).parent / "fixtures"
MPK = FIXTURES / "burn-0.17-modern-lstm-compact.mpk"
BIN = FIXTURES / "burn-0.14-mnist-inference-web.bin"


def test_rust_mpk_metadata_is_burns():
    meta = CompactRecorder().load_metadata(MPK.read_bytes())
    assert meta == {
        "float": "half::binary16::f16",
        "int": "i16",
        "format": "burn_core::record::file::NamedMpkFileRecorder"
        "<burn_core::record::settings::HalfPrecisionSettings>",
        "version": "0.17.0",
        "settings": "HalfPrecisionSettings",
    }


def test_our_metadata_matches_the_rust_header():
    ours = CompactRecorder(burn_version="0.17.0").metadata()
    assert ours == CompactRecorder().load_metadata(MPK.read_bytes())


def test_rust_mpk_decodes():
    record = CompactRecorder().load(MPK)
    assert list(record) == ["stacked_lstm", "reverse_lstm", "dropout", "fc"]
    layer = record["stacked_lstm"]["layers"][0]
    weight = layer["weight_hh"]["weight"]
    assert isinstance(weight, ParamRecord)
    assert len(weight.id) == 13
    assert weight.data.shape == [32, 128]
    assert weight.data.dtype is DType.F16
    assert np.isfinite(weight.data.array).all()
    assert layer["hidden_size"] is None  # a usize field: a constant
    assert record["dropout"] is None  # a constant module


def test_rust_mpk_reencodes_byte_for_byte():
    raw = MPK.read_bytes()
    recorder = CompactRecorder(burn_version="0.17.0")
    record = recorder.decode(raw, None, MPK.name)
    assert b"".join(recorder.encode(record)) == raw


def _conv_block():
    def p():
        return ParamRecord("", None)

    conv = {
        "weight": p(),
        "bias": Some(p()),
        "stride": (None, None),
        "kernel_size": (None, None),
        "dilation": (None, None),
        "groups": None,
        "padding": None,
    }
    norm = {
        "gamma": p(),
        "beta": p(),
        "running_mean": p(),
        "running_var": p(),
        "momentum": None,
        "epsilon": None,
    }
    return {"conv": conv, "norm": norm, "activation": None}


# The Rust `Model` of Burn's mnist-inference-web example at v0.14: bincode has no field names.
BIN_SCHEMA = {
    "conv1": _conv_block(),
    "conv2": _conv_block(),
    "conv3": _conv_block(),
    "dropout": None,
    "fc1": {"weight": ParamRecord("", None), "bias": None},
    "fc2": {"weight": ParamRecord("", None), "bias": None},
    "activation": None,
}


def test_rust_bin_decodes_with_the_module_structure():
    record = BinBytesRecorder(FullPrecisionSettings).load(BIN.read_bytes(), BIN_SCHEMA)
    conv = record["conv1"]["conv"]
    assert conv["weight"].data.shape == [8, 1, 3, 3]
    assert isinstance(conv["bias"], Some) and conv["bias"].value.data.shape == [8]
    assert record["fc1"]["weight"].data.shape == [24 * 22 * 22, 32]
    assert record["fc2"]["weight"].data.shape == [32, 10]
    # Burn 0.14 still wrote UUID parameter ids.
    assert conv["weight"].id == "30b82c23-788d-4d63-a743-ada258d5f13c"
    assert (record["conv1"]["norm"]["running_var"].data.array > 0).all()


def test_rust_bin_reencodes_byte_for_byte():
    raw = BIN.read_bytes()
    record = BinFileRecorder(FullPrecisionSettings).load(BIN, BIN_SCHEMA)
    recorder = BinFileRecorder(FullPrecisionSettings, burn_version="0.14.0")
    assert b"".join(recorder.encode(record)) == raw


def test_rust_bin_with_a_wrong_structure_is_a_record_error():
    from burn.record import RecordError

    block = _conv_block()
    block["conv"]["bias"] = None  # a module without the bias the file holds
    schema = dict(BIN_SCHEMA, conv1=block)
    with pytest.raises(RecordError, match="item.conv1.conv.bias holds a value"):
        BinFileRecorder().load(BIN, schema)


def test_named_mpk_ignores_the_bincode_version_question():
    # Named layouts carry dtype names, so the same bytes serve every supported version.
    record = CompactRecorder().load(MPK)
    a = b"".join(NamedMpkFileRecorder(burn_version="0.14.0").encode(record))
    b = b"".join(NamedMpkFileRecorder(burn_version="0.14.0").encode(record))
    assert a == b
