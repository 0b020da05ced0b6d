"""String ops: StringConcat, StringSplit, StringNormalizer, RegexFullMatch and `ai.onnx.ml`'s
LabelEncoder, onto `burn.onnx.runtime.strings` (string values live on the host as numpy arrays;
what they give that is numeric becomes a tensor on the model's device). Equal on strings is in
`elementwise`."""

from __future__ import annotations

import re

import numpy as np
from burn.onnx.codegen import Context, burn_dtype, emitter
from burn.onnx.emitters.common import attr_args, attribute_literal
from burn.onnx.errors import OnnxImportError
from burn.onnx.graph import Node


def _x(ctx: Context, node: Node, i: int = 0) -> str:
    return ctx.x(node.inputs[i])


@emitter("StringConcat")
def string_concat(node: Node, ctx: Context) -> None:
    ctx.assign(node, f"rt.string_concat({_x(ctx, node)}, {_x(ctx, node, 1)})")


@emitter("StringSplit")
def string_split(node: Node, ctx: Context) -> None:
    ctx.uses_device = True
    attrs = attr_args(node, ["delimiter", "maxsplit"])
    args = ", ".join([_x(ctx, node)] + ([attrs] if attrs else []) + ["device=device"])
    ctx.assign_many(node, f"rt.string_split({args})")


@emitter("StringNormalizer")
def string_normalizer(node: Node, ctx: Context) -> None:
    attrs = attr_args(node, ["case_change_action", "is_case_sensitive", "locale", "stopwords"])
    ctx.assign(node, f"rt.string_normalizer({_x(ctx, node)}{', ' + attrs if attrs else ''})")


@emitter("RegexFullMatch")
def regex_full_match(node: Node, ctx: Context) -> None:
    ctx.uses_device = True
    pattern = node.attr("pattern", "")
    try:
        re.compile(pattern)
    except re.error as e:
        raise OnnxImportError(
            f"{ctx.graph.source}: node {node.name!r} (RegexFullMatch) has an invalid pattern "
            f"{pattern!r} ({e})"
        ) from None
    ctx.assign(node, f"rt.regex_full_match({_x(ctx, node)}, {pattern!r}, device=device)")


def _plain(values) -> list:
    """Attribute values as Python numbers or str (tensor attributes included)."""
    array = np.asarray(values)
    if array.dtype.kind in "OSU":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
    return array.reshape(-1).tolist()


@emitter("ai.onnx.ml:LabelEncoder")
def label_encoder(node: Node, ctx: Context) -> None:
    """Keys and values from whichever of the `*_strings`, `*_int64s`, `*_floats` or
    `*_tensor` attributes the node has; the default from `default_*` (ONNX's defaults:
    "_Unused", -1, -0.0)."""
    keys = next(
        (
            _plain(node.attr(k))
            for k in ("keys_strings", "keys_int64s", "keys_floats", "keys_tensor")
            if node.attr(k) is not None
        ),
        None,
    )
    kind, values = "str", []
    for name, value_kind in (
        ("values_strings", "str"),
        ("values_int64s", "i64"),
        ("values_floats", "f32"),
    ):
        if node.attr(name) is not None:
            kind, values = value_kind, _plain(node.attr(name))
    tensor = node.attr("values_tensor")
    if tensor is not None:
        array = np.asarray(tensor)
        kind = "str" if array.dtype.kind in "OSU" else burn_dtype(array.dtype) or "f32"
        values = _plain(array)
    if keys is None or len(keys) != len(values):
        raise OnnxImportError(
            f"{ctx.graph.source}: node {node.name!r} (LabelEncoder) needs as many values as "
            f"keys, got {0 if keys is None else len(keys)} keys and {len(values)} values"
        )
    default = node.attr("default_tensor")
    if default is not None:
        default = _plain(default)[0]
    elif kind == "str":
        default = node.attr("default_string", "_Unused")
    elif kind == "i64":
        default = int(node.attr("default_int64", -1))
    else:
        default = float(node.attr("default_float", -0.0))
    ctx.uses_device = True
    text = [attribute_literal(v) for v in (keys, values, default)]  # NaN keys included
    args = f"{_x(ctx, node)}, {', '.join(text)}, {kind!r}, device=device"
    ctx.assign(node, f"rt.label_encoder({args})")
