"""The one table from our backend ops to ONNX nodes.

Each entry takes the graph, the input names and what the op knows (dtypes, shapes, options)
and returns the output name. The recording backend (`export_backend`) calls these and nothing
else emits nodes, so adapting export to a changed backend contract means editing this file.
A name with no entry is an op ONNX cannot express: the backend raises `ExportError` naming the
layer that called it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from burn.onnx.export_graph import ONNX_DTYPES, GraphBuilder
from burn.tensor import DType

# ---------------------------------------------------------------------------- elementwise
UNARY: dict[str, str] = {
    "neg": "Neg",
    "abs": "Abs",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "tanh": "Tanh",
    "erf": "Erf",
    "floor": "Floor",
    "ceil": "Ceil",
    "round": "Round",  # half to even, as numpy and Burn
    "sign": "Sign",
    "recip": "Reciprocal",
    "not": "Not",
}

BINARY: dict[str, str] = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "div": "Div",  # integer Div truncates toward zero, as ours
    "pow": "Pow",
    "max": "Max",
    "min": "Min",
    "eq": "Equal",
    "gt": "Greater",
    "ge": "GreaterOrEqual",
    "lt": "Less",
    "le": "LessOrEqual",
    "and": "And",
    "or": "Or",
    "xor": "Xor",
}

REDUCE: dict[str, str] = {
    "sum": "ReduceSum",
    "prod": "ReduceProd",
    "max": "ReduceMax",
    "min": "ReduceMin",
    "mean": "ReduceMean",
}


def unary(g: GraphBuilder, op: str, x: str, dtype: DType) -> str | None:
    if op == "log1p":
        one = g.initializer(scalar(1, dtype))
        return g.one("Log", [g.one("Add", [x, one])])
    onnx_op = UNARY.get(op)
    return g.one(onnx_op, [x]) if onnx_op is not None else None


def binary(g: GraphBuilder, op: str, a: str, b: str, dtype: DType) -> str | None:
    if op == "ne":
        return g.one("Not", [g.one("Equal", [a, b])])
    if op == "rem":  # the sign of the divisor, as PyTorch's remainder
        if dtype.is_int:
            return g.one("Mod", [a, b], fmod=0)
        floor = g.one("Floor", [g.one("Div", [a, b])])
        return g.one("Sub", [a, g.one("Mul", [floor, b])])
    onnx_op = BINARY.get(op)
    return g.one(onnx_op, [a, b]) if onnx_op is not None else None


def reduce(g: GraphBuilder, op: str, x: str, dim: int, out_dtype: DType) -> str | None:
    """A reduction keeping `dim`; `out_dtype` is the result's (ArgMax gives int64)."""
    if op in ("argmax", "argmin"):
        out = g.one("ArgMax" if op == "argmax" else "ArgMin", [x], axis=dim, keepdims=1)
        return cast(g, out, out_dtype) if out_dtype is not DType.I64 else out
    onnx_op = REDUCE.get(op)
    if onnx_op is None:
        return None
    # ReduceSum takes its axes as an input since opset 13, the others since opset 18.
    if onnx_op == "ReduceSum" or g.opset >= 18:
        return g.one(onnx_op, [x, g.ints([dim])], keepdims=1)
    return g.one(onnx_op, [x], axes=[dim], keepdims=1)


def is_nan(g: GraphBuilder, x: str) -> str:
    return g.one("IsNaN", [x])


def matmul(g: GraphBuilder, a: str, b: str) -> str:
    return g.one("MatMul", [a, b])


def cast(g: GraphBuilder, x: str, dtype: DType) -> str:
    return g.one("Cast", [x], to=ONNX_DTYPES[dtype])


# ---------------------------------------------------------------------------- layout
def reshape(g: GraphBuilder, x: str, shape) -> str:
    return g.one("Reshape", [x, g.ints(shape)])


def permute(g: GraphBuilder, x: str, axes) -> str:
    return g.one("Transpose", [x], perm=list(axes))


def expand(g: GraphBuilder, x: str, shape) -> str:
    return g.one("Expand", [x, g.ints(shape)])


def slice_(g: GraphBuilder, x: str, ranges) -> str:
    starts, ends, steps = zip(*ranges, strict=True) if ranges else ((), (), ())
    axes = range(len(ranges))
    return g.one("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])


def flip(g: GraphBuilder, x: str, axes: tuple[int, ...]) -> str:
    """Reversed along `axes`: a Slice from the end with step -1 (INT64_MIN ends past the
    start, as the ONNX spec prescribes for reaching index 0 backwards)."""
    n = len(axes)
    lowest = np.iinfo(np.int64).min
    return g.one(
        "Slice", [x, g.ints([-1] * n), g.ints([lowest] * n), g.ints(axes), g.ints([-1] * n)]
    )


def concat(g: GraphBuilder, xs: list[str], dim: int) -> str:
    return g.one("Concat", xs, axis=dim)


# ---------------------------------------------------------------------------- indexing
def gather_elements(g: GraphBuilder, x: str, dim: int, indices: str) -> str:
    return g.one("GatherElements", [x, indices], axis=dim)


def scatter_add(g: GraphBuilder, x: str, dim: int, indices: str, values: str) -> str:
    return g.one("ScatterElements", [x, indices, values], axis=dim, reduction="add")


def scatter_nd(g: GraphBuilder, x: str, indices: str, values: str) -> str:
    return g.one("ScatterND", [x, indices, values])


def gather(g: GraphBuilder, x: str, dim: int, indices: str) -> str:
    return g.one("Gather", [x, indices], axis=dim)


def where(g: GraphBuilder, mask: str, then: str, otherwise: str) -> str:
    return g.one("Where", [mask, then, otherwise])


# ---------------------------------------------------------------------------- module ops
def conv(g: GraphBuilder, x: str, w: str, b: str | None, kernel, options) -> str:
    pads = list(options.padding) * 2
    inputs = [x, w] + ([b] if b is not None else [])
    return g.one(
        "Conv",
        inputs,
        kernel_shape=list(kernel),
        strides=list(options.stride),
        pads=pads,
        dilations=list(options.dilation),
        group=int(options.groups),
    )


def conv_transpose(g: GraphBuilder, x: str, w: str, b: str | None, kernel, options) -> str:
    inputs = [x, w] + ([b] if b is not None else [])
    return g.one(
        "ConvTranspose",
        inputs,
        kernel_shape=list(kernel),
        strides=list(options.stride),
        pads=list(options.padding) * 2,
        output_padding=list(options.padding_out),
        dilations=list(options.dilation),
        group=int(options.groups),
    )


def avg_pool(g: GraphBuilder, x: str, kernel, stride, padding, count_include_pad: bool) -> str:
    return g.one(
        "AveragePool",
        [x],
        kernel_shape=list(kernel),
        strides=list(stride),
        pads=list(padding) * 2,
        count_include_pad=int(count_include_pad),
    )


def max_pool(g: GraphBuilder, x: str, kernel, stride, padding, dilation) -> str:
    return g.one(
        "MaxPool",
        [x],
        kernel_shape=list(kernel),
        strides=list(stride),
        pads=list(padding) * 2,
        dilations=list(dilation),
    )


def global_avg_pool(g: GraphBuilder, x: str) -> str:
    return g.one("GlobalAveragePool", [x])


ACTIVATIONS: dict[str, Callable[..., str]] = {
    "relu": lambda g, x: g.one("Relu", [x]),
    "sigmoid": lambda g, x: g.one("Sigmoid", [x]),
    "gelu": lambda g, x: g.one("Gelu", [x], approximate="none"),  # opset 20 and later
    "leaky_relu": lambda g, x, slope: g.one("LeakyRelu", [x], alpha=float(slope)),
    "hard_sigmoid": lambda g, x, alpha, beta: g.one(
        "HardSigmoid", [x], alpha=float(alpha), beta=float(beta)
    ),
}


def scalar(value, dtype: DType, rank: int = 0) -> np.ndarray:
    """A Python scalar as a constant of `dtype` with `rank` dims of size 1 (it broadcasts)."""
    return np.full((1,) * rank, value, dtype=dtype.numpy)
