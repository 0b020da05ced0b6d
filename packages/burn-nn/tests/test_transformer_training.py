"""A Transformer encoder's training step against PyTorch's, and dropout inside attention.

The encoder runs its attention, layer norms, GELU and softmax through the backend's fused ops
(`burn.tensor.module.attention`, `layer_norm`); these tests pin the whole layer to PyTorch's
`TransformerEncoderLayer` (same weights, post-norm, GELU) in float32 and float64, with padding
and attention masks, for the loss and every parameter's gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn import nn
from burn.backend import Autodiff, NdArray
from burn.nn.loss import MseLoss
from burn.tensor import DType, Tensor

B = Autodiff(NdArray)
D_MODEL, D_FF, HEADS, LAYERS, BATCH, SEQ = 16, 32, 4, 2, 3, 5


def _torch_encoder(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        *(
            torch.nn.TransformerEncoderLayer(
                D_MODEL, HEADS, D_FF, 0.0, activation="gelu", batch_first=True
            )
            for _ in range(LAYERS)
        )
    ).double()


def _our_params(model) -> dict[str, np.ndarray]:
    """torch's weights under our parameter paths ([in, out] linear weights)."""

    def linear(prefix, weight, bias):
        return {f"{prefix}.weight": weight.T, f"{prefix}.bias": bias}

    params = {}
    for i, layer in enumerate(model):
        p = f"layers.{i}."
        w = layer.self_attn.in_proj_weight.detach().numpy()
        b = layer.self_attn.in_proj_bias.detach().numpy()
        for k, name in enumerate(("query", "key", "value")):
            rows = slice(D_MODEL * k, D_MODEL * (k + 1))
            params |= linear(f"{p}mha.{name}", w[rows], b[rows])
        for ours, theirs in (
            ("mha.output", layer.self_attn.out_proj),
            ("pwff.linear_inner", layer.linear1),
            ("pwff.linear_outer", layer.linear2),
        ):
            params |= linear(p + ours, theirs.weight.detach().numpy(), theirs.bias.detach().numpy())
        for ours, theirs in (("norm_1", layer.norm1), ("norm_2", layer.norm2)):
            params[f"{p}{ours}.gamma"] = theirs.weight.detach().numpy()
            params[f"{p}{ours}.beta"] = theirs.bias.detach().numpy()
    return params


def _our_grads_from_torch(model) -> dict[str, np.ndarray]:
    """torch's gradients under our parameter paths (the values swapped out meanwhile)."""
    saved = [p.data for p in model.parameters()]
    for p in model.parameters():
        p.data = p.grad.clone()
    grads = _our_params(model)
    for p, value in zip(model.parameters(), saved, strict=True):
        p.data = value
    return grads


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64], ids=["f32", "f64"])
@pytest.mark.parametrize("masked", [False, True], ids=["plain", "masked"])
def test_encoder_step_matches_torch(dtype, masked):
    torch = pytest.importorskip("torch")
    theirs = _torch_encoder(torch)
    params = _our_params(theirs)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(BATCH, SEQ, D_MODEL))
    target = rng.normal(size=(BATCH, SEQ, D_MODEL))
    pad = np.zeros((BATCH, SEQ), dtype=bool)
    pad[1, 3:] = True
    causal = np.triu(np.ones((SEQ, SEQ), dtype=bool), 1)

    encoder = nn.TransformerEncoderConfig(D_MODEL, D_FF, HEADS, LAYERS, dropout=0.0).init(
        B.device()
    )
    ours = dict(encoder.named_params())
    assert set(ours) == set(params)
    by_id = {p.id: params[path] for path, p in ours.items()}
    encoder = encoder.map(lambda pid, t: Tensor.from_data(by_id[pid], B.device(), dtype))
    inp = nn.TransformerEncoderInput(Tensor.from_data(x, B.device(), dtype))
    if masked:
        inp = inp.with_mask_pad(Tensor.from_data(pad, B.device())).with_mask_attn(
            Tensor.from_data(np.broadcast_to(causal, (BATCH, SEQ, SEQ)).copy(), B.device())
        )
    out = encoder.forward(inp)
    assert out.dtype == dtype
    loss = MseLoss().forward(out, Tensor.from_data(target, B.device(), dtype))
    grads = loss.backward()

    tx = torch.tensor(x)
    h = tx
    for layer in theirs:
        h = layer(
            h,
            src_mask=torch.tensor(causal) if masked else None,
            src_key_padding_mask=torch.tensor(pad) if masked else None,
        )
    want = torch.nn.functional.mse_loss(h, torch.tensor(target))
    want.backward()

    tol = 2e-4 if dtype is DType.F32 else 1e-9
    np.testing.assert_allclose(loss.into_scalar(), want.item(), rtol=tol)
    want_grads = _our_grads_from_torch(theirs)
    # The key bias gets no gradient (softmax ignores a shift per query): compare at the scale
    # of all gradients, not of each one.
    scale = max(np.abs(g).max() for g in want_grads.values())
    for path, p in encoder.named_params():
        got = p.val().grad(grads).to_data().array
        assert got.dtype == dtype.numpy, path
        np.testing.assert_allclose(
            got, want_grads[path], rtol=tol * 10, atol=tol * scale, err_msg=path
        )


def test_attention_dropout_keeps_the_expectation():
    """Dropout on the attention weights zeroes about `prob` of them and keeps the mean: the
    context averaged over many training passes approaches the context without dropout."""
    mha = nn.MultiHeadAttentionConfig(8, 2, dropout=0.5).init(B.device())
    x = Tensor.from_data(
        np.random.default_rng(3).normal(size=(1, 4, 8)).astype(np.float32), B.device()
    )
    B.seed(11)
    plain = mha.valid().forward(nn.MhaInput.self_attn(x.inner())).context.to_data().array
    draws = np.stack(
        [mha.forward(nn.MhaInput.self_attn(x)).context.to_data().array for _ in range(600)]
    )
    assert not np.allclose(draws[0], plain)
    spread = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - plain) < 5 * spread + 1e-6)


def test_dropout_mask_statistics():
    B.seed(4)
    mask = nn.DropoutConfig(0.1).init()._mask([200, 500], Tensor.zeros([1], B.device()))
    values = mask.to_data().array
    assert values.dtype == np.float32
    np.testing.assert_allclose(np.unique(values), [0.0, 1.0 / 0.9], rtol=1e-6)
    assert abs((values == 0).mean() - 0.1) < 0.004


def test_quiet_softmax_attention_with_both_masks():
    """`quiet_softmax` attention keeps its composition: exp(s) / (1 + sum exp(s)) per query,
    with the padding and attention masks both applied (at `min_float`)."""
    rng = np.random.default_rng(8)
    mha = nn.MultiHeadAttentionConfig(8, 2, dropout=0.0, quiet_softmax=True).init()
    x = rng.normal(size=(2, 4, 8))
    pad = np.array([[False, False, False, True], [False, False, False, False]])
    causal = np.broadcast_to(np.triu(np.ones((4, 4), dtype=bool), 1), (2, 4, 4)).copy()
    inp = (
        nn.MhaInput.self_attn(Tensor.from_data(x.astype(np.float32)))
        .with_mask_pad(Tensor.from_data(pad))
        .with_mask_attn(Tensor.from_data(causal))
    )
    weights = mha.forward(inp).weights.to_data().array.astype(np.float64)

    def project(linear):
        return x @ linear.weight.val().to_data().array + linear.bias.val().to_data().array

    def heads(a):
        return a.reshape(2, 4, 2, 4).transpose(0, 2, 1, 3)

    q, k = heads(project(mha.query)), heads(project(mha.key))
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0
    masked = pad[:, None, None, :] | causal[:, None, :, :]
    scores = np.where(masked, -1.0e4, scores)
    m = scores.max(-1, keepdims=True)
    e = np.exp(scores - m)
    want = e / (np.exp(-m) + e.sum(-1, keepdims=True))
    np.testing.assert_allclose(weights, want, rtol=1e-5, atol=1e-7)
