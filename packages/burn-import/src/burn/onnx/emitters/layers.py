"""Layers: convolutions, pools, normalizations and Linear become `burn.nn` fields when their
weights are constants (so they train and save like any module); otherwise, as in the backend
test suite where weights are inputs, they run through the functional helpers."""

from __future__ import annotations

import numpy as np
from burn.onnx.codegen import Context, emitter
from burn.onnx.emitters.common import attr_args, call, value
from burn.onnx.graph import Node


def _x(ctx: Context, node: Node, i: int = 0) -> str:
    return ctx.x(node.inputs[i])


def _symmetric_pads(node: Node, n: int) -> list[int] | None:
    """Per-dim padding when the node pads both sides alike (and not SAME), else None."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad == "VALID":
        return [0] * n
    if auto_pad != "NOTSET":
        return None
    pads = list(node.attr("pads", [0] * (2 * n)))
    return pads[:n] if pads[:n] == pads[n:] else None


def _padding(n: int, pads: list[int], ctx: Context) -> str:
    cls = f"PaddingConfig{n}d"
    ctx.need("burn.nn", cls)
    if not any(pads):
        return f"{cls}.Valid"
    return f"{cls}.Explicit({', '.join(str(p) for p in pads)})"


@emitter("Conv")
def conv(node: Node, ctx: Context) -> None:
    w = ctx.const(node.inputs[1])
    bias = ctx.const(node.inputs[2]) if ctx.has(node, 2) else None
    n = w.ndim - 2 if w is not None else 0
    pads = _symmetric_pads(node, n) if w is not None else None
    if w is None or pads is None or not 1 <= n <= 3 or (ctx.has(node, 2) and bias is None):
        args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
        call(ctx, node, "rt.conv", args, attr_args(node))
        return
    groups = int(node.attr("group", 1))
    c_out, c_in = w.shape[0], w.shape[1] * groups
    kernel = list(w.shape[2:])
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    cls = f"Conv{n}dConfig"
    ctx.need("burn.nn", cls)
    if n == 1:
        build = f"{cls}({c_in}, {c_out}, {kernel[0]})"
        strides, dilations = strides[0], dilations[0]
        default = 1
    else:
        build = f"{cls}([{c_in}, {c_out}], {kernel})"
        default = [1] * n
    if strides != default:
        build += f".with_stride({strides})"
    if dilations != default:
        build += f".with_dilation({dilations})"
    if groups != 1:
        build += f".with_groups({groups})"
    if any(pads):
        build += f".with_padding({_padding(n, pads, ctx)})"
    if bias is None:
        build += ".with_bias(False)"
    weights = {"weight": w}
    if bias is not None:
        weights["bias"] = bias
    field = ctx.layer(f"conv{n}d", f"Conv{n}d", build + ".init(device)", weights)
    ctx.assign(node, f"self.{field}({_x(ctx, node)})")


@emitter("ConvTranspose")
def conv_transpose(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
    call(ctx, node, "rt.conv_transpose", args, attr_args(node))


@emitter("Linear")
def linear(node: Node, ctx: Context) -> None:
    w = node.attr("weight")
    bias = node.attr("bias")
    build = f"LinearConfig({w.shape[0]}, {w.shape[1]})"
    ctx.need("burn.nn", "LinearConfig")
    if bias is None:
        build += ".with_bias(False)"
    weights = {"weight": w}
    if bias is not None:
        weights["bias"] = bias
    field = ctx.layer("linear", "Linear", build + ".init(device)", weights)
    ctx.assign(node, f"self.{field}({_x(ctx, node)})")


@emitter("Gemm")
def gemm(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
    call(ctx, node, "rt.gemm", args, attr_args(node))


@emitter("MatMul")
def matmul(node: Node, ctx: Context) -> None:
    ra, rb = ctx.rank(node.inputs[0]), ctx.rank(node.inputs[1])
    if ra == rb == 2:
        ctx.assign(node, f"{_x(ctx, node)}.matmul({_x(ctx, node, 1)})")
    else:
        call(ctx, node, "rt.matmul", [_x(ctx, node), _x(ctx, node, 1)])


@emitter("BatchNormalization")
def batch_norm(node: Node, ctx: Context) -> None:
    stats = [ctx.const(n) for n in node.inputs[1:5]]
    training = int(node.attr("training_mode", 0)) or len([o for o in node.outputs if o]) > 1
    if all(s is not None for s in stats) and not training:
        scale, bias, mean, var = stats
        eps = float(node.attr("epsilon", 1e-5))
        momentum = 1.0 - float(node.attr("momentum", 0.9))
        build = f"BatchNormConfig({scale.shape[0]})"
        if not np.isclose(eps, 1e-5):
            build += f".with_epsilon({eps!r})"
        if not np.isclose(momentum, 0.1):
            build += f".with_momentum({momentum!r})"
        ctx.need("burn.nn", "BatchNormConfig")
        weights = {"gamma": scale, "beta": bias, "running_mean": mean, "running_var": var}
        field = ctx.layer("batch_norm", "BatchNorm", build + ".init(device)", weights)
        ctx.assign(node, f"self.{field}({_x(ctx, node)})")
        return
    args = [_x(ctx, node, i) for i in range(5)]
    attrs = attr_args(node, ["epsilon", "momentum"])
    if training:
        attrs = (attrs + ", " if attrs else "") + "training_mode=1"
    call(ctx, node, "rt.batch_norm", args, attrs, outputs=3 if training else 1)


@emitter("LayerNormalization")
def layer_norm(node: Node, ctx: Context) -> None:
    scale = ctx.const(node.inputs[1])
    bias = ctx.const(node.inputs[2]) if ctx.has(node, 2) else None
    rank = ctx.rank(node.inputs[0])
    axis = int(node.attr("axis", -1))
    last = rank is not None and axis % rank == rank - 1
    single = len([o for o in node.outputs if o]) == 1
    if scale is not None and scale.ndim == 1 and bias is not None and last and single:
        eps = float(node.attr("epsilon", 1e-5))
        build = f"LayerNormConfig({scale.shape[0]})"
        if not np.isclose(eps, 1e-5, rtol=0, atol=1e-12):
            build += f".with_epsilon({eps!r})"
        ctx.need("burn.nn", "LayerNormConfig")
        field = ctx.layer(
            "layer_norm", "LayerNorm", build + ".init(device)", {"gamma": scale, "beta": bias}
        )
        ctx.assign(node, f"self.{field}({_x(ctx, node)})")
        return
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
    call(ctx, node, "rt.layer_norm", args, attr_args(node), outputs=3)


@emitter("RMSNormalization")
def rms_norm(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.rms_norm", [_x(ctx, node), _x(ctx, node, 1)], attr_args(node))


@emitter("InstanceNormalization")
def instance_norm(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(3)]
    call(ctx, node, "rt.instance_norm", args, attr_args(node))


@emitter("GroupNormalization")
def group_norm(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) for i in range(3)]
    call(ctx, node, "rt.group_norm", args, attr_args(node))


@emitter("LRN")
def lrn(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.lrn", [_x(ctx, node)], attr_args(node))


def _pool_layer(node: Node, ctx: Context, kind: str) -> bool:
    kernel = list(node.attr("kernel_shape", []))
    dtype = ctx.dtype(node.inputs[0])
    if dtype is None or dtype.kind != "f":
        return False
    if len(kernel) != 2 or node.attr("ceil_mode", 0) or len(node.outputs) > 1:
        return False
    pads = _symmetric_pads(node, 2)
    dilations = list(node.attr("dilations", [1, 1]))
    if pads is None or (kind == "Avg" and dilations != [1, 1]):
        return False
    if any(p > k // 2 for p, k in zip(pads, kernel, strict=True)):
        return False
    strides = list(node.attr("strides", [1, 1]))
    cls = f"{kind}Pool2dConfig"
    ctx.need("burn.nn", cls)
    build = f"{cls}({kernel})"
    if strides != [1, 1]:
        build += f".with_strides({strides})"
    if any(pads):
        build += f".with_padding({_padding(2, pads, ctx)})"
        if kind == "Avg" and not node.attr("count_include_pad", 0):
            build += ".with_count_include_pad(False)"
    if kind == "Max" and dilations != [1, 1]:
        build += f".with_dilation({dilations})"
    field = ctx.layer(f"{kind.lower()}_pool2d", f"{kind}Pool2d", build + ".init()", {})
    ctx.assign(node, f"self.{field}({_x(ctx, node)})")
    return True


@emitter("MaxPool")
def max_pool(node: Node, ctx: Context) -> None:
    if len([o for o in node.outputs if o]) > 1:
        ctx.assign_many(node, f"rt.max_pool_with_indices({_x(ctx, node)}, {attr_args(node)})")
        return
    if not _pool_layer(node, ctx, "Max"):
        call(ctx, node, "rt.max_pool", [_x(ctx, node)], attr_args(node))


@emitter("AveragePool")
def average_pool(node: Node, ctx: Context) -> None:
    if not _pool_layer(node, ctx, "Avg"):
        call(ctx, node, "rt.average_pool", [_x(ctx, node)], attr_args(node))


@emitter("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def global_pool(node: Node, ctx: Context) -> None:
    if node.op_type == "GlobalAveragePool" and ctx.rank(node.inputs[0]) == 4:
        ctx.need("burn.nn", "AdaptiveAvgPool2dConfig")
        field = ctx.layer(
            "adaptive_avg_pool2d", "AdaptiveAvgPool2d", "AdaptiveAvgPool2dConfig([1, 1]).init()", {}
        )
        ctx.assign(node, f"self.{field}({_x(ctx, node)})")
        return
    kind = {"GlobalAveragePool": "avg", "GlobalMaxPool": "max", "GlobalLpPool": "lp"}[node.op_type]
    extra = f"p={int(node.attr('p', 2))}" if kind == "lp" else ""
    call(ctx, node, "rt.global_pool", [_x(ctx, node), repr(kind)], extra)


@emitter("Resize")
def resize(node: Node, ctx: Context) -> None:
    if len(node.inputs) == 2:  # opset 10: (X, scales)
        args = [_x(ctx, node), "None", value(ctx, node, 1)]
    else:
        args = [_x(ctx, node)] + [value(ctx, node, i) for i in range(1, 4)]
    call(ctx, node, "rt.resize", args, attr_args(node))


@emitter("Upsample")
def upsample(node: Node, ctx: Context) -> None:
    scales = repr(list(node.attr("scales"))) if "scales" in node.attrs else value(ctx, node, 1)
    mode = node.attr("mode", "nearest")
    mode = "linear" if mode in ("linear", "bilinear") else mode
    attrs = f"mode={mode!r}, coordinate_transformation_mode='asymmetric', nearest_mode='floor'"
    call(ctx, node, "rt.resize", [_x(ctx, node), "None", scales], attrs)


@emitter("NegativeLogLikelihoodLoss")
def nll_loss(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
    call(ctx, node, "rt.nll_loss", args, attr_args(node))


@emitter("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), _x(ctx, node, 2) if ctx.has(node, 2) else "None"]
    expr = f"rt.softmax_cross_entropy({', '.join(args)}, {attr_args(node)})".replace(", )", ")")
    if len([o for o in node.outputs if o]) == 2:
        ctx.assign_many(node, expr)
    else:
        ctx.assign(node, expr + "[0]")


@emitter("Attention")
def attention(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node, i) if ctx.has(node, i) else "None" for i in range(7)]
    while len(args) > 3 and args[-1] == "None":
        args.pop()
    outputs = [o for o in node.outputs]
    expr = f"rt.attention({', '.join(args + ([attr_args(node)] if node.attrs else []))})"
    if len(outputs) == 1:
        ctx.assign(node, expr + "[0]")
    else:
        names = [ctx.out(node, i) if n else "_" for i, n in enumerate(outputs)]
        names += ["_"] * (4 - len(names))
        ctx.line(f"{', '.join(names)} = {expr}", f"{node.op_type} {node.name}")


@emitter("LSTM", "GRU", "RNN")
def recurrent(node: Node, ctx: Context) -> None:
    count = {"LSTM": 8, "GRU": 6, "RNN": 6}[node.op_type]
    args = [_x(ctx, node, i) if ctx.has(node, i) else "None" for i in range(count)]
    while args[-1] == "None":
        args.pop()
    fn = f"rt.{node.op_type.lower()}"
    expr = f"{fn}({', '.join(args + ([attr_args(node)] if node.attrs else []))})"
    names = [ctx.out(node, i) if n else "_" for i, n in enumerate(node.outputs)]
    names += ["_"] * ((3 if node.op_type == "LSTM" else 2) - len(names))
    ctx.line(f"{', '.join(names)} = {expr}", f"{node.op_type} {node.name}")


@emitter("MaxUnpool")
def max_unpool(node: Node, ctx: Context) -> None:
    args = [_x(ctx, node), _x(ctx, node, 1), value(ctx, node, 2) if ctx.has(node, 2) else "None"]
    call(ctx, node, "rt.max_unpool", args, attr_args(node))
