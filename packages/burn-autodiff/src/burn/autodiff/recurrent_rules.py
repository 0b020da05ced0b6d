"""The LSTM and GRU sequence ops under autodiff: one node for the whole sequence.

The inner backend runs `lstm_with_gates` (its own loop where it has one), and the node's rule is
the inner backend's `lstm_backward`, fed the gates the forward kept, then `lstm_inputs_backward`
for the inputs that need a gradient (a batch of data needs none); the GRU likewise. The
contract's default would also differentiate, op by op through every step; one node keeps both
passes in the inner backend's loops.
"""

from __future__ import annotations

from burn.backend import Backend


def _sequence(backend, name: str, args: tuple):
    """The states of `name`: the inner backend's plain op when nothing needs a gradient (no
    gates kept), else the tracked `<name>_with_gates`."""
    if all(a is None or a.node is None for a in args):
        values = [None if a is None else a.value for a in args]
        return backend._untracked(getattr(backend._inner, name)(*values))
    return getattr(backend, f"{name}_with_gates")(*args)[0]


class RecurrentRules:
    """Mixed into `AutodiffBackend` ahead of the contract's defaults."""

    def lstm(self, x, w_ih, w_hh, bias, h0, c0):
        return _sequence(self, "lstm", (x, w_ih, w_hh, bias, h0, c0))

    def lstm_with_gates(self, x, w_ih, w_hh, bias, h0, c0):
        inner = self._inner
        xv, wiv, whv, h0v, c0v = x.value, w_ih.value, w_hh.value, h0.value, c0.value
        bv = None if bias is None else bias.value
        states, gates = inner.lstm_with_gates(xv, wiv, whv, bv, h0v, c0v)

        def backward(g, tracked):
            grad_gates, dh0, dc0 = inner.lstm_backward(whv, h0v, c0v, states, gates, g)
            has_bias = bias is not None
            needed = (tracked[0], tracked[1], tracked[2], has_bias and tracked[3])
            dx, dwi, dwh, db = inner.lstm_inputs_backward(xv, wiv, h0v, states, grad_gates, needed)
            dh0, dc0 = (dh0 if tracked[-2] else None), (dc0 if tracked[-1] else None)
            return (dx, dwi, dwh, dh0, dc0) if not has_bias else (dx, dwi, dwh, db, dh0, dc0)

        inputs = (x, w_ih, w_hh, h0, c0) if bias is None else (x, w_ih, w_hh, bias, h0, c0)
        return self._track(states, inputs, backward, "lstm"), self._untracked(gates)

    def gru(self, x, w_ih, w_hh, b_ih, b_hh, h0):
        return _sequence(self, "gru", (x, w_ih, w_hh, b_ih, b_hh, h0))

    def gru_with_gates(self, x, w_ih, w_hh, b_ih, b_hh, h0):
        inner = self._inner
        args = (x, w_ih, w_hh, b_ih, b_hh, h0)
        xv, wiv, whv, biv, bhv, h0v = (None if a is None else a.value for a in args)
        states, gates = inner.gru_with_gates(xv, wiv, whv, biv, bhv, h0v)
        present = [k for k, a in enumerate(args) if a is not None]  # biases may be absent

        def backward(g, tracked):
            need = dict(zip(present, tracked, strict=True))
            d_in, d_hid, dh0 = inner.gru_backward(whv, h0v, states, gates, g)
            needed = tuple(need.get(k, False) for k in range(5))
            found = (*inner.gru_inputs_backward(xv, wiv, h0v, states, d_in, d_hid, needed), dh0)
            return tuple(found[k] if need[k] else None for k in present)

        inputs = tuple(args[k] for k in present)
        return self._track(states, inputs, backward, "gru"), self._untracked(gates)


for _name in ("lstm", "lstm_with_gates", "gru", "gru_with_gates"):
    _method = vars(RecurrentRules)[_name]
    _method.__doc__ = getattr(Backend, _name).__doc__
    _method.__wrapped__ = getattr(Backend, _name)
