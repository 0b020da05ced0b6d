"""A classifier's loss: cross-entropy of `[rows, cols]` scores against Int classes, one kernel
each way.

The contract composes the forward pass from log-softmax, a gather, a mean and a negation, and
the backward pass from a fill, a scatter and log-softmax's backward: about nine launches in a
training step, for a loss whose arithmetic is a few operations per score. Here the forward is
one workgroup that walks the rows (each thread a row at a time: its max, the sum of its shifted
exponentials, the target's log-probability) and sums them in shared memory; the backward is a
thread per row writing `[c == target] * q - exp(log_prob) * q` with `q = -grad / rows`, the
composition's arithmetic, so it differs from it only where the composition's sums add their
terms in another order.

A target outside `[0, cols)` reads the nearest class and is flagged in the runtime's error word
(`CROSS_ENTROPY_ERROR`), which the runtime reports at the next read, as the index kernels do.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.expressions import fns
from burn.wgpu.kernels.indexing import ERROR_WORD
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import WG, header, kernel

CROSS_ENTROPY_ERROR = 3

# `x` (the scores, contiguous from `x_offset`), `t` (the i32 targets, from `t_offset`) and, in
# the backward pass, the loss's gradient at `g_offset`.
CROSS_ENTROPY = InfoLayout(
    "cross entropy",
    Word("rows"),
    Word("cols"),
    Word("x_offset"),
    Word("t_offset"),
    Word("g_offset"),
)

_ROW = f"""
// A row's max, the log of the sum of its shifted exponentials, and its target class.
struct RowStats {{
    top: f32,
    log_total: f32,
    k: u32,
}}

fn row_stats(r: u32) -> RowStats {{
    let cols = info_cols();
    let base = info_x_offset() + r * cols;
    var top = bitcast<f32>(0xff800000u);
    for (var c = 0u; c < cols; c = c + 1u) {{
        top = max_(top, x[base + c]);
    }}
    var total = 0.0;
    for (var c = 0u; c < cols; c = c + 1u) {{
        total = total + exp(x[base + c] - top);
    }}
    let raw = t[info_t_offset() + r];
    if (raw < 0 || raw >= i32(cols)) {{ atomicMax(&err[0], {CROSS_ENTROPY_ERROR}u); }}
    let k = u32(clamp(raw, 0, i32(cols) - 1));
    return RowStats(top, log(total), k);
}}
"""


@kernel
def cross_entropy() -> str:
    """`out[0] = -mean_r log_softmax(x)[r, t[r]]`, one workgroup over every row."""
    bindings = [("x", "f32", "r"), ("t", "i32", "r"), ("out", "f32", "rw"), ERROR_WORD]
    return (
        header(CROSS_ENTROPY, bindings, DType.F32)
        + fns(DType.F32)
        + _ROW
        + f"""
var<workgroup> part: array<f32, {WG}>;

@compute @workgroup_size({WG})
fn main(@builtin(local_invocation_index) lid: u32) {{
    let rows = info_rows();
    var acc = 0.0;
    for (var r = lid; r < rows; r = r + {WG}u) {{
        let s = row_stats(r);
        acc = acc + ((x[info_x_offset() + r * info_cols() + s.k] - s.top) - s.log_total);
    }}
    part[lid] = acc;
    for (var h = {WG // 2}u; h > 0u; h = h >> 1u) {{
        workgroupBarrier();
        if (lid < h) {{
            part[lid] = part[lid] + part[lid + h];
        }}
    }}
    workgroupBarrier();
    if (lid == 0u) {{
        out[0] = -(part[0] / f32(rows));
    }}
}}
"""
    )


@kernel
def cross_entropy_backward() -> str:
    """`out[r, c] = [c == t[r]] * q - exp(log_softmax(x)[r, c]) * q`, `q = -g[0] / rows`,
    a thread per row."""
    bindings = [
        ("x", "f32", "r"),
        ("t", "i32", "r"),
        ("g", "f32", "r"),
        ("out", "f32", "rw"),
        ERROR_WORD,
    ]
    return (
        header(CROSS_ENTROPY, bindings, DType.F32)
        + fns(DType.F32)
        + _ROW
        + f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let r = (wid.y * nwg.x + wid.x) * {WG}u + lid;
    if (r >= info_rows()) {{ return; }}
    let s = row_stats(r);
    let q = (-g[info_g_offset()]) / f32(info_rows());
    let cols = info_cols();
    let base = info_x_offset() + r * cols;
    for (var c = 0u; c < cols; c = c + 1u) {{
        let log_prob = (x[base + c] - s.top) - s.log_total;
        out[r * cols + c] = select(0.0, q, c == s.k) - exp(log_prob) * q;
    }}
}}
"""
    )
