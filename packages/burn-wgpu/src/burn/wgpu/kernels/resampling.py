"""The separable resampling kernel: along one dim, each output sample is a weighted sum of a
few input samples (its *taps*), read from a table. Interpolation, adaptive average pooling
and the gradients of both are this kernel with different tables (`burn.wgpu.resample`)."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, compute, header, kernel, store

NO_TAP = 0xFFFFFFFF  # index of a padding entry: the kernel skips it, so it reads nothing

# `shape` is the output's; `x` is read through its offset and strides; `dim` is resampled
# with `taps` entries per output sample.
RESAMPLE = InfoLayout(
    "resample",
    Word("n"),
    Word("rank"),
    Dims("shape"),
    Word("x_offset"),
    Dims("x_strides"),
    Word("dim"),
    Word("taps"),
)


@kernel
def resample(dtype: DType) -> str:
    """`out[.., i, ..] = sum_t weight[t, i] * x[.., index[t, i], ..]` along one dim.

    The table holds `taps * L` u32 indices then `taps * L` f32 weights (as bits), where L is
    the output's length along `dim`; entries with index `NO_TAP` are skipped (padding of
    transposed tables, which would otherwise multiply an unrelated sample, maybe inf, by 0).
    Layout `RESAMPLE`.
    """
    t, c = store(dtype), compute(dtype)
    return (
        header(RESAMPLE, [("x", t, "r"), ("table", "u32", "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    let dim = info_dim();
    let count = info_taps();
    var rem = i;
    var off = info_x_offset();
    var pos = 0u;
    var d = info_rank();
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let coord = rem % info_shape(d);
        rem = rem / info_shape(d);
        if (d == dim) {{ pos = coord; }} else {{ off = off + coord * info_x_strides(d); }}
    }}
    let length = info_shape(dim);
    let step = info_x_strides(dim);
    var acc: {c} = {c}(0.0);
    for (var k = 0u; k < count; k = k + 1u) {{
        let j = table[k * length + pos];
        if (j == {NO_TAP}u) {{ continue; }}
        let w = bitcast<f32>(table[(count + k) * length + pos]);
        acc = acc + {c}(w) * {c}(x[off + j * step]);
    }}
    out[i] = {t}(acc);
}}
"""
    )
