"""Recurrent layers: `Lstm` and `Gru`, built from `GateController`s, batch first.

The LSTM and the GRU (in its default `reset_after` form) run their whole sequence as one backend
op (`burn.tensor.module.lstm` and `gru`, with the gates' weights side by side), so NdArray runs
it as one numpy loop and an autodiff backend records one node for it; the GRU with
`reset_after=False` runs step by step with tensor ops.

Each gate is a `GateController`: one `Linear` for the input and one for the hidden state, so a
gate's pre-activation is `W_x x + b_x + W_h h + b_h`, PyTorch's formulation (both biases), and
PyTorch weights load gate by gate (its `weight_ih` rows are the gates, in the order i, f, g, o
for the LSTM and r, z, n for the GRU).
"""

from __future__ import annotations

from typing import NamedTuple

from burn.module import Module
from burn.nn._config import config
from burn.nn.initializer import Initializer, XavierNormal
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import Tensor, module
from burn.tensor import activation as F  # noqa: N812 - the functional module


class GateController(Module):
    """A gate's two projections: `input_transform` (d_input -> d_output) and
    `hidden_transform` (d_output -> d_output)."""

    input_transform: Linear
    hidden_transform: Linear

    def __init__(self, input_transform: Linear, hidden_transform: Linear):
        self.input_transform = input_transform
        self.hidden_transform = hidden_transform

    @classmethod
    def new(cls, d_input: int, d_output: int, bias: bool, initializer: Initializer, device=None):
        """Both projections drawn from `initializer` (Burn's `GateController::new`)."""

        def linear(d_in: int) -> Linear:
            return LinearConfig(d_in, d_output, bias=bias, initializer=initializer).init(device)

        return cls(linear(d_input), linear(d_output))

    def gate_product(self, x: Tensor, hidden: Tensor) -> Tensor:
        """`W_x x + b_x + W_h h + b_h`, before the gate's activation."""
        return self.input_transform.forward(x) + self.hidden_transform.forward(hidden)


class LstmState(NamedTuple):
    """The cell and hidden states, each `[batch, d_hidden]`."""

    cell: Tensor
    hidden: Tensor


@config
class LstmConfig:
    """Burn's defaults: Xavier-normal weights (gain 1) for every gate."""

    d_input: int
    d_hidden: int
    bias: bool
    initializer: Initializer = XavierNormal(gain=1.0)

    def init(self, device=None) -> Lstm:
        def gate() -> GateController:
            return GateController.new(
                self.d_input, self.d_hidden, self.bias, self.initializer, device
            )

        return Lstm(gate(), gate(), gate(), gate(), self.d_hidden)


def _steps(x: Tensor):
    """The time steps of `[batch, seq, d]` as `[batch, d]` tensors."""
    batch, seq, d = x.dims()
    for t in range(seq):
        yield x.narrow(1, t, 1).reshape([batch, d])


class Lstm(Module):
    """Long short-term memory over `[batch, seq, d_input]`.

    `forward(x, state)` returns the hidden state of every step, `[batch, seq, d_hidden]`, and
    the final `LstmState`; the state starts at zeros unless given.
    """

    def __init__(
        self,
        input_gate: GateController,
        forget_gate: GateController,
        output_gate: GateController,
        cell_gate: GateController,
        d_hidden: int,
    ):
        self.input_gate = input_gate
        self.forget_gate = forget_gate
        self.output_gate = output_gate
        self.cell_gate = cell_gate
        self.d_hidden = int(d_hidden)

    def forward(self, x: Tensor, state: LstmState | None = None) -> tuple[Tensor, LstmState]:
        batch = x.dims()[0]
        if state is None:
            zeros = Tensor.zeros([batch, self.d_hidden], x.device(), x.dtype)
            state = LstmState(zeros, zeros)
        w_ih, w_hh, bias = self.fused_weights()
        output, hidden, cell = module.lstm(x, w_ih, w_hh, bias, state.hidden, state.cell)
        return output, LstmState(cell, hidden)

    def fused_weights(self) -> tuple[Tensor, Tensor, Tensor | None]:
        """`(w_ih, w_hh, bias)` with the gates side by side in PyTorch's order i, f, g, o, as
        `burn.tensor.module.lstm` takes them; `bias` sums the input and hidden biases (None
        without biases). Built per call from the gates, so gradients reach each gate's own
        parameters and records keep their per-gate layout."""
        gates = (self.input_gate, self.forget_gate, self.cell_gate, self.output_gate)
        w_ih = Tensor.cat([g.input_transform.weight.val() for g in gates], 1)
        w_hh = Tensor.cat([g.hidden_transform.weight.val() for g in gates], 1)
        b_ih = _biases([g.input_transform for g in gates])
        b_hh = _biases([g.hidden_transform for g in gates])
        bias = b_hh if b_ih is None else b_ih if b_hh is None else b_ih + b_hh
        return w_ih, w_hh, bias

    __call__ = forward


@config
class GruConfig:
    """`reset_after`: apply the reset gate after the hidden projection (PyTorch's and cuDNN's
    form, the default); False applies it to the hidden state before."""

    d_input: int
    d_hidden: int
    bias: bool
    reset_after: bool = True
    initializer: Initializer = XavierNormal(gain=1.0)

    def init(self, device=None) -> Gru:
        def gate() -> GateController:
            return GateController.new(
                self.d_input, self.d_hidden, self.bias, self.initializer, device
            )

        return Gru(gate(), gate(), gate(), self.d_hidden, self.reset_after)


class Gru(Module):
    """Gated recurrent unit over `[batch, seq, d_input]`.

    `forward(x, state)` returns the hidden state of every step, `[batch, seq, d_hidden]`; the
    state (`[batch, d_hidden]`) starts at zeros unless given.
    """

    def __init__(
        self,
        update_gate: GateController,
        reset_gate: GateController,
        new_gate: GateController,
        d_hidden: int,
        reset_after: bool = True,
    ):
        self.update_gate = update_gate
        self.reset_gate = reset_gate
        self.new_gate = new_gate
        self.d_hidden = int(d_hidden)
        self.reset_after = bool(reset_after)

    def forward(self, x: Tensor, state: Tensor | None = None) -> Tensor:
        batch = x.dims()[0]
        hidden = state
        if hidden is None:
            hidden = Tensor.zeros([batch, self.d_hidden], x.device(), x.dtype)
        if self.reset_after:
            w_ih, w_hh, b_ih, b_hh = self.fused_weights()
            return module.gru(x, w_ih, w_hh, b_ih, b_hh, hidden)[0]
        outputs = []
        for xt in _steps(x):
            z = F.sigmoid(self.update_gate.gate_product(xt, hidden))
            r = F.sigmoid(self.reset_gate.gate_product(xt, hidden))
            new = self.new_gate
            if self.reset_after:
                n = F.tanh(
                    new.input_transform.forward(xt) + r * new.hidden_transform.forward(hidden)
                )
            else:
                n = F.tanh(new.gate_product(xt, r * hidden))
            hidden = (1.0 - z) * n + z * hidden
            outputs.append(hidden)
        return Tensor.stack(outputs, 1)

    def fused_weights(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """`(w_ih, w_hh, b_ih, b_hh)` with the gates side by side in PyTorch's order r, z, n,
        as `burn.tensor.module.gru` takes them (the biases None without biases). Built per
        call from the gates, so gradients reach each gate's own parameters."""
        gates = (self.reset_gate, self.update_gate, self.new_gate)
        w_ih = Tensor.cat([g.input_transform.weight.val() for g in gates], 1)
        w_hh = Tensor.cat([g.hidden_transform.weight.val() for g in gates], 1)
        return (
            w_ih,
            w_hh,
            _biases([g.input_transform for g in gates]),
            _biases([g.hidden_transform for g in gates]),
        )

    __call__ = forward


def _biases(linears: list[Linear]) -> Tensor | None:
    """The biases of `linears` joined (zeros for one without), or None when none has one."""
    if all(lin.bias is None for lin in linears):
        return None
    parts = []
    for lin in linears:
        if lin.bias is not None:
            parts.append(lin.bias.val())
        else:
            weight = lin.weight.val()
            parts.append(Tensor.zeros([weight.dims()[1]], weight.device(), weight.dtype))
    return Tensor.cat(parts, 0)
