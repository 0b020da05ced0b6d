"""Activations that the contract composes from several kernels, each as one kernel.

- `relu_backward`: the gradient where relu's output is positive, else 0 (the composition is a
  comparison and a `mask_where`, three launches).
- `log_softmax` and its backward along one dim: a row's max, the sum of its shifted
  exponentials and the result in one kernel (the composition is six launches forward, four
  backward). Each row is read by one thread (`serial`, short rows) or one workgroup with a
  shared-memory tree (long rows). The arithmetic is the composition's, step for step
  (`x - max`, `exp`, a sum, `log`), so the results differ from it only in the order the sum
  adds its terms.

All take contiguous float32 operands; the ops fall back to the composition otherwise.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.expressions import fns
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, WG, header, kernel

# Two same-shaped operands read from their offsets (in elements).
RELU_BACKWARD = InfoLayout("relu backward", Word("n"), Word("o_offset"), Word("g_offset"))

# A tensor seen as `[outer, length, inner]` around the dim: `rows` = outer * inner rows of
# `length` elements, `inner` apart; `a` and `b` are the operands' offsets (`b` unused forward).
ROWS = InfoLayout(
    "log_softmax rows",
    Word("rows"),
    Word("length"),
    Word("inner"),
    Word("a_offset"),
    Word("b_offset"),
)

# Rows up to this long are read by one thread each; longer ones by a workgroup.
SERIAL_LENGTH = 64
ROW_WG = 64

_NEG_INF = "bitcast<f32>(0xff800000u)"


@kernel
def relu_backward() -> str:
    """`g` where `o` > 0, else 0 (NaN in `o` passes `g` through, as the composition's `<=`)."""
    return (
        header(RELU_BACKWARD, [("o", "f32", "r"), ("g", "f32", "r"), ("out", "f32", "rw")])
        + ENTRY_1D
        + """    out[i] = select(g[info_g_offset() + i], 0.0, o[info_o_offset() + i] <= 0.0);
}
"""
    )


_ROW_START = """
fn row_start(row: u32) -> u32 {
    let inner = info_inner();
    return (row / inner) * info_length() * inner + row % inner;
}
"""


def _entry(serial: bool) -> str:
    """The entry point's opening: `row`, `start` (the row's first element, before the
    operands' offsets), `step` and `len`; `lid` and `width` split a row among threads."""
    wg = WG if serial else ROW_WG
    row = f"(wid.y * nwg.x + wid.x) * {WG}u + lid" if serial else "wid.y * nwg.x + wid.x"
    width = "1u" if serial else f"{ROW_WG}u"
    first = "0u" if serial else "lid"
    return f"""
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let row = {row};
    if (row >= info_rows()) {{ return; }}
    let start = row_start(row);
    let step = info_inner();
    let len = info_length();
    let first = {first};
    let width = {width};
"""


def _tree(serial: bool, combine: str) -> str:
    """Statements that combine every thread's `acc` into `acc` for all (tree mode)."""
    if serial:
        return ""
    return f"""    part[lid] = acc;
    for (var s = {ROW_WG // 2}u; s > 0u; s = s >> 1u) {{
        workgroupBarrier();
        if (lid < s) {{
            let a = part[lid];
            let b = part[lid + s];
            part[lid] = {combine};
        }}
    }}
    workgroupBarrier();
    acc = part[0];
    workgroupBarrier();
"""


@kernel
def log_softmax(serial: bool) -> str:
    """`x - max - log(sum(exp(x - max)))` of each row of `x` (layout `ROWS`) into `out`."""
    shared = "" if serial else f"var<workgroup> part: array<f32, {ROW_WG}>;\n"
    return (
        header(ROWS, [("x", "f32", "r"), ("out", "f32", "rw")], DType.F32)
        + fns(DType.F32)
        + _ROW_START
        + shared
        + _entry(serial)
        + f"""    let base = info_a_offset() + start;
    var acc = {_NEG_INF};
    for (var j = first; j < len; j = j + width) {{
        acc = max_(acc, x[base + j * step]);
    }}
{_tree(serial, "max_(a, b)")}    let top = acc;
    acc = 0.0;
    for (var j = first; j < len; j = j + width) {{
        acc = acc + exp(x[base + j * step] - top);
    }}
{_tree(serial, "a + b")}    let log_total = log(acc);
    for (var j = first; j < len; j = j + width) {{
        out[start + j * step] = (x[base + j * step] - top) - log_total;
    }}
}}
"""
    )


@kernel
def log_softmax_backward(serial: bool) -> str:
    """`g - exp(o) * sum(g)` of each row of `o` (offset `a`) and `g` (offset `b`) into `out`."""
    shared = "" if serial else f"var<workgroup> part: array<f32, {ROW_WG}>;\n"
    return (
        header(ROWS, [("o", "f32", "r"), ("g", "f32", "r"), ("out", "f32", "rw")], DType.F32)
        + _ROW_START
        + shared
        + _entry(serial)
        + f"""    let ob = info_a_offset() + start;
    let gb = info_b_offset() + start;
    var acc = 0.0;
    for (var j = first; j < len; j = j + width) {{
        acc = acc + g[gb + j * step];
    }}
{_tree(serial, "a + b")}    for (var j = first; j < len; j = j + width) {{
        out[start + j * step] = g[gb + j * step] - exp(o[ob + j * step]) * acc;
    }}
}}
"""
    )
