"""The WGSL expression of each elementwise op, and the helper functions they call.

Expressions read `x` (unary) or `a` and `b` (binary) of the compute type. Where WGSL's builtin
disagrees with numpy or Burn (NaN propagation in max/min, pow of negative bases, the sign of
a remainder, integer division by zero), a helper spells out the expected behaviour.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.tensor.errors import DTypeError

FLOAT_FNS = """
fn log1p_(x: f32) -> f32 {
    if (abs(x) < 1.0e-4) { return x * (1.0 - x * (0.5 - x / 3.0)); }
    let u = 1.0 + x;
    if (u == 1.0) { return x; }
    return log(u) * (x / (u - 1.0));
}

// erf: a Maclaurin series near 0 (relative accuracy), Abramowitz-Stegun 7.1.26 beyond.
fn erf_(v: f32) -> f32 {
    let x = abs(v);
    var r: f32;
    if (x < 0.5) {
        let x2 = x * x;
        r = 1.1283791671 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0
            + x2 * (1.0 / 216.0 + x2 * (-1.0 / 1320.0))))));
    } else {
        let t = 1.0 / (1.0 + 0.3275911 * x);
        let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
            + t * (-1.453152027 + t * 1.061405429))));
        r = 1.0 - poly * exp(-x * x);
    }
    if (v < 0.0) { return -r; }
    return r;
}

// pow that also handles negative bases with integral exponents (WGSL's pow does not).
fn pow_(a: f32, b: f32) -> f32 {
    if (b == 0.0) { return 1.0; }
    if (is_nan(a) || is_nan(b)) { return a + b; }
    if (a == 0.0) {
        if (b > 0.0) { return 0.0; }
        return bitcast<f32>(0x7f800000u);
    }
    if (a < 0.0) {
        if (floor(b) != b) { return bitcast<f32>(0x7fc00000u); }
        let m = pow(-a, b);
        if (abs(b % 2.0) == 1.0) { return -m; }
        return m;
    }
    return pow(a, b);
}

// Remainder with the divisor's sign (Python's %, PyTorch's remainder).
fn rem_(a: f32, b: f32) -> f32 {
    let r = a - b * trunc(a / b);
    if (r != 0.0 && ((r < 0.0) != (b < 0.0))) { return r + b; }
    return r;
}

fn max_(a: f32, b: f32) -> f32 {
    if (is_nan(a)) { return a; }
    if (is_nan(b)) { return b; }
    return max(a, b);
}

fn min_(a: f32, b: f32) -> f32 {
    if (is_nan(a)) { return a; }
    if (is_nan(b)) { return b; }
    return min(a, b);
}

fn tanh_(x: f32) -> f32 {
    if (is_nan(x)) { return x; }
    return tanh(clamp(x, -20.0, 20.0));
}
"""

INT_FNS = """
// Truncating division on magnitudes (u32 division has one meaning everywhere, while drivers
// have been seen to disagree on signed division and remainder).
fn div_(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let q = i32(u32(abs(a)) / u32(abs(b)));
    return select(q, -q, (a < 0) != (b < 0));
}

// The remainder with the divisor's sign (Python's and Burn's `%`).
fn rem_(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let r = a - b * div_(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) { return r + b; }
    return r;
}

fn pow_(a: i32, b: i32) -> i32 {
    if (b < 0) {
        if (a == 1) { return 1; }
        if (a == -1) { return select(1, -1, (b & 1) == 1); }
        return 0;
    }
    var result = 1;
    var base = a;
    var e = b;
    loop {
        if (e == 0) { break; }
        if ((e & 1) == 1) { result = result * base; }
        base = base * base;
        e = e >> 1u;
    }
    return result;
}
"""


def fns(dtype: DType) -> str:
    """The helper functions the expressions of `dtype` call."""
    return FLOAT_FNS if dtype.is_float else INT_FNS if dtype is DType.I32 else ""


UNARY_FLOAT = {
    "neg": "-x",
    "abs": "abs(x)",
    "exp": "exp(x)",
    "log": "log(x)",
    "log1p": "log1p_(x)",
    "sqrt": "sqrt(x)",
    "sin": "sin(x)",
    "cos": "cos(x)",
    "tan": "tan(x)",
    "tanh": "tanh_(x)",
    "erf": "erf_(x)",
    "floor": "floor(x)",
    "ceil": "ceil(x)",
    "round": "round(x)",
    "sign": "sign(x)",
    "recip": "1.0 / x",
}
UNARY_INT = {"neg": "-x", "abs": "abs(x)", "sign": "sign(x)"}
UNARY_BOOL = {"not": "select(1u, 0u, x != 0u)"}

COMPARISONS = {
    "eq": "a == b",
    "ne": "!(a == b)",
    "gt": "a > b",
    "ge": "a >= b",
    "lt": "a < b",
    "le": "a <= b",
}
BINARY_FLOAT = {
    "add": "a + b",
    "sub": "a - b",
    "mul": "a * b",
    "div": "a / b",
    "rem": "rem_(a, b)",
    "pow": "pow_(a, b)",
    "max": "max_(a, b)",
    "min": "min_(a, b)",
    "atan2": "atan2(a, b)",
}
BINARY_INT = {
    "add": "a + b",
    "sub": "a - b",
    "mul": "a * b",
    "div": "div_(a, b)",
    "rem": "rem_(a, b)",
    "pow": "pow_(a, b)",
    "max": "max(a, b)",
    "min": "min(a, b)",
}
BINARY_BOOL = {
    "and": "select(0u, 1u, (a != 0u) && (b != 0u))",
    "or": "select(0u, 1u, (a != 0u) || (b != 0u))",
    "xor": "select(0u, 1u, (a != 0u) != (b != 0u))",
    "max": "max(a, b)",
    "min": "min(a, b)",
}


def unary_expr(op: str, dtype: DType) -> str:
    table = UNARY_FLOAT if dtype.is_float else UNARY_INT if dtype is DType.I32 else UNARY_BOOL
    if op not in table:
        raise DTypeError(f"{op} is not defined for {dtype.value} on Wgpu")
    return table[op]


def binary_expr(op: str, dtype: DType) -> tuple[str, bool]:
    """(expression in `a`, `b`, whether the result is bool)."""
    if op in COMPARISONS:
        return f"select(0u, 1u, {COMPARISONS[op]})", True
    table = BINARY_FLOAT if dtype.is_float else BINARY_INT if dtype is DType.I32 else BINARY_BOOL
    if op not in table:
        raise DTypeError(f"{op} is not defined for {dtype.value} on Wgpu")
    return table[op], op in BINARY_BOOL and dtype is DType.BOOL
