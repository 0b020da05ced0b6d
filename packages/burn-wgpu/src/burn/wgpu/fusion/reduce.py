"""WGSL for a reduction whose input is a fused elementwise chain (a prologue).

`x.square().mean_dim(0)` with `x.square()` still recorded: instead of writing the square and
reducing it, one kernel evaluates the chain at each element of the reduced dim and accumulates,
so the chain's result is never written. One thread computes one output element, looping over
the reduced dim; `WgpuFusionBackend.supports_reduce` keeps this to reductions with enough
outputs to fill the GPU and a short enough reduced dim.

Info words: `[outputs, leaf words..., params...]`, each leaf an offset and one stride per dim
(0 on broadcast dims), the strides of the chain's shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from burn.tensor import DType
from burn.wgpu.fusion.codegen import expression, prelude
from burn.wgpu.kernels.layout import prune_functions
from burn.wgpu.kernels.wgsl import WG, compute, store

REDUCE_OPS = frozenset({"sum", "mean", "prod", "max", "min"})

_INIT = {
    ("sum", True): "0.0",
    ("mean", True): "0.0",
    ("prod", True): "1.0",
    ("max", True): "bitcast<f32>(0xff800000u)",
    ("min", True): "bitcast<f32>(0x7f800000u)",
    ("sum", False): "0",
    ("prod", False): "1",
    ("max", False): "(-2147483647 - 1)",
    ("min", False): "2147483647",
}
_COMBINE = {
    ("sum", True): "acc + {v}",
    ("mean", True): "acc + {v}",
    ("prod", True): "acc * {v}",
    ("max", True): "max_(acc, {v})",
    ("min", True): "min_(acc, {v})",
    ("sum", False): "acc + {v}",
    ("prod", False): "acc * {v}",
    ("max", False): "max(acc, {v})",
    ("min", False): "min(acc, {v})",
}


@dataclass(frozen=True)
class ReducePlan:
    source: str
    access: tuple[str, ...]
    param_dtypes: tuple[DType, ...]
    dtype: DType


def supported(op: str, dtype: DType) -> bool:
    return (op, dtype.is_float) in _INIT and dtype in (DType.F32, DType.I32)


def generate_reduce(segment, op: str, dim: int) -> ReducePlan:
    """One thread per output element of `op` along `dim` of the segment's single output."""
    shape = segment.shape
    rank = len(shape)
    length = shape[dim]
    (out_pos,) = segment.outputs
    out = segment.nodes[out_pos]
    floating = out.dtype.is_float
    c = compute(out.dtype)
    lines, helpers = prelude(segment, lambda t: t)
    # The prelude declares one output of the chain's dtype: the reduction keeps it.
    body = [
        f"@compute @workgroup_size({WG})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
        "        @builtin(local_invocation_index) lid: u32) {",
        f"    let i = (wid.y * nwg.x + wid.x) * {WG}u + lid;",
        "    if (i >= info[0]) { return; }",
        "    var rest = i;",
    ]
    for d in reversed(range(rank)):
        if d == dim:
            continue
        body.append(f"    let c{d} = rest % {shape[d]}u;")
        body.append(f"    rest = rest / {shape[d]}u;")
    body.append(f"    var acc: {c} = {_INIT[(op, floating)]};")
    body.append(f"    for (var c{dim} = 0u; c{dim} < {length}u; c{dim} = c{dim} + 1u) {{")
    word = 1
    leaf_word: dict[int, int] = {}
    for leaf in segment.leaves:
        leaf_word[id(leaf)] = word
        word += 1 + rank
    leaf_slot = {id(leaf): j for j, leaf in enumerate(segment.leaves)}
    param_dtypes: list[DType] = []
    for k, node in enumerate(segment.nodes):
        nc = compute(node.dtype)
        if node.kind == "leaf":
            w = leaf_word[id(node)]
            terms = [f"info[{w}]"] + [f"c{d} * info[{w + 1 + d}]" for d in range(rank)]
            body.append(f"        let v{k} = {nc}(in{leaf_slot[id(node)]}[{' + '.join(terms)}]);")
            continue
        param = None
        if node.kind in ("const", "scalar"):
            param = f"info[{word}]"
            word += 1
            param_dtypes.append(node.dtype if node.kind == "const" else node.inputs[0].dtype)
        inputs = [f"v{segment.index[id(i)]}" for i in node.inputs]
        body.append(f"        let v{k}: {nc} = {nc}({expression(node, inputs, param)});")
    body.append(f"        acc = {_COMBINE[(op, floating)].format(v=f'v{out_pos}')};")
    body.append("    }")
    result = f"acc / {float(length)!r}" if op == "mean" else "acc"
    body.append(f"    out0[i] = {store(out.dtype)}({result});")
    body.append("}")
    source = prune_functions("\n".join(lines) + "\n" + helpers + "\n" + "\n".join(body) + "\n")
    access = ("r",) * len(segment.leaves) + ("rw",)
    return ReducePlan(source, access, tuple(param_dtypes), out.dtype)
