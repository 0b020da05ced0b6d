"""A matmul with its consumers as the epilogue: `relu(x @ w + b)` in one kernel (two when the
matmul is split along k).

The segment holds one `matmul` node (its operands are concrete tensors) and the elementwise
nodes over it, all evaluated at the product's shape: the `[..., m, n]` of the operands, or any
reshape of it (`conv2d`'s `[N, O, H, W]`), since a contiguous product's elements are in the
same order either way. The kernel is Wgpu's own tiled matmul
(the vec4 one where the operands allow it, with the tiles autotune chose for the shape); where
it would store a product, it calls `epilogue(product, i)` instead, which evaluates the
segment's nodes at output index `i` (the product standing for the matmul node, leaves read
strided or contiguous as in any fused kernel) and stores the segment's outputs. The product
itself is written only when it is one of them.

Bindings: info, the operands `a` and `b`, the segment's leaves, its outputs. Info words: the
matmul's (layout `MATMUL`), then the leaves' words and the params, as in `codegen.py`.

A matmul that Wgpu splits along k (few output tiles, a long k: `matmul_ops.split_k`) runs as
the batched products of its k-slices, `[..., S, m, n]`, and the epilogue is then an
elementwise kernel over the result whose product is the sum of the S partial products at its
position: the sum the split matmul would launch on its own, and the epilogue's ops after it.
Bindings: info, the partial products, the leaves, the outputs; info words: the output count,
the partials' offset, then the leaves' words and the params.
"""

from __future__ import annotations

from dataclasses import dataclass

from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.fusion.codegen import ENTRY, element_lines, prelude
from burn.wgpu.kernels.layout import prune_functions
from burn.wgpu.kernels.wgsl import store
from burn.wgpu.matmul_ops import matmul_words
from burn.wgpu.primitive import broadcast_shape


@dataclass(frozen=True)
class MatmulPlan:
    """A compiled matmul segment: the kernel source and how to lay out its info words."""

    source: str
    access: tuple[str, ...]
    strided: tuple[bool, ...]  # per leaf: offset and strides (True) or offset only
    param_dtypes: tuple[DType, ...]
    out_dtypes: tuple[DType, ...]
    cfg: tuple[int, ...] | None  # the tile shape (bm, bn, bk, tm, tn); None when split
    slices: int  # k-slices summed by the epilogue kernel (1: the matmul's own kernel)


def matmul_key(lhs, rhs, layout, cfg, slices: int = 1) -> tuple:
    """What the kernel depends on besides the epilogue: operand dtype and shapes, the vec4
    layout (None: the tiled kernel) and the tiles, or the number of k-slices of a split
    matmul (whose partial products the backend's matmul computes). Strides and offsets are
    info words."""
    return (lhs.dtype, lhs.shape, rhs.shape, layout, cfg, slices)


def generate_matmul(segment, strided: tuple[bool, ...]) -> MatmulPlan:
    """The kernel of a segment whose `matmul` node's consumers are its epilogue."""
    product = segment.nodes[segment.matmul]
    dtype, a_shape, b_shape, layout, cfg, slices = product.arg[2]
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    if slices > 1:
        return _generate_split(segment, strided, slices, m * n)
    batch = broadcast_shape(a_shape[:-2], b_shape[:-2])
    # The epilogue's words follow the matmul's (their count depends only on the batch rank).
    lhs, rhs, _ = product.arg
    first_word = len(matmul_words(lhs, rhs, batch, cfg)[0])
    lines, helpers = prelude(segment, lambda t: t, first_binding=3, standalone=False)
    values, param_dtypes = element_lines(segment, strided, first_word, "acc")
    outputs = [segment.nodes[k] for k in segment.outputs]
    stores = [
        f"    out{j}[i] = {store(out.dtype)}(v{pos});"
        for j, (pos, out) in enumerate(zip(segment.outputs, outputs, strict=True))
    ]
    epilogue = "\n".join(
        [
            *lines,
            helpers,
            "fn epilogue(acc: f32, i: u32) {",
            *values,
            *stores,
            "}",
            "fn epilogue4(acc: vec4<f32>, i: u32) {",
            "    epilogue(acc.x, i);",
            "    epilogue(acc.y, i + 1u);",
            "    epilogue(acc.z, i + 2u);",
            "    epilogue(acc.w, i + 3u);",
            "}",
            "",
        ]
    )
    bm, bn, bk, tm, tn = cfg
    if layout is None:
        source = K.matmul(dtype, bm, bn, bk, tm, tn, epilogue)
    else:
        exact = m % bm == 0 and n % bn == 0 and k % bk == 0
        source = K.matmul_vec4(bm, bn, bk, tm, tn, *layout, exact, epilogue)
    access = ("r", "r") + ("r",) * len(segment.leaves) + ("rw",) * len(outputs)
    outs = tuple(out.dtype for out in outputs)
    return MatmulPlan(source, access, strided, tuple(param_dtypes), outs, cfg, 1)


def _generate_split(segment, strided: tuple[bool, ...], slices: int, mn: int) -> MatmulPlan:
    """One thread per output: the sum of the `slices` partial products at its position (each
    product matrix `mn` elements), then the epilogue."""
    lines, helpers = prelude(segment, lambda t: t, first_binding=2)
    lines.insert(1, "@group(0) @binding(1) var<storage, read> part: array<f32>;")
    values, param_dtypes = element_lines(segment, strided, 2, "acc")
    outputs = [segment.nodes[k] for k in segment.outputs]
    body = [
        *ENTRY,
        # The partials are [..., S, m, n]: the output's batch index selects S matrices.
        f"    let base = info[1] + (i / {mn}u) * {slices * mn}u + i % {mn}u;",
        "    var acc = 0.0;",
        f"    for (var s = 0u; s < {slices}u; s = s + 1u) {{",
        f"        acc = acc + part[base + s * {mn}u];",
        "    }",
        *values,
        *[
            f"    out{j}[i] = {store(out.dtype)}(v{pos});"
            for j, (pos, out) in enumerate(zip(segment.outputs, outputs, strict=True))
        ],
        "}",
    ]
    source = prune_functions("\n".join(lines) + "\n" + helpers + "\n" + "\n".join(body) + "\n")
    access = ("r",) + ("r",) * len(segment.leaves) + ("rw",) * len(outputs)
    outs = tuple(out.dtype for out in outputs)
    return MatmulPlan(source, access, strided, tuple(param_dtypes), outs, None, slices)
