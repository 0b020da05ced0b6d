"""Einsum (any equation, by broadcast products and sums), Det, and cumulative products."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import as_ints
from burn.tensor import Tensor

__all__ = ["cumprod", "det", "einsum"]


def _diagonal(x: Tensor, term: str) -> tuple[Tensor, str]:
    """Repeated letters in one operand (`ii`) become that operand's diagonal."""
    while True:
        seen = {}
        for pos, letter in enumerate(term):
            if letter in seen:
                i, j = seen[letter], pos
                n = x.dims()[i]
                shape = [1] * x.rank()
                shape[i] = shape[j] = n
                eye = Tensor.eye(n, device=x.device()).reshape(shape)
                eye = eye.cast(x.dtype) if eye.dtype != x.dtype and x.kind is eye.kind else eye
                x = (x * eye).sum_dim(j)
                dims = x.dims()
                del dims[j]
                x = x.reshape(dims or [1])
                term = term[:j] + term[j + 1 :]
                break
            seen[letter] = pos
        else:
            return x, term


def einsum(equation: str, *operands: Tensor) -> Tensor:
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    spare = [chr(c) for c in range(ord("A"), ord("Z") + 1) if chr(c) not in equation]
    n_ell = max(
        (op.rank() - (len(t) - 3) for t, op in zip(terms, operands, strict=True) if "..." in t),
        default=0,
    )
    ell = "".join(spare[:n_ell])
    expanded = []
    for t, op in zip(terms, operands, strict=True):
        if "..." in t:
            k = op.rank() - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k :])
        expanded.append(t)
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        letters = "".join(expanded)
        rhs = ell + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell)
        )
    order: list[str] = []
    for t in expanded:
        for c in t:
            if c not in order:
                order.append(c)
    product = None
    for t, op in zip(expanded, operands, strict=True):
        if not t:  # a scalar operand
            op = op.reshape([1] * len(order))
            product = op if product is None else product * op
            continue
        op, t = _diagonal(op, t)
        present = [c for c in order if c in t]
        op = op.permute([t.index(c) for c in present]) if len(t) > 1 else op
        sizes = dict(zip(present, op.dims(), strict=True))
        op = op.reshape([sizes.get(c, 1) for c in order])
        product = op if product is None else product * op
    for i in reversed(range(len(order))):
        if order[i] not in rhs:
            product = product.sum_dim(i)
    kept = [c for c in order if c in rhs]
    dims = [d for c, d in zip(order, product.dims(), strict=True) if c in rhs]
    product = product.reshape(dims or [1])
    if len(kept) > 1:
        product = product.permute([kept.index(c) for c in rhs])
    return product


def det(x: Tensor) -> Tensor:
    """Determinants of the last two dims (computed on the host; no gradient flows)."""
    values = np.linalg.det(np.asarray(x.to_data().array))
    values = np.asarray(values, dtype=x.dtype.numpy)
    return Tensor.from_data(values.reshape(values.shape or (1,)), device=x.device(), dtype=x.dtype)


def cumprod(x: Tensor, axis, exclusive: int = 0, reverse: int = 0) -> Tensor:
    axis = as_ints(axis)[0] % x.rank()
    if reverse:
        x = x.flip([axis])
    n = x.dims()[axis]
    running, parts = None, []
    for i in range(n):
        piece = x.narrow(axis, i, 1)
        if exclusive:
            parts.append(piece.ones_like() if running is None else running)
        running = piece if running is None else running * piece
        if not exclusive:
            parts.append(running)
    out = Tensor.cat(parts, axis) if parts else x
    return out.flip([axis]) if reverse else out
