"""Functional optimizer updates: Adam's (and AdamW's) whole step for one parameter as one op,
and for many parameters at once.

`adam_step` updates one parameter as one backend op (`float_adam_step`, see
`burn.backend.ops.optim`), so a backend with its own kernel (NdArray) updates a parameter and
its moments in a few cached passes instead of fifteen full ones, and every other backend runs
the same composition the optimizer used before. `burn.optim.Adam` and `AdamW` call
`adam_step_many` with every parameter of a step (`float_adam_step_many`): the same numbers,
and on a backend that pays per launch (Wgpu) one kernel for a group of parameters.

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

__all__ = ["adam_step", "adam_step_many"]


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
    m1, m2 = _checked("adam_step", tensor, grad, moment_1, moment_2)
    _check_time("adam_step", time, moment_1 is None, moment_2 is None, "moment_1", "moment_2")
    updated, m1, m2 = tensor.backend.float_adam_step(
        tensor.primitive,
        tensor._peer(grad, "adam_step"),
        m1,
        m2,
        *_step(time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled_weight_decay),
    )
    return tensor._new(updated), tensor._new(m1), tensor._new(m2)


def adam_step_many(
    tensors: list[Tensor],
    grads: list[Tensor],
    moments_1: list[Tensor] | None,
    moments_2: list[Tensor] | None,
    time: int,
    lr: float,
    beta_1: float = 0.9,
    beta_2: float = 0.999,
    epsilon: float = 1e-5,
    weight_decay: float = 0.0,
    decoupled_weight_decay: bool = False,
) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """`adam_step` of every parameter in `tensors` at the same step `time` with the same
    scalars: three lists (parameters, first moments, second moments) in the order given.

    `grads`, and after the first step `moments_1` and `moments_2`, hold one tensor per
    parameter (each of its parameter's shape and dtype); on the first step both are None. The
    tensors may live on different devices of one backend. Each result is, to the bit, what
    `adam_step` gives for its parameter alone.
    """
    op = "adam_step_many"
    count = len(tensors)
    _check_time(op, time, moments_1 is None, moments_2 is None, "moments_1", "moments_2")
    given = {"grads": grads, "moments_1": moments_1, "moments_2": moments_2}
    for role, values in given.items():
        if values is not None and len(values) != count:
            raise UsageError(f"{op}: {count} tensors but {len(values)} {role}")
    if count == 0:
        return [], [], []
    first = _check_float(tensors[0], op, "tensor[0]")
    backend = first.backend
    prims, grad_prims, m1s, m2s = [], [], [], []
    for k, tensor in enumerate(tensors):
        m1, m2 = _checked(
            op,
            tensor,
            grads[k],
            None if moments_1 is None else moments_1[k],
            None if moments_2 is None else moments_2[k],
            f"[{k}]",
        )
        if tensor.backend is not backend:
            raise UsageError(
                f"{op}: tensor[{k}] is on {tensor.backend!r}, tensor[0] on {backend!r}"
            )
        prims.append(tensor.primitive)
        grad_prims.append(tensor._peer(grads[k], op))
        m1s.append(m1)
        m2s.append(m2)
    updated, new_1, new_2 = backend.float_adam_step_many(
        prims,
        grad_prims,
        None if moments_1 is None else m1s,
        None if moments_2 is None else m2s,
        *_step(time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled_weight_decay),
    )
    new = first._new
    return [new(u) for u in updated], [new(m) for m in new_1], [new(m) for m in new_2]


def _step(
    time: int,
    lr: float,
    beta_1: float,
    beta_2: float,
    epsilon: float,
    weight_decay: float,
    decoupled: bool,
) -> tuple[int, float, float, float, float, float, bool]:
    """The step's scalar arguments as the backend ops take them (floats, a bool)."""
    return (
        time,
        float(lr),
        float(beta_1),
        float(beta_2),
        float(epsilon),
        float(weight_decay),
        bool(decoupled),
    )


def _check_time(op: str, time: object, no_1: bool, no_2: bool, name_1: str, name_2: str) -> None:
    """The step count and the moments agree: both moments absent only on step 1."""
    if no_1 != no_2:
        raise UsageError(f"{op}: {name_1} and {name_2} are both None (first step) or both given")
    if isinstance(time, bool) or not isinstance(time, int) or time < 1:
        raise UsageError(f"{op}: time must be an int counted from 1, got {time!r}")
    if no_1 and time != 1:
        raise UsageError(f"{op}: step {time} needs the moments of step {time - 1}, got None")


def _checked(
    op: str,
    tensor: Tensor,
    grad: Tensor,
    moment_1: Tensor | None,
    moment_2: Tensor | None,
    at: str = "",
) -> tuple[object, object]:
    """The moments' primitives (None on a first step) after checking that `tensor`, `grad` and
    the moments are Float tensors of one shape and dtype; `at` names the list position."""
    _check_float(tensor, op, "tensor" + at)
    # The parameter's shape and dtype once (an optimizer step checks every parameter).
    shape, dtype = tensor.shape_tuple(), tensor.dtype
    for role, value in (("grad", grad), ("moment_1", moment_1), ("moment_2", moment_2)):
        if value is None and role != "grad":
            continue
        t = _check_float(value, op, role + at)
        if t.shape_tuple() != shape:
            raise ShapeError(
                f"{op}: {role}{at} must be {tensor.dims()} like tensor, got {t.dims()}"
            )
        if t.dtype != dtype:
            raise DTypeError(f"{op}: {role}{at} is {t.dtype} but tensor is {dtype}")
    m1 = None if moment_1 is None else tensor._peer(moment_1, op)
    m2 = None if moment_2 is None else tensor._peer(moment_2, op)
    return m1, m2


def _check_float(t: object, op: str, role: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise KindError(f"{op}: {role} must be a Tensor, got {type(t).__name__}")
    if t.kind is not Float:
        raise KindError(f"{op}: {role} must be a Float tensor, got {t.kind.name} {t.dims()}")
    return t
