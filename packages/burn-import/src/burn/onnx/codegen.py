"""Python source from a `Graph`: a `Model(Module)` with one field per layer and a straight-line
`forward`, plus the weights that go next to it.

Op translation lives in the `emit_*` modules, each registering functions in `EMITTERS`; this
module holds what they share (`Context`) and assembles the file. Conventions of the generated
code: every value is a `Tensor`; an ONNX scalar (rank 0) is held as a one-element rank-1 tensor,
since burn tensors have at least one dimension, and the code generator tracks the true rank.

Two kinds of value are not tensors. ONNX's strings are numpy arrays of `str` on the host
(`burn.onnx.runtime.strings`), since burn's tensors hold numbers. And shape arithmetic: what
`Shape` gives, and what slicing, gathering with constant indices and concatenating such values
make of it, is held as a plain list of ints (a scalar as a one-element list), as a person would
write `x.dims()[:2] + [3, 32]`: no tensor is made, and no device is read back, until a value of
it meets an op that needs a tensor.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from burn.onnx.errors import OnnxImportError, UnsupportedOpsError
from burn.onnx.graph import Graph, Node, elem_dtype

EMITTERS: dict[str, Callable[[Node, Context], None]] = {}
STRING = 8  # onnx.TensorProto.STRING

# Constants up to this many elements are written into the source; larger ones become fields.
INLINE_LIMIT = 32

_DTYPE_NAMES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "uint16": "i64",
    "uint32": "i64",
    "uint64": "i64",
    "bool": "bool",
}


def emitter(*ops: str):
    """Register the decorated function as the translation of `ops`."""

    def register(fn):
        for op in ops:
            EMITTERS[op] = fn
        return fn

    return register


def burn_dtype(dtype: np.dtype | None) -> str | None:
    """Burn's name for the dtype that holds values of numpy `dtype` (None when there is none)."""
    return None if dtype is None else _DTYPE_NAMES.get(np.dtype(dtype).name)


def source_text(text: object) -> str:
    """`text` from a model file made safe inside a comment or docstring of generated source.

    Names and doc strings are data: control characters, line and paragraph separators, quotes
    and backslashes come out as escapes, so no file can end a comment or docstring early and
    have the rest of its string run as code when the generated module is imported.
    """
    return repr(str(text))[1:-1].replace('"', '\\"')


def snake(text: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", text)
    text = re.sub(r"[^0-9a-zA-Z_]+", "_", text).strip("_").lower()
    if not text or text[0].isdigit():
        text = "v_" + text
    return text + "_" if keyword.iskeyword(text) else text


def literal(array: np.ndarray) -> str:
    """A Python literal for the values of `array` (nested lists)."""
    array = np.asarray(array)
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        values = array.astype(np.float64).tolist()
    elif array.dtype.kind == "b":
        values = array.tolist()
    else:
        values = array.astype(np.int64).tolist()
    return _format(values)


def _format(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_format(v) for v in values) + "]"
    if isinstance(values, float):
        if np.isnan(values):
            return 'float("nan")'
        if np.isinf(values):
            return 'float("inf")' if values > 0 else '-float("inf")'
        return repr(values)
    return repr(values)


@dataclass
class LayerField:
    """A field of the generated model: its name, type, how `new` builds it, its weights."""

    name: str
    annotation: str
    build: str
    weights: dict[str, np.ndarray] = field(default_factory=dict)


class Context:
    """What an emitter sees: the graph, value names and ranks, and where code goes."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.lines: list[str] = []
        self.fields: list[LayerField] = []
        self.imports: set[tuple[str, str]] = set()
        self.names: dict[str, str] = {}
        self.ranks: dict[str, int | None] = {}
        self.used: set[str] = {"self", "device", "rt", "Tensor", "np"}
        self.counters: dict[str, int] = {}
        self.indent = "        "
        self.uses_device = False
        # Variables holding a shape-like int value as a Python list, with its length if known.
        self.shape_vars: dict[str, int | None] = {}

    # ------------------------------------------------------------------ names
    def fresh(self, base: str) -> str:
        base = snake(base)
        n = self.counters.get(base, 0) + 1
        while f"{base}{n}" in self.used:
            n += 1
        self.counters[base] = n
        name = f"{base}{n}"
        self.used.add(name)
        return name

    def bind(self, onnx_name: str, var: str, rank: int | None) -> None:
        self.names[onnx_name] = var
        self.ranks[onnx_name] = rank

    # ------------------------------------------------------------------ values
    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant input, else None (also None for an absent optional input)."""
        if not name:
            return None
        return self.graph.constants.get(name)

    def has(self, node: Node, i: int) -> bool:
        return i < len(node.inputs) and bool(node.inputs[i])

    def rank(self, name: str) -> int | None:
        if name in self.ranks and self.ranks[name] is not None:
            return self.ranks[name]
        if name in self.graph.constants:
            return self.graph.constants[name].ndim
        return self.graph.info(name).rank

    def shape(self, name: str) -> list | None:
        if name in self.graph.constants:
            return list(self.graph.constants[name].shape)
        return self.graph.info(name).shape

    def is_string(self, name: str) -> bool:
        """Whether value `name` is of ONNX's string type (a numpy array of str here)."""
        if name in self.graph.constants:
            return self.graph.constants[name].dtype.kind in "OUS"
        return self.graph.info(name).elem_type == STRING

    def dtype(self, name: str) -> np.dtype | None:
        if name in self.graph.constants:
            return self.graph.constants[name].dtype
        return self.graph.info(name).dtype

    def shape_var(self, name: str) -> str | None:
        """The variable holding value `name` as a list of ints, when it is held so."""
        var = self.names.get(name)
        return var if var in self.shape_vars else None

    def shape_length(self, name: str) -> int | None:
        """How many ints the list held for value `name` has, when known here."""
        var = self.shape_var(name)
        return None if var is None else self.shape_vars[var]

    def x(self, name: str) -> str:
        """An expression for value `name` as a Tensor."""
        if name in self.names:
            var = self.names[name]
            if var in self.shape_vars:  # a list of ints becomes an int64 tensor where needed
                self.uses_device = True
                return f"rt.const({var}, 'i64', device)"
            return var
        if name in self.graph.constants:
            return self._constant(name)
        raise OnnxImportError(f"{self.graph.source}: value {name!r} is used before it is made")

    def _constant(self, name: str) -> str:
        array = self.graph.constants[name]
        if array.dtype.kind in "OUS":  # strings stay on the host, written out in full
            var = self.fresh("constant")
            values = repr(np.asarray(array, dtype=object).tolist())
            self.line(f"{var} = rt.strings({values})")
            self.bind(name, var, array.ndim)
            return var
        dtype = burn_dtype(array.dtype)
        if dtype is None:
            raise OnnxImportError(
                f"{self.graph.source}: constant {name!r} has dtype {array.dtype}, "
                "which burn does not compute in"
            )
        if array.size <= INLINE_LIMIT and array.size > 0:
            var = self.fresh("constant")
            values = literal(array.reshape(-1) if array.ndim == 0 else array)
            self.uses_device = True
            self.line(f"{var} = rt.const({values}, {dtype!r}, device)")
            self.bind(name, var, array.ndim)
            return var
        if array.size == 0:
            var = self.fresh("constant")
            self.uses_device = True
            shape = list(array.shape)
            self.line(f"{var} = rt.full({shape}, 0, device, {dtype!r})")
            self.bind(name, var, array.ndim)
            return var
        field_name = self.fresh(name if re.fullmatch(r"[A-Za-z_][\w]*", name) else "constant")
        grad = "" if array.dtype.kind == "f" else ", require_grad=False"
        self.add_field(
            field_name,
            "Param",
            f"Param(rt.full({list(array.shape)}, 0, device, {dtype!r}){grad})",
            {"": array},
        )
        var = self.fresh(field_name)
        self.line(f"{var} = self.{field_name}.val()")
        self.bind(name, var, array.ndim)
        return var

    # ------------------------------------------------------------------ code
    def line(self, code: str, comment: str | None = None) -> None:
        if comment:
            self.lines.append(self.indent + f"# {source_text(comment)}")
        self.lines.append(self.indent + code)

    def out(self, node: Node, i: int = 0, rank: int | None = None) -> str:
        """A fresh variable for output `i` of `node`, bound to its ONNX name."""
        name = node.outputs[i]
        var = self.fresh(f"{snake(node.op_type)}_out")
        self.bind(name, var, rank if rank is not None else self.graph.info(name).rank)
        return var

    def assign(self, node: Node, expr: str, rank: int | None = None, i: int = 0) -> str:
        var = self.out(node, i, rank)
        self.line(f"{var} = {expr}", f"{node.op_type} {node.name}")
        return var

    def assign_shape(self, node: Node, expr: str, rank: int, length: int | None) -> str:
        """`out = expr` where `expr` is a list of ints standing for a rank 0 or 1 int value."""
        var = self.assign(node, expr, rank)
        self.shape_vars[var] = length
        return var

    def assign_many(self, node: Node, expr: str, ranks: list | None = None) -> list[str]:
        names = [
            self.out(node, i, ranks[i] if ranks else None) if n else "_"
            for i, n in enumerate(node.outputs)
        ]
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        self.line(f"{target} = {expr}", f"{node.op_type} {node.name}")
        return names

    def alias(self, node: Node, source: str, i: int = 0) -> None:
        """Output `i` of `node` is input value `source` (Identity and friends)."""
        held = self.shape_var(source)
        if held is not None and i == 0:
            self.assign_shape(node, held, self.rank(source) or 0, self.shape_vars[held])
            return
        self.assign(node, self.x(source), self.rank(source), i)

    def add_field(self, name: str, annotation: str, build: str, weights: dict | None = None) -> str:
        self.fields.append(LayerField(name, annotation, build, dict(weights or {})))
        return name

    def layer(self, base: str, annotation: str, build: str, weights: dict) -> str:
        """A new layer field built by `build` (an expression using `device`)."""
        name = self.fresh(base)
        self.imports.add(("burn.nn", annotation))
        return self.add_field(name, annotation, build, weights)

    def need(self, module: str, name: str) -> None:
        self.imports.add((module, name))


# Ops that take ONNX string values (numpy arrays of str in the generated code): any other op
# reached by one is refused when the model is generated, by name, rather than failing as it runs.
STRING_OPS = frozenset(
    {
        "StringConcat",
        "StringSplit",
        "StringNormalizer",
        "RegexFullMatch",
        "Equal",
        "Identity",
        "ai.onnx.ml:LabelEncoder",
        "ai.onnx.ml:OneHotEncoder",
        "ai.onnx.ml:CategoryMapper",
    }
)


def emit(node: Node, ctx: Context) -> None:
    """Translate `node` with its emitter, once its inputs are known to suit it."""
    if node.qualified_op not in STRING_OPS:
        for name in node.inputs:
            if name and ctx.is_string(name):
                raise OnnxImportError(
                    f"{ctx.graph.source}: node {node.name!r} ({node.op_type}) takes the string "
                    f"value {name!r}; burn computes on strings only in "
                    f"{', '.join(sorted(STRING_OPS))}"
                )
    EMITTERS[node.qualified_op](node, ctx)


def unsupported_ops(graph: Graph) -> dict[str, tuple[int, str]]:
    """Every op type without a translation, with its count and first node name."""
    from burn.onnx import emitters  # noqa: F401 - registers the translations

    found: dict[str, tuple[int, str]] = {}

    def count(key: str, name: str) -> None:
        if key not in EMITTERS:
            n, first = found.get(key, (0, name))
            found[key] = (n + 1, first)

    def visit_proto(proto) -> None:  # the branches of If and other subgraphs
        for i, inner in enumerate(proto.node):
            domain = inner.domain if inner.domain not in ("", "ai.onnx") else ""
            count(
                f"{domain}:{inner.op_type}" if domain else inner.op_type,
                inner.name or f"{inner.op_type}_{i}",
            )
            for attr in inner.attribute:
                if attr.HasField("g"):
                    visit_proto(attr.g)

    for node in graph.nodes:
        count(node.qualified_op, node.name)
        for value in node.attrs.values():
            if hasattr(value, "node") and hasattr(value, "initializer"):
                visit_proto(value)
    return found


def check_supported(graph: Graph) -> None:
    found = unsupported_ops(graph)
    if found:
        raise UnsupportedOpsError(graph.source, found)


def graph_input_dtype(graph: Graph, name: str) -> str | None:
    info = graph.info(name)
    return burn_dtype(elem_dtype(info.elem_type))
