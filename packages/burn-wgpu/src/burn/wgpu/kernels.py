"""WGSL sources for the Wgpu backend's kernels.

Each function returns the source of one kernel specialised on what changes the generated code
(op, element types, tile sizes); everything else (shapes, strides, offsets, scalars) is read
at run time from binding 0, the `info` words, so one pipeline serves every shape and rank.

Conventions shared by every kernel:

- binding 0 is `info: array<u32>` (read-only); data bindings follow in order;
- a strided operand is described in `info` by a *block*: `[contiguous flag, offset,
  strides...]` (one stride per dim, 0 on broadcast dims), read with `at(i, block)`;
- 1-D launches fold workgroup counts above 65535 into y; kernels compute their linear index
  from `num_workgroups` and return past the end;
- bool is stored as u32 (0 or 1); f16 math is done in f32 (`C` below is the compute type).

Generators are cached: a launch asks for its source again and again, and gets back the same
string object (cheap to look up in the pipeline cache).

Hot paths have vec4 variants for contiguous data (elementwise ops on same-shape operands,
reductions along a contiguous dim, matmul on row- or column-major operands): 16-byte loads and
stores, no index arithmetic. Loops over register tiles are unrolled here, in Python, so every
accumulator is a named variable the shader compiler can keep in registers.
"""

from __future__ import annotations

from functools import cache

from burn.tensor import DType

WG = 256

STORE = {DType.F32: "f32", DType.F16: "f16", DType.I32: "i32", DType.BOOL: "u32"}
COMPUTE = {DType.F32: "f32", DType.F16: "f32", DType.I32: "i32", DType.BOOL: "u32"}


def store(dtype: DType) -> str:
    return STORE[dtype]


def compute(dtype: DType) -> str:
    return COMPUTE[dtype]


def _enable(*dtypes: DType) -> str:
    return "enable f16;\n" if DType.F16 in dtypes else ""


def header(bindings: list[tuple[str, str, str]], *dtypes: DType) -> str:
    """The declarations: f16 if used, `info` at binding 0, then `(name, type, access)`."""
    lines = [_enable(*dtypes), "@group(0) @binding(0) var<storage, read> info: array<u32>;"]
    for i, (name, ty, access) in enumerate(bindings):
        mode = "read_write" if access == "rw" else "read"
        lines.append(f"@group(0) @binding({i + 1}) var<storage, {mode}> {name}: array<{ty}>;")
    return "\n".join(lines) + "\n" + HELPERS


HELPERS = """
// Offset of element `i` (row-major over the shape at info[shape_at..]) for the strides at
// info[stride_at..].
fn strided(i: u32, rank: u32, shape_at: u32, stride_at: u32) -> u32 {
    var rem = i;
    var off = 0u;
    var d = rank;
    loop {
        if (d == 0u) { break; }
        d = d - 1u;
        let size = info[shape_at + d];
        off = off + (rem % size) * info[stride_at + d];
        rem = rem / size;
    }
    return off;
}

// Elementwise layout: info = [n, rank, shape..., blocks...]; a block = [flag, offset, strides...].
fn at(i: u32, block: u32) -> u32 {
    if (info[block] == 1u) { return info[block + 1u] + i; }
    return info[block + 1u] + strided(i, info[1], 2u, block + 2u);
}

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}
"""

ENTRY_1D = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let i = (wid.y * nwg.x + wid.x) * {WG}u + lid;
    if (i >= info[0]) {{ return; }}
"""

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

_CMP = {
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
        from burn.tensor.errors import DTypeError

        raise DTypeError(f"{op} is not defined for {dtype.value} on Wgpu")
    return table[op]


def binary_expr(op: str, dtype: DType) -> tuple[str, bool]:
    """(expression in `a`, `b`, whether the result is bool)."""
    if op in _CMP:
        return f"select(0u, 1u, {_CMP[op]})", True
    table = BINARY_FLOAT if dtype.is_float else BINARY_INT if dtype is DType.I32 else BINARY_BOOL
    if op not in table:
        from burn.tensor.errors import DTypeError

        raise DTypeError(f"{op} is not defined for {dtype.value} on Wgpu")
    return table[op], op in BINARY_BOOL and dtype is DType.BOOL


def scalar_read(dtype: DType, word: str) -> str:
    """A WGSL expression of the compute type reading a scalar stored in an info word."""
    if dtype.is_float:
        return f"bitcast<f32>({word})"
    if dtype is DType.I32:
        return f"bitcast<i32>({word})"
    return word


# ====================================================================== elementwise
@cache
def unary(op: str, dtype: DType) -> str:
    t, c = store(dtype), compute(dtype)
    out_t = "u32" if dtype is DType.BOOL else t
    return (
        header([("a", t, "r"), ("out", out_t, "rw")], dtype)
        + fns(dtype)
        + ENTRY_1D
        + f"""    let x = {c}(a[at(i, 2u + info[1])]);
    out[i] = {out_t}({unary_expr(op, dtype)});
}}
"""
    )


@cache
def binary(op: str, dtype: DType, rhs_scalar: bool) -> str:
    """`out = a op b`; with `rhs_scalar`, b is the info word after the lhs block."""
    t, c = store(dtype), compute(dtype)
    expr, is_bool = binary_expr(op, dtype)
    out_t = "u32" if is_bool or op in _CMP else t
    bindings = [("a", t, "r")] + ([] if rhs_scalar else [("b", t, "r")]) + [("out", out_t, "rw")]
    b = (
        scalar_read(dtype, "info[4u + 2u * info[1]]")
        if rhs_scalar
        else f"{c}(b[at(i, 4u + 2u * info[1])])"
    )
    return (
        header(bindings, dtype)
        + fns(dtype)
        + ENTRY_1D
        + f"""    let rank = info[1];
    let a = {c}(a[at(i, 2u + rank)]);
    let b = {b};
    out[i] = {out_t}({expr});
}}
"""
    )


# 4-byte stored types: their contiguous data can be read and written as vec4.
VEC_DTYPES = frozenset({DType.F32, DType.I32, DType.BOOL})

ENTRY_VEC = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let i = (wid.y * nwg.x + wid.x) * {WG}u + lid;
    if (i >= info[0]) {{ return; }}
"""


def _vec_apply(fn: str, out_t: str, *args: str) -> str:
    """`vec4<out_t>(fn(args.x...), ..., fn(args.w...))`."""
    parts = [f"{fn}({', '.join(f'{a}.{c}' for a in args)})" for c in "xyzw"]
    return f"vec4<{out_t}>({', '.join(parts)})"


@cache
def unary_vec4(op: str, dtype: DType) -> str:
    """Contiguous unary op four elements at a time. info = [n / 4, offset / 4]."""
    t, c = store(dtype), compute(dtype)
    out_t = "u32" if dtype is DType.BOOL else t
    return (
        header([("xa", f"vec4<{t}>", "r"), ("out", f"vec4<{out_t}>", "rw")], dtype)
        + fns(dtype)
        + f"""
fn op_(x: {c}) -> {out_t} {{
    return {out_t}({unary_expr(op, dtype)});
}}
"""
        + ENTRY_VEC
        + f"""    let va = xa[info[1] + i];
    out[i] = {_vec_apply("op_", out_t, "va")};
}}
"""
    )


@cache
def binary_vec4(op: str, dtype: DType, rhs_scalar: bool) -> str:
    """Contiguous same-shape binary op four elements at a time.

    info = [n / 4, lhs offset / 4, rhs offset / 4] or, with `rhs_scalar`, [n / 4, lhs offset
    / 4, scalar bits].
    """
    t, c = store(dtype), compute(dtype)
    expr, is_bool = binary_expr(op, dtype)
    out_t = "u32" if is_bool or op in _CMP else t
    bindings = [("xa", f"vec4<{t}>", "r")]
    if not rhs_scalar:
        bindings.append(("xb", f"vec4<{t}>", "r"))
    bindings.append(("out", f"vec4<{out_t}>", "rw"))
    rhs = f"vec4<{c}>({scalar_read(dtype, 'info[2]')})" if rhs_scalar else "xb[info[2] + i]"
    return (
        header(bindings, dtype)
        + fns(dtype)
        + f"""
fn op_(a: {c}, b: {c}) -> {out_t} {{
    return {out_t}({expr});
}}
"""
        + ENTRY_VEC
        + f"""    let va = xa[info[1] + i];
    let vb = {rhs};
    out[i] = {_vec_apply("op_", out_t, "va", "vb")};
}}
"""
    )


@cache
def mask_where(dtype: DType) -> str:
    t = store(dtype)
    return (
        header([("p", t, "r"), ("m", "u32", "r"), ("v", t, "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + """    let rank = info[1];
    let keep = p[at(i, 2u + rank)];
    let fresh = v[at(i, 6u + 3u * rank)];
    out[i] = select(keep, fresh, m[at(i, 4u + 2u * rank)] != 0u);
}
"""
    )


def convert(src: DType, dst: DType, x: str = "x") -> str:
    """The WGSL expression converting a stored `src` value to a stored `dst` value."""
    s, d = store(src), store(dst)
    if src is dst:
        return x
    if dst is DType.BOOL:
        zero = "0.0" if src.is_float else "0" if src is DType.I32 else "0u"
        cast = f"f32({x})" if src is DType.F16 else x
        return f"select(0u, 1u, {cast} != {zero})"
    if src is DType.BOOL:
        return f"{d}({x})"
    if src.is_float and dst is DType.I32:
        return f"i32(trunc(f32({x})))"
    del s
    return f"{d}({x})"


@cache
def copy(src: DType, dst: DType) -> str:
    """Strided `src` to strided `dst` with conversion: contiguous, cast, slice_assign, cat."""
    return (
        header([("a", store(src), "r"), ("out", store(dst), "rw")], src, dst)
        + ENTRY_1D
        + f"""    let x = a[at(i, 2u + info[1])];
    out[at(i, 4u + 2u * info[1])] = {convert(src, dst)};
}}
"""
    )


@cache
def fill(dtype: DType) -> str:
    """out[i] = scalar (info = [n, value])."""
    t = store(dtype)
    return (
        header([("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    out[i] = {t}({scalar_read(dtype, "info[1]")});
}}
"""
    )


@cache
def arange(dtype: DType) -> str:
    """out[i] = start + i * step (info = [n, start, step] as i32 bits)."""
    t = store(dtype)
    return (
        header([("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    out[i] = {t}(bitcast<i32>(info[1]) + i32(i) * bitcast<i32>(info[2]));
}}
"""
    )


# ====================================================================== random
RANDOM = """
// A counter-based generator: a 4-round Philox-style mix of (counter, stream) under a 64-bit
// key, so element i of a draw depends only on (seed, offset + i) and never on launch shape.
fn philox(c0: u32, c1: u32, k0: u32, k1: u32) -> u32 {
    var x0 = c0;
    var x1 = c1;
    var a = k0;
    var b = k1;
    for (var r = 0u; r < 6u; r = r + 1u) {
        let hi = mulhi(0xD2511F53u, x0);
        let lo = 0xD2511F53u * x0;
        x0 = hi ^ x1 ^ a;
        x1 = lo;
        a = a + 0x9E3779B9u;
        b = b + 0xBB67AE85u;
        x1 = x1 ^ b;
    }
    return x0 ^ (x1 * 0x85EBCA6Bu);
}

fn mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let lo_lo = a_lo * b_lo;
    let hi_lo = a_hi * b_lo;
    let lo_hi = a_lo * b_hi;
    let hi_hi = a_hi * b_hi;
    let cross = (lo_lo >> 16u) + (hi_lo & 0xffffu) + (lo_hi & 0xffffu);
    return hi_hi + (hi_lo >> 16u) + (lo_hi >> 16u) + (cross >> 16u);
}

// A uniform float in [0, 1) from 24 random bits.
fn unit(bits: u32) -> f32 {
    return f32(bits >> 8u) * (1.0 / 16777216.0);
}
"""


@cache
def random(kind: str, dtype: DType) -> str:
    """info = [n, counter offset, key0, key1, p0 bits, p1 bits] (p as f32).

    uniform: low + (high - low) * u; normal: mean + std * Box-Muller; bernoulli: u < p.
    """
    t = store(dtype)
    body = {
        "uniform": "let v = p0 + (p1 - p0) * unit(philox(c, 0u, k0, k1));",
        "normal": """let u1 = max(unit(philox(c, 1u, k0, k1)), 1.0e-7);
    let u2 = unit(philox(c, 2u, k0, k1));
    let v = p0 + p1 * sqrt(-2.0 * log(u1)) * cos(6.2831853 * u2);""",
        "bernoulli": "let v = select(0.0, 1.0, unit(philox(c, 3u, k0, k1)) < p0);",
    }[kind]
    conv = f"{t}(v)" if dtype.is_float else f"{t}(floor(v))" if dtype is DType.I32 else f"{t}(v)"
    return (
        header([("out", t, "rw")], dtype)
        + RANDOM
        + ENTRY_1D
        + f"""    let c = info[1] + i;
    let k0 = info[2];
    let k1 = info[3];
    let p0 = bitcast<f32>(info[4]);
    let p1 = bitcast<f32>(info[5]);
    {body}
    out[i] = {conv};
}}
"""
    )


# ====================================================================== reductions
_IDENTITY = {
    ("sum", "f32"): "0.0",
    ("sum", "i32"): "0",
    ("sum", "u32"): "0u",
    ("prod", "f32"): "1.0",
    ("prod", "i32"): "1",
    ("prod", "u32"): "1u",
    ("max", "f32"): "bitcast<f32>(0xff800000u)",
    ("max", "i32"): "i32(-2147483647 - 1)",
    ("max", "u32"): "0u",
    ("min", "f32"): "bitcast<f32>(0x7f800000u)",
    ("min", "i32"): "2147483647",
    ("min", "u32"): "0xffffffffu",
}


def _combine(op: str, c: str) -> str:
    """WGSL statements combining (va, ia) with (vb, ib) into va/ia."""
    if op == "sum":
        return "va = va + vb;"
    if op == "prod":
        return "va = va * vb;"
    if op in ("max", "min"):
        fn = f"{op}_(va, vb)" if c == "f32" else f"{op}(va, vb)"
        return f"va = {fn};"
    better = "vb > va" if op == "argmax" else "vb < va"
    return f"if (better(va, ia, vb, ib, {better})) {{ va = vb; ia = ib; }}"


def _better(c: str) -> str:
    """`better(va, ia, vb, ib, strictly)`: whether (vb, ib) replaces (va, ia) in an arg reduce.

    The first NaN wins (as numpy's argmax); ties go to the lower index.
    """
    nan = (
        """
    if (is_nan(vb) != is_nan(va)) { return is_nan(vb); }
    if (is_nan(va)) { return ib < ia; }"""
        if c == "f32"
        else ""
    )
    return f"""
fn better(va: {c}, ia: u32, vb: {c}, ib: u32, strictly: bool) -> bool {{{nan}
    if (vb == va) {{ return ib < ia; }}
    return strictly;
}}
"""


def _reduce_loop(combine: str, c: str, vec: bool, wg: int) -> str:
    if not vec:
        return f"""    for (var j = lo + lid; j < hi; j = j + {wg}u) {{
        let vb = {c}(a[start + j * step]);
        let ib = j;
        {combine}
    }}"""
    parts = "\n".join(
        f"""        {{
            let vb = {c}(v.{comp});
            let ib = j + {n}u;
            {combine}
        }}"""
        for n, comp in enumerate("xyzw")
    )
    return f"""    for (var j = lo + lid * 4u; j < hi; j = j + {4 * wg}u) {{
        let v = a[(start + j) / 4u];
{parts}
    }}"""


@cache
def reduce(
    op: str, dtype: DType, serial: bool, vec: bool = False, wg: int = WG, divide: bool = False
) -> str:
    """A reduction along one dim, keeping it (size 1).

    info = [rows, L, chunk_len, chunks, rank, shape..., offset, strides..., dim_stride] where
    shape/strides describe the *other* dims. Tree mode: one workgroup per (row, chunk) with a
    shared-memory tree; serial mode (short rows): one thread per row. `vec` (tree mode, not
    arg reductions): the reduced dim is contiguous and every row start, L and chunk_len are
    multiples of 4, so threads read vec4s. `wg`: threads per workgroup (a power of two).
    `divide` (float sums): the result is divided by the word after the info list (a mean).
    """
    t, c = store(dtype), compute(dtype)
    arg = op in ("argmax", "argmin")
    base = "max" if op == "argmax" else "min" if op == "argmin" else op
    ident = _IDENTITY[(base, c)]
    out_t = "i32" if arg else t
    result = "i32(ia)" if arg else f"{t}(va)"
    if divide:
        result = f"{t}(va / {c}(info[7u + 2u * info[4]]))"
    combine = _combine(op, c)
    in_t = f"vec4<{t}>" if vec else t
    common = (
        header([("a", in_t, "r"), ("out", out_t, "rw")], dtype)
        + fns(dtype)
        + (_better(c) if arg else "")
        + """
fn row_base(row: u32) -> u32 {
    let rank = info[4];
    return info[5u + rank] + strided(row, rank, 5u, 6u + rank);
}
"""
    )
    if serial:
        return (
            common
            + f"""
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let row = (wid.y * nwg.x + wid.x) * {wg}u + lid;
    if (row >= info[0]) {{ return; }}
    let len = info[1];
    let step = info[6u + 2u * info[4]];
    let start = row_base(row);
    var va: {c} = {ident};
    var ia: u32 = 0xffffffffu;
    for (var j = 0u; j < len; j = j + 1u) {{
        let vb = {c}(a[start + j * step]);
        let ib = j;
        {combine}
    }}
    out[row] = {result};
}}
"""
        )
    return (
        common
        + f"""
var<workgroup> sv: array<{c}, {wg}>;
var<workgroup> si: array<u32, {wg}>;

@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let g = wid.y * nwg.x + wid.x;
    let chunks = info[3];
    if (g >= info[0] * chunks) {{ return; }}
    let row = g / chunks;
    let chunk = g % chunks;
    let len = info[1];
    let lo = chunk * info[2];
    let hi = min(len, lo + info[2]);
    let step = info[6u + 2u * info[4]];
    let start = row_base(row);
    var va: {c} = {ident};
    var ia: u32 = 0xffffffffu;
{_reduce_loop(combine, c, vec, wg)}
    sv[lid] = va;
    si[lid] = ia;
    for (var s = {wg // 2}u; s > 0u; s = s >> 1u) {{
        workgroupBarrier();
        if (lid < s) {{
            va = sv[lid];
            ia = si[lid];
            let vb = sv[lid + s];
            let ib = si[lid + s];
            {combine}
            sv[lid] = va;
            si[lid] = ia;
        }}
    }}
    if (lid == 0u) {{
        va = sv[0];
        ia = si[0];
        out[g] = {result};
    }}
}}
"""
    )


# ====================================================================== indexing
# The runtime's error word, bound last by launches with `checks_indices`.
ERROR_WORD = ("err", "atomic<u32>", "rw")


@cache
def gather(dtype: DType) -> str:
    """out[i] = p[idx coords with dim replaced by idx[i]].

    info = [n, rank, idx_shape..., idx_flag, idx_off, idx_strides..., p_off, p_strides...,
    dim, dim_size]. Out-of-range indices are clamped and flagged in the error word (host-known
    ones are checked before the launch).
    """
    t = store(dtype)
    return (
        header([("p", t, "r"), ("idx", "i32", "r"), ("out", t, "rw"), ERROR_WORD], dtype)
        + ENTRY_1D
        + """    let rank = info[1];
    let pb = 4u + 2u * rank;
    let dim = info[pb + 1u + rank];
    let size = info[pb + 2u + rank];
    var rem = i;
    var off = info[pb];
    var d = rank;
    loop {
        if (d == 0u) { break; }
        d = d - 1u;
        let c = rem % info[2u + d];
        rem = rem / info[2u + d];
        if (d != dim) { off = off + c * info[pb + 1u + d]; }
    }
    let raw = idx[at(i, 2u + rank)];
    if (raw < 0 || raw >= i32(size)) { atomicMax(&err[0], 1u); }
    let k = u32(clamp(raw, 0, i32(size) - 1));
    out[i] = p[off + k * info[pb + 1u + dim]];
}
"""
    )


@cache
def scatter_add(dtype: DType) -> str:
    """One thread per output element, summing the values whose index points at it.

    Deterministic (a fixed summation order, no float atomics, works for f16) at the cost of
    reading every index along `dim` per output element. info = [n, rank, p_shape...,
    p_flag, p_off, p_strides..., idx_shape..., idx_off, idx_strides..., v_off, v_strides..., dim].
    """
    t, c = store(dtype), compute(dtype)
    return (
        header(
            [("p", t, "r"), ("idx", "i32", "r"), ("v", t, "r"), ("out", t, "rw"), ERROR_WORD],
            dtype,
        )
        + ENTRY_1D
        + f"""    let rank = info[1];
    let ish = 4u + 2u * rank;
    let ib = ish + rank;
    let vb = ib + 1u + rank;
    let dim = info[vb + 1u + rank];
    var acc = {c}(p[at(i, 2u + rank)]);
    var rem = i;
    var io = info[ib];
    var vo = info[vb];
    var want = 0u;
    var inside = true;
    var d = rank;
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let c = rem % info[2u + d];
        rem = rem / info[2u + d];
        if (d == dim) {{
            want = c;
        }} else {{
            if (c >= info[ish + d]) {{ inside = false; }}
            io = io + c * info[ib + 1u + d];
            vo = vo + c * info[vb + 1u + d];
        }}
    }}
    if (inside) {{
        let n = info[ish + dim];
        let istep = info[ib + 1u + dim];
        let vstep = info[vb + 1u + dim];
        for (var k = 0u; k < n; k = k + 1u) {{
            let raw = idx[io + k * istep];
            if (raw < 0 || raw >= i32(info[2u + dim])) {{ atomicMax(&err[0], 2u); }}
            if (u32(raw) == want) {{
                acc = acc + {c}(v[vo + k * vstep]);
            }}
        }}
    }}
    out[i] = {t}(acc);
}}
"""
    )


@cache
def iota_rows(n_cols_word: str = "info[1]") -> str:
    """out[i] = i % cols as i32 (the initial indices of a sort). info = [n, cols]."""
    return header([("out", "i32", "rw")]) + ENTRY_1D + f"    out[i] = i32(i % {n_cols_word});\n}}\n"


@cache
def bitonic_step(dtype: DType, descending: bool) -> str:
    """One compare-exchange step (k, j) of a bitonic sort of rows of length P (a power of 2).

    Keys are (value, original index), so equal values keep their order (a stable sort);
    padding (index >= n) sorts last. info = [rows * P / 2, P, n, k, j].
    """
    t, c = store(dtype), compute(dtype)
    before = "va > vb" if descending else "va < vb"
    nan = ""
    if dtype.is_float:
        # NaN sorts last in both directions (as numpy does for ascending).
        nan = """
    let na = is_nan(va);
    let nb = is_nan(vb);
    if (na != nb) { return nb; }
    if (na && nb) { return ia < ib; }"""
    return (
        header([("vals", t, "rw"), ("idx", "i32", "rw")], dtype)
        + f"""
fn first(va: {c}, ia: i32, vb: {c}, ib: i32) -> bool {{
    let n = i32(info[2]);
    if ((ia >= n) != (ib >= n)) {{ return ib >= n; }}{nan}
    if (va != vb) {{ return {before}; }}
    return ia < ib;
}}
"""
        + ENTRY_1D
        + """    let p = info[1];
    let k = info[3];
    let j = info[4];
    let hp = p / 2u;
    let row = i / hp;
    let t = i % hp;
    let lo = (t / j) * 2u * j + (t % j);
    let hi = lo + j;
    let up = (lo & k) == 0u;
    let a = row * p + lo;
    let b = row * p + hi;
"""
        + f"""    let va = {c}(vals[a]);
    let vb = {c}(vals[b]);
    let ia = idx[a];
    let ib = idx[b];
    let ordered = first(va, ia, vb, ib);
    if (ordered != up) {{
        vals[a] = {t}(vb);
        vals[b] = {t}(va);
        idx[a] = ib;
        idx[b] = ia;
    }}
}}
"""
    )


# ====================================================================== matmul
_MATMUL_BATCH = """
    let M = info[0];
    let N = info[1];
    let K = info[2];
    let br = info[4];
    let ab = 5u + br;
    let bb = ab + 3u + br;
    let row_tiles = (M + {bm1}u) / {bm}u;
    let linear = wid.z * nwg.y + wid.y;
    let batch = linear / row_tiles;
    if (batch >= info[3]) {{ return; }}
    let tile_row = linear % row_tiles;
    var a_base = info[ab];
    var b_base = info[bb];
    var rem = batch;
    var d = br;
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let size = info[5u + d];
        let c = rem % size;
        rem = rem / size;
        a_base = a_base + c * info[ab + 1u + d];
        b_base = b_base + c * info[bb + 1u + d];
    }}
    let a_rs = info[ab + 1u + br];
    let a_cs = info[ab + 2u + br];
    let b_rs = info[bb + 1u + br];
    let b_cs = info[bb + 2u + br];
    let row0 = tile_row * {bm}u;
    let col0 = wid.x * {bn}u;
    let tx = lid3.x;
    let ty = lid3.y;
    let out_base = batch * M * N;
"""

_MATMUL_ENTRY = """
@compute @workgroup_size({tx}, {ty}, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {{
"""


@cache
def matmul(dtype: DType, bm: int, bn: int, bk: int, tm: int, tn: int) -> str:
    """Tiled, register-blocked batched matmul over strided operands (any layout, any dtype).

    A workgroup computes a BM x BN output tile with (BN/TN) x (BM/TM) threads; each thread
    holds TM x TN accumulators for rows `ty + i * TY` and columns `tx + j * TX` (interleaved,
    so stores are coalesced). Tiles of A and B go through workgroup memory BK at a time.
    info = [M, N, K, batches, brank, bshape..., a_off, a_bstrides..., a_rs, a_cs, b_off,
    b_bstrides..., b_rs, b_cs]; workgroups = (column tiles, row tiles x batches over y and z).
    """
    t, c = store(dtype), compute(dtype)
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    zero = "0.0" if dtype.is_float else "0"
    decl = "\n".join(f"    var acc{i}_{j}: {c} = {zero};" for i in range(tm) for j in range(tn))
    inner = []
    for i in range(tm):
        inner.append(f"            let ar{i} = As[kk * {bm}u + ty + {i * ty}u];")
    for j in range(tn):
        inner.append(f"            let br{j} = Bs[kk * {bn}u + tx + {j * tx}u];")
    for i in range(tm):
        for j in range(tn):
            update = (
                f"fma(ar{i}, br{j}, acc{i}_{j})"
                if dtype.is_float
                else f"acc{i}_{j} + ar{i} * br{j}"
            )
            inner.append(f"            acc{i}_{j} = {update};")
    stores = []
    for i in range(tm):
        stores.append(f"    {{\n        let gm = row0 + ty + {i * ty}u;")
        stores.append("        if (gm < M) {")
        for j in range(tn):
            stores.append(
                f"            if (col0 + tx + {j * tx}u < N) {{ "
                f"out[out_base + gm * N + col0 + tx + {j * tx}u] = {t}(acc{i}_{j}); }}"
            )
        stores.append("        }\n    }")
    return (
        header([("a", t, "r"), ("b", t, "r"), ("out", t, "rw")], dtype)
        + f"""
var<workgroup> As: array<{c}, {bm * bk}>;
var<workgroup> Bs: array<{c}, {bn * bk}>;
"""
        + _MATMUL_ENTRY.format(tx=tx, ty=ty)
        + _MATMUL_BATCH.format(bm=bm, bm1=bm - 1, bn=bn)
        + decl
        + f"""
    for (var k0 = 0u; k0 < K; k0 = k0 + {bk}u) {{
        for (var e = lid; e < {bm * bk}u; e = e + {nt}u) {{
            let m = e / {bk}u;
            let kk = e % {bk}u;
            let gm = row0 + m;
            let gk = k0 + kk;
            var v: {c} = {zero};
            if (gm < M && gk < K) {{ v = {c}(a[a_base + gm * a_rs + gk * a_cs]); }}
            As[kk * {bm}u + m] = v;
        }}
        for (var e = lid; e < {bn * bk}u; e = e + {nt}u) {{
            let kk = e / {bn}u;
            let n = e % {bn}u;
            let gk = k0 + kk;
            let gn = col0 + n;
            var v: {c} = {zero};
            if (gk < K && gn < N) {{ v = {c}(b[b_base + gk * b_rs + gn * b_cs]); }}
            Bs[kk * {bn}u + n] = v;
        }}
        workgroupBarrier();
        for (var kk = 0u; kk < {bk}u; kk = kk + 1u) {{
"""
        + "\n".join(inner)
        + """
        }
        workgroupBarrier();
    }
"""
        + "\n".join(stores)
        + "\n}\n"
    )


def _tile_loads(
    name: str,
    rows: int,
    bk: int,
    nt: int,
    k_major: bool,
    strides: tuple[str, str],
    lim: str,
    exact: bool = False,
) -> tuple[list[str], list[str]]:
    """WGSL lines loading one BK-deep vec4 tile of `name` into registers, then into shared.

    The tile is `rows` (BM of A, or BN of B) by BK, stored in workgroup memory k-major as
    vec4s of 4 consecutive rows: `S[kk * rows / 4 + row / 4]`. With `k_major` the operand is
    contiguous along k (4 consecutive k per global vec4, transposed on the way into shared
    memory); otherwise it is contiguous along the rows (a global vec4 is a shared vec4).
    `strides` are the WGSL names of the row and k strides, `lim` the row count (M or N).
    `exact`: the tile lies inside the operand (no bounds checks).
    Returns (loads into registers `{name}r{l}`, stores into shared `{name}s`).
    """
    total = rows * bk // 4
    loads, stores = [], []
    base, (rs, ks) = f"{name}_base", strides
    row_word = "row0" if name == "a" else "col0"
    for n in range(-(-total // nt)):
        e = f"(lid + {n * nt}u)"
        guard = f"{e} < {total}u && " if (n + 1) * nt > total else ""
        reg = f"{name}r{n}"
        if k_major:
            row, kq = f"({e} / {bk // 4}u)", f"({e} % {bk // 4}u)"
            g_row, g_k = f"{row_word} + {row}", f"k0 + {kq} * 4u"
            index = f"({base} + ({g_row}) * {rs} + {g_k}) / 4u"
        else:
            kk, rq = f"({e} / {rows // 4}u)", f"({e} % {rows // 4}u)"
            g_row, g_k = f"{row_word} + {rq} * 4u", f"k0 + {kk}"
            index = f"({base} + ({g_k}) * {ks} + {g_row}) / 4u"
        if exact:
            if guard:
                loads.append(f"        {reg} = vec4<f32>(0.0);")
                loads.append(f"        if ({guard[:-4]}) {{ {reg} = {name}[{index}]; }}")
            else:
                loads.append(f"        {reg} = {name}[{index}];")
        else:
            loads.append(f"        {reg} = vec4<f32>(0.0);")
            check = f"{guard}{g_row} < {lim} && {g_k} < K"
            loads.append(f"        if ({check}) {{ {reg} = {name}[{index}]; }}")
        if k_major:
            slot = f"{row} / 4u][{row} % 4u]"
            st = [
                f"{name}s[({kq} * 4u + {q}u) * {rows // 4}u + {slot} = {reg}.{comp};"
                for q, comp in enumerate("xyzw")
            ]
            body = " ".join(st)
        else:
            body = f"{name}s[{kk} * {rows // 4}u + {rq}] = {reg};"
        stores.append(f"        if ({guard}true) {{ {body} }}" if guard else f"        {body}")
    return loads, stores


@cache
def matmul_vec4(
    bm: int,
    bn: int,
    bk: int,
    tm: int,
    tn: int,
    a_k: bool,
    b_k: bool,
    exact: bool = False,
) -> str:
    """f32 matmul of contiguous operands with vec4 loads, vec4 shared tiles and vec4 stores.

    Each thread of the (BN/TN) x (BM/TM) workgroup owns TM x TN outputs: TM/4 groups of 4 rows
    (`g * 4 * TY + ty * 4 + r`) by TN/4 groups of 4 columns (`h * 4 * TX + tx * 4 + c`), held
    as TM * TN / 4 vec4 accumulators. Per k step a thread reads TM/4 + TN/4 vec4s from shared
    memory and does TM * TN FMAs. The next tile's global loads are issued before the current
    tile's math, so their latency is hidden.

    `a_k`: A is contiguous along k (row-major), else along m (a transposed view); `b_k`: B is
    contiguous along k (a transposed view), else along n (row-major). The caller guarantees
    16-byte alignment: offsets, batch strides and the leading strides are multiples of 4, and
    so are K, N, and M when A is m-contiguous. Same info layout as `matmul`.

    `exact`: M, N and K are multiples of BM, BN and BK, so no load or store is bounds-checked
    (on an H100 this alone took the 128x128 tile from 32 to 39 TFLOP/s at n = 8192). Double
    buffering the shared tiles (one barrier per k step instead of two) was measured there too
    and lost 10-25% to the extra index arithmetic and registers, so it is not offered.
    """
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    gm_, gn_ = tm // 4, tn // 4
    a_size, b_size = bm * bk // 4, bn * bk // 4
    a_loads, a_stores = _tile_loads("a", bm, bk, nt, a_k, ("a_rs", "a_cs"), "M", exact)
    b_loads, b_stores = _tile_loads("b", bn, bk, nt, b_k, ("b_cs", "b_rs"), "N", exact)
    regs = [f"    var ar{n}: vec4<f32>;" for n in range(-(-a_size // nt))]
    regs += [f"    var br{n}: vec4<f32>;" for n in range(-(-b_size // nt))]
    accs = [
        f"    var acc{g}_{r}_{h} = vec4<f32>(0.0);"
        for g in range(gm_)
        for r in range(4)
        for h in range(gn_)
    ]
    math = []
    for kk in range(bk):
        math.append("        {")
        for g in range(gm_):
            math.append(f"            let a{g} = as_[{kk * bm // 4 + g * ty}u + ty];")
        for h in range(gn_):
            math.append(f"            let b{h} = bs[{kk * bn // 4 + h * tx}u + tx];")
        for g in range(gm_):
            for r, comp in enumerate("xyzw"):
                for h in range(gn_):
                    acc = f"acc{g}_{r}_{h}"
                    math.append(f"            {acc} = fma(vec4<f32>(a{g}.{comp}), b{h}, {acc});")
        math.append("        }")
    stores = []
    for g in range(gm_):
        for r in range(4):
            stores.append(f"    {{\n        let gm = row0 + {g * 4 * ty + r}u + ty * 4u;")
            stores.append("        if (gm < M) {" if not exact else "        {")
            for h in range(gn_):
                col = f"col0 + {h * 4 * tx}u + tx * 4u"
                store = f"out[(out_base + gm * N + {col}) / 4u] = acc{g}_{r}_{h};"
                stores.append(
                    f"            {store}" if exact else f"            if ({col} < N) {{ {store} }}"
                )
            stores.append("        }\n    }")
    # The loaders name the operands `a`/`b` and their shared tiles `as`/`bs` (`as_`, since
    # `as` is reserved in WGSL).
    a_stores = [line.replace("as[", "as_[") for line in a_stores]
    return (
        header([("a", "vec4<f32>", "r"), ("b", "vec4<f32>", "r"), ("out", "vec4<f32>", "rw")])
        + f"""
var<workgroup> as_: array<vec4<f32>, {a_size}>;
var<workgroup> bs: array<vec4<f32>, {b_size}>;
"""
        + _MATMUL_ENTRY.format(tx=tx, ty=ty)
        + _MATMUL_BATCH.format(bm=bm, bm1=bm - 1, bn=bn)
        + "\n".join(regs + accs)
        + "\n    var k0 = 0u;\n    {\n"
        + "\n".join(a_loads + b_loads)
        + """
    }
    loop {
        if (k0 >= K) { break; }
"""
        + "\n".join(a_stores + b_stores)
        + f"""
        workgroupBarrier();
        k0 = k0 + {bk}u;
        if (k0 < K) {{
"""
        + "\n".join("    " + line for line in a_loads + b_loads)
        + """
        }
"""
        + "\n".join(math)
        + """
        workgroupBarrier();
    }
"""
        + "\n".join(stores)
        + "\n}\n"
    )


# ====================================================================== convolution
_CONV_LAYOUT = """
// info = [total, nd, N, C, taps, kernel[nd], out[nd], stride[nd], dilation[nd], padding[nd],
//         size[nd], src offset, src strides..., extra...]
fn kb() -> u32 { return 5u; }
fn ob() -> u32 { return 5u + info[1]; }
fn sb() -> u32 { return 5u + 2u * info[1]; }
fn db() -> u32 { return 5u + 3u * info[1]; }
fn pb() -> u32 { return 5u + 4u * info[1]; }
fn zb() -> u32 { return 5u + 5u * info[1]; }
fn src_at() -> u32 { return 5u + 6u * info[1]; }
"""


@cache
def im2col(dtype: DType) -> str:
    """`x [N, C, *size]` (strided) -> `[N, C, taps, *out]`: what each kernel tap sees.

    One thread per output element; positions in the padding read `value` (the info word after
    the source strides). One launch replaces a slice per kernel tap plus a cat.
    """
    t = store(dtype)
    return (
        header([("x", t, "r"), ("out", t, "rw")], dtype)
        + _CONV_LAYOUT
        + ENTRY_1D
        + f"""    let nd = info[1];
    let xs = src_at() + 1u;
    var rem = i;
    var oc: array<u32, 3>;
    for (var d = nd; d > 0u; d = d - 1u) {{
        oc[d - 1u] = rem % info[ob() + d - 1u];
        rem = rem / info[ob() + d - 1u];
    }}
    let tap = rem % info[4];
    rem = rem / info[4];
    let c = rem % info[3];
    let n = rem / info[3];
    var src = info[src_at()] + n * info[xs] + c * info[xs + 1u];
    var valid = true;
    var trem = tap;
    for (var d = nd; d > 0u; d = d - 1u) {{
        let k = d - 1u;
        let j = trem % info[kb() + k];
        trem = trem / info[kb() + k];
        let pos = i32(oc[k] * info[sb() + k] + j * info[db() + k]) - i32(info[pb() + k]);
        if (pos < 0 || pos >= i32(info[zb() + k])) {{
            valid = false;
        }} else {{
            src = src + u32(pos) * info[xs + 2u + k];
        }}
    }}
    if (valid) {{
        out[i] = x[src];
    }} else {{
        out[i] = {t}({scalar_read(dtype, "info[xs + 2u + nd]")});
    }}
}}
"""
    )


@cache
def col2im(dtype: DType) -> str:
    """Adjoint of `im2col`: `cols [N, C, taps, *out]` (strided) summed into `[N, C, *size]`.

    One thread per output element gathers the taps that read it (no atomics, fixed order).
    """
    t, c = store(dtype), compute(dtype)
    zero = "0.0" if dtype.is_float else "0"
    return (
        header([("cols", t, "r"), ("out", t, "rw")], dtype)
        + _CONV_LAYOUT
        + ENTRY_1D
        + f"""    let nd = info[1];
    let cs = src_at() + 1u;
    var rem = i;
    var yc: array<u32, 3>;
    for (var d = nd; d > 0u; d = d - 1u) {{
        yc[d - 1u] = rem % info[zb() + d - 1u];
        rem = rem / info[zb() + d - 1u];
    }}
    let ch = rem % info[3];
    let n = rem / info[3];
    let base = info[src_at()] + n * info[cs] + ch * info[cs + 1u];
    var acc: {c} = {zero};
    for (var tap = 0u; tap < info[4]; tap = tap + 1u) {{
        var at_ = base + tap * info[cs + 2u];
        var valid = true;
        var trem = tap;
        for (var d = nd; d > 0u; d = d - 1u) {{
            let k = d - 1u;
            let j = trem % info[kb() + k];
            trem = trem / info[kb() + k];
            let num = i32(yc[k] + info[pb() + k]) - i32(j * info[db() + k]);
            let s = i32(info[sb() + k]);
            if (num < 0 || num % s != 0 || num / s >= i32(info[ob() + k])) {{
                valid = false;
            }} else {{
                at_ = at_ + u32(num / s) * info[cs + 3u + k];
            }}
        }}
        if (valid) {{ acc = acc + {c}(cols[at_]); }}
    }}
    out[i] = {t}(acc);
}}
"""
    )
