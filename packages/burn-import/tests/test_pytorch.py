"""burn.pytorch against the values torch itself reads from the committed fixtures.

The fixtures and `expected.npz` come from tools/gen_pytorch_fixtures.py (run with torch).
"""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from burn.module import Module
from burn.nn import Conv1dConfig, LayerNormConfig, LinearConfig
from burn.pytorch import LoadArgs, PyTorchFileError, PyTorchFileRecorder, config_from_file
from burn.pytorch.reader import read_file
from burn.pytorch.recorder import flatten_tensors
from burn.record import (
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    RecordError,
    RecordNotFoundError,
)
from burn.tensor import DType, TensorData
from burn_import_reference import FIXTURES, CnnBn, expected_of, predict


def read_all(name: str) -> dict[str, np.ndarray]:
    return {k: t.read() for k, t in flatten_tensors(read_file(FIXTURES / name), name).items()}


@pytest.mark.parametrize(
    "name",
    [
        "dtypes.pt",
        "dtypes_legacy.pt",
        "views.pt",
        "views_legacy.pt",
        "nested.pt",
        "cnn_checkpoint.pt",
        "cnn_legacy.pt",
        "parameters.pt",
    ],
)
def test_values_match_torch_exactly(name):
    ours = read_all(name)
    theirs = expected_of(name)
    assert sorted(ours) == sorted(theirs)
    for key, want in theirs.items():
        got = ours[key]
        assert got.dtype == want.dtype, key
        assert got.shape == want.shape, key
        assert got.tobytes() == want.tobytes(), key  # bit for bit (NaN-free, signed zeros kept)


def test_every_dtype_is_modelled():
    dtypes = {k: t.dtype for k, t in flatten_tensors(read_file(FIXTURES / "dtypes.pt"), "").items()}
    assert dtypes["bf16"] is DType.BF16 and dtypes["f16"] is DType.F16
    assert dtypes["i8"] is DType.I8 and dtypes["u8"] is DType.U8 and dtypes["bool"] is DType.BOOL
    assert dtypes["i64"] is DType.I64 and dtypes["f64"] is DType.F64


def test_views_share_one_storage_read():
    tree = read_file(FIXTURES / "views.pt")
    assert tree["base"].storage is tree["transposed"].storage is tree["strided"].storage
    assert tree["offset_row"].offset == 12 and tree["transposed"].stride == (1, 6)


# ---------------------------------------------------------------------------- modules
def test_cnn_with_batchnorm_predicts_as_torch():
    args = LoadArgs(FIXTURES / "cnn_checkpoint.pt").with_top_level_key("state_dict")
    model = CnnBn().load_record(PyTorchFileRecorder(FullPrecisionSettings).load(args))
    got, want = predict(model)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    state = expected_of("cnn_checkpoint.pt")
    np.testing.assert_array_equal(
        model.fc.weight.val().to_data().as_array(), state["state_dict.fc.weight"].T
    )
    np.testing.assert_array_equal(
        model.norm.running_var.val().to_data().as_array(), state["state_dict.norm.running_var"]
    )
    np.testing.assert_array_equal(
        model.norm.gamma.val().to_data().as_array(), state["state_dict.norm.weight"]
    )


def test_legacy_file_loads_the_same_model():
    model = CnnBn().load_record(PyTorchFileRecorder().load(LoadArgs(FIXTURES / "cnn_legacy.pt")))
    got, want = predict(model)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_parameter_ids_are_the_modules_own():
    model = CnnBn()
    loaded = model.load_record(PyTorchFileRecorder().load(FIXTURES / "cnn_legacy.pt"))
    assert [p.id for p in loaded.params()] == [p.id for p in model.params()]


def test_precision_settings_convert_values():
    args = LoadArgs(FIXTURES / "dtypes.pt")
    tensors = flatten_tensors(read_file(args.path), "")
    for settings, ftype, itype in (
        (HalfPrecisionSettings, DType.F16, DType.I16),
        (DoublePrecisionSettings, DType.F64, DType.I64),
        (FullPrecisionSettings, DType.F32, DType.I32),
    ):
        for key in ("f64", "bf16", "i64", "u8"):
            data = settings.apply(TensorData(tensors[key].read()))
            assert data.dtype is (ftype if key in ("f64", "bf16") else itype)


class WithBlock(Module):
    """An enum-like field: the block is a conv or a linear, chosen by the config."""

    def __init__(self, use_conv: bool):
        self.block = Conv1dConfig(2, 2, 1).init() if use_conv else LinearConfig(2, 2).init()
        self.norm = LayerNormConfig(2).init()


@pytest.mark.parametrize("use_conv,name", [(True, "enum_conv.pt"), (False, "enum_linear.pt")])
def test_enum_like_fields_load_whichever_variant(use_conv, name):
    model = WithBlock(use_conv).load_record(PyTorchFileRecorder().load(FIXTURES / name))
    state = expected_of(name)
    weight = model.block.weight.val().to_data().as_array()
    want = state["block.weight"] if use_conv else state["block.weight"].T
    np.testing.assert_array_equal(weight, want)
    np.testing.assert_array_equal(model.norm.gamma.val().to_data().as_array(), state["norm.weight"])


def test_the_wrong_variant_names_the_shapes():
    with pytest.raises(RecordError, match=r"'block.weight' has shape \[2, 2, 1\]"):
        WithBlock(False).load_record(PyTorchFileRecorder().load(FIXTURES / "enum_conv.pt"))


def test_missing_and_unused_keys_are_reported_together():
    args = LoadArgs(FIXTURES / "cnn_legacy.pt").with_key_remap(r"^fc\.", "head.")
    with pytest.raises(RecordError) as err:
        CnnBn().load_record(PyTorchFileRecorder().load(args))
    text = str(err.value)
    assert "'fc.weight'" in text and "'head.weight'" in text and "with_partial" in text


def test_partial_loading_keeps_the_modules_values():
    args = LoadArgs(FIXTURES / "cnn_legacy.pt").with_key_remap(r"^fc\.", "head.").with_partial()
    model = CnnBn()
    before = model.fc.weight.val().to_data().as_array()
    loaded = model.load_record(PyTorchFileRecorder().load(args))
    np.testing.assert_array_equal(loaded.fc.weight.val().to_data().as_array(), before)
    state = expected_of("cnn_legacy.pt")
    np.testing.assert_array_equal(loaded.conv.bias.val().to_data().as_array(), state["conv.bias"])


def test_key_remaps_apply_in_order_and_debug_print_shows_both(capsys):
    args = (
        LoadArgs(FIXTURES / "cnn_legacy.pt")
        .with_key_remap(r"^conv\.", "features.conv.")
        .with_key_remap(r"^features\.", "")
        .with_debug_print()
    )
    CnnBn().load_record(PyTorchFileRecorder().load(args))
    out = capsys.readouterr().out
    assert "conv.weight  [3, 2, 3, 3] f32" in out
    assert "norm.num_batches_tracked  [] i64" in out


def test_remap_collisions_are_errors():
    args = LoadArgs(FIXTURES / "cnn_legacy.pt").with_key_remap(r"\.(weight|bias)$", ".x")
    with pytest.raises(RecordError, match="both remap"):
        PyTorchFileRecorder().load(args)


def test_top_level_key_errors_name_the_keys():
    with pytest.raises(RecordError, match=r"no top-level key 'model'.*state_dict"):
        PyTorchFileRecorder().load(
            LoadArgs(FIXTURES / "cnn_checkpoint.pt").with_top_level_key("model")
        )


def test_config_from_file():
    config = config_from_file(FIXTURES / "cnn_checkpoint.pt", "config")
    assert config == {"channels": 3, "classes": 4, "name": "cnn", "dropout": 0.25}


def test_missing_file_and_other_files():
    with pytest.raises(RecordNotFoundError):
        PyTorchFileRecorder().load(FIXTURES / "absent.pt")
    with pytest.raises(PyTorchFileError, match="PyTorch file"):
        PyTorchFileRecorder().load(FIXTURES / "expected.npz")
    with pytest.raises(PyTorchFileError, match="not a PyTorch file"):
        PyTorchFileRecorder().load(FIXTURES / "cnn.safetensors")


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_fresh_files_written_by_torch(tmp_path, legacy):
    """With torch installed: random views of every dtype, saved now, read back bit for bit."""
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(1)
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]
    dtypes += [torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
    state = {}
    for i in range(30):
        dtype = dtypes[i % len(dtypes)]
        shape = torch.randint(1, 5, (int(torch.randint(1, 4, (1,), generator=gen)),), generator=gen)
        base = (torch.randn(*shape.tolist(), 3, generator=gen) * 50).to(dtype)
        view = base.transpose(0, -1) if i % 3 == 0 else base[..., 1:] if i % 3 == 1 else base
        state[f"group{i % 4}.t{i}"] = view
    path = tmp_path / "fresh.pt"
    torch.save({"state_dict": state}, path, _use_new_zipfile_serialization=not legacy)
    theirs = torch.load(path, weights_only=True)["state_dict"]
    record = PyTorchFileRecorder().load(LoadArgs(path).with_top_level_key("state_dict"))
    assert sorted(record.keys()) == sorted(theirs)
    for key, tensor in theirs.items():
        got = record.tensors[key][1].read()
        want = tensor.contiguous()
        if want.dtype == torch.bfloat16:
            assert got.view(np.int16).tobytes() == want.view(torch.int16).numpy().tobytes(), key
        else:
            assert got.tobytes() == want.numpy().tobytes() and got.shape == want.shape, key


def test_big_endian_archives(tmp_path):
    """A file saved on a big-endian machine: `byteorder` says so and the storages are swapped."""
    source = FIXTURES / "views.pt"
    path = tmp_path / "big.pt"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for info in old.infolist():
            raw = old.read(info)
            if info.filename.endswith("/byteorder"):
                raw = b"big"
            elif "/data/" in info.filename:
                raw = np.frombuffer(raw, "<f4").astype(">f4").tobytes()
            new.writestr(info.filename, raw)
    assert read_all("views.pt").keys() == expected_of("views.pt").keys()
    ours = {k: t.read() for k, t in flatten_tensors(read_file(path), "big").items()}
    for key, want in expected_of("views.pt").items():
        assert ours[key].dtype == np.float32 and ours[key].tobytes() == want.tobytes(), key
