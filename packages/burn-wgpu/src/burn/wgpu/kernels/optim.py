"""The optimizer update: one parameter's whole Adam (or AdamW) step as one kernel, or a group of
parameters' steps as one kernel.

Written with tensor ops, a step is about twelve elementwise kernels per parameter, each a
launch and a pass over memory. `adam_step` reads the parameter, its gradient and both moments
once and writes the three results, doing the contract's composition
(`OptimizerOps.float_adam_step`) in the same order, with the same float32 scalars.

A model's step updates every parameter with the same scalars, and on a GPU driven from Python
each launch costs more host time than the update of a small parameter costs the device.
`adam_step_many` updates `count` parameters in one launch: the grid covers every parameter's
elements, each workgroup finds its parameter from the table of first workgroups in its info
words, and a `switch` picks that parameter's bindings (WGSL cannot index bindings). Both
kernels write the update with the same generated lines (`_update`), so a parameter gets the same
bits from either.
"""

from __future__ import annotations

from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, WG, header, kernel

# Offsets of the four inputs (in elements) and the step's scalars as float32 bits: `one_b1`
# is 1 - beta_1, `c1` is 1 - beta_1**time, `decay` the L2 factor, `shrink` lr * decay (AdamW).
ADAM_SCALARS = (
    "beta_1",
    "beta_2",
    "one_b1",
    "one_b2",
    "c1",
    "c2",
    "epsilon",
    "lr",
    "decay",
    "shrink",
)
ADAM = InfoLayout(
    "adam step",
    Word("n"),
    Word("t_offset"),
    Word("g_offset"),
    Word("m_offset"),
    Word("v_offset"),
    *(Word(name) for name in ADAM_SCALARS),
)


# The same scalar words; `stride`, the distance between the three results' regions of the one
# output buffer; then one table per parameter field: `starts` (its first workgroup), `sizes`
# (its element count), the offsets of its four inputs and of its updated value in the output
# (its first moment at `stride` past that, its second at twice). `count` parameters.
ADAM_MANY = InfoLayout(
    "adam step of many parameters",
    Word("count"),
    *(Word(name) for name in ADAM_SCALARS),
    Word("stride"),
    Dims("starts"),
    Dims("sizes"),
    Dims("t_offsets"),
    Dims("g_offsets"),
    Dims("m_offsets"),
    Dims("v_offsets"),
    Dims("out_offsets"),
    rank="count",
)


def _update(
    read: dict[str, str], write: dict[str, str], first: bool, l2: bool, decoupled: bool
) -> str:
    """The WGSL lines of one element's update: `read` gives the expressions of the parameter,
    gradient and moments ("t", "g", "m", "v"), `write` the places of the three results."""
    f = "bitcast<f32>"
    grad = read["g"]
    if l2:
        grad = f"{read['t']} * {f}(info_decay()) + {grad}"
    if first:
        moments = "    let m = sg;\n    let v = sq;\n"
    else:
        moments = (
            f"    let m = {read['m']} * {f}(info_beta_1()) + sg;\n"
            f"    let v = {read['v']} * {f}(info_beta_2()) + sq;\n"
        )
    shrink = f"    p = p - p * {f}(info_shrink());\n" if decoupled else ""
    return f"""    let grad = {grad};
    let sg = grad * {f}(info_one_b1());
    let sq = (grad * grad) * {f}(info_one_b2());
{moments}    let delta = (m / {f}(info_c1())) / (sqrt(v / {f}(info_c2())) + {f}(info_epsilon()));
    var p = {read["t"]};
{shrink}    {write["t"]} = p - delta * {f}(info_lr());
    {write["m"]} = m;
    {write["v"]} = v;
"""


@kernel
def adam_step(first: bool, l2: bool, decoupled: bool) -> str:
    """Adam's update of contiguous float32 `t`, `g`, `m`, `v` (layout `ADAM`) into `t_out`,
    `m_out` and `v_out`; `first`: no moments yet (`m` and `v` are not read), `l2`: Adam's
    weight decay folded into the gradient, `decoupled`: AdamW's applied to the parameter."""
    return (
        header(
            ADAM,
            [
                ("t", "f32", "r"),
                ("g", "f32", "r"),
                ("m_in", "f32", "r"),
                ("v_in", "f32", "r"),
                ("t_out", "f32", "rw"),
                ("m_out", "f32", "rw"),
                ("v_out", "f32", "rw"),
            ],
        )
        + ENTRY_1D
        + _update(
            {
                "t": "t[info_t_offset() + i]",
                "g": "g[info_g_offset() + i]",
                "m": "m_in[info_m_offset() + i]",
                "v": "v_in[info_v_offset() + i]",
            },
            {"t": "t_out[i]", "m": "m_out[i]", "v": "v_out[i]"},
            first,
            l2,
            decoupled,
        )
        + "}\n"
    )


@kernel
def adam_step_many(count: int, first: bool, l2: bool, decoupled: bool) -> str:
    """Adam's update of `count` contiguous float32 parameters in one launch (layout
    `ADAM_MANY`): parameter `s` is bound as `t{s}`, `g{s}` and (after the first step) `m{s}`,
    `v{s}`; every result goes to the one `out` binding, at the parameter's `out_offsets`
    entry (its moments `stride` and twice `stride` further); `first`, `l2` and `decoupled` as
    in `adam_step`."""
    bindings = []
    cases = []
    for s in range(count):
        bindings += [(f"t{s}", "f32", "r"), (f"g{s}", "f32", "r")]
        if not first:
            bindings += [(f"m{s}", "f32", "r"), (f"v{s}", "f32", "r")]
        read = {name: f"{name}{s}[info_{name}_offsets({s}u) + i]" for name in ("t", "g", "m", "v")}
        body = _update(read, _MANY_WRITES, first, l2, decoupled).replace("\n    ", "\n            ")
        cases.append(f"        case {s}u: {{\n        {body.rstrip()}\n        }}")
    bindings.append(("out", "f32", "rw"))
    return (
        header(ADAM_MANY, bindings)
        + f"""
@compute @workgroup_size({WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
    let w = wid.y * nwg.x + wid.x;
    var s = 0u;
    for (var j = 1u; j < {count}u; j = j + 1u) {{
        if (w >= info_starts(j)) {{ s = j; }}
    }}
    let i = (w - info_starts(s)) * {WG}u + lid;
    if (i >= info_sizes(s)) {{ return; }}
    let o = info_out_offsets(s) + i;
    switch s {{
"""
        + "\n".join(cases)
        + """
        default: {}
    }
}
"""
    )


# Where `adam_step_many` writes a parameter's three results in its one output buffer.
_MANY_WRITES = {"t": "out[o]", "m": "out[o + info_stride()]", "v": "out[o + 2u * info_stride()]"}
