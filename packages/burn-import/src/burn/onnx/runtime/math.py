"""Element-wise ops: arithmetic with ONNX broadcasting, activations, casts, bit ops."""

from __future__ import annotations

import math

import numpy as np
from burn.onnx.runtime.shape import align, as_scalar
from burn.tensor import Bool, Float, Int, Tensor
from burn.tensor import activation as act

__all__ = [
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bitcast",
    "bitshift",
    "bitwise",
    "cast",
    "celu",
    "clip",
    "compare",
    "cosh",
    "div",
    "elu",
    "gelu",
    "hard_swish",
    "is_inf",
    "is_nan",
    "logical",
    "mod",
    "mul",
    "pow_",
    "prelu",
    "round_even",
    "selu",
    "shrink",
    "sign",
    "sinh",
    "softsign",
    "sub",
    "thresholded_relu",
    "variadic",
]


def add(a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    return a + b


def sub(a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    return a - b


def mul(a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    if a.kind is Bool:
        return a.int().mul(b.int()).bool()
    return a * b


def div(a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    return a / b


def mod(a: Tensor, b: Tensor, fmod: int = 0) -> Tensor:
    a, b = align(a, b)
    if not fmod:
        return a.remainder(b)
    if a.kind is Int:
        return a - (a / b) * b  # integer division truncates toward zero
    q = a / b
    trunc = q.sign() * q.abs().floor()
    return a - trunc * b


def pow_(a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    if a.kind is Int:
        return a.float("f64").powf(b.float("f64")).round().int(a.dtype)
    if b.kind is Int:
        b = b.float(a.dtype)
    elif b.dtype != a.dtype:
        b = b.cast(a.dtype)
    return a.powf(b)


def variadic(op: str, *tensors: Tensor) -> Tensor:
    """Max, Min, Sum and Mean of any number of inputs, broadcast together."""
    out = tensors[0]
    for t in tensors[1:]:
        out, t = align(out, t)
        shape = [max(x, y) for x, y in zip(out.dims(), t.dims(), strict=True)]
        out, t = out.expand(shape), t.expand(shape)
        if op == "max":
            out = out.max_pair(t) if out.kind is Float else out.mask_where(t.greater(out), t)
        elif op == "min":
            out = out.min_pair(t) if out.kind is Float else out.mask_where(t.lower(out), t)
        else:
            out = out + t
    if op == "mean":
        out = out / len(tensors)
    return out


def compare(op: str, a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    if a.kind is Bool:
        a, b = a.int(), b.int()
    return getattr(a, op)(b)


def logical(op: str, a: Tensor, b: Tensor) -> Tensor:
    a, b = align(a, b)
    shape = [max(x, y) for x, y in zip(a.dims(), b.dims(), strict=True)]
    a, b = a.expand(shape), b.expand(shape)
    return getattr(a, "bool_" + op)(b)


def bitwise(op: str, a: Tensor, b: Tensor | None = None) -> Tensor:
    """Bitwise and/or/xor/not on integers (computed on the host: no tensor op does it)."""
    x = np.asarray(a.to_data().array)
    if op == "not":
        out = np.invert(x)
    else:
        y = np.asarray(b.to_data().array)
        out = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](x, y)
    return Tensor.from_data(out, device=a.device(), dtype=a.dtype)


def bitshift(a: Tensor, b: Tensor, direction: str = "LEFT") -> Tensor:
    """Shifts with ONNX's rules for out-of-range amounts (computed on the host)."""
    x, y = np.broadcast_arrays(np.asarray(a.to_data().array), np.asarray(b.to_data().array))
    bits = np.iinfo(x.dtype).bits
    valid = (y >= 0) & (y < bits)
    safe = np.where(valid, y, 0).astype(x.dtype)
    if direction == "RIGHT":
        fill = np.where(x < 0, -1, 0) if np.issubdtype(x.dtype, np.signedinteger) else 0
        out = np.where(valid, np.right_shift(x, safe), fill)
    else:
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        shifted = np.left_shift(
            x.view(unsigned) if x.dtype != unsigned else x, safe.astype(unsigned)
        )
        out = np.where(valid, shifted.view(x.dtype), 0)
    return Tensor.from_data(out.astype(x.dtype), device=a.device(), dtype=a.dtype)


def cast(x: Tensor, to: str) -> Tensor:
    """`x` as dtype `to` (burn's name): floats to ints truncate, non-zero becomes True."""
    if to == "bool":
        return x.bool()
    if to in ("f32", "f64", "f16", "bf16"):
        if x.kind is Bool:
            return x.int().float(to)
        return x.float(to) if x.kind is not Float else (x.cast(to) if x.dtype.value != to else x)
    if x.kind is Float:
        return x.int(to)
    if x.kind is Bool:
        return x.int(to)
    return x.cast(to) if x.dtype.value != to else x


def clip(x: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    lo = as_scalar(min) if min is not None else None
    hi = as_scalar(max) if max is not None else None
    if lo is not None:
        x = x.mask_where(x.lower_elem(lo), x.full_like(lo)) if x.kind is Int else x.clamp_min(lo)
    if hi is not None:
        x = x.mask_where(x.greater_elem(hi), x.full_like(hi)) if x.kind is Int else x.clamp_max(hi)
    return x


def sign(x: Tensor) -> Tensor:
    return x.sign()


def round_even(x: Tensor) -> Tensor:
    """Round half to even (ONNX's rule)."""
    floor = x.floor()
    diff = x - floor
    up = floor + 1.0
    is_even_floor = floor.remainder(x.full_like(2.0)).equal_elem(0.0)
    half = diff.equal_elem(0.5)
    rounded = floor.mask_where(diff.greater_elem(0.5), up)
    return rounded.mask_where(half.bool_and(is_even_floor.bool_not()), up)


def is_nan(x: Tensor) -> Tensor:
    return x.is_nan()


def is_inf(x: Tensor, detect_negative: int = 1, detect_positive: int = 1) -> Tensor:
    pos = x.equal_elem(math.inf)
    neg = x.equal_elem(-math.inf)
    if detect_negative and detect_positive:
        return pos.bool_or(neg)
    if detect_positive:
        return pos
    if detect_negative:
        return neg
    return x.not_equal(x).bool_and(x.equal(x))


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return x.mask_where(x.lower_equal_elem(0.0), (x.exp() - 1.0) * alpha)


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    neg = ((x / alpha).exp() - 1.0) * alpha
    return x.clamp_min(0.0) + neg.clamp_max(0.0)


def selu(
    x: Tensor, alpha: float = 1.67326319217681884765625, gamma: float = 1.05070102214813232421875
) -> Tensor:
    return x.mask_where(x.lower_equal_elem(0.0), (x.exp() - 1.0) * alpha) * gamma


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
        return x * 0.5 * (inner.tanh() + 1.0)
    return act.gelu(x)


def hard_swish(x: Tensor) -> Tensor:
    return x * act.hard_sigmoid(x, 1.0 / 6.0, 0.5)


def prelu(x: Tensor, slope: Tensor) -> Tensor:
    x, slope = align(x, slope)
    return x.mask_where(x.lower_elem(0.0), x * slope)


def shrink(x: Tensor, bias: float = 0.0, lambd: float = 0.5) -> Tensor:
    zero = x.zeros_like()
    out = zero.mask_where(x.lower_elem(-lambd), x + bias)
    return out.mask_where(x.greater_elem(lambd), x - bias)


def softsign(x: Tensor) -> Tensor:
    return x / (x.abs() + 1.0)


def thresholded_relu(x: Tensor, alpha: float = 1.0) -> Tensor:
    return x.zeros_like().mask_where(x.greater_elem(alpha), x)


def sinh(x: Tensor) -> Tensor:
    return (x.exp() - (-x).exp()) * 0.5


def cosh(x: Tensor) -> Tensor:
    return (x.exp() + (-x).exp()) * 0.5


def asin(x: Tensor) -> Tensor:
    return x.atan2((1.0 - x * x).sqrt())


def acos(x: Tensor) -> Tensor:
    return (1.0 - x * x).sqrt().atan2(x)


def atan(x: Tensor) -> Tensor:
    return x.atan2(x.ones_like())


def asinh(x: Tensor) -> Tensor:
    return (x + (x * x + 1.0).sqrt()).log()


def acosh(x: Tensor) -> Tensor:
    return (x + (x * x - 1.0).sqrt()).log()


def atanh(x: Tensor) -> Tensor:
    return ((x + 1.0) / (1.0 - x)).log() * 0.5


def bitcast(x: Tensor, to: str, numpy_dtype: str, source: str | None = None) -> Tensor:
    """The same bytes read as another element type (on the host); `source` is the ONNX element
    type when burn holds it in a wider one (unsigned 16/32-bit integers)."""
    array = np.asarray(x.to_data().array)
    if source is not None:
        array = array.astype(np.dtype(source))
    array = np.ascontiguousarray(array).view(np.dtype(numpy_dtype))
    return Tensor.from_data(array, device=x.device(), dtype=to)
