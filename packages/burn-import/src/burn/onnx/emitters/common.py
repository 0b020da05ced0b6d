"""What the emitters share: argument rendering and the generic helper call."""

from __future__ import annotations

import keyword

import numpy as np
from burn.onnx.codegen import Context, burn_dtype, literal
from burn.onnx.errors import OnnxImportError
from burn.onnx.graph import Node


def value(ctx: Context, node: Node, i: int) -> str:
    """Input `i` as a Python value when constant or held as a list of ints (a list or number),
    else a tensor expression; `None` for an absent optional input."""
    if not ctx.has(node, i):
        return "None"
    held = ctx.shape_var(node.inputs[i])
    if held is not None:  # a list of ints already: a scalar is its one element
        return f"{held}[0]" if ctx.rank(node.inputs[i]) == 0 else held
    array = ctx.const(node.inputs[i])
    if array is not None and array.size <= 64:
        if array.dtype.kind in "iub" or array.dtype.kind == "f":
            return literal(array) if array.ndim else literal(array.reshape(-1)[0:1])[1:-1]
    return ctx.x(node.inputs[i])


def small_ints(ctx: Context, name: str, limit: int = 64) -> list[int] | None:
    """The values of a small constant int input of rank 0 or 1, else None."""
    array = ctx.const(name)
    if array is None or array.dtype.kind not in "iu" or array.ndim > 1 or array.size > limit:
        return None
    return [int(v) for v in array.reshape(-1)]


def tensor(ctx: Context, node: Node, i: int) -> str:
    return ctx.x(node.inputs[i]) if ctx.has(node, i) else "None"


def attribute_literal(val) -> str:
    """Python source for an attribute's value: numbers (NaN and infinities included, which
    `repr` would write as names), lists of them, tensors as nested lists, strings."""
    if isinstance(val, np.ndarray):
        return literal(val) if val.dtype.kind in "fiub" else repr(val.tolist())
    if isinstance(val, float) or (isinstance(val, list) and any(isinstance(v, float) for v in val)):
        return literal(np.asarray(val, np.float64))
    return repr(val)


def attr_args(node: Node, names=None, rename: dict | None = None) -> str:
    """Keyword arguments for the node's attributes (all, or those in `names`)."""
    parts = []
    for key, val in node.attrs.items():
        if names is not None and key not in names:
            continue
        if hasattr(val, "SerializeToString"):
            continue
        if not key.isidentifier() or not key.isascii() or keyword.iskeyword(key):
            raise OnnxImportError(
                f"node {node.name!r} ({node.op_type}) has an attribute named {key!r}, "
                "which is not a Python identifier"
            )
        parts.append(f"{(rename or {}).get(key, key)}={attribute_literal(val)}")
    return ", ".join(parts)


def call(
    ctx: Context,
    node: Node,
    fn: str,
    args: list[str],
    attrs: str = "",
    outputs: int = 1,
    rank: int | None = None,
) -> None:
    """`out = rt.fn(args..., attrs...)` (or several outputs unpacked)."""
    text = ", ".join([a for a in args] + ([attrs] if attrs else []))
    expr = f"{fn}({text})"
    if outputs == 1:
        ctx.assign(node, expr, rank)
    else:
        ctx.assign_many(node, expr)


def out_rank(ctx: Context, node: Node, i: int = 0) -> int | None:
    return ctx.graph.info(node.outputs[i]).rank


def onnx_dtype_name(elem_type: int) -> str | None:
    from burn.onnx.graph import elem_dtype

    return burn_dtype(elem_dtype(elem_type))
