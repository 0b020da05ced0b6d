"""Element-wise ops: arithmetic, comparisons, logic, activations, casts."""

from __future__ import annotations

import numpy as np
from burn.onnx.codegen import Context, burn_dtype, emitter, literal
from burn.onnx.emitters.common import attr_args, call, onnx_dtype_name, small_ints, value
from burn.onnx.errors import OnnxImportError
from burn.onnx.graph import Node, elem_name, is_narrow

_BINARY = {
    "Add": ("+", "rt.add"),
    "Sub": ("-", "rt.sub"),
    "Mul": ("*", "rt.mul"),
    "Div": ("/", "rt.div"),
}


def _number(const) -> str:
    """Python source for a one-element constant: a float (NaN and infinities included) or an
    int."""
    value = const.reshape(-1)[:1]
    return literal(value.astype(np.float64) if const.dtype.kind == "f" else value)[1:-1]


def _eff(rank):
    return None if rank is None else max(rank, 1)


def _shape_arithmetic(node: Node, ctx: Context) -> bool:
    """Add, Sub, Mul or Div of a list-held shape with a one-value int constant or another
    list-held shape (of one value, or of the same known length): a list again. Integer
    division truncates toward zero, as ONNX's does."""
    a, b = node.inputs[0], node.inputs[1]
    if ctx.shape_var(a) is None and ctx.shape_var(b) is None:
        return False
    terms, lengths = [], []
    for name in (a, b):
        held = ctx.shape_var(name)
        if held is not None:
            one = ctx.rank(name) == 0 or ctx.shape_length(name) == 1
            terms.append(f"{held}[0]" if one else None)
            lengths.append(1 if one else ctx.shape_length(name))
            continue
        values = small_ints(ctx, name)
        if values is None or len(values) != 1 or (node.op_type == "Div" and values == [0]):
            return False  # (a division by zero is left to the tensor path)
        terms.append(str(values[0]))
        lengths.append(1)
    if lengths[0] != 1 and lengths[1] != 1 and (lengths[0] is None or lengths[0] != lengths[1]):
        return False
    symbol = _BINARY[node.op_type][0]

    def apply(x: str, y: str) -> str:
        return f"int({x} / {y})" if symbol == "/" else f"{x} {symbol} {y}"

    if lengths == [1, 1]:
        expr = f"[{apply(terms[0], terms[1])}]"
    elif lengths[1] == 1:
        expr = f"[{apply('v', terms[1])} for v in {ctx.shape_var(a)}]"
    elif lengths[0] == 1:
        expr = f"[{apply(terms[0], 'v')} for v in {ctx.shape_var(b)}]"
    else:
        pairs = f"zip({ctx.shape_var(a)}, {ctx.shape_var(b)}, strict=True)"
        expr = f"[{apply('u', 'v')} for u, v in {pairs}]"
    rank = max(ctx.rank(a) or 0, ctx.rank(b) or 0)
    ctx.assign_shape(node, expr, rank, None if None in lengths else max(lengths))
    return True


@emitter("Add", "Sub", "Mul", "Div")
def binary(node: Node, ctx: Context) -> None:
    if _shape_arithmetic(node, ctx):
        return
    symbol, helper = _BINARY[node.op_type]
    a, b = node.inputs[0], node.inputs[1]
    ra, rb = _eff(ctx.rank(a)), _eff(ctx.rank(b))
    const = ctx.const(b)
    is_bool = ctx.dtype(a) is not None and ctx.dtype(a).kind == "b"
    if (
        const is not None
        and const.size == 1
        and ra is not None
        and rb is not None
        and rb <= ra
        and not is_bool
    ):
        ctx.assign(node, f"{ctx.x(a)} {symbol} {_number(const)}")
        return
    left = ctx.const(a)
    if (
        left is not None
        and left.size == 1
        and left.dtype.kind == "f"
        and ra is not None
        and rb is not None
        and ra <= rb
    ):  # a float constant on the left: `1.0 / x` (no tensor made for it)
        ctx.assign(node, f"{_number(left)} {symbol} {ctx.x(b)}")
        return
    if ra is not None and ra == rb and not is_bool:
        ctx.assign(node, f"{ctx.x(a)} {symbol} {ctx.x(b)}")
        return
    ctx.assign(node, f"{helper}({ctx.x(a)}, {ctx.x(b)})")


@emitter("Pow")
def pow_(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.pow_", [ctx.x(node.inputs[0]), ctx.x(node.inputs[1])])


@emitter("Mod")
def mod(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.mod", [ctx.x(node.inputs[0]), ctx.x(node.inputs[1])], attr_args(node))


@emitter("Max", "Min", "Sum", "Mean")
def variadic(node: Node, ctx: Context) -> None:
    args = [repr(node.op_type.lower())] + [ctx.x(n) for n in node.inputs if n]
    call(ctx, node, "rt.variadic", args)


_COMPARE = {
    "Equal": "equal",
    "Greater": "greater",
    "Less": "lower",
    "GreaterOrEqual": "greater_equal",
    "LessOrEqual": "lower_equal",
}


@emitter(*_COMPARE)
def compare(node: Node, ctx: Context) -> None:
    if node.op_type == "Equal" and any(ctx.is_string(n) for n in node.inputs[:2]):
        ctx.uses_device = True  # strings compare on the host; the answer is a bool tensor
        a, b = ctx.x(node.inputs[0]), ctx.x(node.inputs[1])
        ctx.assign(node, f"rt.string_equal({a}, {b}, device=device)")
        return
    args = [repr(_COMPARE[node.op_type]), ctx.x(node.inputs[0]), ctx.x(node.inputs[1])]
    call(ctx, node, "rt.compare", args)


@emitter("And", "Or", "Xor")
def logical(node: Node, ctx: Context) -> None:
    args = [repr(node.op_type.lower()), ctx.x(node.inputs[0]), ctx.x(node.inputs[1])]
    call(ctx, node, "rt.logical", args)


@emitter("Not")
def not_(node: Node, ctx: Context) -> None:
    ctx.assign(node, f"{ctx.x(node.inputs[0])}.bool_not()")


@emitter("BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot")
def bitwise(node: Node, ctx: Context) -> None:
    args = [repr(node.op_type[7:].lower())] + [ctx.x(n) for n in node.inputs]
    call(ctx, node, "rt.bitwise", args)


@emitter("BitShift")
def bitshift(node: Node, ctx: Context) -> None:
    args = [ctx.x(node.inputs[0]), ctx.x(node.inputs[1])]
    call(ctx, node, "rt.bitshift", args, attr_args(node))


# Unary ops that are one Tensor method.
_METHODS = {
    "Abs": "abs",
    "Neg": "neg",
    "Exp": "exp",
    "Log": "log",
    "Sqrt": "sqrt",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Tanh": "tanh",
    "Erf": "erf",
    "Floor": "floor",
    "Ceil": "ceil",
    "Reciprocal": "recip",
    "Sign": "sign",
    "IsNaN": "is_nan",
}
# Unary ops that are one function of `burn.tensor.activation`.
_ACTIVATIONS = {"Relu": "relu", "Sigmoid": "sigmoid", "Softplus": "softplus", "Mish": "mish"}
# Unary ops composed in the runtime helpers (with the node's attributes).
_HELPERS = {
    "Elu": "rt.elu",
    "Selu": "rt.selu",
    "Celu": "rt.celu",
    "Gelu": "rt.gelu",
    "HardSwish": "rt.hard_swish",
    "Shrink": "rt.shrink",
    "Softsign": "rt.softsign",
    "ThresholdedRelu": "rt.thresholded_relu",
    "Sinh": "rt.sinh",
    "Cosh": "rt.cosh",
    "Asin": "rt.asin",
    "Acos": "rt.acos",
    "Atan": "rt.atan",
    "Asinh": "rt.asinh",
    "Acosh": "rt.acosh",
    "Atanh": "rt.atanh",
    "Round": "rt.round_even",
    "IsInf": "rt.is_inf",
}


@emitter(*_METHODS)
def method(node: Node, ctx: Context) -> None:
    ctx.assign(node, f"{ctx.x(node.inputs[0])}.{_METHODS[node.op_type]}()")


@emitter(*_ACTIVATIONS)
def activation(node: Node, ctx: Context) -> None:
    ctx.need("burn.tensor", "activation")
    ctx.assign(node, f"activation.{_ACTIVATIONS[node.op_type]}({ctx.x(node.inputs[0])})")


@emitter(*_HELPERS)
def helper(node: Node, ctx: Context) -> None:
    call(ctx, node, _HELPERS[node.op_type], [ctx.x(node.inputs[0])], attr_args(node))


@emitter("LeakyRelu")
def leaky_relu(node: Node, ctx: Context) -> None:
    ctx.need("burn.tensor", "activation")
    alpha = float(node.attr("alpha", 0.01))
    ctx.assign(node, f"activation.leaky_relu({ctx.x(node.inputs[0])}, {alpha!r})")


@emitter("HardSigmoid")
def hard_sigmoid(node: Node, ctx: Context) -> None:
    ctx.need("burn.tensor", "activation")
    alpha, beta = float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5))
    ctx.assign(node, f"activation.hard_sigmoid({ctx.x(node.inputs[0])}, {alpha!r}, {beta!r})")


@emitter("Swish")
def swish(node: Node, ctx: Context) -> None:
    ctx.need("burn.tensor", "activation")
    x = ctx.x(node.inputs[0])
    alpha = float(node.attr("alpha", 1.0))
    ctx.assign(node, f"{x} * activation.sigmoid({x} * {alpha!r})")


@emitter("PRelu")
def prelu(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.prelu", [ctx.x(node.inputs[0]), ctx.x(node.inputs[1])])


@emitter("Clip")
def clip(node: Node, ctx: Context) -> None:
    """A float tensor between constant bounds is `x.clamp(lo, hi)` (or `clamp_min`,
    `clamp_max`); other clips (int tensors, bounds computed by the graph, NaN bounds, or min
    above max, where ONNX gives max everywhere) go through `rt.clip`."""
    args = [ctx.x(node.inputs[0])]
    if "min" in node.attrs or "max" in node.attrs:  # opset < 11
        bounds = [node.attr("min"), node.attr("max")]
        args += [repr(bounds[0]), repr(bounds[1])]
    else:
        bounds = [_float_bound(ctx, node, i) for i in (1, 2)]
        args += [value(ctx, node, 1), value(ctx, node, 2)]
    dtype = ctx.dtype(node.inputs[0])
    lo, hi = (None if b is None else float(b) for b in bounds)
    plain = dtype is not None and dtype.kind == "f" and not (lo is None and hi is None)
    plain = plain and not any(b is not None and b != b for b in (lo, hi))  # NaN bounds
    if plain and (lo is None or hi is None or lo <= hi):
        x = args[0]
        text = {v: _number(np.asarray(v)) for v in (lo, hi) if v is not None}
        if lo is not None and hi is not None:
            ctx.assign(node, f"{x}.clamp({text[lo]}, {text[hi]})")
        elif lo is not None:
            ctx.assign(node, f"{x}.clamp_min({text[lo]})")
        else:
            ctx.assign(node, f"{x}.clamp_max({text[hi]})")
        return
    call(ctx, node, "rt.clip", args)


def _float_bound(ctx: Context, node: Node, i: int):
    """Clip's bound `i` as a number when absent (None) or a one-element constant; else NaN,
    which keeps the general path."""
    if not ctx.has(node, i):
        return None
    array = ctx.const(node.inputs[i])
    return float(array.reshape(-1)[0]) if array is not None and array.size == 1 else float("nan")


def _cast_to(elem_type: int, node: Node, ctx: Context) -> str:
    name = onnx_dtype_name(elem_type)
    if name is None:
        raise OnnxImportError(
            f"{ctx.graph.source}: node {node.name!r} ({node.op_type}) casts to an element type "
            "burn does not compute in"
        )
    return name


def _narrow_cast(node: Node, ctx: Context, elem: int) -> bool:
    """A cast to or between the narrow element types (see `burn.onnx.runtime.narrow`): the
    values round on the host. A cast out of one to a wider type needs nothing special."""
    source = ctx.graph.info(node.inputs[0]).elem_type
    if not is_narrow(elem):
        return False
    args = [ctx.x(node.inputs[0]), repr(elem_name(elem))]
    if is_narrow(source):
        args.append(f"source={elem_name(source)!r}")
    if not int(node.attr("saturate", 1)):
        args.append("saturate=0")
    if node.attr("round_mode", "up") != "up":
        args.append(f"round_mode={node.attr('round_mode')!r}")
    call(ctx, node, "rt.narrow", args)
    return True


@emitter("Cast")
def cast(node: Node, ctx: Context) -> None:
    if _narrow_cast(node, ctx, int(node.attr("to"))):
        return
    to = _cast_to(int(node.attr("to")), node, ctx)
    held = ctx.shape_var(node.inputs[0])
    if held is not None and to == "i64":
        ctx.alias(node, node.inputs[0])  # a shape held as ints stays one
        return
    if held is not None and to in ("f16", "bf16", "f32", "f64", "i32", "i16", "i8"):
        ctx.uses_device = True  # the ints become a tensor of the target type directly
        ctx.assign(node, f"rt.const({held}, {to!r}, device)", ctx.rank(node.inputs[0]))
        return
    if held is None and burn_dtype(ctx.dtype(node.inputs[0])) == to:
        ctx.alias(node, node.inputs[0])  # already of that type: nothing to do
        return
    call(ctx, node, "rt.cast", [ctx.x(node.inputs[0]), repr(to)])


@emitter("CastLike")
def cast_like(node: Node, ctx: Context) -> None:
    elem = ctx.graph.info(node.inputs[1]).elem_type
    if not elem and ctx.const(node.inputs[1]) is not None:
        import onnx

        elem = onnx.helper.np_dtype_to_tensor_dtype(ctx.const(node.inputs[1]).dtype)
    if not elem:  # a type only known when the model runs
        like = ctx.x(node.inputs[1])
        call(ctx, node, "rt.cast", [ctx.x(node.inputs[0]), f"{like}.dtype.value"])
        return
    if _narrow_cast(node, ctx, int(elem)):
        return
    to = _cast_to(int(elem), node, ctx)
    call(ctx, node, "rt.cast", [ctx.x(node.inputs[0]), repr(to)])


@emitter("Where")
def where(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.where", [ctx.x(n) for n in node.inputs])


@emitter("Identity")
def identity(node: Node, ctx: Context) -> None:
    ctx.alias(node, node.inputs[0])


@emitter("Dropout")
def dropout(node: Node, ctx: Context) -> None:
    """A `Dropout` layer: active when the model trains on an autodiff backend, else identity."""
    ratio = ctx.const(node.inputs[1]) if ctx.has(node, 1) else None
    prob = float(ratio.reshape(-1)[0]) if ratio is not None else float(node.attr("ratio", 0.5))
    if ctx.has(node, 2):  # an explicit training_mode input: keep ONNX's inference semantics
        ctx.alias(node, node.inputs[0])
    else:
        field = ctx.layer("dropout", "Dropout", f"DropoutConfig({prob!r}).init()", {})
        ctx.need("burn.nn", "DropoutConfig")
        ctx.assign(node, f"self.{field}({ctx.x(node.inputs[0])})")
    if len(node.outputs) > 1 and node.outputs[1]:
        x = ctx.x(node.inputs[0])
        ctx.assign(node, f'rt.full({x}.dims(), True, {x}.device(), "bool")', i=1)
