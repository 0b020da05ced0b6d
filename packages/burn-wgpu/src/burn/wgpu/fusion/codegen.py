"""WGSL for a fused segment: one kernel that evaluates a chain of elementwise ops per element.

Every node of the segment becomes a `let` in the kernel body, in topological order, so a value
used twice is computed once per element; only the segment's outputs are stored. Leaves are read
at the element's coordinates through an offset and strides held in the info words (broadcast
dims have stride 0), or at `offset + i` when the leaf is contiguous and of the output's shape;
the shape itself is baked into the source, as it is part of the segment's signature.

Info words: `[n, leaf words..., params...]`: a contiguous leaf has one word (its offset), a
strided one `1 + rank` (offset, strides), then one word per scalar or constant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from burn.tensor import DType
from burn.wgpu.kernels.expressions import FLOAT_FNS, INT_FNS, binary_expr, unary_expr
from burn.wgpu.kernels.layout import prune_functions
from burn.wgpu.kernels.wgsl import HELPERS, WG, compute, scalar_read, store, zero

# The entry point of every fused kernel with one thread per output element `i` (workgroups past
# 65535 folded into y), returning past the count in info word 0.
ENTRY = (
    f"@compute @workgroup_size({WG})",
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,",
    "        @builtin(local_invocation_index) lid: u32) {",
    f"    let i = (wid.y * nwg.x + wid.x) * {WG}u + lid;",
    "    if (i >= info[0]) { return; }",
)

# The integer helpers share names with the float ones; in a fused kernel both may be needed.
_INT_RENAMES = {"div_(": "idiv_(", "rem_(": "irem_(", "pow_(": "ipow_("}


def _int_names(text: str) -> str:
    for old, new in _INT_RENAMES.items():
        text = re.sub(r"(?<![A-Za-z0-9_])" + re.escape(old), new, text)
    return text


def _substitute(expr: str, names: dict[str, str]) -> str:
    """`expr` with its operand names (`x`, or `a` and `b`) replaced by let names."""
    pattern = r"\b(" + "|".join(names) + r")\b"
    return re.sub(pattern, lambda m: names[m.group(1)], expr)


def convert(src: DType, dst: DType, x: str) -> str:
    """A compute-type value of `src` as the compute type of `dst`."""
    if src is dst:
        return x
    if dst is DType.BOOL:
        return f"select(0u, 1u, {x} != {zero(src)})"
    if src.is_float and dst is DType.I32:
        return f"i32(trunc({x}))"
    return f"{compute(dst)}({x})"


@dataclass(frozen=True)
class Plan:
    """A compiled segment: the kernel source and how to lay out its info words."""

    source: str
    access: tuple[str, ...]
    strided: tuple[bool, ...]  # per leaf: offset and strides (True) or offset only
    vec4: bool  # four elements per thread, counts and offsets in vec4s
    param_dtypes: tuple[DType, ...]  # the dtype each param word is written in
    out_dtypes: tuple[DType, ...]


def expression(node, inputs: list[str], param_word: str | None) -> str:
    """The WGSL value of `node` from its inputs' let names (and its param word, if any)."""
    kind = node.kind
    if kind == "unary":
        expr = unary_expr(node.arg, node.dtype)
        if node.dtype is DType.I32:
            expr = _int_names(expr)
        return _substitute(expr, {"x": inputs[0]})
    if kind in ("binary", "scalar"):
        lhs = node.inputs[0].dtype
        expr = binary_expr(node.op, lhs)[0]
        if lhs is DType.I32:
            expr = _int_names(expr)
        rhs = inputs[1] if kind == "binary" else scalar_read(lhs, param_word)
        return _substitute(expr, {"a": inputs[0], "b": f"({rhs})"})
    if kind == "cast":
        return convert(node.inputs[0].dtype, node.dtype, inputs[0])
    if kind == "where":
        return f"select({inputs[0]}, {inputs[2]}, {inputs[1]} != 0u)"
    if kind == "expand":
        return inputs[0]
    if kind == "const":
        return scalar_read(node.dtype, param_word)
    raise ValueError(f"fusion: no code for node kind {kind!r}")


def generate(segment, strided: tuple[bool, ...], vec4: bool = False) -> Plan:
    """The kernel of `segment`, with each leaf read strided or contiguous as `strided` says.

    With `vec4` (every leaf contiguous, of the output's shape and 16-byte aligned, the element
    count a multiple of 4), each thread loads, computes and stores four elements at once."""
    if vec4:
        return _generate_vec4(segment)
    leaves = segment.leaves
    outputs = [segment.nodes[k] for k in segment.outputs]
    lines, helpers = prelude(segment, lambda t: t)
    body = [
        *ENTRY,
    ]
    values, param_dtypes = element_lines(segment, strided, 1)
    body += values
    for j, out in enumerate(outputs):
        body.append(f"    out{j}[i] = {store(out.dtype)}(v{segment.outputs[j]});")
    body.append("}")
    source = prune_functions("\n".join(lines) + "\n" + helpers + "\n" + "\n".join(body) + "\n")
    access = ("r",) * len(leaves) + ("rw",) * len(outputs)
    outs = tuple(out.dtype for out in outputs)
    return Plan(source, access, strided, False, tuple(param_dtypes), outs)


def element_lines(
    segment, strided: tuple[bool, ...], word: int, product: str | None = None
) -> tuple[list[str], list[DType]]:
    """The body lines computing every node of `segment` at output index `i`: `let v{k}` per
    node, leaves read from `in{j}` strided or contiguous as `strided` says, their info words
    (and then one per param) numbered from `word`; a matmul node's value is `product`.
    Returns the lines and the dtype each param word is written in."""
    shape = segment.shape
    rank = len(shape)
    leaves = segment.leaves
    body = []
    if any(strided):
        body.append("    var rest = i;")
        for d in reversed(range(rank)):
            body.append(f"    let c{d} = rest % {shape[d]}u;")
            if d:
                body.append(f"    rest = rest / {shape[d]}u;")
    leaf_word: dict[int, int] = {}
    for j, leaf in enumerate(leaves):
        leaf_word[id(leaf)] = word
        word += 1 + (rank if strided[j] else 0)
    param_dtypes: list[DType] = []
    leaf_slot = {id(leaf): j for j, leaf in enumerate(leaves)}
    for k, node in enumerate(segment.nodes):
        name = f"v{k}"
        c = compute(node.dtype)
        if node.kind == "leaf":
            j = leaf_slot[id(node)]
            w = leaf_word[id(node)]
            if strided[j]:
                terms = [f"info[{w}]"] + [
                    f"c{d} * info[{w + 1 + d}]" for d in range(rank) if shape[d] != 1
                ]
                index = " + ".join(terms)
            else:
                index = f"info[{w}] + i"
            body.append(f"    let {name} = {c}(in{j}[{index}]);")
            continue
        if node.kind == "matmul":
            body.append(f"    let {name}: {c} = {product};")
            continue
        param = None
        if node.kind in ("const", "scalar"):
            param = f"info[{word}]"
            word += 1
            param_dtypes.append(node.dtype if node.kind == "const" else node.inputs[0].dtype)
        inputs = [f"v{segment.index[id(i)]}" for i in node.inputs]
        body.append(f"    let {name}: {c} = {c}({expression(node, inputs, param)});")
    return body, param_dtypes


def prelude(
    segment, element, first_binding: int = 1, standalone: bool = True
) -> tuple[list[str], str]:
    """The binding declarations (each buffer an array of `element(store type)`, from
    `first_binding` on) and helpers. `standalone`: the kernel is the segment's alone, so the
    info binding and the shared helpers are declared here too (an epilogue's host kernel
    declares its own)."""
    leaves = segment.leaves
    outputs = [segment.nodes[k] for k in segment.outputs]
    lines = ["@group(0) @binding(0) var<storage, read> info: array<u32>;"] if standalone else []
    for j, leaf in enumerate(leaves):
        ty = element(store(leaf.dtype))
        binding = first_binding + j
        lines.append(f"@group(0) @binding({binding}) var<storage, read> in{j}: array<{ty}>;")
    for j, out in enumerate(outputs):
        binding = first_binding + len(leaves) + j
        ty = element(store(out.dtype))
        lines.append(f"@group(0) @binding({binding}) var<storage, read_write> out{j}: array<{ty}>;")
    dtypes = {n.dtype for n in segment.nodes}
    helpers = HELPERS if standalone else ""
    if any(d.is_float for d in dtypes):
        helpers += FLOAT_FNS
    if DType.I32 in dtypes:
        helpers += _int_names(INT_FNS)
    return lines, helpers


def _generate_vec4(segment) -> Plan:
    leaves = segment.leaves
    outputs = [segment.nodes[k] for k in segment.outputs]
    lines, helpers = prelude(segment, lambda t: f"vec4<{t}>")
    body = [
        *ENTRY,
    ]
    leaf_slot = {id(leaf): j for j, leaf in enumerate(leaves)}
    for j in range(len(leaves)):
        body.append(f"    let l{j} = in{j}[info[{j + 1}] + i];")
    param_dtypes: list[DType] = []
    param_word: dict[int, int] = {}
    word = 1 + len(leaves)
    for node in segment.nodes:
        if node.kind in ("const", "scalar"):
            param_word[id(node)] = word
            word += 1
            param_dtypes.append(node.dtype if node.kind == "const" else node.inputs[0].dtype)
    for lane in "xyzw":
        for k, node in enumerate(segment.nodes):
            c = compute(node.dtype)
            if node.kind == "leaf":
                body.append(f"    let v{k}{lane} = {c}(l{leaf_slot[id(node)]}.{lane});")
                continue
            word_at = param_word.get(id(node))
            param = None if word_at is None else f"info[{word_at}]"
            inputs = [f"v{segment.index[id(i)]}{lane}" for i in node.inputs]
            body.append(f"    let v{k}{lane}: {c} = {c}({expression(node, inputs, param)});")
    for j, out in enumerate(outputs):
        k = segment.outputs[j]
        t = store(out.dtype)
        body.append(f"    out{j}[i] = vec4<{t}>({', '.join(f'{t}(v{k}{x})' for x in 'xyzw')});")
    body.append("}")
    source = prune_functions("\n".join(lines) + "\n" + helpers + "\n" + "\n".join(body) + "\n")
    access = ("r",) * len(leaves) + ("rw",) * len(outputs)
    strided = (False,) * len(leaves)
    outs = tuple(out.dtype for out in outputs)
    return Plan(source, access, strided, True, tuple(param_dtypes), outs)
