"""`nn.Lstm` and `nn.Gru` against `torch.nn.LSTM` and `torch.nn.GRU` with the same weights:
outputs, final states and every gradient, in float64 and float32 (runs only where torch is
installed). The layers run their sequence as one backend op, so these also check that op's
NdArray loop and its backward through the modules' per-gate parameters."""

from __future__ import annotations

import burn.nn as nn
import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.tensor import DType, Tensor

torch = pytest.importorskip("torch")

BATCH, SEQ, D_INPUT, HIDDEN = 3, 6, 5, 4
GATES = ("input_gate", "forget_gate", "cell_gate", "output_gate")  # torch's row blocks i, f, g, o
GRU_GATES = ("reset_gate", "update_gate", "new_gate")  # torch's row blocks r, z, n
TOL = {DType.F64: 1e-10, DType.F32: 2e-5}


def _pair(dtype: DType, bias: bool, backend, gru: bool = False):
    """Our layer and torch's (an LSTM, or a GRU), holding the same weights."""
    torch.manual_seed(0)
    kind, config, gates = (
        (torch.nn.GRU, nn.GruConfig, GRU_GATES) if gru else (torch.nn.LSTM, nn.LstmConfig, GATES)
    )
    theirs = kind(D_INPUT, HIDDEN, bias=bias, batch_first=True).to(
        torch.float64 if dtype is DType.F64 else torch.float32
    )
    params = {}
    for k, gate in enumerate(gates):
        rows = slice(k * HIDDEN, (k + 1) * HIDDEN)
        for ours, tag in (("input_transform", "ih"), ("hidden_transform", "hh")):
            weight = getattr(theirs, f"weight_{tag}_l0")[rows].detach().numpy()
            params[f"{gate}.{ours}.weight"] = weight.T.copy()
            if bias:
                params[f"{gate}.{ours}.bias"] = getattr(theirs, f"bias_{tag}_l0")[rows].detach()
    layer = config(D_INPUT, HIDDEN, bias).init(backend.device())
    named = dict(layer.named_params())
    assert set(named) == set(params)
    by_id = {p.id: np.asarray(params[path]) for path, p in named.items()}
    layer = layer.map(lambda pid, t: Tensor.from_data(by_id[pid], t.device(), dtype))
    return layer, theirs


def _inputs(dtype: DType):
    rng = np.random.default_rng(1)
    shapes = [(BATCH, SEQ, D_INPUT), (BATCH, HIDDEN), (BATCH, HIDDEN)]
    return [rng.standard_normal(s).astype(dtype.numpy) for s in shapes]


@pytest.mark.parametrize("dtype", [DType.F64, DType.F32])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_forward_matches_torch(dtype, bias):
    layer, theirs = _pair(dtype, bias, NdArray)
    x, h0, c0 = _inputs(dtype)
    device = NdArray.device()
    out, state = layer.forward(
        Tensor.from_data(x, device, dtype),
        nn.LstmState(Tensor.from_data(c0, device, dtype), Tensor.from_data(h0, device, dtype)),
    )
    want, (h_n, c_n) = theirs(torch.tensor(x), (torch.tensor(h0)[None], torch.tensor(c0)[None]))
    tol = TOL[dtype]
    np.testing.assert_allclose(out.to_data().array, want.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(state.hidden.to_data().array, h_n[0].detach(), rtol=tol, atol=tol)
    np.testing.assert_allclose(state.cell.to_data().array, c_n[0].detach(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [DType.F64, DType.F32])
def test_lstm_gradients_match_torch(dtype):
    backend = Autodiff(NdArray)
    layer, theirs = _pair(dtype, True, backend)
    x, h0, c0 = _inputs(dtype)
    device = backend.device()
    xt = Tensor.from_data(x, device, dtype).require_grad()
    h0t = Tensor.from_data(h0, device, dtype).require_grad()
    c0t = Tensor.from_data(c0, device, dtype).require_grad()
    rng = np.random.default_rng(2)
    w_out = rng.standard_normal((BATCH, SEQ, HIDDEN)).astype(dtype.numpy)
    w_c = rng.standard_normal((BATCH, HIDDEN)).astype(dtype.numpy)
    out, state = layer.forward(xt, nn.LstmState(c0t, h0t))
    loss = (out * Tensor.from_data(w_out, device, dtype)).sum() + (
        state.cell * Tensor.from_data(w_c, device, dtype)
    ).sum()
    grads = loss.backward()

    tx = torch.tensor(x, requires_grad=True)
    th0 = torch.tensor(h0[None], requires_grad=True)
    tc0 = torch.tensor(c0[None], requires_grad=True)
    want, (_, c_n) = theirs(tx, (th0, tc0))
    ((want * torch.tensor(w_out)).sum() + (c_n[0] * torch.tensor(w_c)).sum()).backward()

    tol = 1e-9 if dtype is DType.F64 else 1e-4
    for ours, reference in ((xt, tx.grad), (h0t, th0.grad[0]), (c0t, tc0.grad[0])):
        np.testing.assert_allclose(ours.grad(grads).to_data().array, reference, rtol=tol, atol=tol)
    named = dict(layer.named_params())
    for k, gate in enumerate(GATES):
        rows = slice(k * HIDDEN, (k + 1) * HIDDEN)
        for ours, tag in (("input_transform", "ih"), ("hidden_transform", "hh")):
            weight = named[f"{gate}.{ours}.weight"].val().grad(grads).to_data().array
            np.testing.assert_allclose(
                weight, getattr(theirs, f"weight_{tag}_l0").grad[rows].T, rtol=tol, atol=tol
            )
            bias = named[f"{gate}.{ours}.bias"].val().grad(grads).to_data().array
            np.testing.assert_allclose(
                bias, getattr(theirs, f"bias_{tag}_l0").grad[rows], rtol=tol, atol=tol
            )


@pytest.mark.parametrize("dtype", [DType.F64, DType.F32])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_matches_torch(dtype, bias):
    """Outputs and every gradient (input, initial state, each gate's weights and biases)."""
    backend = Autodiff(NdArray)
    layer, theirs = _pair(dtype, bias, backend, gru=True)
    x, h0, _ = _inputs(dtype)
    device = backend.device()
    xt = Tensor.from_data(x, device, dtype).require_grad()
    h0t = Tensor.from_data(h0, device, dtype).require_grad()
    w_out = np.random.default_rng(2).standard_normal((BATCH, SEQ, HIDDEN)).astype(dtype.numpy)
    out = layer.forward(xt, h0t)
    grads = (out * Tensor.from_data(w_out, device, dtype)).sum().backward()

    tx = torch.tensor(x, requires_grad=True)
    th0 = torch.tensor(h0[None], requires_grad=True)
    want, _ = theirs(tx, th0)
    (want * torch.tensor(w_out)).sum().backward()

    tol = 1e-9 if dtype is DType.F64 else 1e-4
    np.testing.assert_allclose(out.to_data().array, want.detach(), rtol=tol, atol=tol)
    for ours, reference in ((xt, tx.grad), (h0t, th0.grad[0])):
        np.testing.assert_allclose(ours.grad(grads).to_data().array, reference, rtol=tol, atol=tol)
    for path, p in layer.named_params():
        gate, ours, kind = path.split(".")
        k, tag = GRU_GATES.index(gate), "ih" if ours == "input_transform" else "hh"
        reference = getattr(theirs, f"{kind}_{tag}_l0").grad[k * HIDDEN : (k + 1) * HIDDEN]
        got = p.val().grad(grads).to_data().array
        np.testing.assert_allclose(
            got, reference.T if kind == "weight" else reference, rtol=tol, atol=tol, err_msg=path
        )
