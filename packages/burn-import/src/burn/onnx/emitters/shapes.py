"""Shape and indexing ops: Reshape, Transpose, Concat, Slice, Gather, Shape... and reductions."""

from __future__ import annotations

from burn.onnx.codegen import Context, burn_dtype, emitter
from burn.onnx.emitters.common import attr_args, call, onnx_dtype_name, small_ints, value
from burn.onnx.graph import Node


def _x(ctx: Context, node: Node, i: int = 0) -> str:
    return ctx.x(node.inputs[i])


# ---------------------------------------------------------------------- shapes held as lists
# `Shape` gives a list of ints, and the ops that shape arithmetic exported from PyTorch and
# other frameworks runs on it (slices, gathers at constant indices, concatenation with
# constants, unsqueeze and squeeze of a scalar, casts between int64 values) keep it a list. See
# `burn.onnx.codegen` for how such a list becomes a tensor where an op needs one.

_NO_END = 1 << 62  # ONNX writes "to the end" as a huge index; the generated slice leaves it out


def _list_slice(held: str, start: int, end: int, step: int) -> str:
    """Python source for `held[start:end:step]`, without the parts that are defaults."""
    parts = [str(start) if start else "", "" if abs(end) >= _NO_END else str(end)]
    if step != 1:
        parts.append(str(step))
    return f"{held}[{':'.join(parts)}]"


def _slice_shape(node: Node, ctx: Context) -> bool:
    """`Slice` of a list-held shape along its one axis, with constant bounds."""
    held = ctx.shape_var(node.inputs[0])
    if held is None:
        return False
    if "starts" in node.attrs:  # opset < 10
        bounds = [node.attr("starts"), node.attr("ends"), node.attr("axes"), None]
        bounds = [None if b is None else [int(v) for v in b] for b in bounds]
    else:
        bounds = [small_ints(ctx, n) if n else None for n in (node.inputs[1:5] + [""] * 4)[:4]]
        if any(ctx.has(node, i) and bounds[i - 1] is None for i in range(1, 5)):
            return False
    starts, ends, axes, steps = bounds
    if starts is None or ends is None or len(starts) != 1 or len(ends) != 1:
        return False
    if axes is not None and axes not in ([0], [-1]):
        return False
    step = 1 if steps is None else (steps[0] if len(steps) == 1 else 0)
    if step == 0:
        return False
    length = ctx.shape_length(node.inputs[0])
    size = None if length is None else len(range(length)[starts[0] : ends[0] : step])
    ctx.assign_shape(node, _list_slice(held, starts[0], ends[0], step), 1, size)
    return True


def _concat_shapes(node: Node, ctx: Context) -> bool:
    """`Concat` of list-held shapes and small int constants into one list."""
    names = [n for n in node.inputs if n]
    if int(node.attr("axis", 0)) not in (0, -1) or not any(ctx.shape_var(n) for n in names):
        return False
    parts, length = [], 0
    for name in names:
        held = ctx.shape_var(name)
        if held is not None:
            parts.append(f"*{held}")
            known = ctx.shape_length(name)
            length = None if known is None or length is None else length + known
            continue
        values = small_ints(ctx, name)
        if values is None:
            return False
        parts += [str(v) for v in values]
        length = None if length is None else length + len(values)
    ctx.assign_shape(node, f"[{', '.join(parts)}]", 1, length)
    return True


def _gather_shape(node: Node, ctx: Context) -> bool:
    """`Gather` from a list-held shape at constant indices that are in range."""
    held = ctx.shape_var(node.inputs[0])
    length = ctx.shape_length(node.inputs[0])
    indices = small_ints(ctx, node.inputs[1])
    if held is None or length is None or indices is None:
        return False
    if int(node.attr("axis", 0)) not in (0, -1) or ctx.rank(node.inputs[1]) not in (0, 1):
        return False
    if not all(-length <= i < length for i in indices):
        return False  # the general path says which index is out of range, as it runs
    picked = ", ".join(f"{held}[{i}]" for i in indices)
    ctx.assign_shape(node, f"[{picked}]", ctx.rank(node.inputs[1]) or 0, len(indices))
    return True


def _squeeze_shape(node: Node, ctx: Context, axes: list[int] | None) -> bool:
    """`Unsqueeze` of a list-held scalar into one dim, or `Squeeze` of a one-element list."""
    if ctx.shape_var(node.inputs[0]) is None or (axes is not None and axes not in ([0], [-1])):
        return False
    rank = ctx.rank(node.inputs[0])
    if node.op_type == "Unsqueeze" and rank == 0 and axes is not None:
        ctx.alias(node, node.inputs[0])
        ctx.ranks[node.outputs[0]] = 1
        return True
    if node.op_type == "Squeeze" and rank == 1 and ctx.shape_length(node.inputs[0]) == 1:
        ctx.alias(node, node.inputs[0])
        ctx.ranks[node.outputs[0]] = 0
        return True
    return False


def _axes(ctx: Context, node: Node) -> list[int] | None:
    """The constant axes of a Squeeze or Unsqueeze (attribute or input), else None."""
    axes = node.attr("axes")
    if axes is not None:
        return [int(a) for a in axes]
    return small_ints(ctx, node.inputs[1]) if ctx.has(node, 1) else None


@emitter("Reshape")
def reshape(node: Node, ctx: Context) -> None:
    shape = ctx.const(node.inputs[1])
    allowzero = int(node.attr("allowzero", 0))
    if shape is not None and not allowzero and 0 not in shape.tolist() and shape.size > 0:
        ctx.assign(node, f"{_x(ctx, node)}.reshape({shape.tolist()})")
        return
    args = [_x(ctx, node), value(ctx, node, 1)]
    extra = f"allowzero={allowzero}" if allowzero else ""
    # A shape held as a list of known length gives the rank shape inference may not have.
    call(ctx, node, "rt.reshape", args, extra, rank=ctx.shape_length(node.inputs[1]))


@emitter("Flatten")
def flatten(node: Node, ctx: Context) -> None:
    rank = ctx.rank(node.inputs[0])
    axis = int(node.attr("axis", 1))
    if rank is not None and axis < 0:
        axis += rank
    if rank is not None and rank >= 2 and axis == 1:
        ctx.assign(node, f"{_x(ctx, node)}.flatten(1, {rank - 1})", 2)
        return
    call(ctx, node, "rt.flatten", [_x(ctx, node)], f"axis={axis}, rank={rank}", rank=2)


@emitter("Transpose")
def transpose(node: Node, ctx: Context) -> None:
    perm = node.attr("perm")
    rank = ctx.rank(node.inputs[0])
    if perm is None and rank is not None:
        perm = list(range(rank))[::-1]
    if rank == 0:
        ctx.alias(node, node.inputs[0])
    elif perm is not None:
        ctx.assign(node, f"{_x(ctx, node)}.permute({list(perm)})", len(perm))
    else:
        call(ctx, node, "rt.transpose", [_x(ctx, node)])


@emitter("Squeeze")
def squeeze(node: Node, ctx: Context) -> None:
    if _squeeze_shape(node, ctx, _axes(ctx, node)):
        return
    known = _axes(ctx, node)
    axes = repr(list(node.attr("axes"))) if node.attr("axes") is not None else value(ctx, node, 1)
    rank = ctx.rank(node.inputs[0])
    out = None if rank is None or not known else rank - len(known)
    call(ctx, node, "rt.squeeze", [_x(ctx, node), axes], f"rank={rank}", rank=out)


@emitter("Unsqueeze")
def unsqueeze(node: Node, ctx: Context) -> None:
    if _squeeze_shape(node, ctx, _axes(ctx, node)):
        return
    known = _axes(ctx, node)
    axes = repr(list(node.attr("axes"))) if node.attr("axes") is not None else value(ctx, node, 1)
    rank = ctx.rank(node.inputs[0])
    out = None if rank is None or known is None else rank + len(known)
    call(ctx, node, "rt.unsqueeze", [_x(ctx, node), axes], f"rank={rank}", rank=out)


@emitter("Concat")
def concat(node: Node, ctx: Context) -> None:
    if _concat_shapes(node, ctx):
        return
    parts = ", ".join(ctx.x(n) for n in node.inputs if n)
    call(ctx, node, "rt.concat", [f"[{parts}]", str(int(node.attr("axis", 0)))])


@emitter("Split")
def split(node: Node, ctx: Context) -> None:
    sizes = node.attr("split")
    sizes = repr(list(sizes)) if sizes is not None else value(ctx, node, 1)
    extra = f"axis={int(node.attr('axis', 0))}, outputs={len(node.outputs)}"
    if node.attr("num_outputs") is not None:
        extra += f", num_outputs={int(node.attr('num_outputs'))}"
    call(ctx, node, "rt.split", [_x(ctx, node), sizes], extra, outputs=len(node.outputs))
    if len(node.outputs) == 1:
        var = ctx.names[node.outputs[0]]
        ctx.line(f"{var} = {var}[0]")


@emitter("Slice")
def slice_(node: Node, ctx: Context) -> None:
    if _slice_shape(node, ctx):
        return
    if "starts" in node.attrs:  # opset < 10
        args = [_x(ctx, node), repr(list(node.attr("starts"))), repr(list(node.attr("ends")))]
        args.append(repr(list(node.attr("axes"))) if node.attr("axes") is not None else "None")
    else:
        args = [_x(ctx, node)] + [value(ctx, node, i) for i in range(1, 5)]
    call(ctx, node, "rt.slice_", args)


@emitter("Gather")
def gather(node: Node, ctx: Context) -> None:
    if _gather_shape(node, ctx):
        return
    rank = ctx.rank(node.inputs[1])
    indices = small_ints(ctx, node.inputs[1])
    index = repr(indices) if indices is not None and rank in (0, 1) else _x(ctx, node, 1)
    args = [_x(ctx, node), index]
    call(ctx, node, "rt.gather", args, f"axis={int(node.attr('axis', 0))}, index_rank={rank}")


@emitter("GatherElements")
def gather_elements(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.gather_elements", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("GatherND")
def gather_nd(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.gather_nd", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("ScatterElements", "Scatter")
def scatter_elements(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2)]
    call(ctx, node, "rt.scatter_elements", args, attr_args(node))


@emitter("ScatterND")
def scatter_nd(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2)]
    call(ctx, node, "rt.scatter_nd", args, attr_args(node))


@emitter("Shape")
def shape(node: Node, ctx: Context) -> None:
    """The dims as a list of ints (a rank 0 value, held as one element, has none)."""
    rank = ctx.rank(node.inputs[0])
    if rank == 0:
        ctx.assign_shape(node, "[]", 1, 0)
        return
    start, end = int(node.attr("start", 0)), node.attr("end")
    end = _NO_END if end is None else int(end)
    length = None if rank is None else len(range(rank)[start:end])
    expr = f"{_x(ctx, node)}.dims()"
    if start or end != _NO_END:
        expr = _list_slice(expr, start, end, 1)
    ctx.assign_shape(node, expr, 1, length)


@emitter("Size")
def size(node: Node, ctx: Context) -> None:
    ctx.assign_shape(node, f"[{_x(ctx, node)}.num_elements()]", 0, 1)


@emitter("Expand")
def expand(node: Node, ctx: Context) -> None:
    rank = ctx.rank(node.inputs[0])
    length = ctx.shape_length(node.inputs[1])
    out = None if rank is None or length is None else max(rank, length)
    call(ctx, node, "rt.expand", [_x(ctx, node), value(ctx, node, 1)], f"rank={rank}", rank=out)


@emitter("Tile")
def tile(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.tile", [_x(ctx, node), value(ctx, node, 1)])


@emitter("Pad")
def pad(node: Node, ctx: Context) -> None:
    mode = node.attr("mode", "constant")
    if "pads" in node.attrs:  # opset < 11
        args = [_x(ctx, node), repr(list(node.attr("pads"))), repr(node.attr("value", 0.0))]
    else:
        args = [_x(ctx, node), value(ctx, node, 1), value(ctx, node, 2), value(ctx, node, 3)]
    call(ctx, node, "rt.pad", args, f"mode={mode!r}")


@emitter("ConstantOfShape")
def constant_of_shape(node: Node, ctx: Context) -> None:
    v = node.attr("value")
    fill = "None"
    if v is not None:
        ctx.need("numpy", "array")
        fill = f"array({v.reshape(-1).tolist()!r}, {v.dtype.name!r})"
    held = ctx.shape_var(node.inputs[0])
    if held is not None:
        ctx.uses_device = True
        rank = ctx.shape_length(node.inputs[0])
        call(ctx, node, "rt.constant_of_shape", [held, fill], "device=device", rank=rank)
        return
    call(ctx, node, "rt.constant_of_shape", [_x(ctx, node), fill])


@emitter("Range")
def range_(node: Node, ctx: Context) -> None:
    """A range whose bounds come from a shape (held as ints, or int constants) is counted on
    the host; any other is computed from its tensors."""
    bounds = [value(ctx, node, i) for i in range(3)]
    held = any(ctx.shape_var(n) for n in node.inputs[:3])
    if held and all(ctx.shape_var(n) or small_ints(ctx, n) is not None for n in node.inputs[:3]):
        ctx.uses_device = True
        call(ctx, node, "rt.range_", bounds, "device=device")
        return
    call(ctx, node, "rt.range_", [_x(ctx, node, i) for i in range(3)])


@emitter("Trilu")
def trilu(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.trilu", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("EyeLike")
def eye_like(node: Node, ctx: Context) -> None:
    dtype = node.attr("dtype")
    name = (
        onnx_dtype_name(int(dtype)) if dtype is not None else burn_dtype(ctx.dtype(node.inputs[0]))
    )
    call(ctx, node, "rt.eye_like", [_x(ctx, node), repr(name)], f"k={int(node.attr('k', 0))}")


@emitter("DepthToSpace")
def depth_to_space(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.depth_to_space", [_x(ctx, node)], attr_args(node))


@emitter("SpaceToDepth")
def space_to_depth(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.space_to_depth", [_x(ctx, node)], attr_args(node))


@emitter("OneHot")
def one_hot(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), value(ctx, node, 1), _x(ctx, node, 2)]
    call(ctx, node, "rt.one_hot", args, attr_args(node))


@emitter("NonZero")
def nonzero(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.nonzero", [_x(ctx, node)])


@emitter("Compress")
def compress(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.compress", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("TopK")
def topk(node: Node, ctx: Context) -> None:
    k = value(ctx, node, 1) if ctx.has(node, 1) else repr(node.attr("k"))
    attrs = attr_args(node, ["axis", "largest", "sorted"])
    call(ctx, node, "rt.topk", [_x(ctx, node), k], attrs, outputs=2)


_REDUCE = {
    "ReduceSum": "sum",
    "ReduceMean": "mean",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "prod",
    "ReduceL1": "l1",
    "ReduceL2": "l2",
    "ReduceLogSum": "log_sum",
    "ReduceLogSumExp": "log_sum_exp",
    "ReduceSumSquare": "sum_square",
}


@emitter(*_REDUCE)
def reduce(node: Node, ctx: Context) -> None:
    axes = node.attr("axes")
    axes = repr(list(axes)) if axes is not None else value(ctx, node, 1)
    rank = ctx.rank(node.inputs[0])
    attrs = attr_args(node, ["keepdims", "noop_with_empty_axes"])
    attrs = (attrs + ", " if attrs else "") + f"rank={rank}"
    call(ctx, node, "rt.reduce", [repr(_REDUCE[node.op_type]), _x(ctx, node), axes], attrs)


@emitter("ArgMax", "ArgMin")
def arg_reduce(node: Node, ctx: Context) -> None:
    op = "max" if node.op_type == "ArgMax" else "min"
    call(ctx, node, "rt.arg_reduce", [repr(op), _x(ctx, node)], attr_args(node))


@emitter("Softmax", "LogSoftmax", "Hardmax")
def softmax(node: Node, ctx: Context) -> None:
    axis = int(node.attr("axis", -1))
    rank = ctx.rank(node.inputs[0])
    if node.op_type in ("Softmax", "LogSoftmax") and rank is not None:
        ctx.need("burn.tensor", "activation")
        fn = "softmax" if node.op_type == "Softmax" else "log_softmax"
        ctx.assign(node, f"activation.{fn}({_x(ctx, node)}, {axis % max(rank, 1)})")
        return
    fn = {"Softmax": "rt.softmax", "LogSoftmax": "rt.log_softmax", "Hardmax": "rt.hardmax"}
    call(ctx, node, fn[node.op_type], [_x(ctx, node)], f"axis={axis}")


@emitter("CumSum")
def cumsum(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.cumsum", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("LpNormalization")
def lp_normalization(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.lp_normalization", [_x(ctx, node)], attr_args(node))
