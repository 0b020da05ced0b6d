"""The strided copy with conversion: `contiguous`, `cast`, `slice_assign` and `cat` are all one
kernel reading a strided source and writing a strided destination region."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import Dims, InfoLayout, Strided, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel, store, zero

# `dst` is a region of the output buffer (its contiguous flag is 0 unless it is all of it).
COPY = InfoLayout("copy", Word("n"), Word("rank"), Dims("shape"), Strided("src"), Strided("dst"))


def convert(src: DType, dst: DType, x: str = "x") -> str:
    """The WGSL expression converting a stored `src` value to a stored `dst` value."""
    if src is dst:
        return x
    if dst is DType.BOOL:
        value = f"f32({x})" if src is DType.F16 else x
        return f"select(0u, 1u, {value} != {zero(src)})"
    if src.is_float and dst is DType.I32:
        return f"i32(trunc(f32({x})))"
    return f"{store(dst)}({x})"


@kernel
def copy(src: DType, dst: DType) -> str:
    """Strided `src` to strided `dst` with conversion (layout `COPY`)."""
    return (
        header(COPY, [("a", store(src), "r"), ("out", store(dst), "rw")], src, dst)
        + ENTRY_1D
        + f"""    let x = a[info_src_index(i)];
    out[info_dst_index(i)] = {convert(src, dst)};
}}
"""
    )
