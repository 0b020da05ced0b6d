"""Per-channel kernels: batch normalization with the batch's statistics (two kernels each
way) and the sum of each channel (a bias's gradient).

The contract composes batch norm from per-dim reductions and broadcast elementwise ops: about
twenty launches forward and backward for a 4-d input, and as many recorded ops under Fusion.
Here an input `[N, C, ...]` is seen as `[N, C, L]` (contiguous float32), and:

- `batch_norm_stats`: one workgroup per channel reads its `N * L` values twice (the mean, then
  the biased variance of the centered values, as the composition computes them) and writes
  both;
- `batch_norm_apply`: each element `(x - mean) * (rstd * gamma) + beta`, rstd = 1 / sqrt(var +
  epsilon), the composition's arithmetic;
- `batch_norm_grad_stats`: per channel again, the statistics (two passes) and then the sums of
  the output gradient `g` and of `g * xhat` (the gradients of beta and gamma), with the
  channel's mean and rstd for the next kernel;
- `batch_norm_x_grad`: each element `(g - sum(g) / count - xhat * sum(g * xhat) / count) *
  (rstd * gamma)`;
- `sum_per_channel`: one workgroup per channel sums its values, where the contract reduces the
  positions of each sample, then the samples (two launches).

A channel's sums go through each thread's share of its values, then a shared-memory tree, so
they add in another order than the composition's reductions (float32 rounding differs there).
"""

from __future__ import annotations

from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel

# `[N, C, L]` as `n` elements, `channels` C, `inner` L and `count` = N * L values per channel;
# the operands' offsets in elements; `epsilon` as float32 bits.
CHANNELS = InfoLayout(
    "per channel",
    Word("n"),
    Word("channels"),
    Word("inner"),
    Word("count"),
    Word("x_offset"),
    Word("g_offset"),
    Word("gamma_offset"),
    Word("beta_offset"),
    Word("epsilon"),
)

# Threads per channel in the statistics kernels.
CHANNEL_WG = 256
# Values each thread loads per turn of a channel loop: independent loads in flight at once,
# since a workgroup (one per channel) is all a channel gets, and one load at a time left its
# loop waiting on memory (a [64, 8, 26, 26] input: 169 loads per thread and pass).
UNROLL = 8


def _channel_loop(index: str, sums: tuple[str, ...], body: str) -> str:
    """WGSL: `sums` (f32 variables declared before) plus, over every value of the channel
    (`index` counting them), what `body` adds to them. `body` uses `{j}` for the value's
    index and `{u}` to name its per-load variables and each sum's partial copies."""
    lines = [f"    var {name}{u} = 0.0;" for name in sums for u in range(UNROLL)]
    j = index
    lines.append(f"    var {j} = lid;")
    last, turn = (UNROLL - 1) * CHANNEL_WG, UNROLL * CHANNEL_WG
    lines.append(f"    for (; {j} + {last}u < count; {j} = {j} + {turn}u) {{")
    for u in range(UNROLL):
        lines.append("        " + body.format(j=f"{j} + {u * CHANNEL_WG}u", u=u))
    lines.append("    }")
    lines.append(f"    for (; {j} < count; {j} = {j} + {CHANNEL_WG}u) {{")
    lines.append("        " + body.format(j=j, u=0))
    lines.append("    }")
    for name in sums:
        parts = [f"{name}{u}" for u in range(UNROLL)]
        while len(parts) > 1:  # pairwise, as a tree
            parts = [f"({a} + {b})" for a, b in zip(parts[::2], parts[1::2], strict=True)]
        lines.append(f"    {name} = {name} + {parts[0]};")
    return "\n".join(lines) + "\n"


_CHANNEL_FNS = f"""
var<workgroup> part: array<f32, {CHANNEL_WG}>;

fn channel_sum(acc: f32, lid: u32) -> f32 {{
    part[lid] = acc;
    for (var s = {CHANNEL_WG // 2}u; s > 0u; s = s >> 1u) {{
        workgroupBarrier();
        if (lid < s) {{
            part[lid] = part[lid] + part[lid + s];
        }}
    }}
    workgroupBarrier();
    let total = part[0];
    workgroupBarrier();
    return total;
}}

// The position of value `j` (of the channel's `count`) in an operand at `offset`.
fn value_at(offset: u32, c: u32, j: u32) -> u32 {{
    let inner = info_inner();
    return offset + ((j / inner) * info_channels() + c) * inner + j % inner;
}}

@compute @workgroup_size({CHANNEL_WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let c = wid.y * nwg.x + wid.x;
    if (c >= info_channels()) {{ return; }}
    let count = info_count();
    let xo = info_x_offset();
    var acc = 0.0;
""" + _channel_loop("j", ("acc",), "acc{u} = acc{u} + x[value_at(xo, c, {j})];")

_CHANNEL_ENTRY = (
    _CHANNEL_FNS
    + """    let mean = channel_sum(acc, lid) / f32(count);
    var dev = 0.0;
"""
    + _channel_loop(
        "k", ("dev",), "let d{u} = x[value_at(xo, c, {j})] - mean; dev{u} = dev{u} + d{u} * d{u};"
    )
    + """    let var_ = channel_sum(dev, lid) / f32(count);
"""
)


@kernel
def sum_per_channel() -> str:
    """Each channel's sum of `x` into `out` (`[C]`): a bias's gradient."""
    return (
        header(CHANNELS, [("x", "f32", "r"), ("out", "f32", "rw")])
        + _CHANNEL_FNS
        + """    let total = channel_sum(acc, lid);
    if (lid == 0u) {
        out[c] = total;
    }
}
"""
    )


@kernel
def batch_norm_stats() -> str:
    """Each channel's mean and biased variance of `x` into `mean` and `var` (`[C]`)."""
    return (
        header(CHANNELS, [("x", "f32", "r"), ("means", "f32", "rw"), ("variances", "f32", "rw")])
        + _CHANNEL_ENTRY
        + """    if (lid == 0u) {
        means[c] = mean;
        variances[c] = var_;
    }
}
"""
    )


@kernel
def batch_norm_apply() -> str:
    """`(x - mean) * (rstd * gamma) + beta` per element, with its channel's statistics."""
    return (
        header(
            CHANNELS,
            [
                ("x", "f32", "r"),
                ("means", "f32", "r"),
                ("variances", "f32", "r"),
                ("gamma", "f32", "r"),
                ("beta", "f32", "r"),
                ("out", "f32", "rw"),
            ],
        )
        + ENTRY_1D
        + """    let c = (i / info_inner()) % info_channels();
    let rstd = 1.0 / sqrt(variances[c] + bitcast<f32>(info_epsilon()));
    let scale = rstd * gamma[info_gamma_offset() + c];
    out[i] = (x[info_x_offset() + i] - means[c]) * scale + beta[info_beta_offset() + c];
}
"""
    )


@kernel
def batch_norm_grad_stats() -> str:
    """Per channel: `sum(g)` into `beta_grad`, `sum(g * xhat)` into `gamma_grad`, and the
    mean and rstd into `stats` (`[2, C]`)."""
    return (
        header(
            CHANNELS,
            [
                ("x", "f32", "r"),
                ("g", "f32", "r"),
                ("stats", "f32", "rw"),
                ("gamma_grad", "f32", "rw"),
                ("beta_grad", "f32", "rw"),
            ],
        )
        + _CHANNEL_ENTRY
        + """    let rstd = 1.0 / sqrt(var_ + bitcast<f32>(info_epsilon()));
    let go = info_g_offset();
    var total = 0.0;
    var dot = 0.0;
"""
        + _channel_loop(
            "m",
            ("total", "dot"),
            "let g{u} = g[value_at(go, c, {j})]; total{u} = total{u} + g{u}; "
            "dot{u} = dot{u} + g{u} * ((x[value_at(xo, c, {j})] - mean) * rstd);",
        )
        + """    let sum_g = channel_sum(total, lid);
    let weighted = channel_sum(dot, lid);
    if (lid == 0u) {
        stats[c] = mean;
        stats[info_channels() + c] = rstd;
        beta_grad[c] = sum_g;
        gamma_grad[c] = weighted;
    }
}
"""
    )


@kernel
def batch_norm_x_grad() -> str:
    """`(g - sum(g) / count - xhat * sum(g * xhat) / count) * (rstd * gamma)` per element."""
    return (
        header(
            CHANNELS,
            [
                ("x", "f32", "r"),
                ("g", "f32", "r"),
                ("stats", "f32", "r"),
                ("gamma", "f32", "r"),
                ("gamma_grad", "f32", "r"),
                ("beta_grad", "f32", "r"),
                ("out", "f32", "rw"),
            ],
        )
        + ENTRY_1D
        + """    let channels = info_channels();
    let c = (i / info_inner()) % channels;
    let count = f32(info_count());
    let rstd = stats[channels + c];
    let xhat = (x[info_x_offset() + i] - stats[c]) * rstd;
    let inner = (g[info_g_offset() + i] - beta_grad[c] / count) - xhat * (gamma_grad[c] / count);
    out[i] = inner * (rstd * gamma[info_gamma_offset() + c]);
}
"""
    )
