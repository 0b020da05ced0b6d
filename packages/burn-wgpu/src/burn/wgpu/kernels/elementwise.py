"""Elementwise kernels: unary and binary ops (strided and broadcasting, or vec4 on contiguous
data) and `mask_where`.

The strided kernels read every operand through a `Strided` block of their info words, so a
permuted, sliced or broadcast view costs no copy. The vec4 kernels serve the common case of
contiguous same-shape operands: 16-byte loads and stores and no index arithmetic.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.expressions import binary_expr, fns, unary_expr
from burn.wgpu.kernels.layout import Dims, InfoLayout, Strided, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, compute, header, kernel, scalar_read, store

UNARY = InfoLayout("unary", Word("n"), Word("rank"), Dims("shape"), Strided("a"))
BINARY = InfoLayout("binary", Word("n"), Word("rank"), Dims("shape"), Strided("a"), Strided("b"))
BINARY_SCALAR = InfoLayout(
    "binary with a scalar rhs", Word("n"), Word("rank"), Dims("shape"), Strided("a"), Word("b")
)
# The vec4 forms count and offset in vec4s (4 elements).
UNARY_VEC4 = InfoLayout("unary vec4", Word("n"), Word("a_offset"))
BINARY_VEC4 = InfoLayout("binary vec4", Word("n"), Word("a_offset"), Word("b_offset"))
BINARY_SCALAR_VEC4 = InfoLayout(
    "binary vec4 with a scalar rhs", Word("n"), Word("a_offset"), Word("b")
)
MASK_WHERE = InfoLayout(
    "mask_where",
    Word("n"),
    Word("rank"),
    Dims("shape"),
    Strided("p"),
    Strided("mask"),
    Strided("value"),
)


def _out_type(op: str, dtype: DType) -> str:
    """The stored type of a binary op's result (comparisons and bool ops give bool as u32)."""
    return "u32" if binary_expr(op, dtype)[1] else store(dtype)


@kernel
def unary(op: str, dtype: DType) -> str:
    """`out[i] = op(a[i])` over a strided `a` (layout `UNARY`)."""
    t, c = store(dtype), compute(dtype)
    return (
        header(UNARY, [("a", t, "r"), ("out", t, "rw")], dtype)
        + fns(dtype)
        + ENTRY_1D
        + f"""    let x = {c}(a[info_a_index(i)]);
    out[i] = {t}({unary_expr(op, dtype)});
}}
"""
    )


@kernel
def binary(op: str, dtype: DType, rhs_scalar: bool) -> str:
    """`out = a op b` over strided, broadcast operands (layout `BINARY`), or with
    `rhs_scalar` a scalar b from the info words (layout `BINARY_SCALAR`)."""
    t, c = store(dtype), compute(dtype)
    expr = binary_expr(op, dtype)[0]
    out_t = _out_type(op, dtype)
    if rhs_scalar:
        layout, b = BINARY_SCALAR, scalar_read(dtype, "info_b()")
        bindings = [("a", t, "r"), ("out", out_t, "rw")]
    else:
        layout, b = BINARY, f"{c}(b[info_b_index(i)])"
        bindings = [("a", t, "r"), ("b", t, "r"), ("out", out_t, "rw")]
    return (
        header(layout, bindings, dtype)
        + fns(dtype)
        + ENTRY_1D
        + f"""    let a = {c}(a[info_a_index(i)]);
    let b = {b};
    out[i] = {out_t}({expr});
}}
"""
    )


def _vec_apply(fn: str, out_t: str, *args: str) -> str:
    """`vec4<out_t>(fn(args.x...), ..., fn(args.w...))`."""
    parts = [f"{fn}({', '.join(f'{a}.{c}' for a in args)})" for c in "xyzw"]
    return f"vec4<{out_t}>({', '.join(parts)})"


@kernel
def unary_vec4(op: str, dtype: DType) -> str:
    """Contiguous unary op four elements at a time (layout `UNARY_VEC4`)."""
    t, c = store(dtype), compute(dtype)
    return (
        header(UNARY_VEC4, [("xa", f"vec4<{t}>", "r"), ("out", f"vec4<{t}>", "rw")], dtype)
        + fns(dtype)
        + f"""
fn op_(x: {c}) -> {t} {{
    return {t}({unary_expr(op, dtype)});
}}
"""
        + ENTRY_1D
        + f"""    let va = xa[info_a_offset() + i];
    out[i] = {_vec_apply("op_", t, "va")};
}}
"""
    )


@kernel
def binary_vec4(op: str, dtype: DType, rhs_scalar: bool) -> str:
    """Contiguous same-shape binary op four elements at a time (layout `BINARY_VEC4`, or
    `BINARY_SCALAR_VEC4` with `rhs_scalar`)."""
    t, c = store(dtype), compute(dtype)
    expr = binary_expr(op, dtype)[0]
    out_t = _out_type(op, dtype)
    bindings = [("xa", f"vec4<{t}>", "r")]
    if rhs_scalar:
        layout, rhs = BINARY_SCALAR_VEC4, f"vec4<{c}>({scalar_read(dtype, 'info_b()')})"
    else:
        layout, rhs = BINARY_VEC4, "xb[info_b_offset() + i]"
        bindings.append(("xb", f"vec4<{t}>", "r"))
    bindings.append(("out", f"vec4<{out_t}>", "rw"))
    return (
        header(layout, bindings, dtype)
        + fns(dtype)
        + f"""
fn op_(a: {c}, b: {c}) -> {out_t} {{
    return {out_t}({expr});
}}
"""
        + ENTRY_1D
        + f"""    let va = xa[info_a_offset() + i];
    let vb = {rhs};
    out[i] = {_vec_apply("op_", out_t, "va", "vb")};
}}
"""
    )


@kernel
def mask_where(dtype: DType) -> str:
    """`out = value where mask else p`, all three strided and broadcast (layout `MASK_WHERE`)."""
    t = store(dtype)
    return (
        header(
            MASK_WHERE, [("p", t, "r"), ("m", "u32", "r"), ("v", t, "r"), ("out", t, "rw")], dtype
        )
        + ENTRY_1D
        + """    let keep = p[info_p_index(i)];
    let fresh = v[info_value_index(i)];
    out[i] = select(keep, fresh, m[info_mask_index(i)] != 0u);
}
"""
    )
