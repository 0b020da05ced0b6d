"""WGSL for a reduction whose input is a fused elementwise chain (a prologue).

`x.square().mean_dim(0)` with `x.square()` still recorded: instead of writing the square and
reducing it, one kernel evaluates the chain at each element of the reduced dim and accumulates,
so the chain's result is never written. One thread computes one output element, looping over
the reduced dim four positions at a time (four accumulators, so loads overlap);
`WgpuFusionBackend.supports_reduce` keeps this to reductions with enough
outputs to fill the GPU and a short enough reduced dim.

Info words: `[outputs, leaf words..., params...]`, each leaf an offset and one stride per dim
(0 on broadcast dims), the strides of the chain's shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from burn.tensor import DType
from burn.wgpu.fusion.codegen import ENTRY, expression, prelude
from burn.wgpu.kernels.layout import prune_functions
from burn.wgpu.kernels.wgsl import compute, store

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
        *ENTRY,
        "    var rest = i;",
    ]
    for d in reversed(range(rank)):
        if d == dim:
            continue
        body.append(f"    let c{d} = rest % {shape[d]}u;")
        body.append(f"    rest = rest / {shape[d]}u;")
    word = 1
    leaf_word: dict[int, int] = {}
    for leaf in segment.leaves:
        leaf_word[id(leaf)] = word
        word += 1 + rank
    leaf_slot = {id(leaf): j for j, leaf in enumerate(segment.leaves)}
    param_word: dict[int, int] = {}
    param_dtypes: list[DType] = []
    for k, node in enumerate(segment.nodes):
        if node.kind in ("const", "scalar"):
            param_word[k] = word
            word += 1
            param_dtypes.append(node.dtype if node.kind == "const" else node.inputs[0].dtype)

    def chain_at(at: str, suffix: str) -> list[str]:
        """The chain evaluated at position `at` of the reduced dim, its values `v{k}{suffix}`."""
        lines = []
        for k, node in enumerate(segment.nodes):
            nc = compute(node.dtype)
            if node.kind == "leaf":
                w = leaf_word[id(node)]
                coords = [at if d == dim else f"c{d}" for d in range(rank)]
                terms = [f"info[{w}]"] + [f"{c} * info[{w + 1 + d}]" for d, c in enumerate(coords)]
                slot = leaf_slot[id(node)]
                lines.append(f"let v{k}{suffix} = {nc}(in{slot}[{' + '.join(terms)}]);")
                continue
            param = f"info[{param_word[k]}]" if k in param_word else None
            inputs = [f"v{segment.index[id(i)]}{suffix}" for i in node.inputs]
            lines.append(f"let v{k}{suffix}: {nc} = {nc}({expression(node, inputs, param)});")
        return lines

    def combine(acc: str, value: str) -> str:
        return _COMBINE[(op, floating)].replace("acc", acc).format(v=value)

    # Four accumulators over four positions per iteration: independent loads in flight at
    # once, where one accumulator would wait for each load before issuing the next.
    lanes = 4 if length >= 8 else 1
    init = _INIT[(op, floating)]
    body += [f"    var acc{u}: {c} = {init};" for u in range(lanes)]
    body.append(f"    var c{dim} = 0u;")
    if lanes > 1:
        body.append(f"    for (; c{dim} + {lanes}u <= {length}u; c{dim} = c{dim} + {lanes}u) {{")
        for u in range(lanes):
            body += [f"        {line}" for line in chain_at(f"(c{dim} + {u}u)", f"_{u}")]
            body.append(f"        acc{u} = {combine(f'acc{u}', f'v{out_pos}_{u}')};")
        body.append("    }")
    body.append(f"    for (; c{dim} < {length}u; c{dim} = c{dim} + 1u) {{")
    body += [f"        {line}" for line in chain_at(f"c{dim}", "_r")]
    body.append(f"        acc0 = {combine('acc0', f'v{out_pos}_r')};")
    body.append("    }")
    accs = [f"acc{u}" for u in range(lanes)]
    while len(accs) > 1:
        accs = [combine(accs[i], accs[i + 1]) for i in range(0, len(accs), 2)]
    body.append(f"    let acc = {accs[0]};")
    result = f"acc / {float(length)!r}" if op == "mean" else "acc"
    body.append(f"    out0[i] = {store(out.dtype)}({result});")
    body.append("}")
    source = prune_functions("\n".join(lines) + "\n" + helpers + "\n" + "\n".join(body) + "\n")
    access = ("r",) * len(segment.leaves) + ("rw",)
    return ReducePlan(source, access, tuple(param_dtypes), out.dtype)
