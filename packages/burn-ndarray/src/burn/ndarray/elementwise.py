"""numpy kernels for the elementwise ops of the contract."""

from __future__ import annotations

import functools

import numpy as np
from burn.ndarray.erf import erf

UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "erf": erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,  # half to even, as Burn
    "sign": np.sign,
    "recip": np.reciprocal,
    "not": np.logical_not,
}


def _int_div(a, b):
    """Integer division truncating toward zero (Rust's `/`), not numpy's floor division."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q + fix.astype(q.dtype)


def _int_pow(a, b):
    """Integer powers; a negative exponent gives the real result truncated toward zero
    (1 for a base of 1, +-1 for -1 by parity, 0 otherwise, 0 included), as the contract says.
    numpy raises on negative integer powers, so those positions are computed apart."""
    negative = b < 0
    if not negative.any():
        return np.power(a, b)
    exact = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    odd = (b % 2).astype(bool)
    tiny = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, tiny, exact)


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "pow": np.power,
    "rem": np.remainder,
    "max": np.maximum,
    "min": np.minimum,
    "atan2": np.arctan2,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "lt": np.less,
    "le": np.less_equal,
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


# Ops whose IEEE results (inf, nan, 0 for integer x % 0) are answers, not warnings.
QUIET_UNARY = frozenset({"log", "log1p", "sqrt", "recip", "exp"})
_QUIET_BINARY = frozenset({"rem", "pow"})


# Elements per call when `max`/`min` meet a constant (see `_against_constant`).
_CONSTANT_BLOCK = 1 << 16


@functools.lru_cache(maxsize=16)
def _constant_block(dtype: np.dtype, value: bytes) -> np.ndarray:
    """A read-only block of `_CONSTANT_BLOCK` copies of one value (its bytes, in `dtype`)."""
    block = np.full(_CONSTANT_BLOCK, np.frombuffer(value, dtype)[0], dtype)
    block.flags.writeable = False
    return block


def _against_constant(ufunc, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`ufunc(a, b)` for a 0-d `b` of `a`'s dtype, bit for bit, a block of `a` at a time
    against a block of copies of `b`.

    numpy vectorises `maximum` and `minimum` only when both operands advance: against a 0-d
    operand they run an element-by-element loop, about 3x slower (float32, 590k elements: 175
    against 60 us), and a ReLU is exactly that call. Arrays whose elements are not one dense
    block in memory take numpy's own call."""
    out = np.empty_like(a)  # the same memory order as `a` where `a` is dense
    if out.strides != a.strides:
        return ufunc(a, b)
    src, dst = a.ravel(order="K"), out.ravel(order="K")
    if src.base is None or dst.base is None:  # not views: the elements are not one block
        return ufunc(a, b)
    block = _constant_block(a.dtype, b.tobytes())
    for start in range(0, src.size, _CONSTANT_BLOCK):
        stop = min(src.size, start + _CONSTANT_BLOCK)
        ufunc(src[start:stop], block[: stop - start], out=dst[start:stop])
    return out


def binary(op: str, a: np.ndarray, b, dtype) -> np.ndarray:
    """Apply `op`; results keep `dtype` (numpy would promote ints to float for div/pow)."""
    if op == "div":
        if dtype.kind in "iu":
            with np.errstate(divide="ignore", invalid="ignore"):
                return _int_div(a, b).astype(dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):  # IEEE inf/nan, as Burn: no warning
            return np.true_divide(a, b, dtype=dtype)
    if op == "pow" and dtype.kind in "iu":
        return _int_pow(a, np.asarray(b)).astype(dtype, copy=False)
    if op in _QUIET_BINARY:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = BINARY[op](a, b)
    elif (
        (op == "max" or op == "min")
        and a.size >= _CONSTANT_BLOCK // 4
        and isinstance(b, np.ndarray)
        and b.ndim == 0
        and b.dtype == a.dtype
    ):
        out = _against_constant(BINARY[op], a, b)
    else:
        out = BINARY[op](a, b)
    if out.dtype != dtype and out.dtype != np.bool_:
        out = out.astype(dtype, copy=False)
    return out
