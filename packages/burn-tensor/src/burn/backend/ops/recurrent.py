"""Recurrent module ops: a whole LSTM or GRU sequence as one op, and its backward as another.

A recurrent layer written with tensor ops records a dozen small ops per time step; PyTorch runs
one fused cell per step with a dedicated backward. Here the whole sequence is one contract op,
so a backend can run it as one loop of its own (NdArray does, in numpy) and the autodiff
decorator records one node for it, whose rule is the backward op below (backpropagation through
time, also one op, giving the gradient of every step's gates) followed by one matmul per
parameter that needs a gradient (`lstm_inputs_backward`).

Layouts (batch first, Burn's `Linear` orientation, PyTorch's gate order i, f, g, o):

- `x [batch, seq, d_input]`, `w_ih [d_input, 4 * d_hidden]`, `w_hh [d_hidden, 4 * d_hidden]`,
  `bias [4 * d_hidden]` (or None; PyTorch's two biases summed), `h0`, `c0 [batch, d_hidden]`;
- `states [2, batch, seq, d_hidden]`: `states[0]` the hidden state after each step (the layer's
  output), `states[1]` the cell state after each step. One primitive, so that one autodiff node
  carries both; the final states are the last step of each;
- `gates [batch, seq, 4 * d_hidden]`: the gates after their activations (sigmoid for i, f, o,
  tanh for g), which the backward op reuses instead of recomputing them.

The GRU follows PyTorch's form (gates r, z, n; the reset gate applied after the hidden
projection; both biases kept apart, since `b_hh`'s new-gate part is reset with it): `w_ih
[d_input, 3 * d_hidden]`, `w_hh [d_hidden, 3 * d_hidden]`, `b_ih`, `b_hh [3 * d_hidden]` (or
None), `h0 [batch, d_hidden]`; its states are `[batch, seq, d_hidden]` (the hidden state is
all it has), its gates `[batch, seq, 4 * d_hidden]`: r, z, n and the new gate's hidden
projection `h W_hn + b_hn`.

The defaults are written with the contract's named ops (`float_matmul`, `sigmoid`,
`float_tanh`...), so every backend runs them unchanged: one matmul projects the input of every
step at once, then each step is one matmul against `w_hh` and a few elementwise ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from burn.backend.ops.primitive import PrimitiveOps as _Core
else:
    _Core = object


class RecurrentOps(_Core):
    """`lstm`, `gru`, their `*_with_gates`, `*_backward` and `*_inputs_backward`, with
    defaults built from named ops."""

    if TYPE_CHECKING:
        # Named ops of the other groups; `Backend` mixes them all in.
        def float_add(self, lhs: Any, rhs: Any) -> Any: ...

        def float_sub(self, lhs: Any, rhs: Any) -> Any: ...

        def float_mul(self, lhs: Any, rhs: Any) -> Any: ...

        def float_matmul(self, lhs: Any, rhs: Any) -> Any: ...

        def float_tanh(self, tensor: Any) -> Any: ...

        def float_cat(self, tensors: list[Any], dim: int) -> Any: ...

        def float_sum_dim(self, tensor: Any, dim: int) -> Any: ...

        def sigmoid(self, x: Any) -> Any: ...

    # ------------------------------------------------------------------ public ops
    def lstm(self, x: Any, w_ih: Any, w_hh: Any, bias: Any, h0: Any, c0: Any) -> Any:
        """LSTM over `x [batch, seq, d_input]` from `(h0, c0)`: `states [2, batch, seq, hidden]`
        (hidden states, then cell states, of every step). Gates i, f, g, o in the columns of
        `w_ih [d_input, 4 * hidden]` and `w_hh [hidden, 4 * hidden]`; `bias [4 * hidden]` or
        None."""
        return self.lstm_with_gates(x, w_ih, w_hh, bias, h0, c0)[0]

    def lstm_with_gates(
        self, x: Any, w_ih: Any, w_hh: Any, bias: Any, h0: Any, c0: Any
    ) -> tuple[Any, Any]:
        """`(states, gates)`: `lstm`'s states and the activated gates `[batch, seq, 4 * hidden]`
        (i, f, g, o) that `lstm_backward` needs."""
        batch, seq, _ = self.shape(x)
        hidden = self.shape(h0)[1]
        projected = self._lstm_project(x, w_ih, bias)
        h, c = h0, c0
        hs, cs, gates = [], [], []
        for t in range(seq):
            z = self.float_add(self._rnn_step(projected, t), self.float_matmul(h, w_hh))
            i, f, g, o = self._lstm_activate(z, hidden)
            c = self.float_add(self.float_mul(f, c), self.float_mul(i, g))
            h = self.float_mul(o, self.float_tanh(c))
            hs.append(h)
            cs.append(c)
            gates.append(self.float_cat([i, f, g, o], 1))
        states = self.float_cat([self._rnn_over_time(hs, 0), self._rnn_over_time(cs, 0)], 0)
        return states, self._rnn_over_time(gates)

    def lstm_backward(
        self, w_hh: Any, h0: Any, c0: Any, states: Any, gates: Any, grad: Any
    ) -> tuple[Any, Any, Any]:
        """Backpropagation through time of `lstm`, given `grad [2, batch, seq, hidden]` (the
        gradient of its states): `(grad_gates, grad_h0, grad_c0)`, with `grad_gates [batch, seq,
        4 * hidden]` the gradient of every step's gate pre-activations. The other gradients are
        one matmul each (`lstm_inputs_backward`), left out where nothing needs them."""
        batch, seq, hidden = self.shape(states)[1:]
        hs, cs = self._rnn_split_states(states)
        c_prev = self._rnn_shifted(c0, cs)
        i, f, g, o = self._lstm_split(gates, hidden)
        tanh_c = self.float_tanh(cs)
        one = self.scalar_like(tanh_c, 1.0)
        # What each step multiplies by, for every step at once (no dependence on the loop).
        through_h = self.float_mul(o, self.float_sub(one, self.float_mul(tanh_c, tanh_c)))
        to_i = self.float_mul(g, self._rnn_sigmoid_slope(i))
        to_f = self.float_mul(c_prev, self._rnn_sigmoid_slope(f))
        to_g = self.float_mul(i, self.float_sub(one, self.float_mul(g, g)))
        to_o = self.float_mul(tanh_c, self._rnn_sigmoid_slope(o))
        grad_h, grad_c = self._rnn_split_states(grad)
        w_hh_t = self.permute(w_hh, (1, 0))
        dh = self.full((batch, hidden), 0, self.dtype(states), self.device_of(states))
        dc = dh
        dzs: list[Any] = [None] * seq
        for t in reversed(range(seq)):
            dh = self.float_add(self._rnn_step(grad_h, t), dh)
            dc = self.float_add(
                self.float_add(self._rnn_step(grad_c, t), dc),
                self.float_mul(dh, self._rnn_step(through_h, t)),
            )
            dz = self.float_cat(
                [
                    self.float_mul(dc, self._rnn_step(to_i, t)),
                    self.float_mul(dc, self._rnn_step(to_f, t)),
                    self.float_mul(dc, self._rnn_step(to_g, t)),
                    self.float_mul(dh, self._rnn_step(to_o, t)),
                ],
                1,
            )
            dzs[t] = dz
            dc = self.float_mul(dc, self._rnn_step(f, t))
            dh = self.float_matmul(dz, w_hh_t)
        return self._rnn_over_time(dzs), dh, dc

    def lstm_inputs_backward(
        self, x: Any, w_ih: Any, h0: Any, states: Any, grad_gates: Any, needed: tuple[bool, ...]
    ) -> tuple[Any, Any, Any, Any]:
        """The gradients of `lstm`'s input and parameters, `(grad_x, grad_w_ih, grad_w_hh,
        grad_bias)`, from `lstm_backward`'s `grad_gates`: one matmul (or sum) each, None where
        `needed` (four booleans, same order) says no."""
        batch, seq, d_input = self.shape(x)
        hidden = self.shape(h0)[1]
        rows = batch * seq
        dz = self.reshape(grad_gates, (rows, 4 * hidden))
        grad_x = grad_w_ih = grad_w_hh = grad_bias = None
        if needed[0]:
            grad_x = self.reshape(
                self.float_matmul(dz, self.permute(w_ih, (1, 0))), (batch, seq, d_input)
            )
        if needed[1]:
            x_rows = self.permute(self.reshape(x, (rows, d_input)), (1, 0))
            grad_w_ih = self.float_matmul(x_rows, dz)
        if needed[2]:
            h_prev = self._rnn_shifted(h0, self._rnn_split_states(states)[0])
            h_rows = self.permute(self.reshape(h_prev, (rows, hidden)), (1, 0))
            grad_w_hh = self.float_matmul(h_rows, dz)
        if needed[3]:
            grad_bias = self.reshape(self.float_sum_dim(dz, 0), (4 * hidden,))
        return grad_x, grad_w_ih, grad_w_hh, grad_bias

    def gru(self, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, h0: Any) -> Any:
        """GRU over `x [batch, seq, d_input]` from `h0`: the hidden state after each step,
        `[batch, seq, hidden]`. Gates r, z, n (PyTorch's order, reset applied after the hidden
        projection) in the columns of `w_ih [d_input, 3 * hidden]` and `w_hh [hidden, 3 *
        hidden]`; `b_ih`, `b_hh [3 * hidden]` or None."""
        return self.gru_with_gates(x, w_ih, w_hh, b_ih, b_hh, h0)[0]

    def gru_with_gates(
        self, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, h0: Any
    ) -> tuple[Any, Any]:
        """`(states, gates)`: `gru`'s states and `[batch, seq, 4 * hidden]` holding r, z, n
        after their activations and the new gate's hidden projection (before the reset), which
        `gru_backward` needs."""
        _, seq, _ = self.shape(x)
        hidden = self.shape(h0)[1]
        projected = self._lstm_project(x, w_ih, b_ih)
        h = h0
        hs, gates = [], []
        for t in range(seq):
            from_h = self.float_matmul(h, w_hh)
            if b_hh is not None:
                from_h = self.float_add(from_h, self.reshape(b_hh, (1, 3 * hidden)))
            x_r, x_z, x_n = self._rnn_split(self._rnn_step(projected, t), hidden, 3)
            h_r, h_z, h_n = self._rnn_split(from_h, hidden, 3)
            r = self.sigmoid(self.float_add(x_r, h_r))
            z = self.sigmoid(self.float_add(x_z, h_z))
            n = self.float_tanh(self.float_add(x_n, self.float_mul(r, h_n)))
            h = self.float_add(n, self.float_mul(z, self.float_sub(h, n)))  # (1 - z) n + z h
            hs.append(h)
            gates.append(self.float_cat([r, z, n, h_n], 1))
        return self._rnn_over_time(hs), self._rnn_over_time(gates)

    def gru_backward(
        self, w_hh: Any, h0: Any, states: Any, gates: Any, grad: Any
    ) -> tuple[Any, Any, Any]:
        """Backpropagation through time of `gru`, given `grad [batch, seq, hidden]`:
        `(grad_input_gates, grad_hidden_gates, grad_h0)`, the gradients of every step's
        `x W_ih + b_ih` and `h W_hh + b_hh` (`[batch, seq, 3 * hidden]` each)."""
        batch, seq, hidden = self.shape(states)
        h_prev = self._rnn_shifted(h0, states)
        r, z, n, h_n = self._rnn_split(gates, hidden, 4)
        one = self.scalar_like(z, 1.0)
        # What each step multiplies by, for every step at once (no dependence on the loop).
        to_n = self.float_mul(self.float_sub(one, z), self.float_sub(one, self.float_mul(n, n)))
        to_z = self.float_mul(self.float_sub(h_prev, n), self._rnn_sigmoid_slope(z))
        to_r = self.float_mul(h_n, self._rnn_sigmoid_slope(r))
        w_hh_t = self.permute(w_hh, (1, 0))
        dh = self.full((batch, hidden), 0, self.dtype(states), self.device_of(states))
        d_in: list[Any] = [None] * seq
        d_hid: list[Any] = [None] * seq
        for t in reversed(range(seq)):
            dh = self.float_add(self._rnn_step(grad, t), dh)
            dn = self.float_mul(dh, self._rnn_step(to_n, t))
            dz = self.float_mul(dh, self._rnn_step(to_z, t))
            dr = self.float_mul(dn, self._rnn_step(to_r, t))
            d_in[t] = self.float_cat([dr, dz, dn], 1)
            d_hid[t] = self.float_cat([dr, dz, self.float_mul(dn, self._rnn_step(r, t))], 1)
            dh = self.float_add(
                self.float_mul(dh, self._rnn_step(z, t)), self.float_matmul(d_hid[t], w_hh_t)
            )
        return self._rnn_over_time(d_in), self._rnn_over_time(d_hid), dh

    def gru_inputs_backward(
        self,
        x: Any,
        w_ih: Any,
        h0: Any,
        states: Any,
        grad_input_gates: Any,
        grad_hidden_gates: Any,
        needed: tuple[bool, ...],
    ) -> tuple[Any, Any, Any, Any, Any]:
        """The gradients of `gru`'s input and parameters, `(grad_x, grad_w_ih, grad_w_hh,
        grad_b_ih, grad_b_hh)`, from `gru_backward`'s gate gradients: one matmul (or sum)
        each, None where `needed` (five booleans, same order) says no."""
        batch, seq, d_input = self.shape(x)
        hidden = self.shape(h0)[1]
        rows = batch * seq
        d_in = self.reshape(grad_input_gates, (rows, 3 * hidden))
        d_hid = self.reshape(grad_hidden_gates, (rows, 3 * hidden))
        out: list[Any] = [None] * 5
        if needed[0]:
            out[0] = self.reshape(
                self.float_matmul(d_in, self.permute(w_ih, (1, 0))), (batch, seq, d_input)
            )
        if needed[1]:
            out[1] = self.float_matmul(self.permute(self.reshape(x, (rows, d_input)), (1, 0)), d_in)
        if needed[2]:
            h_prev = self.reshape(self._rnn_shifted(h0, states), (rows, hidden))
            out[2] = self.float_matmul(self.permute(h_prev, (1, 0)), d_hid)
        if needed[3]:
            out[3] = self.reshape(self.float_sum_dim(d_in, 0), (3 * hidden,))
        if needed[4]:
            out[4] = self.reshape(self.float_sum_dim(d_hid, 0), (3 * hidden,))
        return out[0], out[1], out[2], out[3], out[4]

    # ------------------------------------------------------------------ helpers
    def _lstm_project(self, x: Any, w_ih: Any, bias: Any) -> Any:
        """The input's share of every step's gates, `[batch, seq, 4 * hidden]`, in one matmul."""
        batch, seq, d_input = self.shape(x)
        width = self.shape(w_ih)[1]
        z = self.float_matmul(self.reshape(x, (batch * seq, d_input)), w_ih)
        if bias is not None:
            z = self.float_add(z, self.reshape(bias, (1, width)))
        return self.reshape(z, (batch, seq, width))

    def _lstm_split(self, z: Any, hidden: int) -> list[Any]:
        """The four gate blocks of the last dim of `z`."""
        return self._rnn_split(z, hidden, 4)

    def _rnn_split(self, z: Any, hidden: int, blocks: int) -> list[Any]:
        """The `blocks` gate blocks (each `hidden` wide) of the last dim of `z`."""
        shape = self.shape(z)
        lead = tuple((0, n, 1) for n in shape[:-1])
        return [self.slice(z, (*lead, (k * hidden, (k + 1) * hidden, 1))) for k in range(blocks)]

    def _lstm_activate(self, z: Any, hidden: int) -> list[Any]:
        i, f, g, o = self._lstm_split(z, hidden)
        return [self.sigmoid(i), self.sigmoid(f), self.float_tanh(g), self.sigmoid(o)]

    def _rnn_sigmoid_slope(self, s: Any) -> Any:
        """d sigmoid / dz from the sigmoid's value: `s * (1 - s)`."""
        return self.float_mul(s, self.float_sub(self.scalar_like(s, 1.0), s))

    def _rnn_step(self, p: Any, t: int) -> Any:
        """Step `t` of `[batch, seq, width]` as `[batch, width]`."""
        batch, _, width = self.shape(p)
        return self.reshape(
            self.slice(p, ((0, batch, 1), (t, t + 1, 1), (0, width, 1))), (batch, width)
        )

    def _rnn_over_time(self, steps: list[Any], lead: int | None = None) -> Any:
        """`[batch, width]` steps joined as `[batch, seq, width]` (`[1, ...]` with `lead=0`)."""
        batch, width = self.shape(steps[0])
        shape = (batch, 1, width) if lead is None else (1, batch, 1, width)
        axis = 1 if lead is None else 2
        return self.float_cat([self.reshape(s, shape) for s in steps], axis)

    def _rnn_split_states(self, states: Any) -> tuple[Any, Any]:
        """`[2, batch, seq, hidden]` as its two `[batch, seq, hidden]` halves."""
        _, batch, seq, hidden = self.shape(states)
        rest = ((0, batch, 1), (0, seq, 1), (0, hidden, 1))
        return (
            self.reshape(self.slice(states, ((0, 1, 1), *rest)), (batch, seq, hidden)),
            self.reshape(self.slice(states, ((1, 2, 1), *rest)), (batch, seq, hidden)),
        )

    def _rnn_shifted(self, first: Any, steps: Any) -> Any:
        """The state before each step: `first`, then every step but the last."""
        batch, seq, hidden = self.shape(steps)
        start = self.reshape(first, (batch, 1, hidden))
        if seq == 1:
            return start
        earlier = self.slice(steps, ((0, batch, 1), (0, seq - 1, 1), (0, hidden, 1)))
        return self.float_cat([start, earlier], 1)
