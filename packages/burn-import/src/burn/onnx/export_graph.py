"""The ONNX graph an export builds: nodes, initializers, names, and the layer being traced.

Node names follow the layer that emitted them (`/encoder/layers.0/mha/MatMul_3`), weights are
initializers under the parameter's path (`encoder.layers.0.mha.query.weight`), so the exported
file reads like the model that produced it.
"""

from __future__ import annotations

import numpy as np
import onnx
from burn.tensor import BurnError, DType
from onnx import TensorProto, helper, numpy_helper

ONNX_DTYPES = {
    DType.F64: TensorProto.DOUBLE,
    DType.F32: TensorProto.FLOAT,
    DType.F16: TensorProto.FLOAT16,
    DType.BF16: TensorProto.BFLOAT16,
    DType.I64: TensorProto.INT64,
    DType.I32: TensorProto.INT32,
    DType.I16: TensorProto.INT16,
    DType.I8: TensorProto.INT8,
    DType.U8: TensorProto.UINT8,
    DType.BOOL: TensorProto.BOOL,
}


class ExportError(BurnError, ValueError):
    """A model, layer or op that ONNX cannot express, or export arguments that do not fit."""


class GraphBuilder:
    """Collects nodes and initializers; knows the scope (layer path and type) being traced."""

    def __init__(self, opset: int):
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: set[str] = set()
        self._counts: dict[str, int] = {}
        self.scopes: list[tuple[str, str]] = []  # (path, module type)

    # ------------------------------------------------------------------ names
    def unique(self, name: str) -> str:
        if name not in self._names:
            self._names.add(name)
            return name
        n = self._counts.get(name, 0)
        while f"{name}_{n}" in self._names:
            n += 1
        self._counts[name] = n + 1
        self._names.add(f"{name}_{n}")
        return f"{name}_{n}"

    def reserve(self, name: str) -> str:
        """Claim an exact name (a parameter path, an input); a clash is an ExportError."""
        if name in self._names:
            raise ExportError(f"export: the name {name!r} is used twice")
        self._names.add(name)
        return name

    def where(self) -> str:
        """The layer being traced, for node names and error messages."""
        if not self.scopes:
            return "the model"
        path, kind = self.scopes[-1]
        return f"layer {path!r} ({kind})" if path else f"the model ({kind})"

    def _prefix(self) -> str:
        path = self.scopes[-1][0] if self.scopes else ""
        return f"/{path}/" if path else "/"

    # ------------------------------------------------------------------ graph content
    def node(self, op_type: str, inputs: list[str], outputs: int = 1, **attrs) -> list[str]:
        """Append a node; returns the names of its outputs."""
        base = self._prefix() + op_type
        names = [self.unique(f"{base}_output_{i}") for i in range(outputs)]
        clean = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, inputs, names, name=self.unique(base), **clean))
        return names

    def one(self, op_type: str, inputs: list[str], **attrs) -> str:
        return self.node(op_type, inputs, 1, **attrs)[0]

    def initializer(self, array: np.ndarray, name: str | None = None) -> str:
        """A constant tensor of the graph (a weight under its path, or a computed constant)."""
        name = self.reserve(name) if name is not None else self.unique(self._prefix() + "Constant")
        array = np.asarray(array)
        if array.dtype == DType.BF16.numpy:
            proto = helper.make_tensor(
                name, TensorProto.BFLOAT16, array.shape, array.view(np.uint16).ravel().tolist()
            )
        else:
            proto = numpy_helper.from_array(np.ascontiguousarray(array), name)
        self.initializers.append(proto)
        return name

    def ints(self, values) -> str:
        """An int64 1-D constant (shapes, axes, slice bounds)."""
        return self.initializer(np.asarray(list(values), dtype=np.int64))
