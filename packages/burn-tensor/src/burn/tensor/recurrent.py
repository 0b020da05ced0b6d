"""Functional recurrent ops: a whole LSTM or GRU sequence as one backend op.

Re-exported by `burn.tensor.module` (`module.lstm`, `module.gru`), next to the other functional
module ops whose checks they share. Layouts are batch first, with the gates side by side in the
weights' columns (Burn's `Linear` orientation, PyTorch's gate order); see
`burn.backend.ops.recurrent` for the contract ops behind them.

```python
import numpy as np
from burn.backend import NdArray
from burn.tensor import Tensor
from burn.tensor.module import lstm

rng = np.random.default_rng(0)
x = Tensor[NdArray, 3].from_data(rng.normal(size=(2, 5, 3)).astype(np.float32))
w_ih = Tensor[NdArray, 2].from_data(rng.normal(size=(3, 16)).astype(np.float32))
w_hh = Tensor[NdArray, 2].from_data(rng.normal(size=(4, 16)).astype(np.float32))
h0 = c0 = Tensor[NdArray, 2].zeros([2, 4])
output, h_n, c_n = lstm(x, w_ih, w_hh, None, h0, c0)
assert output.dims() == [2, 5, 4] and c_n.dims() == [2, 4]
```
"""

from __future__ import annotations

from typing import Any

from burn.tensor.errors import KindError, RankError, ShapeError
from burn.tensor.kind import Float
from burn.tensor.tensor import Tensor

__all__ = ["gru", "lstm"]


def lstm(
    x: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    bias: Tensor | None,
    h0: Tensor,
    c0: Tensor,
) -> tuple[Tensor, Tensor, Tensor]:
    """A whole LSTM sequence: `(output [batch, seq, hidden], h_n, c_n [batch, hidden])`.

    `x [batch, seq, d_input]`; the four gates i, f, g, o (PyTorch's order) are the column
    blocks of `w_ih [d_input, 4 * hidden]` and `w_hh [hidden, 4 * hidden]`; `bias [4 * hidden]`
    (or None) is added once per step (PyTorch's `bias_ih + bias_hh`). The backend runs the
    sequence as one op (`lstm`), so an autodiff backend records one node for it.
    """
    op = "lstm"
    batch, seq, hidden = _recurrent_checks(op, 4, x, w_ih, w_hh, {"h0": h0, "c0": c0})
    b = _gate_bias(op, x, "bias", bias, 4, hidden)
    states = x._new(
        x.backend.lstm(x.primitive, w_ih.primitive, w_hh.primitive, b, h0.primitive, c0.primitive)
    )
    output = states.narrow(0, 0, 1).reshape([batch, seq, hidden])
    h_n = output.narrow(1, seq - 1, 1).reshape([batch, hidden])
    c_n = states.narrow(0, 1, 1).narrow(2, seq - 1, 1).reshape([batch, hidden])
    return output, h_n, c_n


def gru(
    x: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
    h0: Tensor,
) -> tuple[Tensor, Tensor]:
    """A whole GRU sequence: `(output [batch, seq, hidden], h_n [batch, hidden])`.

    PyTorch's form: gates r, z, n in the column blocks of `w_ih [d_input, 3 * hidden]` and
    `w_hh [hidden, 3 * hidden]`, the reset gate applied after the hidden projection (so `b_hh`,
    `[3 * hidden]` or None, stays apart from `b_ih`). The backend runs the sequence as one op
    (`gru`), so an autodiff backend records one node for it.
    """
    op = "gru"
    batch, seq, hidden = _recurrent_checks(op, 3, x, w_ih, w_hh, {"h0": h0})
    bi = _gate_bias(op, x, "b_ih", b_ih, 3, hidden)
    bh = _gate_bias(op, x, "b_hh", b_hh, 3, hidden)
    output = x._new(
        x.backend.gru(x.primitive, w_ih.primitive, w_hh.primitive, bi, bh, h0.primitive)
    )
    return output, output.narrow(1, seq - 1, 1).reshape([batch, hidden])


def _recurrent_checks(
    op: str, gates: int, x: Tensor, w_ih: Tensor, w_hh: Tensor, states: dict[str, Tensor]
) -> tuple[int, int, int]:
    """Kinds, ranks and shapes of a recurrent op's arguments: `(batch, seq, hidden)`."""
    _float(op, "input", x)
    if x.rank() != 3:
        raise RankError(f"{op}: input must have rank 3 ([batch, seq, d_input]), got {x.dims()}")
    batch, seq, d_input = x.dims()
    if seq < 1:
        raise ShapeError(f"{op}: the input needs at least one step, got shape {x.dims()}")
    matrices = {"w_ih": w_ih, "w_hh": w_hh, **states}
    for name, t in matrices.items():
        _float(op, name, t)
        if t.rank() != 2:
            raise RankError(f"{op}: {name} must be a matrix (rank 2), got shape {t.dims()}")
        x._peer(t, op)
    hidden = next(iter(states.values())).dims()[1]
    expected = {
        "w_ih": [d_input, gates * hidden],
        "w_hh": [hidden, gates * hidden],
        **{name: [batch, hidden] for name in states},
    }
    for name, shape in expected.items():
        if matrices[name].dims() != shape:
            raise ShapeError(
                f"{op}: {name} must have shape {shape} for input {x.dims()} and hidden size "
                f"{hidden}, got {matrices[name].dims()}"
            )
    return batch, seq, hidden


def _gate_bias(op: str, x: Tensor, name: str, bias: Tensor | None, gates: int, hidden: int) -> Any:
    if bias is None:
        return None
    _float(op, name, bias)
    primitive = x._peer(bias, op)
    if bias.dims() != [gates * hidden]:
        raise ShapeError(
            f"{op}: {name} must have shape [{gates * hidden}] ({gates} gates of {hidden}), "
            f"got {bias.dims()}"
        )
    return primitive


def _float(op: str, name: str, t: object) -> None:
    if not isinstance(t, Tensor) or t.kind is not Float:
        got = f"{t.kind.name} {t.dims()}" if isinstance(t, Tensor) else type(t).__name__
        raise KindError(f"{op}: {name} must be a Float tensor, got {got}")
