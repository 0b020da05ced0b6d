"""Less common ops: Einsum, Det, CumProd, Unique, ReverseSequence, TensorScatter,
CenterCropPad, LpPool, SwiGLU, the window functions, and `If` with a computed condition."""

from __future__ import annotations

from burn.onnx.codegen import Context, emitter
from burn.onnx.emitters.common import attr_args, call, onnx_dtype_name, value
from burn.onnx.graph import Node, elem_name, graph_from_proto, is_narrow
from burn.onnx.passes import fold_constants


def _x(ctx: Context, node: Node, i: int = 0) -> str:
    return ctx.x(node.inputs[i]) if ctx.has(node, i) else "None"


@emitter("Einsum")
def einsum(node: Node, ctx: Context) -> None:
    args = [repr(node.attr("equation"))] + [ctx.x(n) for n in node.inputs]
    call(ctx, node, "rt.einsum", args)


@emitter("Det")
def det(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.det", [_x(ctx, node)])


@emitter("CumProd")
def cumprod(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.cumprod", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("Unique")
def unique(node: Node, ctx: Context) -> None:
    expr = f"rt.unique({', '.join([_x(ctx, node)] + ([attr_args(node)] if node.attrs else []))})"
    names = [ctx.out(node, i) if n else "_" for i, n in enumerate(node.outputs)]
    names += ["_"] * (4 - len(names))
    ctx.line(f"{', '.join(names)} = {expr}", f"{node.op_type} {node.name}")


@emitter("ReverseSequence")
def reverse_sequence(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.reverse_sequence", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("TensorScatter")
def tensor_scatter(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(3)]
    call(ctx, node, "rt.tensor_scatter", args, attr_args(node))


@emitter("CenterCropPad")
def center_crop_pad(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.center_crop_pad", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("LpPool")
def lp_pool(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.lp_pool", [_x(ctx, node)], attr_args(node))


@emitter("SwiGLU")
def swiglu(node: Node, ctx: Context) -> None:
    ctx.need("burn.tensor", "activation")
    a, b = _x(ctx, node), _x(ctx, node, 1)
    alpha = float(node.attr("alpha", 1.0))
    ctx.assign(node, f"{a} * activation.sigmoid({a} * {alpha!r}) * {b}")


@emitter("HannWindow", "HammingWindow", "BlackmanWindow")
def window(node: Node, ctx: Context) -> None:
    kind = node.op_type[: -len("Window")].lower()
    dtype = onnx_dtype_name(int(node.attr("output_datatype", 1)))
    args = [repr(kind), _x(ctx, node), f"{_x(ctx, node)}.device()", repr(dtype)]
    call(ctx, node, "rt.window", args, f"periodic={int(node.attr('periodic', 1))}")


@emitter("If")
def if_(node: Node, ctx: Context) -> None:
    """Both branches as Python `if`/`else` blocks on the condition's value."""
    from burn.onnx.codegen import emit

    results = [ctx.fresh("if_out") for _ in node.outputs]
    ctx.line(f"if bool({ctx.x(node.inputs[0])}.any()):", f"If {node.name}")
    for key, keyword in (("then_branch", None), ("else_branch", "else:")):
        if keyword:
            ctx.line(keyword)
        sub = graph_from_proto(node.attr(key), ctx.graph.source, ctx.graph.opset, ctx.graph.values)
        fold_constants(sub)
        saved_names, saved_ranks = dict(ctx.names), dict(ctx.ranks)
        saved_consts = ctx.graph.constants
        ctx.graph.constants = {**saved_consts, **sub.constants}
        ctx.indent += "    "
        start = len(ctx.lines)
        for inner in sub.nodes:
            emit(inner, ctx)
        for var, out in zip(results, sub.outputs, strict=True):
            ctx.line(f"{var} = {ctx.x(out.name)}")
        if len(ctx.lines) == start:
            ctx.line("pass")
        ctx.indent = ctx.indent[:-4]
        ctx.graph.constants = saved_consts
        ctx.names, ctx.ranks = saved_names, saved_ranks
    for i, var in enumerate(results):
        ctx.bind(node.outputs[i], var, ctx.graph.info(node.outputs[i]).rank)


@emitter("Constant")
def constant(node: Node, ctx: Context) -> None:
    """A constant left in a subgraph: its value joins the constants, written where it is used."""
    from burn.onnx.passes import _evaluate

    values = _evaluate(node, ctx.graph)
    if values is None:
        from burn.onnx.errors import OnnxImportError

        raise OnnxImportError(f"{ctx.graph.source}: cannot read constant {node.name!r}")
    ctx.graph.constants[node.outputs[0]] = values[0]


@emitter("QuantizeLinear", "DequantizeLinear")
def quantize(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(3)]
    attrs = {k: v for k, v in node.attrs.items()}
    if "output_dtype" in attrs:
        attrs["output_dtype"] = (
            onnx_dtype_name(int(attrs["output_dtype"])) if attrs["output_dtype"] else None
        )
        if attrs["output_dtype"] is None:
            del attrs["output_dtype"]
    quantized = ctx.graph.info(node.outputs[0]).elem_type
    if node.op_type == "QuantizeLinear" and quantized:
        attrs["quantized_type"] = elem_name(quantized)  # the range and held dtype follow it
        attrs.pop("output_dtype", None)
    extra = ", ".join(f"{k}={v!r}" for k, v in attrs.items())
    fn = "rt.quantize_linear" if node.op_type == "QuantizeLinear" else "rt.dequantize_linear"
    call(ctx, node, fn, args, extra)


@emitter("DynamicQuantizeLinear")
def dynamic_quantize(node: Node, ctx: Context) -> None:
    ctx.assign_many(node, f"rt.dynamic_quantize_linear({_x(ctx, node)})")


@emitter("SequenceConstruct")
def sequence_construct(node: Node, ctx: Context) -> None:
    ctx.assign(node, "[" + ", ".join(ctx.x(n) for n in node.inputs) + "]")


@emitter("SequenceEmpty")
def sequence_empty(node: Node, ctx: Context) -> None:
    ctx.assign(node, "[]")


@emitter("SequenceLength")
def sequence_length(node: Node, ctx: Context) -> None:
    seq = _x(ctx, node)
    ctx.assign(node, f"rt.tensor_of([len({seq})], {seq}[0] if {seq} else None)", 0)


@emitter("SequenceAt")
def sequence_at(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.sequence_at", [_x(ctx, node), value(ctx, node, 1)])


@emitter("SequenceInsert")
def sequence_insert(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), value(ctx, node, 2)]
    call(ctx, node, "rt.sequence_insert", args)


@emitter("SequenceErase")
def sequence_erase(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.sequence_erase", [_x(ctx, node), value(ctx, node, 1)])


@emitter("SplitToSequence")
def split_to_sequence(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.split_to_sequence", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("ConcatFromSequence")
def concat_from_sequence(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.concat_from_sequence", [_x(ctx, node)], attr_args(node))


@emitter("GridSample")
def grid_sample(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.grid_sample", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("AffineGrid")
def affine_grid(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.affine_grid", [_x(ctx, node), value(ctx, node, 1)], attr_args(node))


@emitter("RotaryEmbedding")
def rotary_embedding(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(4)]
    call(ctx, node, "rt.rotary_embedding", args, attr_args(node))


@emitter("MatMulInteger")
def matmul_integer(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.matmul_integer", [_x(ctx, node, i) for i in range(4)])


@emitter("ConvInteger")
def conv_integer(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.conv_integer", [_x(ctx, node, i) for i in range(4)], attr_args(node))


@emitter("Col2Im")
def col2im(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), value(ctx, node, 1), value(ctx, node, 2)]
    call(ctx, node, "rt.col2im", args, attr_args(node))


@emitter("MeanVarianceNormalization")
def mean_variance_normalization(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.mean_variance_normalization", [_x(ctx, node)], attr_args(node))


def _dtype_attr(node: Node, default: str) -> str:
    elem = node.attr("dtype")
    return onnx_dtype_name(int(elem)) if elem is not None else default


@emitter("RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike")
def random_op(node: Node, ctx: Context) -> None:
    normal = node.op_type.startswith("RandomNormal")
    fn = "rt.random_normal" if normal else "rt.random_uniform"
    keys = ("mean", "scale") if normal else ("low", "high")
    params = ", ".join(f"{k}={float(node.attr(k)):g}" for k in keys if node.attr(k) is not None)
    if node.op_type.endswith("Like"):
        x = _x(ctx, node)
        from burn.onnx.codegen import burn_dtype

        dtype = _dtype_attr(node, burn_dtype(ctx.dtype(node.inputs[0])) or "f32")
        args = [f"{x}.dims()", f"{x}.device()", repr(dtype)]
    else:
        ctx.uses_device = True
        args = [repr(list(node.attr("shape"))), "device", repr(_dtype_attr(node, "f32"))]
    call(ctx, node, fn, args, params)


@emitter("Bernoulli")
def bernoulli(node: Node, ctx: Context) -> None:
    dtype = node.attr("dtype")
    extra = repr(onnx_dtype_name(int(dtype))) if dtype is not None else "None"
    call(ctx, node, "rt.bernoulli", [_x(ctx, node), extra])


@emitter("Multinomial")
def multinomial(node: Node, ctx: Context) -> None:
    dtype = onnx_dtype_name(int(node.attr("dtype", 6)))  # int32 by default
    size = int(node.attr("sample_size", 1))
    call(ctx, node, "rt.multinomial", [_x(ctx, node), str(size), repr(dtype)])


@emitter("QLinearMatMul")
def qlinear_matmul(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.qlinear_matmul", [_x(ctx, node, i) for i in range(8)])


@emitter("QLinearConv")
def qlinear_conv(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.qlinear_conv", [_x(ctx, node, i) for i in range(9)], attr_args(node))


@emitter("BitCast")
def bitcast(node: Node, ctx: Context) -> None:
    from burn.onnx.graph import elem_dtype

    elem = int(node.attr("to"))
    numpy_dtype = elem_dtype(elem)
    to = onnx_dtype_name(elem)
    narrow = is_narrow(elem) or is_narrow(ctx.graph.info(node.inputs[0]).elem_type)
    if numpy_dtype is None or to is None or narrow:  # a narrow type's bits are not held
        from burn.onnx.errors import OnnxImportError

        raise OnnxImportError(
            f"{ctx.graph.source}: node {node.name!r} (BitCast) casts to an element type burn "
            "does not compute in"
        )
    source = ctx.dtype(node.inputs[0])
    args = [_x(ctx, node), repr(to), repr(numpy_dtype.name)]
    if source is not None:
        args.append(repr(source.name))
    call(ctx, node, "rt.bitcast", args)


@emitter("Optional")
def optional(node: Node, ctx: Context) -> None:
    """An optional value is the value itself, or None when empty."""
    ctx.assign(node, _x(ctx, node) if ctx.has(node, 0) else "None")


@emitter("OptionalGetElement")
def optional_get(node: Node, ctx: Context) -> None:
    ctx.assign(node, _x(ctx, node), ctx.rank(node.inputs[0]))


@emitter("OptionalHasElement")
def optional_has(node: Node, ctx: Context) -> None:
    x = _x(ctx, node)
    ctx.assign(node, f"rt.const([{x} is not None], 'bool', None)", 0)


@emitter("CausalConvWithState", "LinearAttention")
def stateful(node: Node, ctx: Context) -> None:
    count = 4 if node.op_type == "CausalConvWithState" else 6
    fn = "rt.causal_conv_with_state" if count == 4 else "rt.linear_attention"
    args = [_x(ctx, node, i) for i in range(count)]
    expr = f"{fn}({', '.join(args + ([attr_args(node)] if node.attrs else []))})"
    names = [ctx.out(node, i) if n else "_" for i, n in enumerate(node.outputs)]
    names += ["_"] * (2 - len(names))
    ctx.line(f"{', '.join(names)} = {expr}", f"{node.op_type} {node.name}")


@emitter("DeformConv")
def deform_conv(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(5)]
    call(ctx, node, "rt.deform_conv", args, attr_args(node))


@emitter("NonMaxSuppression")
def non_max_suppression(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, 0), _x(ctx, node, 1)] + [value(ctx, node, i) for i in range(2, 5)]
    call(ctx, node, "rt.non_max_suppression", args, attr_args(node))


@emitter("DFT")
def dft(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), value(ctx, node, 1)]
    if "axis" in node.attrs:  # opset 17: the axis is an attribute
        args.append(repr(int(node.attr("axis"))))
    else:
        args.append(value(ctx, node, 2))
    default_axis = 1 if ctx.graph.opset < 20 else -2
    attrs = attr_args(node, ["inverse", "onesided"])
    attrs = (attrs + ", " if attrs else "") + f"opset_axis={default_axis}"
    call(ctx, node, "rt.dft", args, attrs)


@emitter("STFT")
def stft(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), value(ctx, node, 1), _x(ctx, node, 2), value(ctx, node, 3)]
    call(ctx, node, "rt.stft", args, f"onesided={int(node.attr('onesided', 1))}")


@emitter("ai.onnx.ml:Binarizer")
def binarizer(node: Node, ctx: Context) -> None:
    x = _x(ctx, node)
    threshold = float(node.attr("threshold", 0.0))
    ctx.assign(node, f"{x}.zeros_like().mask_fill({x}.greater_elem({threshold!r}), 1.0)")


@emitter("ai.onnx.ml:ArrayFeatureExtractor")
def array_feature_extractor(node: Node, ctx: Context) -> None:
    """The last axis indexed by the (flattened) indices; a vector input becomes one row."""
    x, idx = _x(ctx, node), _x(ctx, node, 1)
    rank = ctx.rank(node.inputs[0])
    flat = f"{idx}.reshape([{idx}.num_elements()])"
    if rank == 1:
        ctx.assign(node, f"{x}.select(0, {flat}).reshape([1, -1])", 2)
    else:
        ctx.assign(node, f"{x}.select({x}.rank() - 1, {flat})")


@emitter("MelWeightMatrix")
def mel_weight_matrix(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(5)]
    dtype = onnx_dtype_name(int(node.attr("output_datatype", 1)))
    call(ctx, node, "rt.mel_weight_matrix", args, f"dtype={dtype!r}")


@emitter("TfIdfVectorizer")
def tfidf_vectorizer(node: Node, ctx: Context) -> None:
    if node.attr("pool_strings"):
        from burn.onnx.errors import OnnxImportError

        raise OnnxImportError(
            f"{ctx.graph.source}: node {node.name!r} (TfIdfVectorizer) uses a string pool; "
            "burn computes no strings"
        )
    names = ["max_gram_length", "max_skip_count", "min_gram_length", "mode", "ngram_counts"]
    names += ["ngram_indexes", "pool_int64s", "weights"]
    attrs = attr_args(node, names)
    call(
        ctx,
        node,
        "rt.tfidf_vectorizer",
        [_x(ctx, node)],
        f"{attrs}, rank={ctx.rank(node.inputs[0])}",
    )


@emitter("RoiAlign")
def roi_align(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(3)]
    call(ctx, node, "rt.roi_align", args, attr_args(node))


@emitter("MaxRoiPool")
def max_roi_pool(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.max_roi_pool", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("ImageDecoder")
def image_decoder(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.image_decoder", [_x(ctx, node)], attr_args(node))


@emitter("ai.onnx.ml:TreeEnsemble")
def tree_ensemble(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.tree_ensemble", [_x(ctx, node)], attr_args(node))
