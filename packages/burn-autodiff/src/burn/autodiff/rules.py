"""Backward rules: each maps an output gradient to input gradients with inner-backend ops.

Rules receive the inner backend `B`, the saved inputs and output (inner primitives) and the
output gradient `g`. Integer and bool ops have no rule: they are not differentiable.
"""

from __future__ import annotations

import math

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def unbroadcast(B, g, shape):
    """Sum `g` over the dims that broadcasting expanded, back to `shape` (same rank)."""
    gshape = B.shape(g)
    if tuple(gshape) == tuple(shape):
        return g
    for d, (n, m) in enumerate(zip(shape, gshape, strict=True)):
        if n == 1 and m != 1:
            g = B.reduce("sum", g, d)
    return g


def slice_backward(B, g, x, ranges):
    zeros = B.full(B.shape(x), 0, B.dtype(g), B.device_of(g))
    return B.slice_assign(zeros, ranges, g)


def _mul(B, a, b):
    return B.binary("mul", a, b)


def _scale(B, a, s):
    return B.binary_scalar("mul", a, s)


def _zeros_like(B, g):
    return B.full(B.shape(g), 0, B.dtype(g), B.device_of(g))


UNARY = {
    "neg": lambda B, x, out, g: B.unary("neg", g),
    "abs": lambda B, x, out, g: _mul(B, g, B.unary("sign", x)),
    "exp": lambda B, x, out, g: _mul(B, g, out),
    "log": lambda B, x, out, g: B.binary("div", g, x),
    "log1p": lambda B, x, out, g: B.binary("div", g, B.binary_scalar("add", x, 1.0)),
    "sqrt": lambda B, x, out, g: B.binary("div", _scale(B, g, 0.5), out),
    "sin": lambda B, x, out, g: _mul(B, g, B.unary("cos", x)),
    "cos": lambda B, x, out, g: B.unary("neg", _mul(B, g, B.unary("sin", x))),
    "tan": lambda B, x, out, g: _mul(B, g, B.binary_scalar("add", _mul(B, out, out), 1.0)),
    "tanh": lambda B, x, out, g: _mul(
        B, g, B.binary_scalar("sub", B.unary("neg", _mul(B, out, out)), -1.0)
    ),
    "erf": lambda B, x, out, g: _mul(
        B, g, _scale(B, B.unary("exp", B.unary("neg", _mul(B, x, x))), _TWO_OVER_SQRT_PI)
    ),
    "floor": lambda B, x, out, g: _zeros_like(B, g),
    "ceil": lambda B, x, out, g: _zeros_like(B, g),
    "round": lambda B, x, out, g: _zeros_like(B, g),
    "sign": lambda B, x, out, g: _zeros_like(B, g),
    "recip": lambda B, x, out, g: B.unary("neg", _mul(B, g, _mul(B, out, out))),
}


def _div(B, a, b, out, g, tracked):
    ga = B.binary("div", g, b) if tracked[0] else None
    gb = B.unary("neg", B.binary("div", _mul(B, g, out), b)) if tracked[1] else None
    return ga, gb


def _pow(B, a, b, out, g, tracked):
    ga = gb = None
    if tracked[0]:
        # d/da a^b = b * a^(b-1)
        ga = _mul(B, g, _mul(B, b, B.binary("pow", a, B.binary_scalar("sub", b, 1.0))))
    if tracked[1]:
        # d/db a^b = a^b * ln(a), taken as 0 where a == 0 (the limit for b > 0)
        log_a = B.unary("log", a)
        zero = B.binary_scalar("eq", a, 0.0)
        log_a = B.mask_where(log_a, zero, B.scalar_like(log_a, 0.0))
        gb = _mul(B, g, _mul(B, out, log_a))
    return ga, gb


def _rem(B, a, b, out, g, tracked):
    ga = g if tracked[0] else None
    gb = None
    if tracked[1]:
        # a rem b = a - b * floor(a / b)
        gb = B.unary("neg", _mul(B, g, B.unary("floor", B.binary("div", a, b))))
    return ga, gb


def _pick(op):
    """max/min: the gradient flows to the chosen input (to lhs on ties)."""

    def rule(B, a, b, out, g, tracked):
        take_a = B.binary("ge" if op == "max" else "le", a, b)
        zeros = B.scalar_like(g, 0)
        ga = B.mask_where(zeros, take_a, g) if tracked[0] else None
        gb = B.mask_where(g, take_a, zeros) if tracked[1] else None
        return ga, gb

    return rule


def _atan2(B, a, b, out, g, tracked):
    denom = B.binary("add", _mul(B, a, a), _mul(B, b, b))
    ga = B.binary("div", _mul(B, g, b), denom) if tracked[0] else None
    gb = B.unary("neg", B.binary("div", _mul(B, g, a), denom)) if tracked[1] else None
    return ga, gb


BINARY = {
    "add": lambda B, a, b, out, g, t: (g if t[0] else None, g if t[1] else None),
    "sub": lambda B, a, b, out, g, t: (g if t[0] else None, B.unary("neg", g) if t[1] else None),
    "mul": lambda B, a, b, out, g, t: (
        _mul(B, g, b) if t[0] else None,
        _mul(B, g, a) if t[1] else None,
    ),
    "div": _div,
    "pow": _pow,
    "rem": _rem,
    "max": _pick("max"),
    "min": _pick("min"),
    "atan2": _atan2,
}


def _pow_scalar(B, x, s, out, g):
    return _mul(B, g, _scale(B, B.binary_scalar("pow", x, s - 1), s))


def _pick_scalar(op):
    def rule(B, x, s, out, g):
        kept = B.binary_scalar("ge" if op == "max" else "le", x, s)
        return B.mask_where(B.scalar_like(g, 0), kept, g)

    return rule


BINARY_SCALAR = {
    "add": lambda B, x, s, out, g: g,
    "sub": lambda B, x, s, out, g: g,
    "mul": lambda B, x, s, out, g: _scale(B, g, s),
    "div": lambda B, x, s, out, g: B.binary_scalar("div", g, s),
    "pow": _pow_scalar,
    "rem": lambda B, x, s, out, g: g,
    "max": _pick_scalar("max"),
    "min": _pick_scalar("min"),
}


def _expand_to(B, g, x):
    return B.expand(g, B.shape(x))


def _prod(B, x, dim, out, g):
    """d/dx_i prod = product of the others, also where the slice holds zeros.

    prod / x_i would give NaN at a zero. Instead: with zeros replaced by one, the product of
    the rest is p / x_i; where the slice has one zero, only that zero's gradient is non-zero
    (the product of the others, p itself); with two or more, every gradient is zero.
    """
    zero = B.binary_scalar("eq", x, 0.0)
    safe = B.mask_where(x, zero, B.scalar_like(x, 1.0))
    p = _expand_to(B, B.reduce("prod", safe, dim), x)
    zeros = _expand_to(B, B.reduce("sum", B.cast(zero, B.dtype(x)), dim), x)
    none = B.binary("div", p, safe)
    only_this = B.mask_where(B.scalar_like(x, 0.0), zero, p)
    local = B.mask_where(
        B.mask_where(B.scalar_like(x, 0.0), B.binary_scalar("eq", zeros, 1.0), only_this),
        B.binary_scalar("eq", zeros, 0.0),
        none,
    )
    return _mul(B, _expand_to(B, g, x), local)


def _arg_pick(op):
    """max/min along a dim: the gradient goes to the (first) position that was chosen."""

    def rule(B, x, dim, out, g):
        idx = B.reduce(op, x, dim)
        zeros = B.full(B.shape(x), 0, B.dtype(g), B.device_of(g))
        return B.scatter_add(zeros, dim, idx, g)

    return rule


REDUCE = {
    "sum": lambda B, x, dim, out, g: _expand_to(B, g, x),
    "prod": _prod,
    "max": _arg_pick("argmax"),
    "min": _arg_pick("argmin"),
}


def matmul_backward(B, a, b, g, tracked):
    """d(a @ b): g @ b^T for a, a^T @ g for b, summed over broadcast batch dims."""
    rank = len(B.shape(a))
    swap = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    ga = gb = None
    if tracked[0]:
        ga = unbroadcast(B, B.float_matmul(g, B.permute(b, swap)), B.shape(a))
    if tracked[1]:
        b_shape = B.shape(b)
        if rank > 2 and all(d == 1 for d in b_shape[:-2]):
            gb = _shared_rhs_grad(B, a, g, b_shape)
        else:
            gb = unbroadcast(B, B.float_matmul(B.permute(a, swap), g), b_shape)
    return ga, gb


def _shared_rhs_grad(B, a, g, b_shape):
    """The gradient of one matrix `b` broadcast over the batch of `a` (a `Linear` on `[batch,
    seq, d]`): the sum over the batch of `a_i^T @ g_i` is one product of the stacked rows,
    `a^T @ g` over `[batch * rows, ...]`, instead of a product per matrix and then a sum."""
    k, n = b_shape[-2:]
    rows = math.prod(B.shape(a)[:-1])
    rows_a = B.reshape(a, (rows, k))
    rows_g = B.reshape(g, (rows, n))
    return B.reshape(B.float_matmul(B.permute(rows_a, (1, 0)), rows_g), b_shape)
