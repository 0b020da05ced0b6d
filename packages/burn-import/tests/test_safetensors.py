"""burn.safetensors: loading PyTorch's files, saving in PyTorch's layout or ours, round trips."""

from __future__ import annotations

import numpy as np
import pytest
from burn.pytorch import LoadArgs, PyTorchFileRecorder
from burn.record import HalfPrecisionSettings, RecordError
from burn.safetensors import SafetensorsError, SafetensorsFileRecorder, save_safetensors
from burn_import_reference import EXPECTED, FIXTURES, CnnBn, expected_of, predict
from safetensors import safe_open
from safetensors.numpy import load_file

TORCH_STATE = {
    k.removeprefix("state_dict."): v
    for k, v in expected_of("cnn_checkpoint.pt").items()
    if k.startswith("state_dict.")
}


def _from_torch() -> CnnBn:
    args = LoadArgs(FIXTURES / "cnn_checkpoint.pt").with_top_level_key("state_dict")
    return CnnBn().load_record(PyTorchFileRecorder().load(args))


def test_a_file_written_by_torch_loads_and_predicts_the_same():
    model = CnnBn().load_record(SafetensorsFileRecorder().load(FIXTURES / "cnn.safetensors"))
    got, want = predict(model)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_save_in_pytorchs_layout_gives_torchs_names_and_values(tmp_path):
    path = save_safetensors(_from_torch(), tmp_path / "m.safetensors")
    saved = load_file(path)
    expected = {k: v for k, v in TORCH_STATE.items() if not k.endswith("num_batches_tracked")}
    assert sorted(saved) == sorted(expected)
    for key, value in expected.items():
        assert saved[key].tobytes() == value.tobytes(), key


def test_round_trip_pytorch_ours_pytorch_is_identical(tmp_path):
    ours = save_safetensors(_from_torch(), tmp_path / "ours.safetensors", adapt_to_pytorch=False)
    with safe_open(str(ours), "numpy") as f:
        assert "norm.gamma" in f.keys() and "norm.weight" not in f.keys()
        assert f.get_slice("fc.weight").get_shape() == [3, 4]  # our [d_input, d_output]
    reloaded = CnnBn().load_record(
        SafetensorsFileRecorder(adapt_from_pytorch=False).load(LoadArgs(ours))
    )
    back = load_file(save_safetensors(reloaded, tmp_path / "back.safetensors"))
    for key, value in back.items():
        assert value.tobytes() == TORCH_STATE[key].tobytes(), key


def test_round_trip_through_torch_itself(tmp_path):
    """torch's own load_state_dict (strict) takes the file, and predicts as the fixture says."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load_file

    class TorchCnnBn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3)
            self.norm = torch.nn.BatchNorm2d(3)
            self.fc = torch.nn.Linear(3, 4)

        def forward(self, x):
            return self.fc(torch.relu(self.norm(self.conv(x))).mean((2, 3)))

    path = save_safetensors(_from_torch(), tmp_path / "m.safetensors")
    net = TorchCnnBn()
    net.load_state_dict(torch_load_file(path), strict=True)
    net.eval()
    for key, tensor in net.state_dict().items():
        if not key.endswith("num_batches_tracked"):
            np.testing.assert_array_equal(tensor.numpy(), TORCH_STATE[key])
    with torch.no_grad():
        out = net(torch.from_numpy(EXPECTED["cnn/input"])).numpy()
    np.testing.assert_allclose(out, EXPECTED["cnn/output"], rtol=1e-6, atol=1e-6)


def test_precision_settings_on_save(tmp_path):
    path = save_safetensors(
        _from_torch(), tmp_path / "h.safetensors", settings=HalfPrecisionSettings
    )
    saved = load_file(path)
    assert saved["fc.weight"].dtype == np.float16
    np.testing.assert_allclose(saved["fc.weight"], TORCH_STATE["fc.weight"], rtol=1e-3, atol=1e-3)
    model = CnnBn().load_record(SafetensorsFileRecorder().load(path))
    got, want = predict(model)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_metadata_is_kept(tmp_path):
    path = save_safetensors(_from_torch(), tmp_path / "m.safetensors", metadata={"epoch": "3"})
    with safe_open(str(path), "numpy") as f:
        assert f.metadata() == {"epoch": "3"}


def test_load_args_apply_to_safetensors(tmp_path, capsys):
    path = save_safetensors(_from_torch(), tmp_path / "m.safetensors")
    args = LoadArgs(path).with_key_remap(r"^norm\.", "bn.").with_debug_print()
    with pytest.raises(RecordError, match=r"lacks 4 parameter.*'norm.weight'.*'bn.weight'"):
        CnnBn().load_record(SafetensorsFileRecorder().load(args))
    assert "norm.weight -> bn.weight  [3] f32" in capsys.readouterr().out
    partial = CnnBn().load_record(SafetensorsFileRecorder().load(args.with_partial()))
    np.testing.assert_array_equal(
        partial.fc.bias.val().to_data().as_array(), TORCH_STATE["fc.bias"]
    )
    with pytest.raises(RecordError, match="flat"):
        SafetensorsFileRecorder().load(LoadArgs(path).with_top_level_key("state_dict"))


def test_a_failed_save_keeps_the_previous_file(tmp_path, monkeypatch):
    import safetensors.numpy

    path = save_safetensors(_from_torch(), tmp_path / "m.safetensors")
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise ValueError("disk on fire")

    monkeypatch.setattr(safetensors.numpy, "save", broken)
    with pytest.raises(SafetensorsError, match="disk on fire"):
        save_safetensors(CnnBn(), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]
    assert EXPECTED


def test_damaged_file_is_a_burn_error(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    with pytest.raises(SafetensorsError, match="not a valid safetensors file"):
        SafetensorsFileRecorder().load(path)
