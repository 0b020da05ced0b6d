"""`NdArrayRecurrentOps`: the LSTM and GRU sequence ops and their backward as numpy loops.

The contract's defaults already project the input of every step in one matmul; what is left is
the number of numpy calls per step, which is what a 50-step sequence of `[32, 256]` states
costs. So the loops here work time-major in preallocated buffers (each step reads and writes
contiguous rows), and apply the four gate activations as one `tanh` over `[batch, 4 * hidden]`:
`sigmoid(z) = (tanh(z / 2) + 1) / 2`, with the halving folded into the weights' sigmoid columns
once per call. The backward op computes everything that does not depend on the step-to-step
recursion for a run of steps at once (small enough to stay in cache until those steps use it),
so each step is a handful of elementwise calls and one matmul (by the recurrent weight, whole
or, where that times faster, as a batch of small products over its blocks: `_RecurrentProduct`);
the weight gradients are then one matmul each over all steps (the contract's
`lstm_inputs_backward`, which is numpy matmuls here already).

Float16/bfloat16 inputs run in float32 and the results are cast back, as in `module_ops.py`.
"""

from __future__ import annotations

import numpy as np
from burn.backend.ops.recurrent import RecurrentOps
from burn.ndarray.autotune import RECURRENT_AUTOTUNE


def _work(a: np.ndarray) -> np.ndarray:
    """`a` in a dtype BLAS computes well: half precision goes through float32."""
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def _transposed(w: np.ndarray, work: np.dtype) -> np.ndarray:
    """`w.T` as its own contiguous array, for the backward's step-by-step products `dz @ w.T`.

    BLAS takes a transposed view without a copy, but for the few rows of a batch it runs that
    case markedly slower (OpenBLAS's AVX-512 kernels: 50 products `[32, 1024] @ [1024, 256]`
    took 12.7 ms against a view, 8.2 ms against a copy); one copy per call serves every step."""
    return np.ascontiguousarray(w.astype(work, copy=False).T)


def _tanh_form(width: int, hidden: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Per-column `(scale, offset)`: gate = tanh(scale * z) * scale + offset for i, f, g, o."""
    scale = np.full(width, 0.5, dtype)
    scale[2 * hidden : 3 * hidden] = 1.0
    offset = np.where(scale == 0.5, 0.5, 0.0).astype(dtype)
    return scale, offset


# The blocks of `_RecurrentProduct`'s blocked layout: columns of the fixed matrix per block,
# and rows (the product's inner dimension) per block where it has more.
_PRODUCT_COLUMNS = 32
_PRODUCT_DEPTH = 256


class _RecurrentProduct:
    """`h @ w` at every step of a sequence, for one fixed `w [K, N]`: one matmul, or
    (`blocked`) a batch of small matmuls over contiguous blocks of `w` (`_PRODUCT_COLUMNS`
    columns by `_PRODUCT_DEPTH` rows), written in place into their columns of the output (the
    blocks along `K` summed).

    A product of a batch's few rows is mostly BLAS packing `w` again at every step. OpenBLAS
    (AVX-512 kernels, one thread) ran the LSTM's `[32, 256] @ [256, 1024]` in about 135 us as
    one product and about 100 us as 32 products of 32 columns, which it computes without
    packing; its backward's `[32, 1024] @ [1024, 256]` in about 150 us, and in about 120 us as
    4 x 8 blocks. Which layout wins depends on the BLAS and the shapes, so the LSTM and GRU ops
    time both on their first call for a shape (`_tuned`)."""

    def __init__(self, w: np.ndarray, blocked: bool):
        self.w = w
        self.blocks = None
        self._parts: np.ndarray | None = None
        if blocked:
            k, n = w.shape
            depth = _PRODUCT_DEPTH if k % _PRODUCT_DEPTH == 0 else k
            grid = w.reshape(k // depth, depth, n // _PRODUCT_COLUMNS, _PRODUCT_COLUMNS)
            self.blocks = np.ascontiguousarray(grid.transpose(0, 2, 1, 3))

    def into(self, h: np.ndarray, out: np.ndarray) -> np.ndarray:
        """`out[...] = h @ w` (`out` a contiguous `[batch, N]`); returns `out`."""
        if self.blocks is None:
            return np.matmul(h, self.w, out=out)
        depths, columns, depth, width = self.blocks.shape
        batch = h.shape[0]
        placed = out.reshape(batch, columns, width).swapaxes(0, 1)
        if depths == 1:
            np.matmul(h, self.blocks[0], out=placed)
            return out
        if self._parts is None or self._parts.shape[2] != batch:
            self._parts = np.empty((depths, columns, batch, width), out.dtype)
        rows = h.reshape(batch, depths, depth).swapaxes(0, 1)[:, None]
        np.matmul(rows, self.blocks, out=self._parts)
        np.sum(self._parts, axis=0, out=placed)
        return out


def _tuned(kind: str, run, x: np.ndarray, w: np.ndarray):
    """`run(blocked)`, with the layout of the product by the fixed `w` (`_RecurrentProduct`)
    that ran faster on the first call for these shapes."""
    width = w.shape[1]
    if width % _PRODUCT_COLUMNS or width == _PRODUCT_COLUMNS or x.size == 0:
        return run(False)
    key = (kind, x.shape, w.shape, x.dtype.str)
    return RECURRENT_AUTOTUNE.run(key, [lambda: run(False), lambda: run(True)])


def _forward(x, w_ih, w_hh, bias, h0, c0, blocked=False):
    """`(states, gates)` in the contract's batch-first layouts (transposed views)."""
    batch, seq, d_input = x.shape
    hidden = h0.shape[1]
    xw = _work(x)
    work = xw.dtype
    scale, offset = _tanh_form(4 * hidden, hidden, work)
    w_in = w_ih.astype(work) * scale
    w_rec = w_hh.astype(work) * scale
    time_major = np.ascontiguousarray(xw.transpose(1, 0, 2)).reshape(seq * batch, d_input)
    projected = time_major @ w_in
    if bias is not None:
        projected += bias.astype(work) * scale
    projected = projected.reshape(seq, batch, 4 * hidden)
    states = np.empty((2, seq, batch, hidden), work)
    gates = np.empty((seq, batch, 4 * hidden), work)
    h, c = h0.astype(work, copy=False), c0.astype(work, copy=False)
    recurrent = _RecurrentProduct(w_rec, blocked)
    for t in range(seq):
        z = gates[t]
        recurrent.into(h, z)
        z += projected[t]
        np.tanh(z, out=z)
        z *= scale
        z += offset
        c_t, h_t = states[1, t], states[0, t]
        np.multiply(z[:, hidden : 2 * hidden], c, out=c_t)
        c_t += z[:, :hidden] * z[:, 2 * hidden : 3 * hidden]
        np.tanh(c_t, out=h_t)
        h_t *= z[:, 3 * hidden :]
        h, c = h_t, c_t
    return (
        states.transpose(0, 2, 1, 3).astype(x.dtype, copy=False),
        gates.transpose(1, 0, 2).astype(x.dtype, copy=False),
    )


# Time steps whose backward factors (LSTM and GRU) are computed together: about 1.3 MB of
# factors at the benchmark's [32, 256] states, which stay in cache while the steps consume them
# (computed for all 50 steps at once they were passes over 6.5 MB arrays, out to memory and
# back).
_FACTOR_STEPS = 8


def _backward(w_hh, h0, c0, states, gates, grad, blocked=False):
    _, batch, seq, hidden = states.shape
    work = _work(states[:1, :1, :1]).dtype
    # Time-major views: [seq, batch, ...] (contiguous when `states` came from `_forward`).
    cs = _work(states[1]).transpose(1, 0, 2)
    gt = _work(gates).transpose(1, 0, 2)
    c_first = c0.astype(work)
    grad_h = _work(grad[0]).transpose(1, 0, 2)
    grad_c = _work(grad[1]).transpose(1, 0, 2)
    recurrent = _RecurrentProduct(_transposed(w_hh, work), blocked)
    # Batch first, as the contract returns it: each step writes strided rows, and the matmuls
    # that follow (in `lstm_inputs_backward`) read it as one contiguous [batch * seq, 4H].
    dz = np.empty((batch, seq, 4, hidden), work)
    dh = np.zeros((batch, hidden), work)
    dc = np.zeros((batch, hidden), work)
    steps = min(_FACTOR_STEPS, max(seq, 1))
    through_h = np.empty((steps, batch, hidden), work)
    to_ifg = np.empty((steps, batch, 3, hidden), work)
    to_o = np.empty((steps, batch, hidden), work)
    tanh_c = np.empty((steps, batch, hidden), work)
    scratch = np.empty((steps, batch, hidden), work)
    for end in range(seq, 0, -steps):
        start = max(0, end - steps)
        n = end - start
        _lstm_factors(
            gt[start:end],
            cs[start:end],
            cs[start - 1 : end - 1] if start else None,
            c_first,
            hidden,
            (through_h[:n], to_ifg[:n], to_o[:n], tanh_c[:n], scratch[:n]),
        )
        f = gt[start:end, :, hidden : 2 * hidden]
        for t in range(end - 1, start - 1, -1):
            k = t - start
            dh = grad_h[t] + dh
            dc = grad_c[t] + dc
            dc += dh * through_h[k]
            np.multiply(dc[:, None, :], to_ifg[k], out=dz[:, t, :3])
            np.multiply(dh, to_o[k], out=dz[:, t, 3])
            dc *= f[k]
            dh = recurrent.into(dz[:, t].reshape(batch, 4 * hidden), np.empty_like(dh))
    dtype = states.dtype
    return (
        dz.reshape(batch, seq, 4 * hidden).astype(dtype, copy=False),
        dh.astype(dtype, copy=False),
        dc.astype(dtype, copy=False),
    )


def _lstm_factors(gt, cs, c_before, c_first, hidden, out) -> None:
    """The factors each backward step multiplies by, for a run of steps at once, written into
    `out` = (through_h, to_ifg, to_o, tanh_c, scratch): the same products, in the same order,
    as `o * (1 - tanh(c)^2)`, `[g i (1 - i), c_prev f (1 - f), i (1 - g^2)]` and
    `tanh(c) o (1 - o)`. `c_before` is the cell state of the steps before (None when the run
    starts at step 0, whose previous state is `c_first`)."""
    through_h, to_ifg, to_o, tanh_c, scratch = out
    i, f = gt[..., :hidden], gt[..., hidden : 2 * hidden]
    g, o = gt[..., 2 * hidden : 3 * hidden], gt[..., 3 * hidden :]
    np.tanh(cs, out=tanh_c)
    np.multiply(tanh_c, tanh_c, out=scratch)
    np.subtract(1.0, scratch, out=scratch)
    np.multiply(o, scratch, out=through_h)
    np.subtract(1.0, i, out=scratch)
    np.multiply(g, i, out=to_ifg[:, :, 0])
    to_ifg[:, :, 0] *= scratch
    prev = _previous_states(cs, c_before, c_first, scratch)
    np.multiply(prev, f, out=to_ifg[:, :, 1])
    np.subtract(1.0, f, out=scratch)
    to_ifg[:, :, 1] *= scratch
    np.multiply(g, g, out=scratch)
    np.subtract(1.0, scratch, out=scratch)
    np.multiply(i, scratch, out=to_ifg[:, :, 2])
    np.multiply(tanh_c, o, out=to_o)
    np.subtract(1.0, o, out=scratch)
    to_o *= scratch


def _previous_states(run, before, first, scratch):
    """The state before each step of a run: `before` (the states of the steps before the run),
    or, for a run starting at step 0 (`before` None), `first` then the run's own states but
    its last, written into `scratch`."""
    if before is not None:
        return before
    scratch[0] = first
    if len(run) > 1:
        scratch[1:] = run[:-1]
    return scratch


def _gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, blocked=False):
    """`(states, gates)` of the GRU, batch first (transposed views of time-major buffers)."""
    batch, seq, d_input = x.shape
    hidden = h0.shape[1]
    xw = _work(x)
    work = xw.dtype
    time_major = np.ascontiguousarray(xw.transpose(1, 0, 2)).reshape(seq * batch, d_input)
    projected = time_major @ w_ih.astype(work, copy=False)
    if b_ih is not None:
        projected += b_ih.astype(work, copy=False)
    projected = projected.reshape(seq, batch, 3 * hidden)
    w_rec = w_hh.astype(work, copy=False)
    b_rec = None if b_hh is None else b_hh.astype(work, copy=False)
    states = np.empty((seq, batch, hidden), work)
    gates = np.empty((seq, batch, 4 * hidden), work)
    from_h = np.empty((batch, 3 * hidden), work)
    h = h0.astype(work, copy=False)
    recurrent = _RecurrentProduct(w_rec, blocked)
    for t in range(seq):
        recurrent.into(h, from_h)
        if b_rec is not None:
            from_h += b_rec
        g = gates[t]
        rz, n, h_n = g[:, : 2 * hidden], g[:, 2 * hidden : 3 * hidden], g[:, 3 * hidden :]
        # sigmoid(v) = (tanh(v / 2) + 1) / 2, for r and z at once
        np.add(projected[t, :, : 2 * hidden], from_h[:, : 2 * hidden], out=rz)
        rz *= 0.5
        np.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        h_n[...] = from_h[:, 2 * hidden :]
        np.multiply(g[:, :hidden], h_n, out=n)
        n += projected[t, :, 2 * hidden :]
        np.tanh(n, out=n)
        h_t = states[t]
        np.subtract(h, n, out=h_t)
        h_t *= g[:, hidden : 2 * hidden]
        h_t += n
        h = h_t
    return (
        states.transpose(1, 0, 2).astype(x.dtype, copy=False),
        gates.transpose(1, 0, 2).astype(x.dtype, copy=False),
    )


def _gru_backward(w_hh, h0, states, gates, grad, blocked=False):
    batch, seq, hidden = states.shape
    work = _work(states[:1, :1, :1]).dtype
    hs = _work(states).transpose(1, 0, 2)
    gt = _work(gates).transpose(1, 0, 2)
    h_first = h0.astype(work)
    grad_h = _work(grad).transpose(1, 0, 2)
    recurrent = _RecurrentProduct(_transposed(w_hh, work), blocked)
    through = np.empty((batch, hidden), work)
    d_in = np.empty((batch, seq, 3 * hidden), work)
    d_hid = np.empty((batch, seq, 3 * hidden), work)
    dh = np.zeros((batch, hidden), work)
    steps = min(_FACTOR_STEPS, max(seq, 1))
    factors = np.empty((5, steps, batch, hidden), work)  # to_n, to_z, to_r and two scratch
    for end in range(seq, 0, -steps):
        start = max(0, end - steps)
        to_n, to_z, to_r = _gru_factors(
            gt[start:end],
            hs[start - 1 : end - 1] if start else None,
            hs[start:end],
            h_first,
            hidden,
            factors[:, : end - start],
        )
        r, z = gt[start:end, :, :hidden], gt[start:end, :, hidden : 2 * hidden]
        for t in range(end - 1, start - 1, -1):
            k = t - start
            dh = grad_h[t] + dh
            gi, gh = d_in[:, t], d_hid[:, t]
            dn = gi[:, 2 * hidden :]
            np.multiply(dh, to_n[k], out=dn)
            np.multiply(dh, to_z[k], out=gi[:, hidden : 2 * hidden])
            np.multiply(dn, to_r[k], out=gi[:, :hidden])
            gh[:, : 2 * hidden] = gi[:, : 2 * hidden]
            np.multiply(dn, r[k], out=gh[:, 2 * hidden :])
            dh = dh * z[k]
            dh += recurrent.into(gh, through)
    dtype = states.dtype
    return (
        d_in.astype(dtype, copy=False),
        d_hid.astype(dtype, copy=False),
        dh.astype(dtype, copy=False),
    )


def _gru_factors(gt, h_before, hs, h_first, hidden, buffers):
    """The GRU backward's factors for a run of steps, into `buffers` [5, steps, batch, hidden]:
    `(1 - z) (1 - n^2)`, `(h_prev - n) z (1 - z)` and `h_n r (1 - r)`, the same products in the
    same order as computed for the whole sequence. `h_before` is the state of the steps before
    (None when the run starts at step 0, whose previous state is `h_first`)."""
    to_n, to_z, to_r, one_minus_z, scratch = buffers
    r, z = gt[..., :hidden], gt[..., hidden : 2 * hidden]
    n, h_n = gt[..., 2 * hidden : 3 * hidden], gt[..., 3 * hidden :]
    np.subtract(1.0, z, out=one_minus_z)
    np.multiply(n, n, out=scratch)
    np.subtract(1.0, scratch, out=scratch)
    np.multiply(one_minus_z, scratch, out=to_n)
    prev = _previous_states(hs, h_before, h_first, scratch)
    np.subtract(prev, n, out=to_z)
    to_z *= z
    to_z *= one_minus_z
    np.multiply(h_n, r, out=to_r)
    np.subtract(1.0, r, out=scratch)
    to_r *= scratch
    return to_n, to_z, to_r


class NdArrayRecurrentOps:
    """Numpy overrides of `RecurrentOps`. `lstm` and `gru` keep the contract's defaults (these
    `*_with_gates`, whose gates cost one buffer and no extra work), so that under autodiff the
    op that runs is the one overridden."""

    def lstm_with_gates(self, x, w_ih, w_hh, bias, h0, c0):
        return _tuned(
            "lstm", lambda blocked: _forward(x, w_ih, w_hh, bias, h0, c0, blocked), x, w_hh
        )

    def lstm_backward(self, w_hh, h0, c0, states, gates, grad):
        def run(blocked):
            return _backward(w_hh, h0, c0, states, gates, grad, blocked)

        return _tuned("lstm backward", run, states, w_hh.T)

    def gru_with_gates(self, x, w_ih, w_hh, b_ih, b_hh, h0):
        return _tuned(
            "gru", lambda blocked: _gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, blocked), x, w_hh
        )

    def gru_backward(self, w_hh, h0, states, gates, grad):
        def run(blocked):
            return _gru_backward(w_hh, h0, states, gates, grad, blocked)

        return _tuned("gru backward", run, states, w_hh.T)


for _name in ("lstm_with_gates", "lstm_backward", "gru_with_gates", "gru_backward"):
    getattr(NdArrayRecurrentOps, _name).__doc__ = getattr(RecurrentOps, _name).__doc__
