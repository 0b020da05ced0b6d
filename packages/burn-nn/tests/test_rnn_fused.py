"""`Lstm` and `Gru` run their sequence as one backend op with the gates' weights side by side;
here that path is compared with the per-gate formulation written with tensor ops (each gate's
`GateController`), including layers whose gates do not all have biases."""

from __future__ import annotations

import burn.nn as nn
import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.nn.linear import Linear
from burn.tensor import Tensor
from burn.tensor import activation as F  # noqa: N812 - the functional module


def _steps(x: Tensor):
    batch, seq, d = x.dims()
    for t in range(seq):
        yield x.narrow(1, t, 1).reshape([batch, d])


def _lstm_by_gates(layer: nn.Lstm, x: Tensor) -> Tensor:
    h = c = Tensor.zeros([x.dims()[0], layer.d_hidden], x.device())
    outputs = []
    for xt in _steps(x):
        i = F.sigmoid(layer.input_gate.gate_product(xt, h))
        f = F.sigmoid(layer.forget_gate.gate_product(xt, h))
        g = F.tanh(layer.cell_gate.gate_product(xt, h))
        o = F.sigmoid(layer.output_gate.gate_product(xt, h))
        c = f * c + i * g
        h = o * F.tanh(c)
        outputs.append(h)
    return Tensor.stack(outputs, 1)


def _gru_by_gates(layer: nn.Gru, x: Tensor) -> Tensor:
    h = Tensor.zeros([x.dims()[0], layer.d_hidden], x.device())
    outputs = []
    for xt in _steps(x):
        z = F.sigmoid(layer.update_gate.gate_product(xt, h))
        r = F.sigmoid(layer.reset_gate.gate_product(xt, h))
        new = layer.new_gate
        n = F.tanh(new.input_transform.forward(xt) + r * new.hidden_transform.forward(h))
        h = (1.0 - z) * n + z * h
        outputs.append(h)
    return Tensor.stack(outputs, 1)


def _without_bias(linear: Linear) -> Linear:
    return Linear(linear.weight, None)


@pytest.mark.parametrize("backend", [NdArray, Autodiff(NdArray)], ids=["ndarray", "autodiff"])
@pytest.mark.parametrize("partial", [False, True])
def test_lstm_fused_matches_gates(backend, partial):
    layer = nn.LstmConfig(3, 4, True).init(backend.device())
    if partial:
        layer.forget_gate.hidden_transform = _without_bias(layer.forget_gate.hidden_transform)
        layer.cell_gate.input_transform = _without_bias(layer.cell_gate.input_transform)
    x = Tensor[backend, 3].from_data(np.random.default_rng(0).random((2, 5, 3)), backend.device())
    out, state = layer.forward(x)
    want = _lstm_by_gates(layer, x).to_data().array
    np.testing.assert_allclose(out.to_data().array, want, atol=1e-6)
    np.testing.assert_allclose(state.hidden.to_data().array, want[:, -1], atol=1e-6)


@pytest.mark.parametrize("backend", [NdArray, Autodiff(NdArray)], ids=["ndarray", "autodiff"])
@pytest.mark.parametrize("partial", [False, True])
def test_gru_fused_matches_gates(backend, partial):
    layer = nn.GruConfig(3, 4, True).init(backend.device())
    if partial:
        layer.update_gate.hidden_transform = _without_bias(layer.update_gate.hidden_transform)
        layer.new_gate.hidden_transform = _without_bias(layer.new_gate.hidden_transform)
    x = Tensor[backend, 3].from_data(np.random.default_rng(1).random((2, 5, 3)), backend.device())
    want = _gru_by_gates(layer, x).to_data().array
    np.testing.assert_allclose(layer.forward(x).to_data().array, want, atol=1e-6)
