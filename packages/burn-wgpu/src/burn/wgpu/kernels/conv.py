"""`im2col` and `col2im`: the building blocks of convolutions, transposed convolutions and
pools (forward and gradients), one pass each.

`im2col` gathers what every kernel tap sees (where the default writes one slice per tap plus
a cat); `col2im`, its adjoint, sums into each input element the taps that read it (no atomics,
a fixed order).
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, compute, header, kernel, scalar_read, store, zero


def _conv_layout(name: str, src_extra: int, *tail: Word) -> InfoLayout:
    """The geometry of a convolution over `nd` spatial dims: `batch` x `channels` images of
    `size`, a kernel of `taps` = prod(kernel) positions, the `out` positions, then the source
    operand's offset and strides (`src_extra` leading dims: batch, channel and maybe taps)."""
    return InfoLayout(
        name,
        Word("n"),
        Word("nd"),
        Word("batch"),
        Word("channels"),
        Word("taps"),
        Dims("kernel"),
        Dims("out"),
        Dims("stride"),
        Dims("dilation"),
        Dims("padding"),
        Dims("size"),
        Word("src_offset"),
        Dims("src_strides", extra=src_extra),
        *tail,
        rank="nd",
    )


# The source is `x [batch, channels, *size]`; `value` (bits of the dtype) fills the padding.
IM2COL = _conv_layout("im2col", 2, Word("value"))
# The source is `cols [batch, channels, taps, *out]`.
COL2IM = _conv_layout("col2im", 3)


@kernel
def im2col(dtype: DType) -> str:
    """`x [N, C, *size]` (strided) -> `[N, C, taps, *out]`: what each kernel tap sees.

    One thread per output element; positions in the padding read `value`. Layout `IM2COL`.
    """
    t = store(dtype)
    return (
        header(IM2COL, [("x", t, "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    let nd = info_nd();
    var rem = i;
    var oc: array<u32, 3>;
    for (var d = nd; d > 0u; d = d - 1u) {{
        oc[d - 1u] = rem % info_out(d - 1u);
        rem = rem / info_out(d - 1u);
    }}
    let tap = rem % info_taps();
    rem = rem / info_taps();
    let c = rem % info_channels();
    let n = rem / info_channels();
    var src = info_src_offset() + n * info_src_strides(0u) + c * info_src_strides(1u);
    var valid = true;
    var trem = tap;
    for (var d = nd; d > 0u; d = d - 1u) {{
        let k = d - 1u;
        let j = trem % info_kernel(k);
        trem = trem / info_kernel(k);
        let pos = i32(oc[k] * info_stride(k) + j * info_dilation(k)) - i32(info_padding(k));
        if (pos < 0 || pos >= i32(info_size(k))) {{
            valid = false;
        }} else {{
            src = src + u32(pos) * info_src_strides(2u + k);
        }}
    }}
    if (valid) {{
        out[i] = x[src];
    }} else {{
        out[i] = {t}({scalar_read(dtype, "info_value()")});
    }}
}}
"""
    )


@kernel
def col2im(dtype: DType) -> str:
    """Adjoint of `im2col`: `cols [N, C, taps, *out]` (strided) summed into `[N, C, *size]`.

    One thread per output element gathers the taps that read it. Layout `COL2IM`.
    """
    t, c = store(dtype), compute(dtype)
    return (
        header(COL2IM, [("cols", t, "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    let nd = info_nd();
    var rem = i;
    var yc: array<u32, 3>;
    for (var d = nd; d > 0u; d = d - 1u) {{
        yc[d - 1u] = rem % info_size(d - 1u);
        rem = rem / info_size(d - 1u);
    }}
    let ch = rem % info_channels();
    let n = rem / info_channels();
    let base = info_src_offset() + n * info_src_strides(0u) + ch * info_src_strides(1u);
    var acc: {c} = {zero(dtype)};
    for (var tap = 0u; tap < info_taps(); tap = tap + 1u) {{
        var at_ = base + tap * info_src_strides(2u);
        var valid = true;
        var trem = tap;
        for (var d = nd; d > 0u; d = d - 1u) {{
            let k = d - 1u;
            let j = trem % info_kernel(k);
            trem = trem / info_kernel(k);
            let num = i32(yc[k] + info_padding(k)) - i32(j * info_dilation(k));
            let s = i32(info_stride(k));
            if (num < 0 || num % s != 0 || num / s >= i32(info_out(k))) {{
                valid = false;
            }} else {{
                at_ = at_ + u32(num / s) * info_src_strides(3u + k);
            }}
        }}
        if (valid) {{ acc = acc + {c}(cols[at_]); }}
    }}
    out[i] = {t}(acc);
}}
"""
    )
