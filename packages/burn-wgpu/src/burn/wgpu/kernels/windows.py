"""Adaptive average pooling over uniform windows: when each output cell of a 2-d pool covers a
`kh x kw` block of its input (the input's sizes are multiples of the output's, as a CNN's
24 x 24 -> 8 x 8 head), the pool is a plain mean over the block. One kernel computes it, and
one its gradient (each input element takes its block's gradient over the block's size), where
the separable resampling takes a launch per spatial dim each way.
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel

# `n`: the elements computed (the output forward, the input backward); the input plane
# `h x w`, the output plane `oh x ow`, the window `kh x kw`; where the read operand starts.
WINDOWS = InfoLayout(
    "uniform windows",
    Word("n"),
    Word("h"),
    Word("w"),
    Word("oh"),
    Word("ow"),
    Word("kh"),
    Word("kw"),
    Word("src_offset"),
)


@kernel
def window_mean() -> str:
    """`out[p, i, j]` = the mean of `x[p, i*kh : (i+1)*kh, j*kw : (j+1)*kw]` (layout
    `WINDOWS`, `x` contiguous float32 from `src_offset`)."""
    return (
        header(WINDOWS, [("x", "f32", "r"), ("out", "f32", "rw")], DType.F32)
        + ENTRY_1D
        + """    let ow = info_ow();
    let cells = info_oh() * ow;
    let plane = i / cells;
    let cell = i % cells;
    let kh = info_kh();
    let kw = info_kw();
    let w = info_w();
    let base = info_src_offset() + plane * info_h() * w + (cell / ow) * kh * w + (cell % ow) * kw;
    var total = 0.0;
    for (var dy = 0u; dy < kh; dy = dy + 1u) {
        for (var dx = 0u; dx < kw; dx = dx + 1u) {
            total = total + x[base + dy * w + dx];
        }
    }
    out[i] = total / f32(kh * kw);
}
"""
    )


@kernel
def window_mean_backward() -> str:
    """`out[p, y, x]` = `g[p, y / kh, x / kw] / (kh * kw)` (layout `WINDOWS`, `g` contiguous
    float32 from `src_offset`)."""
    return (
        header(WINDOWS, [("g", "f32", "r"), ("out", "f32", "rw")], DType.F32)
        + ENTRY_1D
        + """    let w = info_w();
    let plane_size = info_h() * w;
    let plane = i / plane_size;
    let at = i % plane_size;
    let ow = info_ow();
    let cell = (at / w) / info_kh() * ow + (at % w) / info_kw();
    out[i] = g[info_src_offset() + plane * info_oh() * ow + cell] / f32(info_kh() * info_kw());
}
"""
    )
