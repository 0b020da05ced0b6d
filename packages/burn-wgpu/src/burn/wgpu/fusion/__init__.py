"""Wgpu's fuser: how `Fusion(Wgpu)` turns recorded elementwise ops into generated WGSL kernels.

Registered in the `burn.fusion` entry-point group as `wgpu`; burn-fusion finds it there and
calls it only through the `FusionBackend` methods (`implementations`, `supports`,
`max_inputs`, `layout_key`, `compile`, `execute`, and the optional ones for reductions with a
prologue and matmuls with an epilogue). Nothing here imports burn-fusion.

`capture(step)` (in `capture.py`) goes further: it records the launches of a whole step and
replays them without running the step's Python.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from burn.tensor import DType
from burn.tensor.errors import DTypeError
from burn.wgpu.backend import Wgpu, WgpuBackend, scalar_bits
from burn.wgpu.fusion.capture import CapturedStep, CaptureError, capture
from burn.wgpu.fusion.codegen import Plan, generate
from burn.wgpu.fusion.epilogue import MatmulPlan, generate_matmul, matmul_key
from burn.wgpu.fusion.reduce import ReducePlan, generate_reduce
from burn.wgpu.fusion.reduce import supported as reduce_supported
from burn.wgpu.kernels.expressions import binary_expr, unary_expr
from burn.wgpu.kernels.wgsl import WG
from burn.wgpu.matmul_ops import matmul_words, split_k
from burn.wgpu.primitive import WgpuTensor, block, broadcast_shape, layout_of

FUSED_DTYPES = frozenset({DType.F32, DType.I32, DType.BOOL})
# Bindings one fused kernel may use besides its info words (lavapipe offers 32, most GPUs more;
# kernels with more inputs compile slowly for little gain).
MAX_INPUTS = 24
# Reductions run with their prologue fused only within these bounds (one thread per output).
MAX_REDUCE_LENGTH = 4096
MIN_REDUCE_OUTPUTS = 256


class WgpuFusionBackend:
    """The `FusionBackend` of Wgpu: one generated kernel per segment."""

    def implementations(self) -> Mapping[str, Callable[..., Any]]:
        return {
            "unary": WgpuBackend.unary,
            "binary": WgpuBackend.binary,
            "binary_scalar": WgpuBackend.binary_scalar,
            "cast": WgpuBackend.cast,
            "mask_where": WgpuBackend.mask_where,
            "expand": WgpuBackend.expand,
            "full": WgpuBackend.full,
            "scalar_like": WgpuBackend.scalar_like,
            "reduce": WgpuBackend.reduce,
            "float_mean_dim": WgpuBackend.float_mean_dim,
            "float_matmul": WgpuBackend.float_matmul,
        }

    def supports(self, node) -> bool:
        # Kernels index with u32; a bigger tensor runs eagerly (and allocation errors come from
        # the op that asked, at once).
        if node.dtype not in FUSED_DTYPES or math.prod(node.shape) >= 1 << 31:
            return False
        if any(i.dtype not in FUSED_DTYPES for i in node.inputs):
            return False
        if any(len(i.shape) != len(node.shape) for i in node.inputs):
            return False
        kind = node.kind
        try:
            if kind == "unary":
                unary_expr(node.arg, node.dtype)
            elif kind == "binary":
                lhs, rhs = node.inputs
                if lhs.dtype is not rhs.dtype:
                    return False
                binary_expr(node.arg, lhs.dtype)
            elif kind == "scalar":
                binary_expr(node.arg[0], node.inputs[0].dtype)
            elif kind == "where":
                p, mask, value = node.inputs
                return mask.dtype is DType.BOOL and p.dtype is value.dtype
        except DTypeError:
            return False
        return True

    def max_inputs(self, device) -> int:
        rt = Wgpu.runtime(device)
        limit = int(rt.limits.get("max-storage-buffers-per-shader-stage", 8)) - 1
        return min(limit, MAX_INPUTS)

    def layout_key(self, primitive: WgpuTensor, shape: tuple[int, ...]) -> Hashable:
        """0: strided; 1: contiguous and of the output's shape (read at `offset + i`); 2: that,
        and 16-byte aligned (readable as vec4)."""
        if primitive.shape != shape or not primitive.is_contiguous():
            return 0
        return 2 if primitive.offset % 4 == 0 else 1

    def compile(self, segment) -> Plan:
        keys = [self.layout_key(leaf.arg, segment.shape) for leaf in segment.leaves]
        n = math.prod(segment.shape)
        vec4 = n % 4 == 0 and n > 0 and all(k == 2 for k in keys)
        return generate(segment, tuple(k == 0 for k in keys), vec4)

    def execute(self, plan: Plan, segment) -> list[WgpuTensor]:
        shape = segment.shape
        n = math.prod(shape)
        lanes = 4 if plan.vec4 else 1
        words = [n // lanes, *_segment_words(segment, plan.strided, plan.param_dtypes, lanes)]
        rt, device = _runtime(segment)
        outs = [Wgpu._empty(shape, dtype, device, rt) for dtype in plan.out_dtypes]
        handles = [leaf.arg.handle for leaf in segment.leaves]
        handles.extend([o.handle for o in outs])
        rt.launch(plan.source, plan.access, handles, words, (n // lanes + WG - 1) // WG)
        return outs

    # ------------------------------------------------------------------ matmul epilogues
    def matmul_operands(self, lhs: WgpuTensor, rhs: WgpuTensor):
        """`(lhs, rhs, key)` for a float32 matmul: one tiled kernel with tiles already chosen
        for its shape class, or a matmul split along k, whose sum of partial products the
        epilogue kernel does; None for the rest (empty, integer, or the first of its shape
        class, which the eager matmul tunes)."""
        if lhs.dtype is not DType.F32 or rhs.dtype is not DType.F32:
            return None
        # The key depends only on the operands' layouts: kept per layout on the runtime, as
        # the backend's own matmuls keep their launch plans (every traced step asks again).
        rt = lhs.rt
        plan_key = ("epilogue matmul", *layout_of(lhs), *layout_of(rhs))
        key = rt.op_plans.get(plan_key)
        if key is not None:
            return lhs, rhs, key
        a, b = lhs.shape, rhs.shape
        m, k, n = a[-2], a[-1], b[-1]
        batch = broadcast_shape(a[:-2], b[:-2])
        batches = math.prod(batch)
        if k == 0 or m * n * batches == 0:
            return None
        slices = split_k(m, n, k, batches)
        if slices > 1:
            key = matmul_key(lhs, rhs, None, None, slices)
            rt.remember_plan(plan_key, key)
            return lhs, rhs, key
        read_lhs, read_rhs, layout, cfg = Wgpu._matmul_setup(lhs, rhs, batch, m, n, k)
        if cfg is None:
            return None
        key = matmul_key(read_lhs, read_rhs, layout, cfg)
        if read_lhs is lhs and read_rhs is rhs:  # read as they are (no copies): kept
            rt.remember_plan(plan_key, key)
        return read_lhs, read_rhs, key

    def compile_matmul(self, segment) -> MatmulPlan:
        keys = [self.layout_key(leaf.arg, segment.shape) for leaf in segment.leaves]
        return generate_matmul(segment, tuple(k == 0 for k in keys))

    def execute_matmul(self, plan: MatmulPlan, segment) -> list[WgpuTensor]:
        product = segment.nodes[segment.matmul]
        lhs, rhs, _ = product.arg
        rt, device = lhs.rt, lhs.device
        outs = [Wgpu._empty(segment.shape, dtype, device, rt) for dtype in plan.out_dtypes]
        leaves = [leaf.arg.handle for leaf in segment.leaves]
        words = _segment_words(segment, plan.strided, plan.param_dtypes, 1)
        if plan.slices > 1:
            partial = Wgpu.split_products(lhs, rhs, plan.slices)
            n = math.prod(segment.shape)
            handles = [partial.handle, *leaves, *[o.handle for o in outs]]
            info = [n, partial.offset, *words]
            rt.launch(plan.source, plan.access, handles, info, (n + WG - 1) // WG)
            return outs
        # The product's words depend on the operands' layouts and the tiles only: kept, as
        # the backend's own matmuls keep theirs.
        words_key = ("epilogue words", plan.cfg, *layout_of(lhs), *layout_of(rhs))
        kept = rt.op_plans.get(words_key)
        if kept is None:
            batch = broadcast_shape(lhs.shape[:-2], rhs.shape[:-2])
            kept = matmul_words(lhs, rhs, batch, plan.cfg)
            rt.remember_plan(words_key, kept)
        info = [*kept[0], *words]
        groups = kept[1]
        handles = [lhs.handle, rhs.handle, *leaves, *[o.handle for o in outs]]
        rt.launch(plan.source, plan.access, handles, info, groups)
        return outs

    # ------------------------------------------------------------------ reductions
    def supports_reduce(self, op: str, node, dim: int) -> bool:
        """One thread per output looping over `dim`: worth it with enough outputs to fill the
        GPU and a reduced dim short enough for one thread."""
        length = node.shape[dim]
        n = math.prod(node.shape)
        return (
            reduce_supported(op, node.dtype)
            and 1 <= length <= MAX_REDUCE_LENGTH
            and n // length >= MIN_REDUCE_OUTPUTS
            and n < 1 << 31
        )

    def compile_reduce(self, segment, op: str, dim: int) -> ReducePlan:
        return generate_reduce(segment, op, dim)

    def execute_reduce(self, plan: ReducePlan, segment, dim: int) -> WgpuTensor:
        shape = segment.shape
        out_shape = shape[:dim] + (1,) + shape[dim + 1 :]
        n = math.prod(out_shape)
        words: list[int] = [n]
        rt = device = None
        for leaf in segment.leaves:
            t: WgpuTensor = leaf.arg
            rt, device = t.rt, t.device
            words.extend(block(t, shape)[1:])
        for value, dtype in zip(segment.params, plan.param_dtypes, strict=True):
            words.append(scalar_bits(value, dtype))
        if rt is None:
            device = segment.nodes[segment.outputs[0]].device
            rt = Wgpu.runtime(device)
        out = Wgpu._empty(out_shape, plan.dtype, device, rt)
        handles = [leaf.arg.handle for leaf in segment.leaves] + [out.handle]
        rt.launch(plan.source, plan.access, handles, words, (n + WG - 1) // WG)
        return out


def _segment_words(segment, strided, param_dtypes, lanes: int) -> list[int]:
    """A fused kernel's words for the segment's leaves (an offset, and strides when read
    strided) and params, as `codegen.element_lines` reads them; offsets in units of `lanes`."""
    shape = segment.shape
    words: list[int] = []
    for leaf, leaf_strided in zip(segment.leaves, strided, strict=True):
        t: WgpuTensor = leaf.arg
        if leaf_strided:
            words.extend(block(t, shape)[1:])
        else:
            words.append(t.offset // lanes)
    for value, dtype in zip(segment.params, param_dtypes, strict=True):
        words.append(scalar_bits(value, dtype))
    return words


def _runtime(segment):
    """The runtime and device a segment's kernel runs on (a leaf's, else its first output's)."""
    if segment.leaves:
        t = segment.leaves[-1].arg
        return t.rt, t.device
    device = segment.nodes[segment.outputs[0]].device
    return Wgpu.runtime(device), device


WgpuFusion = WgpuFusionBackend()

__all__ = ["CaptureError", "CapturedStep", "WgpuFusion", "WgpuFusionBackend", "capture"]
