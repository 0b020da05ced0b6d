"""Random tensors from a counter-based generator: element i of a draw depends only on the
seed and the draw's counter offset plus i, never on the launch shape, so a seeded program
draws the same values on every adapter.

Dropout draws its mask with the same generator and the same stream as a Bernoulli draw
(`random("bernoulli", ...)`), so the one-kernel dropout and the contract's composition (a
draw, a scale, a product) give the same bits from the same seed."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel, store

# `counter`: the draw's first counter; `key0`, `key1`: the seed; `p0`, `p1`: the
# distribution's parameters as f32 bits (low/high, mean/std, or the probability and unused).
RANDOM = InfoLayout(
    "random", Word("n"), Word("counter"), Word("key0"), Word("key1"), Word("p0"), Word("p1")
)

PHILOX = """
// A counter-based generator: a 6-round Philox-style mix of (counter, stream) under a 64-bit
// key, so element i of a draw depends only on (seed, offset + i) and never on launch shape.
fn philox(c0: u32, c1: u32, k0: u32, k1: u32) -> u32 {
    var x0 = c0;
    var x1 = c1;
    var a = k0;
    var b = k1;
    for (var r = 0u; r < 6u; r = r + 1u) {
        let hi = mulhi(0xD2511F53u, x0);
        let lo = 0xD2511F53u * x0;
        x0 = hi ^ x1 ^ a;
        x1 = lo;
        a = a + 0x9E3779B9u;
        b = b + 0xBB67AE85u;
        x1 = x1 ^ b;
    }
    return x0 ^ (x1 * 0x85EBCA6Bu);
}

fn mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let lo_lo = a_lo * b_lo;
    let hi_lo = a_hi * b_lo;
    let lo_hi = a_lo * b_hi;
    let hi_hi = a_hi * b_hi;
    let cross = (lo_lo >> 16u) + (hi_lo & 0xffffu) + (lo_hi & 0xffffu);
    return hi_hi + (hi_lo >> 16u) + (lo_hi >> 16u) + (cross >> 16u);
}

// A uniform float in [0, 1) from 24 random bits.
fn unit(bits: u32) -> f32 {
    return f32(bits >> 8u) * (1.0 / 16777216.0);
}
"""


@kernel
def random(kind: str, dtype: DType) -> str:
    """A draw of `kind` (layout `RANDOM`): uniform `p0 + (p1 - p0) * u`, normal
    `p0 + p1 * Box-Muller`, bernoulli `u < p0`."""
    t = store(dtype)
    body = {
        "uniform": "let v = p0 + (p1 - p0) * unit(philox(c, 0u, k0, k1));",
        "normal": """let u1 = max(unit(philox(c, 1u, k0, k1)), 1.0e-7);
    let u2 = unit(philox(c, 2u, k0, k1));
    let v = p0 + p1 * sqrt(-2.0 * log(u1)) * cos(6.2831853 * u2);""",
        "bernoulli": "let v = select(0.0, 1.0, unit(philox(c, 3u, k0, k1)) < p0);",
    }[kind]
    value = f"{t}(floor(v))" if dtype is DType.I32 else f"{t}(v)"
    return (
        header(RANDOM, [("out", t, "rw")], dtype)
        + PHILOX
        + ENTRY_1D
        + f"""    let c = info_counter() + i;
    let k0 = info_key0();
    let k1 = info_key1();
    let p0 = bitcast<f32>(info_p0());
    let p1 = bitcast<f32>(info_p1());
    {body}
    out[i] = {value};
}}
"""
    )


# The count, counter and key words where `RANDOM` has them (a captured step gives every
# draw a fresh counter, found at the same word); `keep` and `scale` as f32 bits (1 - prob and
# the kept elements' factor 1 / keep, as the composition rounds it); `x_offset`: where the
# contiguous input starts.
DROPOUT = InfoLayout(
    "dropout",
    Word("n"),
    Word("counter"),
    Word("key0"),
    Word("key1"),
    Word("keep"),
    Word("scale"),
    Word("x_offset"),
)


@kernel
def dropout(dtype: DType) -> str:
    """Dropout of a contiguous `x` (layout `DROPOUT`): `mask` is `scale` where the Bernoulli
    draw of `keep` keeps the element, else 0, and `out = x * mask`."""
    t = store(dtype)
    return (
        header(DROPOUT, [("x", t, "r"), ("out", t, "rw"), ("mask", t, "rw")], dtype)
        + PHILOX
        + ENTRY_1D
        + f"""    let c = info_counter() + i;
    let kept = unit(philox(c, 3u, info_key0(), info_key1())) < bitcast<f32>(info_keep());
    let m = {t}(select(0.0, bitcast<f32>(info_scale()), kept));
    mask[i] = m;
    out[i] = x[info_x_offset() + i] * m;
}}
"""
    )
