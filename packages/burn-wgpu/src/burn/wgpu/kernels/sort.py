"""Sorting: a stable bitonic sort of rows, one launch per compare-exchange step."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, compute, header, kernel, store

IOTA_ROWS = InfoLayout("iota_rows", Word("n"), Word("cols"))
# `n` pairs (rows * padded / 2); rows are `padded` long (a power of 2) and hold `length`
# values, then padding; (k, j) is the step.
BITONIC_STEP = InfoLayout(
    "bitonic_step", Word("n"), Word("padded"), Word("length"), Word("k"), Word("j")
)


@kernel
def iota_rows() -> str:
    """`out[i] = i % cols` as i32: the initial indices of a sort (layout `IOTA_ROWS`)."""
    return (
        header(IOTA_ROWS, [("out", "i32", "rw")])
        + ENTRY_1D
        + "    out[i] = i32(i % info_cols());\n}\n"
    )


@kernel
def bitonic_step(dtype: DType, descending: bool) -> str:
    """One compare-exchange step (k, j) of a bitonic sort of rows of length P (a power of 2).

    Keys are (value, original index), so equal values keep their order (a stable sort);
    padding (index >= length) sorts last. Layout `BITONIC_STEP`.
    """
    t, c = store(dtype), compute(dtype)
    before = "va > vb" if descending else "va < vb"
    nan = ""
    if dtype.is_float:
        # NaN sorts last in both directions (as numpy does for ascending).
        nan = """
    let na = is_nan(va);
    let nb = is_nan(vb);
    if (na != nb) { return nb; }
    if (na && nb) { return ia < ib; }"""
    return (
        header(BITONIC_STEP, [("vals", t, "rw"), ("idx", "i32", "rw")], dtype)
        + f"""
fn first(va: {c}, ia: i32, vb: {c}, ib: i32) -> bool {{
    let n = i32(info_length());
    if ((ia >= n) != (ib >= n)) {{ return ib >= n; }}{nan}
    if (va != vb) {{ return {before}; }}
    return ia < ib;
}}
"""
        + ENTRY_1D
        + """    let p = info_padded();
    let k = info_k();
    let j = info_j();
    let hp = p / 2u;
    let row = i / hp;
    let t = i % hp;
    let lo = (t / j) * 2u * j + (t % j);
    let hi = lo + j;
    let up = (lo & k) == 0u;
    let a = row * p + lo;
    let b = row * p + hi;
"""
        + f"""    let va = {c}(vals[a]);
    let vb = {c}(vals[b]);
    let ia = idx[a];
    let ib = idx[b];
    let ordered = first(va, ia, vb, ib);
    if (ordered != up) {{
        vals[a] = {t}(vb);
        vals[b] = {t}(va);
        idx[a] = ib;
        idx[b] = ia;
    }}
}}
"""
    )
