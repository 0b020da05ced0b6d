"""The optimizer update: one parameter's whole Adam (or AdamW) step as one kernel.

Written with tensor ops, a step is about twelve elementwise kernels per parameter, each a
launch and a pass over memory. This kernel reads the parameter, its gradient and both moments
once and writes the three results, doing the contract's composition
(`OptimizerOps.float_adam_step`) in the same order, with the same float32 scalars.
"""

from __future__ import annotations

from burn.wgpu.kernels.layout import InfoLayout, Word
from burn.wgpu.kernels.wgsl import ENTRY_1D, header, kernel

# Offsets of the four inputs (in elements) and the step's scalars as float32 bits: `one_b1`
# is 1 - beta_1, `c1` is 1 - beta_1**time, `decay` the L2 factor, `shrink` lr * decay (AdamW).
ADAM = InfoLayout(
    "adam step",
    Word("n"),
    Word("t_offset"),
    Word("g_offset"),
    Word("m_offset"),
    Word("v_offset"),
    Word("beta_1"),
    Word("beta_2"),
    Word("one_b1"),
    Word("one_b2"),
    Word("c1"),
    Word("c2"),
    Word("epsilon"),
    Word("lr"),
    Word("decay"),
    Word("shrink"),
)


@kernel
def adam_step(first: bool, l2: bool, decoupled: bool) -> str:
    """Adam's update of contiguous float32 `t`, `g`, `m`, `v` (layout `ADAM`) into `t_out`,
    `m_out` and `v_out`; `first`: no moments yet (`m` and `v` are not read), `l2`: Adam's
    weight decay folded into the gradient, `decoupled`: AdamW's applied to the parameter."""
    f = "bitcast<f32>"
    grad = "g[info_g_offset() + i]"
    if l2:
        grad = f"t[info_t_offset() + i] * {f}(info_decay()) + {grad}"
    if first:
        moments = "    let m = sg;\n    let v = sq;\n"
    else:
        moments = (
            f"    let m = m_in[info_m_offset() + i] * {f}(info_beta_1()) + sg;\n"
            f"    let v = v_in[info_v_offset() + i] * {f}(info_beta_2()) + sq;\n"
        )
    shrink = f"    p = p - p * {f}(info_shrink());\n" if decoupled else ""
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
        + f"""    let grad = {grad};
    let sg = grad * {f}(info_one_b1());
    let sq = (grad * grad) * {f}(info_one_b2());
{moments}    let delta = (m / {f}(info_c1())) / (sqrt(v / {f}(info_c2())) + {f}(info_epsilon()));
    var p = t[info_t_offset() + i];
{shrink}    t_out[i] = p - delta * {f}(info_lr());
    m_out[i] = m;
    v_out[i] = v;
}}
"""
    )
