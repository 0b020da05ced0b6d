"""`im2col` and `col2im`: the building blocks of convolutions, transposed convolutions and
pools (forward and gradients), one pass each.

`im2col` gathers what every kernel tap sees (where the default writes one slice per tap plus
a cat); `col2im`, its adjoint, sums into each input element the taps that read it (no atomics,
a fixed order).

Both are made for one geometry (`Geometry`): channels, kernel, sizes, strides and padding are
WGSL constants. Splitting a flat index into coordinates costs a dozen integer divisions per
element; by constants the shader compiler turns them into multiplies and shifts, several times
faster on a large GPU than reading the sizes from info words. A network has a few convolution
shapes, so the pipelines are few. The info words keep the whole geometry (the layouts below);
the kernels read the source's offset and strides, and the padding value, from them.
"""

from __future__ import annotations

from math import prod

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


Geometry = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...],
                 tuple[int, ...], tuple[int, ...]]  # fmt: skip
"""(channels, kernel, out, stride, dilation, padding, size): per spatial dim but channels."""


def _split(index: str, names: list[str], sizes: list[int], rest: str) -> list[str]:
    """WGSL splitting `index` into row-major coordinates `names` of `sizes` (the last fastest);
    what is left above them goes to `rest`."""
    lines = [f"    var {rest} = {index};"]
    for name, size in zip(reversed(names), reversed(sizes), strict=True):
        lines.append(f"    let {name} = {rest} % {size}u;")
        lines.append(f"    {rest} = {rest} / {size}u;")
    return lines


@kernel
def im2col(dtype: DType, geometry: Geometry) -> str:
    """`x [N, C, *size]` (strided) -> `[N, C, taps, *out]`: what each kernel tap sees.

    One thread per output element; positions in the padding read `value`. Layout `IM2COL`."""
    channels, ks, out, stride, dilation, padding, size = geometry
    nd = len(ks)
    t = store(dtype)
    lines = _split("i", [f"o{d}" for d in range(nd)], list(out), "rem")
    lines += [
        f"    let tap = rem % {prod(ks)}u;",
        f"    let c = (rem / {prod(ks)}u) % {channels}u;",
        f"    let n = rem / {prod(ks) * channels}u;",
        "    var src = info_src_offset() + n * info_src_strides(0u) + c * info_src_strides(1u);",
        "    var valid = true;",
    ]
    lines += _split("tap", [f"j{d}" for d in range(nd)], list(ks), "trem")
    for d in range(nd):
        lines += [
            f"    let p{d} = i32(o{d} * {stride[d]}u + j{d} * {dilation[d]}u) - {padding[d]};",
            f"    valid = valid && p{d} >= 0 && p{d} < {size[d]};",
            f"    src = src + u32(max(p{d}, 0)) * info_src_strides({2 + d}u);",
        ]
    body = "\n".join(lines)
    return (
        header(IM2COL, [("x", t, "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""{body}
    if (valid) {{
        out[i] = x[src];
    }} else {{
        out[i] = {t}({scalar_read(dtype, "info_value()")});
    }}
}}
"""
    )


@kernel
def col2im(dtype: DType, geometry: Geometry) -> str:
    """Adjoint of `im2col`: `cols [N, C, taps, *out]` (strided) summed into `[N, C, *size]`.

    One thread per output element gathers the taps that read it. Layout `COL2IM`."""
    channels, ks, out, stride, dilation, padding, size = geometry
    nd = len(ks)
    t, c = store(dtype), compute(dtype)
    lines = _split("i", [f"y{d}" for d in range(nd)], list(size), "rem")
    lines += [
        f"    let ch = rem % {channels}u;",
        f"    let n = rem / {channels}u;",
        "    let base = info_src_offset() + n * info_src_strides(0u) + ch * info_src_strides(1u);",
        f"    var acc: {c} = {zero(dtype)};",
        f"    for (var tap = 0u; tap < {prod(ks)}u; tap = tap + 1u) {{",
        "        var at_ = base + tap * info_src_strides(2u);",
        "        var valid = true;",
    ]
    lines += [
        "    " + line for line in _split("tap", [f"j{d}" for d in range(nd)], list(ks), "trem")
    ]
    for d in range(nd):
        lines += [
            f"        let q{d} = i32(y{d}) + {padding[d]} - i32(j{d} * {dilation[d]}u);",
            f"        valid = valid && q{d} >= 0 && q{d} % {stride[d]} == 0"
            f" && q{d} / {stride[d]} < {out[d]};",
            f"        at_ = at_ + u32(max(q{d}, 0) / {stride[d]}) * info_src_strides({3 + d}u);",
        ]
    lines += [f"        if (valid) {{ acc = acc + {c}(cols[at_]); }}", "    }"]
    body = "\n".join(lines)
    return (
        header(COL2IM, [("cols", t, "r"), ("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""{body}
    out[i] = {t}(acc);
}}
"""
    )
