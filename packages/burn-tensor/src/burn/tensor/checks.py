"""Argument checks shared by the `Tensor` modules: scalars and broadcasting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from burn.tensor.errors import RankError, ShapeError

if TYPE_CHECKING:
    from typing import TypeAlias, TypeGuard

    # What `is_scalar` accepts: the `*_scalar` / `*_elem` form of an op applies.
    Scalar: TypeAlias = int | float | bool | np.number[Any] | np.bool_

# Binary op names whose scalar form is `<name>_elem` and whose result is Bool.
ELEM_OPS = frozenset({"equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal"})


def is_scalar(value: object) -> TypeGuard[Scalar]:
    """A Python or numpy number (or bool): the `*_scalar` / `*_elem` form of an op applies."""
    return isinstance(value, (int, float, bool, np.number, np.bool_))


def broadcast_shape(op: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of two equal-rank shapes, or a ShapeError naming `op`."""
    if a == b:  # the common case, answered without a loop
        return a
    if len(a) != len(b):
        raise RankError(f"{op}: ranks differ, {list(a)} vs {list(b)} (reshape or unsqueeze first)")
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"{op}: shapes {list(a)} and {list(b)} do not broadcast")
    return tuple(out)
