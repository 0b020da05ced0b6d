"""Creation kernels: a tensor filled with one value, and a range."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel, scalar_read, store

# `value`: the scalar's bits in the kernel's dtype; `start` and `step`: i32 bits.
FILL = InfoLayout("fill", Word("n"), Word("value"))
ARANGE = InfoLayout("arange", Word("n"), Word("start"), Word("step"))


@kernel
def fill(dtype: DType) -> str:
    """`out[i] = value` (layout `FILL`)."""
    t = store(dtype)
    return (
        header(FILL, [("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    out[i] = {t}({scalar_read(dtype, "info_value()")});
}}
"""
    )


@kernel
def arange(dtype: DType) -> str:
    """`out[i] = start + i * step` (layout `ARANGE`)."""
    t = store(dtype)
    return (
        header(ARANGE, [("out", t, "rw")], dtype)
        + ENTRY_1D
        + f"""    out[i] = {t}(bitcast<i32>(info_start()) + i32(i) * bitcast<i32>(info_step()));
}}
"""
    )
