"""burn.nn layers against PyTorch with the same weights, in float32 (fixtures from
tools/gen_nn_fixtures.py: nn_cases.json and nn_layers.npz), plus records, gradients and modes.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import burn.nn as nn
import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.config import is_config
from burn.module import Module
from burn.record import NamedMpkFileRecorder
from burn.tensor import Float, Tensor

FIXTURES = Path(__file__).parent / "fixtures"
CASES: dict[str, dict] = json.loads((FIXTURES / "nn_cases.json").read_text())
with np.load(FIXTURES / "nn_layers.npz") as _data:
    REF = dict(_data)

RTOL, ATOL = 1e-5, 1e-5
AD = Autodiff(NdArray)

# Every case but BatchNorm's training runs; `run` adapts the calls that are not forward(x).
PLAIN = [name for name, spec in CASES.items() if not spec.get("train")]


def arrays(case: str, kind: str, ref=REF) -> list[np.ndarray]:
    n = CASES_OF(ref)[case]["inputs" if kind == "in" else "outputs"]
    return [ref[f"{case}/{kind}/{i}"] for i in range(n)]


def CASES_OF(ref) -> dict:  # noqa: N802 - reads like the constant it stands in for
    return CASES if ref is REF else ref["__cases__"]


def tensor(value: np.ndarray, device) -> Tensor:
    """Float fixtures as f32; Int indices and Bool masks keep their kind."""
    if value.dtype in (np.bool_, np.int64):
        return Tensor.from_data(value, device)
    return Tensor.from_data(value.astype(np.float32), device)


def build(spec: dict, params: dict[str, np.ndarray], device) -> Module:
    """The layer of `spec` from its config's JSON fields, holding `params` (path -> array)."""
    cls = getattr(nn, spec["layer"])
    module = cls.from_dict(spec["config"]).init(device) if is_config(cls) else cls()
    ours = dict(module.named_params())
    assert set(ours) == set(params), f"params {sorted(ours)} vs fixture {sorted(params)}"
    for path, p in ours.items():
        assert p.dims() == list(params[path].shape), path
    by_id = {p.id: params[path] for path, p in ours.items()}
    return module.map(lambda pid, t: Tensor.from_data(by_id[pid], t.device(), t.dtype))


def case_params(case: str, ref=REF) -> dict[str, np.ndarray]:
    prefix = f"{case}/param/"
    return {k[len(prefix) :]: v for k, v in ref.items() if k.startswith(prefix)}


def run(spec: dict, module: Module, inputs: list[Tensor]) -> list[Tensor]:
    """Call the layer as its case says; always a list of outputs."""
    call = spec.get("call")
    if call == "lstm":
        state = nn.LstmState(*inputs[1:]) if len(inputs) > 1 else None
        out, state = module.forward(inputs[0], state)
        return [out, state.cell, state.hidden]
    if call == "gru":
        return [module.forward(*inputs)]
    if call == "mha":
        mha = nn.MhaInput(*inputs[:3])
        for kind, mask in zip(spec["masks"], inputs[3:], strict=True):
            mha = mha.with_mask_pad(mask) if kind == "pad" else mha.with_mask_attn(mask)
        out = module.forward(mha)
        return [out.context, out.weights]
    if call == "encoder":
        x, pad, attn = inputs
        return [module.forward(nn.TransformerEncoderInput(x, pad, attn))]
    if call == "decoder":
        target, memory, attn, pad = inputs
        decoder_input = nn.TransformerDecoderInput(target, memory)
        decoder_input = decoder_input.with_target_mask_attn(attn).with_memory_mask_pad(pad)
        return [module.forward(decoder_input)]
    out = module.forward(*inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check(ours: Tensor, expected: np.ndarray, what: str) -> None:
    got = ours.to_data().as_array()
    assert got.shape == expected.shape, f"{what}: shape {got.shape} vs torch {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=what)


@pytest.mark.parametrize("case", PLAIN)
def test_forward_matches_torch(case):
    spec = CASES[case]
    device = NdArray.device()
    module = build(spec, case_params(case), device)
    outs = run(spec, module, [tensor(x, device) for x in arrays(case, "in")])
    for i, (ours, expected) in enumerate(zip(outs, arrays(case, "out"), strict=False)):
        check(ours, expected, f"{case} output {i}")


@pytest.mark.parametrize("case", [n for n, s in CASES.items() if s.get("train")])
def test_batch_norm_training_matches_torch(case):
    """Three training steps on Autodiff(NdArray): outputs and running statistics as torch's."""
    spec = CASES[case]
    module = build(spec, case_params(case), AD.device())
    *train, x = arrays(case, "in")
    outs = arrays(case, "out")
    for i, xi in enumerate(train):
        check(module.forward(tensor(xi, AD.device())), outs[i], f"{case} step {i}")
    check(module.running_mean.val(), outs[3], "running mean")
    check(module.running_var.val(), outs[4], "running var")
    valid = module.valid()
    check(valid.forward(tensor(x, NdArray.device())), outs[5], "inference after training")
    # The running statistics are recorded with the weights and never take gradients.
    assert not module.running_mean.is_require_grad()
    loaded = build(spec, case_params(case), NdArray.device()).load_record(valid.into_record())
    check(loaded.running_var.val(), outs[4], "running var through a record")


@pytest.mark.parametrize("case", [n for n in PLAIN if CASES[n]["layer"] not in ("Silu",)])
def test_record_round_trip(case, tmp_path):
    """Save the torch-weighted layer, load it into a freshly initialized one: same outputs."""
    spec = CASES[case]
    device = NdArray.device()
    module = build(spec, case_params(case), device)
    path = module.save_file(tmp_path / case, NamedMpkFileRecorder())
    assert path.exists()
    cls = getattr(nn, spec["layer"])
    fresh = cls.from_dict(spec["config"]).init(device) if is_config(cls) else cls()
    loaded = fresh.load_file(tmp_path / case, NamedMpkFileRecorder(), device)
    for (path_a, a), (path_b, b) in zip(module.named_params(), loaded.named_params(), strict=True):
        assert path_a == path_b and a.id == b.id
        np.testing.assert_array_equal(a.val().to_data().as_array(), b.val().to_data().as_array())
    inputs = [tensor(x, device) for x in arrays(case, "in")]
    for a, b in zip(run(spec, module, inputs), run(spec, loaded, inputs), strict=True):
        np.testing.assert_array_equal(a.to_data().as_array(), b.to_data().as_array())


@pytest.mark.parametrize("case", PLAIN)
def test_gradient_flows(case):
    """One backward on Autodiff(NdArray): every trainable parameter and the input get a
    gradient of their own shape."""
    spec = CASES[case]
    device = AD.device()
    module = build(spec, case_params(case), device)
    inputs = [tensor(x, device) for x in arrays(case, "in")]
    inputs = [t.require_grad() if t.kind is Float else t for t in inputs]
    outs = run(spec, module, inputs)
    loss = outs[0].square().sum()
    for extra in outs[1:]:
        loss = loss + extra.sum()
    grads = loss.backward()
    for path, p in module.named_params():
        if p.is_require_grad():
            g = p.grad(grads)
            assert g is not None, f"{case}: no gradient for {path}"
            assert g.dims() == p.dims()
    first = inputs[0]
    if first.kind is Float:
        g = first.grad(grads)
        assert g is not None and g.dims() == first.dims()
        assert np.isfinite(g.to_data().as_array()).all()


def test_layers_count():
    """Every layer family of the fixtures is exported and built from its config's JSON."""
    layers = {spec["layer"] for spec in CASES.values()}
    for name in layers:
        cls = getattr(nn, name)
        if is_config(cls):
            config = cls.from_dict(
                CASES[next(n for n, s in CASES.items() if s["layer"] == name)]["config"]
            )
            assert cls.from_json(config.to_json()) == config


# ---------------------------------------------------------------------------- live torch


def _generator():
    path = Path(__file__).resolve().parents[3] / "tools" / "gen_nn_fixtures.py"
    spec = importlib.util.spec_from_file_location("gen_nn_fixtures_live", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_live_against_torch():
    """Regenerate every case with the installed torch (new random weights) and compare."""
    torch = pytest.importorskip("torch")
    gen = _generator()
    torch.manual_seed(1234)
    with torch.no_grad():
        for group in gen.GROUPS:
            with torch.enable_grad():
                group()
    ref = dict(gen.ARRAYS)
    ref["__cases__"] = gen.CASES
    device = NdArray.device()
    for case, spec in gen.CASES.items():
        if spec.get("train"):
            continue
        module = build(spec, case_params(case, ref), device)
        inputs = [tensor(x, device) for x in arrays(case, "in", ref)]
        for i, (ours, expected) in enumerate(
            zip(run(spec, module, inputs), arrays(case, "out", ref), strict=False)
        ):
            check(ours, expected, f"live {case} output {i}")


# ---------------------------------------------------------------------------- modes and configs


class _Net(Module):
    def __init__(self, device):
        self.conv = (
            nn.Conv2dConfig([1, 2], [3, 3]).with_padding(nn.PaddingConfig2d.Same).init(device)
        )
        self.norm = nn.BatchNormConfig(2).init(device)
        self.dropout = nn.DropoutConfig(0.5).init()
        self.pool = nn.AdaptiveAvgPool2dConfig([1, 1]).init()

    def forward(self, x: Tensor) -> Tensor:
        return self.pool.forward(self.dropout.forward(self.norm.forward(self.conv.forward(x))))


def test_dropout_and_batch_norm_follow_the_backend():
    """On Autodiff the model trains (dropout draws, batch statistics move); after `valid()`
    the same weights give a deterministic inference pass that changes no state."""
    AD.seed(5)
    model = _Net(AD.device())
    x = np.random.default_rng(0).normal(size=(4, 1, 6, 6)).astype(np.float32)
    before = model.norm.running_mean.val().to_data().as_array().copy()
    model.forward(Tensor.from_data(x, AD.device()))
    after = model.norm.running_mean.val().to_data().as_array()
    assert not np.array_equal(before, after)
    valid = model.valid()
    a = valid.forward(Tensor.from_data(x, NdArray.device())).to_data().as_array()
    b = valid.forward(Tensor.from_data(x, NdArray.device())).to_data().as_array()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(valid.norm.running_mean.val().to_data().as_array(), after)
    dropout = valid.dropout
    ones = Tensor.ones([100], NdArray.device())
    assert dropout.forward(ones) is ones


def test_padding_configs_save_as_burn_does():
    cfg = nn.Conv2dConfig([2, 3], [3, 3]).with_padding(nn.PaddingConfig2d.Explicit(1, 2))
    assert cfg.to_dict()["padding"] == {"Explicit": [1, 2]}
    assert nn.Conv2dConfig.from_json(cfg.to_json()) == cfg
    assert nn.Conv2dConfig([2, 3], [3, 3]).to_dict()["padding"] == "Valid"
    one = nn.MaxPool1dConfig(3).with_padding(nn.PaddingConfig1d.Explicit(1))
    assert one.to_dict()["padding"] == {"Explicit": 1}
    assert nn.MaxPool1dConfig.from_dict(one.to_dict()) == one
    assert nn.AvgPool2dConfig.from_dict({"kernel_size": [2, 2], "padding": "Same"}).padding is (
        nn.PaddingConfig2d.Same
    )
    with pytest.raises(ValueError, match="even kernel"):
        nn.Conv2dConfig([2, 3], [2, 2]).with_padding(nn.PaddingConfig2d.Same).init()
    with pytest.raises(ValueError, match="divisible"):
        nn.Conv1dConfig(3, 4, 3).with_groups(2).init()


def test_default_initializers_match_torch_ranges():
    """Burn's conv default (Kaiming-uniform, gain 1/sqrt(3)) is PyTorch's default range."""
    conv = nn.Conv2dConfig([4, 8], [3, 3]).init()
    bound = 1 / np.sqrt(4 * 9)
    w = conv.weight.val().to_data().as_array()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(conv.bias.val().to_data().as_array()).max() <= bound
    t = nn.ConvTranspose2dConfig([4, 6], [3, 3]).init()
    assert t.weight.dims() == [4, 6, 3, 3]
    assert np.abs(t.weight.val().to_data().as_array()).max() <= 1 / np.sqrt(6 * 9)
    norm = nn.BatchNormConfig(3).init()
    assert norm.num_params() == 12 and not norm.running_var.is_require_grad()


# ---------------------------------------------------------------------------- attention helpers


def test_generate_padding_mask():
    out = nn.generate_padding_mask(0, [[5, 6, 7], [8], [1, 2, 3, 4, 9]], 4)
    np.testing.assert_array_equal(
        out.tensor.to_data().as_array(), [[5, 6, 7, 0], [8, 0, 0, 0], [1, 2, 3, 4]]
    )
    np.testing.assert_array_equal(
        out.mask.to_data().as_array(),
        [[False, False, False, True], [False, True, True, True], [False] * 4],
    )


def test_generate_autoregressive_mask():
    mask = nn.generate_autoregressive_mask(2, 3).to_data().as_array()
    assert mask.shape == (2, 3, 3)
    np.testing.assert_array_equal(mask[1], [[False, True, True], [False, False, True], [False] * 3])


def test_mha_cache_decodes_as_the_full_pass():
    """Feeding a growing prefix with a cache gives, at each new position, the masked full pass."""
    mha = nn.MultiHeadAttentionConfig(8, 2).init()
    x = Tensor.from_data(np.random.default_rng(1).normal(size=(2, 5, 8)).astype(np.float32))
    full = (
        mha.forward(nn.MhaInput.self_attn(x).with_mask_attn(nn.generate_autoregressive_mask(2, 5)))
        .context.to_data()
        .as_array()
    )
    cache = nn.MhaCache()
    for i in range(1, 6):
        step = mha.forward_cache(nn.MhaInput.self_attn(x.narrow(1, 0, i)), cache).context
        np.testing.assert_allclose(
            step.to_data().as_array()[:, i - 1], full[:, i - 1], rtol=1e-5, atol=1e-6
        )


def test_encoder_autoregressive_inference():
    encoder = nn.TransformerEncoderConfig(8, 16, 2, 2).init()
    x = Tensor.from_data(np.random.default_rng(2).normal(size=(2, 4, 8)).astype(np.float32))
    mask = nn.generate_autoregressive_mask(2, 4)
    full = encoder.forward(nn.TransformerEncoderInput(x, mask_attn=mask)).to_data().as_array()
    cache = encoder.new_autoregressive_cache()
    for i in range(1, 5):
        out = encoder.forward_autoregressive_inference(
            nn.TransformerEncoderInput(x.narrow(1, 0, i)), cache
        )
        np.testing.assert_allclose(
            out.to_data().as_array()[:, i - 1], full[:, i - 1], rtol=1e-4, atol=1e-5
        )


def test_rotary_encoding_offset_and_relative_dot_products():
    rope = nn.RotaryEncodingConfig(32, 4).init()
    rng = np.random.default_rng(3)
    q = rng.normal(size=(1, 1, 4)).astype(np.float32)
    k = rng.normal(size=(1, 1, 4)).astype(np.float32)

    def rotated(v, pos):
        return rope.forward(Tensor.from_data(v), start=pos).to_data().as_array()[0, 0]

    # The score depends only on the distance between positions.
    a = rotated(q, 7) @ rotated(k, 3)
    b = rotated(q, 14) @ rotated(k, 10)
    np.testing.assert_allclose(a, b, rtol=1e-5)
    seq = rope.forward(Tensor.from_data(np.repeat(q, 6, axis=1))).to_data().as_array()
    np.testing.assert_allclose(seq[0, 5], rotated(q, 5), rtol=1e-6)


def test_sequence_models_follow_the_model_to_the_inner_backend():
    """Layers without parameters build their tables on the input's device, so `valid()` works."""

    class Model(Module):
        def __init__(self, device):
            self.pos = nn.PositionalEncodingConfig(8, max_sequence_size=16).init(device)
            self.lstm = nn.LstmConfig(8, 4, True).init(device)

    model = Model(AD.device()).valid()
    x = Tensor.ones([2, 3, 8], NdArray.device())
    out, state = model.lstm.forward(model.pos.forward(x))
    assert out.dims() == [2, 3, 4] and state.hidden.dims() == [2, 4]
