"""What every generated kernel shares: element types, the binding header, the 1-D entry point.

Conventions:

- binding 0 is `info: array<u32>` (read-only), laid out by the kernel's `InfoLayout`, whose
  accessors (`info_n()`, `info_shape(d)`, `info_a_index(i)`, ...) the header declares; data
  bindings follow in order;
- 1-D launches fold workgroup counts above 65535 into y; kernels compute their linear index
  from `num_workgroups` and return at or past `info_n()`;
- bool is stored as u32 (0 or 1); f16 math is done in f32 (the *compute* type).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from burn.tensor import DType
from burn.wgpu.kernels.layout import InfoLayout, prune_functions

P = ParamSpec("P")

WG = 256

STORE = {DType.F32: "f32", DType.F16: "f16", DType.I32: "i32", DType.BOOL: "u32"}
COMPUTE = {DType.F32: "f32", DType.F16: "f32", DType.I32: "i32", DType.BOOL: "u32"}

# 4-byte stored types: their contiguous data can be read and written as vec4.
VEC_DTYPES = frozenset({DType.F32, DType.I32, DType.BOOL})


def store(dtype: DType) -> str:
    """The WGSL type a buffer of `dtype` holds."""
    return STORE[dtype]


def compute(dtype: DType) -> str:
    """The WGSL type arithmetic on `dtype` is done in (f16 computes in f32)."""
    return COMPUTE[dtype]


HELPERS = """
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}
"""


def kernel(generator: Callable[P, str]) -> Callable[P, str]:
    """Decorates a kernel generator: its source loses the functions it does not call (unused
    info accessors and helpers), and is cached, so a launch asking for it again gets the
    same string object back (cheap to look up in the pipeline cache)."""

    @functools.cache
    @functools.wraps(generator)
    def generate(*args, **kwargs) -> str:
        return prune_functions(generator(*args, **kwargs))

    return generate  # type: ignore[return-value]


def header(layout: InfoLayout, bindings: list[tuple[str, str, str]], *dtypes: DType) -> str:
    """The declarations: f16 if used, `info` at binding 0 with `layout`'s accessors, then the
    data bindings `(name, type, access)` ("r" or "rw") from binding 1 on."""
    lines = [
        "enable f16;" if DType.F16 in dtypes else "",
        "@group(0) @binding(0) var<storage, read> info: array<u32>;",
    ]
    for i, (name, ty, access) in enumerate(bindings):
        mode = "read_write" if access == "rw" else "read"
        lines.append(f"@group(0) @binding({i + 1}) var<storage, {mode}> {name}: array<{ty}>;")
    return "\n".join(lines) + "\n" + HELPERS + "\n" + layout.wgsl()


ENTRY_1D = f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let i = (wid.y * nwg.x + wid.x) * {WG}u + lid;
    if (i >= info_n()) {{ return; }}
"""


def scalar_read(dtype: DType, word: str) -> str:
    """A WGSL expression of the compute type reading a scalar stored in an info word."""
    if dtype.is_float:
        return f"bitcast<f32>({word})"
    if dtype is DType.I32:
        return f"bitcast<i32>({word})"
    return word


def zero(dtype: DType) -> str:
    """The compute type's zero literal."""
    return "0.0" if dtype.is_float else "0" if dtype is DType.I32 else "0u"
