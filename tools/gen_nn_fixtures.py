"""Generate the PyTorch reference fixtures of burn.nn's layer tests.

The suite compares against these files so it needs no torch; run this script (in an
environment with torch and numpy) only to regenerate them:

    python tools/gen_nn_fixtures.py

It writes, under packages/burn-nn/tests/fixtures/:

- nn_cases.json: one entry per case: the config class of burn.nn and its fields as JSON (the
  test builds the layer with `Config.from_dict`), and how many inputs and outputs it has.
- nn_layers.npz: per case, `<case>/in/<i>` inputs, `<case>/param/<path>` the torch layer's
  weights in our layout under our parameter paths, `<case>/out/<i>` torch's outputs; all
  float32 (indices int64, masks bool).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's convention

OUT = Path(__file__).resolve().parent.parent / "packages" / "burn-nn" / "tests" / "fixtures"

CASES: dict[str, dict] = {}
ARRAYS: dict[str, np.ndarray] = {}


def np32(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach().cpu().numpy()
    return np.ascontiguousarray(t, dtype=np.float32)


def record(name: str, layer: str, config: dict, inputs, params: dict, outputs, **extra) -> None:
    """Store one case: inputs and outputs are lists of arrays, params a path -> array map."""
    CASES[name] = {
        "layer": layer,
        "config": config,
        "inputs": len(inputs),
        "outputs": len(outputs),
        **extra,
    }
    for i, x in enumerate(inputs):
        ARRAYS[f"{name}/in/{i}"] = x if x.dtype in (np.int64, np.bool_) else np32(x)
    for path, value in params.items():
        ARRAYS[f"{name}/param/{path}"] = np32(value)
    for i, y in enumerate(outputs):
        ARRAYS[f"{name}/out/{i}"] = np32(y)


def randn(*shape, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape) * scale


def torch_padding(padding, kernel, dilation, spatial, stride) -> list[int] | str:
    """Our PaddingConfig (as JSON) in torch's terms: explicit sizes per dim."""
    n = len(kernel)
    if padding == "Valid":
        return [0] * n
    if padding == "Same":
        out = []
        for size, k, s, d in zip(spatial, kernel, stride, dilation, strict=True):
            length = -(-size // s)
            out.append(max(0, math.ceil((s * (length - 1) + d * (k - 1) + 1 - size) / 2)))
        return out
    sizes = padding["Explicit"]
    return [sizes] if isinstance(sizes, int) else list(sizes)


def per_dim(value, n: int) -> list[int]:
    return [value] * n if isinstance(value, int) else list(value)


# ================================================================== convolutions


def conv_cases() -> None:
    specs = [
        (
            "conv1d",
            "Conv1dConfig",
            {"channels_in": 4, "channels_out": 6, "kernel_size": 3},
            (2, 4, 11),
        ),
        (
            "conv1d_options",
            "Conv1dConfig",
            {
                "channels_in": 4,
                "channels_out": 6,
                "kernel_size": 3,
                "stride": 2,
                "dilation": 2,
                "groups": 2,
                "padding": {"Explicit": 2},
                "bias": False,
            },
            (2, 4, 13),
        ),
        (
            "conv1d_same",
            "Conv1dConfig",
            {"channels_in": 3, "channels_out": 2, "kernel_size": 5, "padding": "Same"},
            (2, 3, 9),
        ),
        ("conv2d", "Conv2dConfig", {"channels": [3, 5], "kernel_size": [3, 3]}, (2, 3, 8, 7)),
        (
            "conv2d_options",
            "Conv2dConfig",
            {
                "channels": [4, 6],
                "kernel_size": [3, 2],
                "stride": [2, 1],
                "dilation": [1, 2],
                "groups": 2,
                "padding": {"Explicit": [1, 2]},
            },
            (2, 4, 9, 8),
        ),
        (
            "conv2d_same",
            "Conv2dConfig",
            {"channels": [3, 4], "kernel_size": [3, 5], "padding": "Same", "bias": False},
            (1, 3, 6, 7),
        ),
        (
            "conv2d_same_dilated",
            "Conv2dConfig",
            {"channels": [2, 3], "kernel_size": [3, 3], "dilation": [2, 2], "padding": "Same"},
            (1, 2, 8, 8),
        ),
        (
            "conv3d",
            "Conv3dConfig",
            {
                "channels": [2, 4],
                "kernel_size": [2, 3, 3],
                "stride": [1, 2, 1],
                "padding": {"Explicit": [1, 0, 1]},
            },
            (2, 2, 5, 6, 5),
        ),
    ]
    for name, layer, cfg, shape in specs:
        n = len(shape) - 2
        conv = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)[n - 1]
        c_in, c_out = (
            (cfg["channels_in"], cfg["channels_out"]) if n == 1 else tuple(cfg["channels"])
        )
        kernel = per_dim(cfg["kernel_size"], n)
        stride = per_dim(cfg.get("stride", 1), n)
        dilation = per_dim(cfg.get("dilation", 1), n)
        padding = torch_padding(cfg.get("padding", "Valid"), kernel, dilation, shape[2:], stride)
        module = conv(
            c_in,
            c_out,
            kernel,
            stride,
            padding,
            dilation,
            cfg.get("groups", 1),
            cfg.get("bias", True),
        )
        x = randn(*shape)
        params = {"weight": module.weight}
        if module.bias is not None:
            params["bias"] = module.bias
        record(name, layer, cfg, [x], params, [module(x)])


def conv_transpose_cases() -> None:
    specs = [
        (
            "conv_transpose1d",
            "ConvTranspose1dConfig",
            {"channels": [4, 6], "kernel_size": 3, "stride": 2, "padding": 1, "padding_out": 1},
            (2, 4, 7),
        ),
        (
            "conv_transpose2d",
            "ConvTranspose2dConfig",
            {
                "channels": [4, 6],
                "kernel_size": [3, 2],
                "stride": [2, 3],
                "dilation": [1, 2],
                "groups": 2,
                "padding": [1, 0],
                "padding_out": [1, 2],
            },
            (2, 4, 5, 4),
        ),
        (
            "conv_transpose2d_plain",
            "ConvTranspose2dConfig",
            {"channels": [3, 2], "kernel_size": [3, 3], "bias": False},
            (1, 3, 4, 5),
        ),
        (
            "conv_transpose3d",
            "ConvTranspose3dConfig",
            {
                "channels": [2, 3],
                "kernel_size": [2, 2, 3],
                "stride": [2, 1, 2],
                "padding": [0, 1, 1],
            },
            (1, 2, 3, 4, 3),
        ),
    ]
    for name, layer, cfg, shape in specs:
        n = len(shape) - 2
        conv = (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)[n - 1]
        c_in, c_out = cfg["channels"]
        module = conv(
            c_in,
            c_out,
            per_dim(cfg["kernel_size"], n),
            per_dim(cfg.get("stride", 1), n),
            per_dim(cfg.get("padding", 0), n),
            per_dim(cfg.get("padding_out", 0), n),
            cfg.get("groups", 1),
            cfg.get("bias", True),
            per_dim(cfg.get("dilation", 1), n),
        )
        x = randn(*shape)
        params = {"weight": module.weight}
        if module.bias is not None:
            params["bias"] = module.bias
        record(name, layer, cfg, [x], params, [module(x)])


# ================================================================== pools


def pool_cases() -> None:
    x1 = randn(2, 3, 12)
    x2 = randn(2, 3, 9, 10)
    specs = [
        ("max_pool1d", "MaxPool1dConfig", {"kernel_size": 3}, x1, lambda x: F.max_pool1d(x, 3, 1)),
        (
            "max_pool1d_options",
            "MaxPool1dConfig",
            {"kernel_size": 3, "stride": 2, "padding": {"Explicit": 1}, "dilation": 2},
            x1,
            lambda x: F.max_pool1d(x, 3, 2, 1, 2),
        ),
        (
            "max_pool2d",
            "MaxPool2dConfig",
            {"kernel_size": [2, 2], "strides": [2, 2]},
            x2,
            lambda x: F.max_pool2d(x, 2, 2),
        ),
        (
            "max_pool2d_options",
            "MaxPool2dConfig",
            {
                "kernel_size": [3, 2],
                "strides": [2, 1],
                "padding": {"Explicit": [1, 1]},
                "dilation": [1, 2],
            },
            x2,
            lambda x: F.max_pool2d(x, (3, 2), (2, 1), (1, 1), (1, 2)),
        ),
        (
            "max_pool2d_same",
            "MaxPool2dConfig",
            {"kernel_size": [3, 3], "padding": "Same"},
            x2,
            lambda x: F.max_pool2d(x, 3, 1, 1),
        ),
        (
            "avg_pool1d",
            "AvgPool1dConfig",
            {"kernel_size": 4, "stride": 2, "padding": {"Explicit": 2}},
            x1,
            lambda x: F.avg_pool1d(x, 4, 2, 2),
        ),
        (
            "avg_pool1d_exclude_pad",
            "AvgPool1dConfig",
            {"kernel_size": 3, "stride": 1, "padding": {"Explicit": 1}, "count_include_pad": False},
            x1,
            lambda x: F.avg_pool1d(x, 3, 1, 1, count_include_pad=False),
        ),
        (
            "avg_pool2d",
            "AvgPool2dConfig",
            {"kernel_size": [2, 3], "strides": [2, 2]},
            x2,
            lambda x: F.avg_pool2d(x, (2, 3), 2),
        ),
        (
            "avg_pool2d_pad",
            "AvgPool2dConfig",
            {
                "kernel_size": [3, 3],
                "strides": [2, 2],
                "padding": {"Explicit": [1, 1]},
                "count_include_pad": False,
            },
            x2,
            lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        ),
        (
            "adaptive_avg_pool1d",
            "AdaptiveAvgPool1dConfig",
            {"output_size": 5},
            x1,
            lambda x: F.adaptive_avg_pool1d(x, 5),
        ),
        (
            "adaptive_avg_pool2d",
            "AdaptiveAvgPool2dConfig",
            {"output_size": [4, 3]},
            x2,
            lambda x: F.adaptive_avg_pool2d(x, (4, 3)),
        ),
        (
            "adaptive_avg_pool2d_global",
            "AdaptiveAvgPool2dConfig",
            {"output_size": [1, 1]},
            x2,
            lambda x: F.adaptive_avg_pool2d(x, 1),
        ),
    ]
    for name, layer, cfg, x, fn in specs:
        record(name, layer, cfg, [x], {}, [fn(x)])


# ================================================================== norms


def norm_cases() -> None:
    for name, shape in (("batch_norm_1d", (4, 3, 6)), ("batch_norm_2d", (3, 4, 5, 5))):
        c = shape[1]
        kind = torch.nn.BatchNorm1d if len(shape) == 3 else torch.nn.BatchNorm2d
        gamma, beta = randn(c) * 0.5 + 1, randn(c) * 0.5
        mean, var = randn(c) * 0.3, torch.rand(c) + 0.5
        params = {"gamma": gamma, "beta": beta, "running_mean": mean, "running_var": var}

        def make(momentum: float, kind=kind, c=c, params=params):
            module = kind(c, eps=1e-5, momentum=momentum)
            with torch.no_grad():
                for ours, theirs in (("gamma", "weight"), ("beta", "bias")):
                    getattr(module, theirs).copy_(params[ours])
                module.running_mean.copy_(params["running_mean"])
                module.running_var.copy_(params["running_var"])
            return module

        x = randn(*shape, scale=2.0) + 1.0
        module = make(0.1).eval()
        record(name, "BatchNormConfig", {"num_features": c}, [x], params, [module(x)])
        # Training: three steps, the outputs of each, the running statistics after them and
        # an inference pass that uses them.
        module = make(0.2).train()
        xs = [randn(*shape, scale=1.5) + 0.5 for _ in range(3)]
        outs = [module(xi) for xi in xs]
        outs += [module.running_mean, module.running_var]
        outs.append(module.eval()(x))
        record(
            f"{name}_train",
            "BatchNormConfig",
            {"num_features": c, "momentum": 0.2},
            [*xs, x],
            params,
            outs,
            train=True,
        )

    x = randn(2, 5, 8, scale=3.0) + 2.0
    ln = torch.nn.LayerNorm(8, eps=1e-5)
    with torch.no_grad():
        ln.weight.copy_(randn(8) * 0.5 + 1)
        ln.bias.copy_(randn(8) * 0.5)
    record(
        "layer_norm",
        "LayerNormConfig",
        {"d_model": 8},
        [x],
        {"gamma": ln.weight, "beta": ln.bias},
        [ln(x)],
    )

    x = randn(3, 6, 4, 5, scale=2.0) + 1.0
    for affine in (True, False):
        gn = torch.nn.GroupNorm(3, 6, eps=1e-5, affine=affine)
        params = {}
        if affine:
            with torch.no_grad():
                gn.weight.copy_(randn(6) * 0.5 + 1)
                gn.bias.copy_(randn(6) * 0.5)
            params = {"gamma": gn.weight, "beta": gn.bias}
        record(
            f"group_norm_affine_{affine}".lower(),
            "GroupNormConfig",
            {"num_groups": 3, "num_channels": 6, "affine": affine},
            [x],
            params,
            [gn(x)],
        )

    x = randn(2, 4, 5, 6, scale=2.0) + 1.0
    inorm = torch.nn.InstanceNorm2d(4, eps=1e-5, affine=True)
    with torch.no_grad():
        inorm.weight.copy_(randn(4) * 0.5 + 1)
        inorm.bias.copy_(randn(4) * 0.5)
    record(
        "instance_norm",
        "InstanceNormConfig",
        {"num_channels": 4},
        [x],
        {"gamma": inorm.weight, "beta": inorm.bias},
        [inorm(x)],
    )
    x1 = randn(2, 3, 7, scale=2.0)
    inorm = torch.nn.InstanceNorm1d(3, eps=1e-3, affine=False)
    record(
        "instance_norm_1d",
        "InstanceNormConfig",
        {"num_channels": 3, "epsilon": 1e-3, "affine": False},
        [x1],
        {},
        [inorm(x1)],
    )

    x = randn(2, 3, 8, scale=2.0)
    rms = torch.nn.RMSNorm(8, eps=1e-5)
    with torch.no_grad():
        rms.weight.copy_(randn(8) * 0.5 + 1)
    record("rms_norm", "RmsNormConfig", {"d_model": 8}, [x], {"gamma": rms.weight}, [rms(x)])


# ================================================================== activations


def activation_cases() -> None:
    x = randn(3, 4, 5, scale=3.0)
    record("silu", "Silu", {}, [x], {}, [F.silu(x)])
    record(
        "hard_sigmoid_torch",
        "HardSigmoidConfig",
        {"alpha": 1 / 6, "beta": 0.5},
        [x],
        {},
        [F.hardsigmoid(x)],
    )
    record("hard_sigmoid", "HardSigmoidConfig", {}, [x], {}, [torch.clamp(0.2 * x + 0.5, 0, 1)])
    for n in (1, 4):
        prelu = torch.nn.PReLU(n, init=0.25)
        with torch.no_grad():
            prelu.weight.copy_(torch.rand(n) * 0.5)
        record(
            f"prelu_{n}",
            "PReluConfig",
            {"num_parameters": n},
            [x],
            {"alpha": prelu.weight},
            [prelu(x)],
        )
    for bias in (False, True):
        inner, outer = torch.nn.Linear(5, 6, bias=bias), torch.nn.Linear(5, 6, bias=bias)
        params = {"linear_inner.weight": inner.weight.T, "linear_outer.weight": outer.weight.T}
        if bias:
            params |= {"linear_inner.bias": inner.bias, "linear_outer.bias": outer.bias}
        record(
            f"swiglu_bias_{bias}".lower(),
            "SwiGluConfig",
            {"d_input": 5, "d_output": 6, "bias": bias},
            [x],
            params,
            [F.silu(inner(x)) * outer(x)],
        )
    for name, layer, config, fn in (
        ("relu", "Relu", {}, F.relu),
        ("gelu", "Gelu", {}, F.gelu),
        ("sigmoid", "Sigmoid", {}, torch.sigmoid),
        ("tanh", "Tanh", {}, torch.tanh),
        ("leaky_relu", "LeakyReluConfig", {"negative_slope": 0.2}, lambda v: F.leaky_relu(v, 0.2)),
    ):
        record(name, layer, config, [x], {}, [fn(x)])
    emb = torch.nn.Embedding(10, 4)
    idx = torch.randint(0, 10, (3, 5))
    record(
        "embedding",
        "EmbeddingConfig",
        {"n_embedding": 10, "d_model": 4},
        [idx.numpy().astype(np.int64)],
        {"weight": emb.weight},
        [emb(idx)],
    )
    lin = torch.nn.Linear(5, 3)
    record(
        "linear_f32",
        "LinearConfig",
        {"d_input": 5, "d_output": 3},
        [x],
        {"weight": lin.weight.T, "bias": lin.bias},
        [lin(x)],
    )


# ================================================================== resampling


def resample_cases() -> None:
    x2 = randn(2, 3, 5, 6)
    x1 = randn(2, 3, 7)
    specs2 = [
        ("nearest_up", {"output_size": [8, 9]}, lambda x: F.interpolate(x, (8, 9))),
        ("nearest_down", {"output_size": [3, 4]}, lambda x: F.interpolate(x, (3, 4))),
        (
            "linear",
            {"output_size": [9, 4], "mode": "Linear"},
            lambda x: F.interpolate(x, (9, 4), mode="bilinear", align_corners=True),
        ),
        (
            "cubic",
            {"output_size": [8, 11], "mode": "Cubic"},
            lambda x: F.interpolate(x, (8, 11), mode="bicubic", align_corners=True),
        ),
        (
            "scale",
            {"scale_factor": [2.0, 1.5], "mode": "Linear"},
            lambda x: F.interpolate(x, (10, 9), mode="bilinear", align_corners=True),
        ),
    ]
    for name, cfg, fn in specs2:
        record(f"interpolate2d_{name}", "Interpolate2dConfig", cfg, [x2], {}, [fn(x2)])
    specs1 = [
        ("nearest", {"output_size": 12}, lambda x: F.interpolate(x, 12)),
        (
            "linear",
            {"output_size": 10, "mode": "Linear"},
            lambda x: F.interpolate(x, 10, mode="linear", align_corners=True),
        ),
        (
            "cubic",
            {"scale_factor": 2.0, "mode": "Cubic"},
            lambda x: F.interpolate(x[:, :, None], (1, 14), mode="bicubic", align_corners=True)[
                :, :, 0
            ],
        ),
    ]
    for name, cfg, fn in specs1:
        record(f"interpolate1d_{name}", "Interpolate1dConfig", cfg, [x1], {}, [fn(x1)])
    x = randn(2, 3, 7, 6)
    record("unfold4d", "Unfold4dConfig", {"kernel_size": [3, 2]}, [x], {}, [F.unfold(x, (3, 2))])
    record(
        "unfold4d_options",
        "Unfold4dConfig",
        {"kernel_size": [2, 3], "stride": [2, 1], "dilation": [1, 2], "padding": [1, 1]},
        [x],
        {},
        [F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))],
    )


# ================================================================== sequence models


def linear_params(prefix: str, weight, bias) -> dict:
    """A torch (out, in) weight as our Linear's [in, out] under `prefix`."""
    out = {f"{prefix}.weight": weight.T}
    if bias is not None:
        out[f"{prefix}.bias"] = bias
    return out


def rnn_cases() -> None:
    x = randn(3, 5, 4)
    for bias, with_state in ((True, False), (False, True)):
        lstm = torch.nn.LSTM(4, 6, bias=bias, batch_first=True)
        params = {}
        for k, gate in enumerate(("input_gate", "forget_gate", "cell_gate", "output_gate")):
            rows = slice(6 * k, 6 * (k + 1))
            for ours, theirs in (("input_transform", "ih"), ("hidden_transform", "hh")):
                w = getattr(lstm, f"weight_{theirs}_l0")[rows]
                b = getattr(lstm, f"bias_{theirs}_l0")[rows] if bias else None
                params |= linear_params(f"{gate}.{ours}", w, b)
        inputs = [x]
        state = None
        if with_state:
            c0, h0 = randn(3, 6), randn(3, 6)
            inputs += [c0, h0]
            state = (h0[None], c0[None])
        out, (h, c) = lstm(x, state)
        record(
            f"lstm_bias_{bias}".lower(),
            "LstmConfig",
            {"d_input": 4, "d_hidden": 6, "bias": bias},
            inputs,
            params,
            [out, c[0], h[0]],
            call="lstm",
        )
    for bias, reset_after in ((True, True), (False, True), (True, False)):
        gru = torch.nn.GRU(4, 6, bias=bias, batch_first=True)
        params = {}
        for k, gate in enumerate(("reset_gate", "update_gate", "new_gate")):
            rows = slice(6 * k, 6 * (k + 1))
            for ours, theirs in (("input_transform", "ih"), ("hidden_transform", "hh")):
                w = getattr(gru, f"weight_{theirs}_l0")[rows]
                b = getattr(gru, f"bias_{theirs}_l0")[rows] if bias else None
                params |= linear_params(f"{gate}.{ours}", w, b)
        h0 = randn(3, 6)
        if reset_after:
            out, _ = gru(x, h0[None])
        else:  # the reset gate applied before the hidden projection: no torch module has it

            def lin(prefix, v, params=params, bias=bias):
                y = v @ params[f"{prefix}.weight"]
                return y + params[f"{prefix}.bias"] if bias else y

            h, outs = h0, []
            for t in range(x.shape[1]):
                xt = x[:, t]
                z = torch.sigmoid(
                    lin("update_gate.input_transform", xt) + lin("update_gate.hidden_transform", h)
                )
                r = torch.sigmoid(
                    lin("reset_gate.input_transform", xt) + lin("reset_gate.hidden_transform", h)
                )
                n = torch.tanh(
                    lin("new_gate.input_transform", xt) + lin("new_gate.hidden_transform", r * h)
                )
                h = (1 - z) * n + z * h
                outs.append(h)
            out = torch.stack(outs, 1)
        name = f"gru_bias_{bias}_reset_after_{reset_after}".lower()
        record(
            name,
            "GruConfig",
            {"d_input": 4, "d_hidden": 6, "bias": bias, "reset_after": reset_after},
            [x, h0],
            params,
            [out],
            call="gru",
        )


def mha_params(mha: torch.nn.MultiheadAttention, prefix: str = "") -> dict:
    d = mha.embed_dim
    params = {}
    for k, name in enumerate(("query", "key", "value")):
        rows = slice(d * k, d * (k + 1))
        params |= linear_params(f"{prefix}{name}", mha.in_proj_weight[rows], mha.in_proj_bias[rows])
    return params | linear_params(f"{prefix}output", mha.out_proj.weight, mha.out_proj.bias)


def padding_mask(batch: int, seq: int, lengths) -> torch.Tensor:
    return torch.arange(seq)[None, :] >= torch.tensor(lengths)[:, None]


def causal(batch: int, seq: int) -> torch.Tensor:
    return torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1)


def attention_cases() -> None:
    d, heads, batch = 8, 2, 2
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True)
    q, k, v = randn(batch, 4, d), randn(batch, 6, d), randn(batch, 6, d)
    config = {"d_model": d, "n_heads": heads}
    out, w = mha(q, k, v, need_weights=True, average_attn_weights=False)
    record(
        "mha_cross",
        "MultiHeadAttentionConfig",
        config,
        [q, k, v],
        mha_params(mha),
        [out, w],
        call="mha",
        masks=[],
    )
    pad = padding_mask(batch, 6, [6, 4])
    out, w = mha(q, k, v, key_padding_mask=pad, average_attn_weights=False)
    record(
        "mha_mask_pad",
        "MultiHeadAttentionConfig",
        config,
        [q, k, v, pad.numpy()],
        mha_params(mha),
        [out, w],
        call="mha",
        masks=["pad"],
    )
    x = randn(batch, 5, d)
    mask = causal(batch, 5)
    out, w = mha(x, x, x, attn_mask=mask, average_attn_weights=False)
    full = np.broadcast_to(mask.numpy(), (batch, 5, 5)).copy()
    record(
        "mha_mask_attn",
        "MultiHeadAttentionConfig",
        config,
        [x, x, x, full],
        mha_params(mha),
        [out, w],
        call="mha",
        masks=["attn"],
    )

    ff = (torch.nn.Linear(d, 16), torch.nn.Linear(16, d))
    params = linear_params("linear_inner", ff[0].weight, ff[0].bias)
    params |= linear_params("linear_outer", ff[1].weight, ff[1].bias)
    record(
        "position_wise_feed_forward",
        "PositionWiseFeedForwardConfig",
        {"d_model": d, "d_ff": 16},
        [x],
        params,
        [ff[1](F.gelu(ff[0](x)))],
    )


def layer_norm_params(norm, name: str) -> dict:
    with torch.no_grad():
        norm.weight.copy_(randn(norm.weight.shape[0]) * 0.3 + 1)
        norm.bias.copy_(randn(norm.weight.shape[0]) * 0.3)
    return {f"{name}.gamma": norm.weight, f"{name}.beta": norm.bias}


def transformer_cases() -> None:
    d, d_ff, heads, batch = 8, 16, 2, 2
    for norm_first in (False, True):
        layers = [
            torch.nn.TransformerEncoderLayer(
                d,
                heads,
                d_ff,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=norm_first,
            )
            for _ in range(2)
        ]
        norms = ("norm_2", "norm_1") if norm_first else ("norm_1", "norm_2")
        params = {}
        for i, layer in enumerate(layers):
            p = f"layers.{i}."
            params |= mha_params(layer.self_attn, p + "mha.")
            params |= linear_params(
                p + "pwff.linear_inner", layer.linear1.weight, layer.linear1.bias
            )
            params |= linear_params(
                p + "pwff.linear_outer", layer.linear2.weight, layer.linear2.bias
            )
            params |= layer_norm_params(layer.norm1, p + norms[0])
            params |= layer_norm_params(layer.norm2, p + norms[1])
        x = randn(batch, 5, d)
        pad = padding_mask(batch, 5, [5, 3])
        y = x
        for layer in layers:
            y = layer.train()(y, src_mask=causal(batch, 5), src_key_padding_mask=pad)
        mask = np.broadcast_to(causal(batch, 5).numpy(), (batch, 5, 5)).copy()
        config = {
            "d_model": d,
            "d_ff": d_ff,
            "n_heads": heads,
            "n_layers": 2,
            "norm_first": norm_first,
        }
        record(
            f"transformer_encoder_norm_first_{norm_first}".lower(),
            "TransformerEncoderConfig",
            config,
            [x, pad.numpy(), mask],
            params,
            [y],
            call="encoder",
        )

        layers = [
            torch.nn.TransformerDecoderLayer(
                d,
                heads,
                d_ff,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=norm_first,
            )
            for _ in range(2)
        ]
        norms = ("norm_3", "norm_1", "norm_2") if norm_first else ("norm_1", "norm_2", "norm_3")
        params = {}
        for i, layer in enumerate(layers):
            p = f"layers.{i}."
            params |= mha_params(layer.self_attn, p + "self_attn.")
            params |= mha_params(layer.multihead_attn, p + "cross_attn.")
            params |= linear_params(
                p + "pwff.linear_inner", layer.linear1.weight, layer.linear1.bias
            )
            params |= linear_params(
                p + "pwff.linear_outer", layer.linear2.weight, layer.linear2.bias
            )
            for norm, name in zip((layer.norm1, layer.norm2, layer.norm3), norms, strict=True):
                params |= layer_norm_params(norm, p + name)
        target, memory = randn(batch, 4, d), randn(batch, 6, d)
        memory_pad = padding_mask(batch, 6, [6, 5])
        y = target
        for layer in layers:
            y = layer.train()(
                y, memory, tgt_mask=causal(batch, 4), memory_key_padding_mask=memory_pad
            )
        mask = np.broadcast_to(causal(batch, 4).numpy(), (batch, 4, 4)).copy()
        record(
            f"transformer_decoder_norm_first_{norm_first}".lower(),
            "TransformerDecoderConfig",
            config,
            [target, memory, mask, memory_pad.numpy()],
            params,
            [y],
            call="decoder",
        )


def position_cases() -> None:
    x = randn(2, 7, 6)
    seq, d = 7, 6
    pos = torch.arange(seq, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(seq, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    record(
        "positional_encoding",
        "PositionalEncodingConfig",
        {"d_model": d, "max_sequence_size": 20},
        [x],
        {},
        [x + pe.float()],
    )

    # RoPE as Meta's Llama reference writes it: pairs as complex numbers times e^(i m theta).
    x = randn(2, 3, 5, 8)
    freqs = 1.0 / (10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))
    angles = torch.outer(torch.arange(5, dtype=torch.float64), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.double().reshape(2, 3, 5, 4, 2))
    out = torch.view_as_real(xc * rot).reshape(2, 3, 5, 8)
    record(
        "rotary_encoding",
        "RotaryEncodingConfig",
        {"max_sequence_length": 16, "d_model": 8},
        [x],
        {},
        [out],
    )


GROUPS = [
    conv_cases,
    conv_transpose_cases,
    pool_cases,
    norm_cases,
    activation_cases,
    resample_cases,
    rnn_cases,
    attention_cases,
    transformer_cases,
    position_cases,
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    with torch.no_grad():
        for group in GROUPS:
            with torch.enable_grad():
                group()
    (OUT / "nn_cases.json").write_text(json.dumps(CASES, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(OUT / "nn_layers.npz", **ARRAYS)
    print(f"{len(CASES)} cases, {len(ARRAYS)} arrays")


if __name__ == "__main__":
    main()
