"""Functional optimizer updates: Adam's (and AdamW's) whole step for one parameter as one op.

`burn.optim.Adam` and `AdamW` call `adam_step` once per parameter and step; the backend runs it
as one op (`float_adam_step`, see `burn.backend.ops.optim`), so a backend with its own kernel
(NdArray) updates a parameter and its moments in a few cached passes instead of fifteen full
ones, and every other backend runs the same composition the optimizer used before.

```python
from burn.backend import NdArray
from burn.tensor import Tensor
from burn.tensor.optim import adam_step

param = Tensor[NdArray, 1].from_data([1.0, -2.0])
grad = Tensor[NdArray, 1].from_data([0.5, 0.5])
param, m, v = adam_step(param, grad, None, None, 1, lr=0.1)
assert [round(x, 4) for x in param.to_data().to_list()] == [0.9, -2.1]
```
"""

from __future__ import annotations

from burn.tensor.errors import DTypeError, KindError, ShapeError, UsageError
from burn.tensor.kind import Float
from burn.tensor.tensor import Tensor

__all__ = ["adam_step"]


def adam_step(
    tensor: Tensor,
    grad: Tensor,
    moment_1: Tensor | None,
    moment_2: Tensor | None,
    time: int,
    lr: float,
    beta_1: float = 0.9,
    beta_2: float = 0.999,
    epsilon: float = 1e-5,
    weight_decay: float = 0.0,
    decoupled_weight_decay: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """One Adam step: `(tensor, moment_1, moment_2)` after step `time` (counted from 1).

    `moment_1` and `moment_2` are None on the first step (both start from zero, as in
    PyTorch), afterwards the moments the previous step returned; every tensor has the
    parameter's shape and dtype. `weight_decay` is Adam's L2 penalty added to the gradient,
    or AdamW's decay of the parameter itself with `decoupled_weight_decay=True`. The results
    are new tensors: nothing passed in changes.
    """
    op = "adam_step"
    _check_float(tensor, op, "tensor")
    roles = {"grad": grad, "moment_1": moment_1, "moment_2": moment_2}
    for role, value in roles.items():
        if value is None and role != "grad":
            continue
        t = _check_float(value, op, role)
        if t.dims() != tensor.dims():
            raise ShapeError(f"{op}: {role} must be {tensor.dims()} like tensor, got {t.dims()}")
        if t.dtype != tensor.dtype:
            raise DTypeError(f"{op}: {role} is {t.dtype} but tensor is {tensor.dtype}")
    if (moment_1 is None) != (moment_2 is None):
        raise UsageError(f"{op}: moment_1 and moment_2 are both None (first step) or both given")
    if isinstance(time, bool) or not isinstance(time, int) or time < 1:
        raise UsageError(f"{op}: time must be an int counted from 1, got {time!r}")
    if moment_1 is None and time != 1:
        raise UsageError(f"{op}: step {time} needs the moments of step {time - 1}, got None")
    m1 = None if moment_1 is None else tensor._peer(moment_1, op)
    m2 = None if moment_2 is None else tensor._peer(moment_2, op)
    updated, m1, m2 = tensor.backend.float_adam_step(
        tensor.primitive,
        tensor._peer(grad, op),
        m1,
        m2,
        time,
        float(lr),
        float(beta_1),
        float(beta_2),
        float(epsilon),
        float(weight_decay),
        bool(decoupled_weight_decay),
    )
    return tensor._new(updated), tensor._new(m1), tensor._new(m2)


def _check_float(t: object, op: str, role: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise KindError(f"{op}: {role} must be a Tensor, got {type(t).__name__}")
    if t.kind is not Float:
        raise KindError(f"{op}: {role} must be a Float tensor, got {t.kind.name} {t.dims()}")
    return t
