"""The recurrent ops LSTM, GRU and RNN: a loop over time of tensor ops (so they train), with
ONNX's gate orders, directions, layouts, biases, initial states and peepholes."""

from __future__ import annotations

from burn.tensor import Tensor
from burn.tensor import activation as act

__all__ = ["gru", "lstm", "rnn"]


def _activation(name: str):
    return {
        "Sigmoid": act.sigmoid,
        "Tanh": lambda x: x.tanh(),
        "Relu": act.relu,
    }[name]


def _prepare(x, layout, direction, hidden_size, w, initial_h, initial_c=None):
    if layout:
        x = x.swap_dims(0, 1)  # [seq, batch, input]
    dirs = 2 if direction == "bidirectional" else 1
    batch = x.dims()[1]
    hidden = hidden_size or w.dims()[1]

    def state(initial):
        if initial is None:
            return [Tensor.zeros([batch, hidden], device=x.device(), dtype=x.dtype)] * dirs
        if layout:
            initial = initial.swap_dims(0, 1)
        return [initial.narrow(0, d, 1).reshape([batch, hidden]) for d in range(dirs)]

    return x, dirs, batch, hidden, state(initial_h), state(initial_c)


def _order(direction: str, d: int, steps: int) -> range:
    reverse = direction == "reverse" or (direction == "bidirectional" and d == 1)
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _finish(outputs, finals, layout, extra=None):
    """Stack per-direction outputs into Y [seq, dirs, batch, hidden] and Y_h [dirs, batch, h]."""
    y = Tensor.stack([Tensor.stack(steps, 0) for steps in outputs], 1)
    y_h = Tensor.stack(finals, 0)
    result = [y, y_h]
    if extra is not None:
        result.append(Tensor.stack(extra, 0))
    if layout:
        result[0] = y.permute([2, 0, 1, 3])
        result[1:] = [t.swap_dims(0, 1) for t in result[1:]]
    return tuple(result)


def _split(t: Tensor, parts: int) -> list[Tensor]:
    size = t.dims()[-1] // parts
    return [t.narrow(t.rank() - 1, i * size, size) for i in range(parts)]


def _clip(t: Tensor, clip) -> Tensor:
    return t.clamp(-clip, clip) if clip is not None else t


def lstm(
    x,
    w,
    r,
    b=None,
    sequence_lens=None,
    initial_h=None,
    initial_c=None,
    p=None,
    activations=None,
    clip=None,
    direction="forward",
    hidden_size=None,
    input_forget=0,
    layout=0,
    activation_alpha=None,
    activation_beta=None,
):
    x, dirs, batch, hidden, hs, cs = _prepare(
        x, layout, direction, hidden_size, w, initial_h, initial_c
    )
    names = activations or ["Sigmoid", "Tanh", "Tanh"] * dirs
    outputs, finals, cells = [], [], []
    for d in range(dirs):
        f, g, h_act = (_activation(n) for n in names[3 * d : 3 * d + 3])
        wd = w.narrow(0, d, 1).reshape(w.dims()[1:]).transpose()
        rd = r.narrow(0, d, 1).reshape(r.dims()[1:]).transpose()
        bias = None
        if b is not None:
            bd = b.narrow(0, d, 1).reshape([b.dims()[1]])
            bias = bd.narrow(0, 0, 4 * hidden) + bd.narrow(0, 4 * hidden, 4 * hidden)
        peep = None
        if p is not None:
            peep = _split(p.narrow(0, d, 1).reshape([3 * hidden]), 3)
        h, c = hs[d], cs[d]
        steps = [None] * x.dims()[0]
        for t in _order(direction, d, x.dims()[0]):
            gates = x[t].matmul(wd) + h.matmul(rd)
            if bias is not None:
                gates = gates + bias.unsqueeze(2)
            gi, go, gf, gc = _split(gates, 4)
            if peep is not None:
                gi = gi + c * peep[0].unsqueeze(2)
                gf = gf + c * peep[2].unsqueeze(2)
            i = f(_clip(gi, clip))
            forget = (1.0 - i) if input_forget else f(_clip(gf, clip))
            c = forget * c + i * g(_clip(gc, clip))
            if peep is not None:
                go = go + c * peep[1].unsqueeze(2)
            o = f(_clip(go, clip))
            h = o * h_act(c)
            steps[t] = h
        outputs.append(steps)
        finals.append(h)
        cells.append(c)
    return _finish(outputs, finals, layout, cells)


def gru(
    x,
    w,
    r,
    b=None,
    sequence_lens=None,
    initial_h=None,
    activations=None,
    clip=None,
    direction="forward",
    hidden_size=None,
    layout=0,
    linear_before_reset=0,
    activation_alpha=None,
    activation_beta=None,
):
    x, dirs, batch, hidden, hs, _ = _prepare(x, layout, direction, hidden_size, w, initial_h)
    names = activations or ["Sigmoid", "Tanh"] * dirs
    outputs, finals = [], []
    for d in range(dirs):
        f, g = (_activation(n) for n in names[2 * d : 2 * d + 2])
        wz, wr, wh = _split(w.narrow(0, d, 1).reshape(w.dims()[1:]).transpose(), 3)
        rz, rr, rh = _split(r.narrow(0, d, 1).reshape(r.dims()[1:]).transpose(), 3)
        if b is not None:
            bd = b.narrow(0, d, 1).reshape([b.dims()[1]]).unsqueeze(2)
            wbz, wbr, wbh, rbz, rbr, rbh = _split(bd, 6)
        h = hs[d]
        steps = [None] * x.dims()[0]
        for t in _order(direction, d, x.dims()[0]):
            xt = x[t]
            z = xt.matmul(wz) + h.matmul(rz)
            rg = xt.matmul(wr) + h.matmul(rr)
            if b is not None:
                z, rg = z + wbz + rbz, rg + wbr + rbr
            z, rg = f(_clip(z, clip)), f(_clip(rg, clip))
            if linear_before_reset:
                inner = h.matmul(rh) + (rbh if b is not None else 0.0)
                cand = xt.matmul(wh) + rg * inner
            else:
                cand = xt.matmul(wh) + (rg * h).matmul(rh)
                if b is not None:
                    cand = cand + rbh
            if b is not None:
                cand = cand + wbh
            cand = g(_clip(cand, clip))
            h = (1.0 - z) * cand + z * h
            steps[t] = h
        outputs.append(steps)
        finals.append(h)
    return _finish(outputs, finals, layout)


def rnn(
    x,
    w,
    r,
    b=None,
    sequence_lens=None,
    initial_h=None,
    activations=None,
    clip=None,
    direction="forward",
    hidden_size=None,
    layout=0,
    activation_alpha=None,
    activation_beta=None,
):
    x, dirs, batch, hidden, hs, _ = _prepare(x, layout, direction, hidden_size, w, initial_h)
    names = activations or ["Tanh"] * dirs
    outputs, finals = [], []
    for d in range(dirs):
        f = _activation(names[d])
        wd = w.narrow(0, d, 1).reshape(w.dims()[1:]).transpose()
        rd = r.narrow(0, d, 1).reshape(r.dims()[1:]).transpose()
        bias = None
        if b is not None:
            bd = b.narrow(0, d, 1).reshape([b.dims()[1]])
            bias = (bd.narrow(0, 0, hidden) + bd.narrow(0, hidden, hidden)).unsqueeze(2)
        h = hs[d]
        steps = [None] * x.dims()[0]
        for t in _order(direction, d, x.dims()[0]):
            pre = x[t].matmul(wd) + h.matmul(rd)
            if bias is not None:
                pre = pre + bias
            h = f(_clip(pre, clip))
            steps[t] = h
        outputs.append(steps)
        finals.append(h)
    return _finish(outputs, finals, layout)
