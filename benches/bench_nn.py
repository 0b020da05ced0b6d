"""One training step of burn.nn models on Autodiff(NdArray) against the same step in PyTorch.

A training step here is everything a custom training loop does per batch: the forward pass and
the loss, `backward()`, the gradients by parameter (`GradientsParams`) and an Adam update that
returns the new model. PyTorch does the same with `zero_grad()`, `backward()` and
`optimizer.step()`. Two models, the sizes named in the burn-nn issue:

- a Transformer encoder: 2 layers, d_model 128, 4 heads, d_ff 512, GELU, post-norm, dropout
  0.1, on a batch of 32 sequences of 64 vectors;
- an LSTM: hidden size 256, input size 128, on a batch of 32 sequences of 50 steps;
- a GRU of the same sizes.

Both end in a mean squared error against a fixed random target. Before anything is timed, both
frameworks get the same weights (ours copied from torch's, transposed where the layouts differ)
and must agree on the loss and on every gradient, with dropout off; the timed models keep those
weights and use dropout as configured. Times are medians after warm-up steps, reported with
ratios, never as targets.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 uv run python benches/bench_nn.py
    uv run python benches/bench_nn.py --quick    # fewer repeats, nothing written
    uv run python benches/bench_nn.py --only lstm    # one model, nothing written

PyTorch is not a project dependency; without it the torch columns stay empty.
"""

from __future__ import annotations

import numpy as np
from burn import nn
from burn.autodiff import Autodiff
from burn.module import Module
from burn.ndarray import NdArray
from burn.nn.loss import MseLoss
from burn.optim import AdamConfig, GradientsParams
from burn.tensor import Tensor

try:
    import torch
except ImportError:
    torch = None

from common import median_ms, parse_run_args, print_start, publish, ratio, torch_machine

SECTION = "## burn-nn: training steps of a Transformer encoder and an LSTM"
B = Autodiff(NdArray)
LR = 1e-3


# ---------------------------------------------------------------------- the models


class Encoder(Module):
    def __init__(self, d_model: int, d_ff: int, heads: int, layers: int, dropout: float, device):
        self.encoder = nn.TransformerEncoderConfig(
            d_model, d_ff, heads, layers, dropout=dropout
        ).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.encoder.forward(nn.TransformerEncoderInput(x))


class Recurrent(Module):
    def __init__(self, d_input: int, d_hidden: int, device):
        self.lstm = nn.LstmConfig(d_input, d_hidden, True).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.lstm.forward(x)[0]


class GatedRecurrent(Module):
    def __init__(self, d_input: int, d_hidden: int, device):
        self.gru = nn.GruConfig(d_input, d_hidden, True).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.gru.forward(x)


def torch_encoder(d_model: int, d_ff: int, heads: int, layers: int, dropout: float):
    return torch.nn.Sequential(
        *(
            torch.nn.TransformerEncoderLayer(
                d_model, heads, d_ff, dropout, activation="gelu", batch_first=True
            )
            for _ in range(layers)
        )
    )


def torch_lstm(d_input: int, d_hidden: int):
    class Lstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(d_input, d_hidden, batch_first=True)

        def forward(self, x):
            return self.lstm(x)[0]

    return Lstm()


def torch_gru(d_input: int, d_hidden: int):
    class Gru(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(d_input, d_hidden, batch_first=True)

        def forward(self, x):
            return self.gru(x)[0]

    return Gru()


# ---------------------------------------------------------------------- torch weights, our names


def np32(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float32)


def linear(prefix: str, weight, bias) -> dict[str, np.ndarray]:
    """torch's (out, in) weight as our Linear's [in, out]."""
    return {f"{prefix}.weight": np32(weight).T.copy(), f"{prefix}.bias": np32(bias)}


def encoder_params(model) -> dict[str, np.ndarray]:
    params = {}
    for i, layer in enumerate(model):
        p = f"encoder.layers.{i}."
        d = layer.self_attn.embed_dim
        w, b = layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias
        for k, name in enumerate(("query", "key", "value")):
            rows = slice(d * k, d * (k + 1))
            params |= linear(f"{p}mha.{name}", w[rows], b[rows])
        params |= linear(
            f"{p}mha.output", layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias
        )
        params |= linear(f"{p}pwff.linear_inner", layer.linear1.weight, layer.linear1.bias)
        params |= linear(f"{p}pwff.linear_outer", layer.linear2.weight, layer.linear2.bias)
        for ours, theirs in (("norm_1", layer.norm1), ("norm_2", layer.norm2)):
            params[f"{p}{ours}.gamma"] = np32(theirs.weight)
            params[f"{p}{ours}.beta"] = np32(theirs.bias)
    return params


def lstm_params(model) -> dict[str, np.ndarray]:
    lstm, params = model.lstm, {}
    d = lstm.hidden_size
    for k, gate in enumerate(("input_gate", "forget_gate", "cell_gate", "output_gate")):
        rows = slice(d * k, d * (k + 1))
        for ours, theirs in (("input_transform", "ih"), ("hidden_transform", "hh")):
            w = getattr(lstm, f"weight_{theirs}_l0")[rows]
            b = getattr(lstm, f"bias_{theirs}_l0")[rows]
            params |= linear(f"lstm.{gate}.{ours}", w, b)
    return params


def gru_params(model) -> dict[str, np.ndarray]:
    gru, params = model.gru, {}
    d = gru.hidden_size
    for k, gate in enumerate(("reset_gate", "update_gate", "new_gate")):
        rows = slice(d * k, d * (k + 1))
        for ours, theirs in (("input_transform", "ih"), ("hidden_transform", "hh")):
            w = getattr(gru, f"weight_{theirs}_l0")[rows]
            b = getattr(gru, f"bias_{theirs}_l0")[rows]
            params |= linear(f"gru.{gate}.{ours}", w, b)
    return params


def load(module: Module, params: dict[str, np.ndarray]) -> Module:
    """`module` holding `params` (dotted path -> array), every parameter accounted for."""
    ours = dict(module.named_params())
    assert set(ours) == set(params), sorted(set(ours) ^ set(params))
    by_id = {p.id: params[path] for path, p in ours.items()}
    return module.map(lambda pid, t: Tensor.from_data(by_id[pid], t.device(), t.dtype))


# ---------------------------------------------------------------------- one training step


class BurnStep:
    """Forward, loss, backward, `GradientsParams` and an Adam step; the model is replaced."""

    def __init__(self, model: Module, x: np.ndarray, target: np.ndarray):
        device = B.device()
        self.model = model
        self.optim = AdamConfig().init()
        self.x = Tensor.from_data(x, device)
        self.target = Tensor.from_data(target, device)
        self.loss_fn = MseLoss()

    def loss(self) -> Tensor:
        return self.loss_fn.forward(self.model.forward(self.x), self.target)

    def gradients(self) -> tuple[float, dict[str, np.ndarray]]:
        loss = self.loss()
        grads = GradientsParams.from_grads(loss.backward(), self.model)
        named = {path: grads.get(p.id).to_data().array for path, p in self.model.named_params()}
        return loss.into_scalar(), named

    def forward(self) -> None:
        self.loss()

    def step(self) -> None:
        grads = GradientsParams.from_grads(self.loss().backward(), self.model)
        self.model = self.optim.step(LR, self.model, grads)


class TorchStep:
    def __init__(self, model, x: np.ndarray, target: np.ndarray):
        self.model = model.train()
        self.optim = torch.optim.Adam(model.parameters(), lr=LR)
        self.x = torch.tensor(x)
        self.target = torch.tensor(target)

    def loss(self):
        return torch.nn.functional.mse_loss(self.model(self.x), self.target)

    def forward(self) -> None:
        with torch.no_grad():
            self.loss()

    def step(self) -> None:
        self.optim.zero_grad()
        self.loss().backward()
        self.optim.step()


def check_agreement(ours: BurnStep, theirs: TorchStep, to_ours) -> None:
    """Same weights, no dropout: the same loss and the same gradient for every parameter."""
    loss, grads = ours.gradients()
    theirs.optim.zero_grad()
    want = theirs.loss()
    want.backward()
    np.testing.assert_allclose(loss, want.item(), rtol=1e-4)
    want_grads = to_ours(theirs.model, grads=True)
    for path, grad in grads.items():
        np.testing.assert_allclose(grad, want_grads[path], rtol=2e-3, atol=2e-5, err_msg=path)


def grads_as_params(extract):
    """`extract` applied to a copy of `model` whose parameters hold their gradients."""

    def convert(model, grads: bool = False):
        if not grads:
            return extract(model)
        with torch.no_grad():
            saved = [p.detach().clone() for p in model.parameters()]
            for p in model.parameters():
                p.copy_(p.grad)
            out = extract(model)
            for p, v in zip(model.parameters(), saved, strict=True):
                p.copy_(v)
        return out

    return convert


def models(rng: np.random.Generator):
    """(name, input, ours(dropout), theirs(dropout), torch -> our params, x, target)."""
    d_model, d_ff, heads, layers, batch, seq = 128, 512, 4, 2, 32, 64
    x = rng.normal(size=(batch, seq, d_model)).astype(np.float32)
    target = rng.normal(size=(batch, seq, d_model)).astype(np.float32)
    yield (
        f"Transformer encoder ({layers} layers, d_model {d_model}, {heads} heads, d_ff {d_ff})",
        f"[{batch}, {seq}, {d_model}]",
        lambda p: Encoder(d_model, d_ff, heads, layers, p, B.device()),
        lambda p: torch_encoder(d_model, d_ff, heads, layers, p),
        grads_as_params(encoder_params),
        x,
        target,
    )
    d_input, d_hidden, batch, seq = 128, 256, 32, 50
    x = rng.normal(size=(batch, seq, d_input)).astype(np.float32)
    target = rng.normal(size=(batch, seq, d_hidden)).astype(np.float32)
    yield (
        f"LSTM (input {d_input}, hidden {d_hidden})",
        f"[{batch}, {seq}, {d_input}]",
        lambda p: Recurrent(d_input, d_hidden, B.device()),
        lambda p: torch_lstm(d_input, d_hidden),
        grads_as_params(lstm_params),
        x,
        target,
    )
    yield (
        f"GRU (input {d_input}, hidden {d_hidden})",
        f"[{batch}, {seq}, {d_input}]",
        lambda p: GatedRecurrent(d_input, d_hidden, B.device()),
        lambda p: torch_gru(d_input, d_hidden),
        grads_as_params(gru_params),
        x,
        target,
    )


HEADER = [
    "model",
    "input",
    "parameters",
    "burn fwd ms",
    "burn step ms",
    "torch fwd ms",
    "torch step ms",
    "step burn/torch",
]


def run(repeats: int, warmup: int, dropout: float, only: str | None = None) -> list[list[str]]:
    rng = np.random.default_rng(0)
    if torch is not None:
        torch.manual_seed(0)
    B.seed(0)
    rows = []
    for name, shape, ours, theirs, to_ours, x, target in models(rng):
        if only is not None and not name.lower().startswith(only):
            continue
        if torch is not None:
            # The same weights on both sides: checked without dropout, timed with it.
            reference = theirs(0.0)
            params = to_ours(reference)
            check_agreement(
                BurnStep(load(ours(0.0), params), x, target),
                TorchStep(reference, x, target),
                to_ours,
            )
            peer_model = theirs(dropout)
            peer_model.load_state_dict(reference.state_dict())
            model = load(ours(dropout), params)
            peer = TorchStep(peer_model, x, target)
        else:
            model, peer = ours(dropout), None
        step = BurnStep(model, x, target)
        times = [
            median_ms(step.forward, repeats, warmup),
            median_ms(step.step, repeats, warmup),
            median_ms(peer.forward if peer else None, repeats, warmup),
            median_ms(peer.step if peer else None, repeats, warmup),
        ]
        row = [name, shape, f"{model.num_params():,}"]
        row += ["-" if t is None else f"{t:.1f}" for t in times]
        row.append(ratio(times[1], times[3]))
        print(" | ".join(row), flush=True)
        rows.append(row)
    return rows


NOTES = """How to read it:

- "step" is one whole training step: forward, mean squared error, `backward()`,
  `GradientsParams.from_grads` and `Adam.step` returning the new model (PyTorch: `zero_grad`,
  forward, loss, `backward`, `Adam.step`). "fwd" is the forward and the loss alone, on the
  autodiff backend (PyTorch: under `no_grad`). Both sides run float32 in training mode, with the
  same weights, and agree on the loss and on every gradient (checked with dropout off before
  timing).
- The encoder's time goes mostly to matmuls of a few thousand rows, where NumPy's BLAS and
  PyTorch's are on a par (see the matmul rows of the NdArray table). The linear layers,
  attention, layer norm, softmax and GELU are contract ops that NdArray runs as numpy kernels
  of a few in-place passes each (attention in cache-sized blocks of the batch), with one
  autodiff node and dedicated backward ops apiece, as PyTorch's CPU kernels;
  dropout masks come from raw random words, and freed arrays stay in the process for the next
  step (`burn.ndarray.heap`) instead of coming back as fresh pages to fault in.
- The LSTM runs 50 dependent time steps of [32, 256] @ [256, 1024] matmuls. Ours runs the
  whole sequence as one backend op (`burn.tensor.module.lstm`): NdArray projects every step's
  input in one matmul, loops over the steps in numpy with the four gates side by side, and
  records one autodiff node whose backward op loops back through time and then computes each
  weight gradient in one matmul over all steps (the input's gradient is skipped: a batch of
  data needs none). PyTorch's `nn.LSTM` runs its own C++ loop. What is left on our side is
  mostly BLAS: about 1.7 G multiply-adds per step, at the speed of the OpenBLAS kernel in use
  (`OPENBLAS_CORETYPE` above: Haswell, AVX2), while PyTorch's MKL uses AVX-512 on this CPU.
  The GRU runs the same way (three gates, the reset applied after the hidden projection).
- The machine is shared with other jobs; single-threaded runs (`OMP_NUM_THREADS=1
  OPENBLAS_NUM_THREADS=1`, which PyTorch also follows) keep the comparison steady, and ratios
  within about 20% of each other between runs are noise.
"""


def main() -> None:
    def dropout_option(parser):
        parser.add_argument("--dropout", type=float, default=0.1, help="the encoder's dropout")
        parser.add_argument(
            "--only",
            choices=["transformer", "lstm", "gru"],
            help="time one model; its row is printed and RESULTS.md is left as it is",
        )

    args, repeats, warmup = parse_run_args(
        __doc__.splitlines()[0], 10, 2, quick=(3, 1), extra=dropout_option
    )
    info = torch_machine(torch)
    print_start(info, HEADER)
    publish(
        SECTION,
        "bench_nn.py",
        f"median of {repeats} training steps after {warmup} warm-up steps, times in "
        f"milliseconds, float32, encoder dropout {args.dropout}. Ratios above 1 mean "
        "Autodiff(NdArray) is slower. The machine was shared with other jobs while it ran.",
        info,
        HEADER,
        run(repeats, warmup, args.dropout, args.only),
        f"{NOTES}\nReproduce: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 uv run python "
        "benches/bench_nn.py` (the torch columns need torch installed).\n",
        args.quick or args.only is not None,
    )


if __name__ == "__main__":
    main()
