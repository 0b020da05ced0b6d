"""Index kernels: `gather` and `scatter_add` (the rest of indexing is composed from them).

Indices are i32. An out-of-range index computed on the device is clamped (no read leaves the
buffer) and flagged in the runtime's error word, which the runtime reports at the next read
from the device; indices known on the host are checked before the launch.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import Dims, InfoLayout, Strided, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, compute, header, kernel, store

# The runtime's error word, bound last by launches with `checks_indices`; the codes the
# kernels write into it.
ERROR_WORD = ("err", "atomic<u32>", "rw")
GATHER_ERROR, SCATTER_ERROR = 1, 2

# `shape` is the indices' (and the output's); `p` is read at the index along `dim`, of size
# `dim_size`, and at the output's coordinates along the other dims.
GATHER = InfoLayout(
    "gather",
    Word("n"),
    Word("rank"),
    Dims("shape"),
    Strided("idx"),
    Word("p_offset"),
    Dims("p_strides"),
    Word("dim"),
    Word("dim_size"),
)
# `shape` is `p`'s (and the output's); the indices and the values share `idx_shape`.
SCATTER_ADD = InfoLayout(
    "scatter_add",
    Word("n"),
    Word("rank"),
    Dims("shape"),
    Strided("p"),
    Dims("idx_shape"),
    Word("idx_offset"),
    Dims("idx_strides"),
    Word("v_offset"),
    Dims("v_strides"),
    Word("dim"),
)


@kernel
def gather(dtype: DType) -> str:
    """`out[i] = p[the coordinates of i, with dim replaced by idx[i]]` (layout `GATHER`)."""
    t = store(dtype)
    return (
        header(GATHER, [("p", t, "r"), ("idx", "i32", "r"), ("out", t, "rw"), ERROR_WORD], dtype)
        + ENTRY_1D
        + f"""    let dim = info_dim();
    let size = info_dim_size();
    var rem = i;
    var off = info_p_offset();
    var d = info_rank();
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let c = rem % info_shape(d);
        rem = rem / info_shape(d);
        if (d != dim) {{ off = off + c * info_p_strides(d); }}
    }}
    let raw = idx[info_idx_index(i)];
    if (raw < 0 || raw >= i32(size)) {{ atomicMax(&err[0], {GATHER_ERROR}u); }}
    let k = u32(clamp(raw, 0, i32(size) - 1));
    out[i] = p[off + k * info_p_strides(dim)];
}}
"""
    )


@kernel
def scatter_add(dtype: DType) -> str:
    """One thread per output element, summing the values whose index points at it (layout
    `SCATTER_ADD`).

    Deterministic (a fixed summation order, no float atomics, works for f16) at the cost of
    reading every index along `dim` per output element.
    """
    t, c = store(dtype), compute(dtype)
    return (
        header(
            SCATTER_ADD,
            [("p", t, "r"), ("idx", "i32", "r"), ("v", t, "r"), ("out", t, "rw"), ERROR_WORD],
            dtype,
        )
        + ENTRY_1D
        + f"""    let dim = info_dim();
    var acc = {c}(p[info_p_index(i)]);
    var rem = i;
    var io = info_idx_offset();
    var vo = info_v_offset();
    var want = 0u;
    var inside = true;
    var d = info_rank();
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let c = rem % info_shape(d);
        rem = rem / info_shape(d);
        if (d == dim) {{
            want = c;
        }} else {{
            if (c >= info_idx_shape(d)) {{ inside = false; }}
            io = io + c * info_idx_strides(d);
            vo = vo + c * info_v_strides(d);
        }}
    }}
    if (inside) {{
        let n = info_idx_shape(dim);
        let istep = info_idx_strides(dim);
        let vstep = info_v_strides(dim);
        for (var k = 0u; k < n; k = k + 1u) {{
            let raw = idx[io + k * istep];
            if (raw < 0 || raw >= i32(info_shape(dim))) {{ atomicMax(&err[0], {SCATTER_ERROR}u); }}
            if (u32(raw) == want) {{
                acc = acc + {c}(v[vo + k * vstep]);
            }}
        }}
    }}
    out[i] = {t}(acc);
}}
"""
    )
