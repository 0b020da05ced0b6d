"""Reductions along one dim (sum, prod, max, min, argmax, argmin; a float mean divides in
the kernel), keeping the dim with size 1.

Three strategies, chosen by autotune: one thread per row (short rows), a workgroup tree per
row, or a tree per chunk of a long row followed by a second pass over the partial results.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.expressions import fns
from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.kernels.wgsl import WG, compute, header, kernel, store

# `shape`, `offset` and `strides` describe the input's *other* dims (a row per element of
# them); `length` words are reduced per row, `step` apart; each row is split into `chunks`
# of `chunk_len` (tree mode); a mean divides by `divisor`.
REDUCE = InfoLayout(
    "reduce",
    Word("rows"),
    Word("length"),
    Word("chunk_len"),
    Word("chunks"),
    Word("rank"),
    Dims("shape"),
    Word("offset"),
    Dims("strides"),
    Word("step"),
    Word("divisor"),
)

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


@kernel
def reduce(
    op: str, dtype: DType, serial: bool, vec: bool = False, wg: int = WG, divide: bool = False
) -> str:
    """A reduction along one dim, keeping it (size 1); layout `REDUCE`.

    Tree mode: one workgroup per (row, chunk) with a
    shared-memory tree; serial mode (short rows): one thread per row. `vec` (tree mode, not
    arg reductions): the reduced dim is contiguous and every row start, L and chunk_len are
    multiples of 4, so threads read vec4s. `wg`: threads per workgroup (a power of two).
    `divide` (float sums): the result is divided by `divisor` (a mean).
    """
    t, c = store(dtype), compute(dtype)
    arg = op in ("argmax", "argmin")
    base = "max" if op == "argmax" else "min" if op == "argmin" else op
    ident = _IDENTITY[(base, c)]
    out_t = "i32" if arg else t
    result = "i32(ia)" if arg else f"{t}(va)"
    if divide:
        result = f"{t}(va / {c}(info_divisor()))"
    combine = _combine(op, c)
    in_t = f"vec4<{t}>" if vec else t
    common = (
        header(REDUCE, [("a", in_t, "r"), ("out", out_t, "rw")], dtype)
        + fns(dtype)
        + (_better(c) if arg else "")
        + """
fn row_base(row: u32) -> u32 {
    return info_offset() + info_strided(row, info_rank(), info_shape_at(), info_strides_at());
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
    if (row >= info_rows()) {{ return; }}
    let len = info_length();
    let step = info_step();
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
    let chunks = info_chunks();
    if (g >= info_rows() * chunks) {{ return; }}
    let row = g / chunks;
    let chunk = g % chunks;
    let len = info_length();
    let lo = chunk * info_chunk_len();
    let hi = min(len, lo + info_chunk_len());
    let step = info_step();
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
