"""The importer's view of an ONNX model: nodes, values with their types, and constants.

`load_graph` reads a model with the `onnx` package (protobuf parsing, the checker, the version
converter and shape inference all come from it) and returns a `Graph` that the passes in
`burn.onnx.passes` rewrite and the code generator walks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from burn.onnx.errors import OnnxImportError
from onnx import helper, numpy_helper

# ONNX element types that burn computes in a dtype of its own (unsigned 16/32/64-bit integers are
# computed as i64, which holds all their values, and cast back where a caller wants them).
_ELEM_TO_NUMPY = {
    onnx.TensorProto.FLOAT: np.dtype(np.float32),
    onnx.TensorProto.DOUBLE: np.dtype(np.float64),
    onnx.TensorProto.FLOAT16: np.dtype(np.float16),
    onnx.TensorProto.INT64: np.dtype(np.int64),
    onnx.TensorProto.INT32: np.dtype(np.int32),
    onnx.TensorProto.INT16: np.dtype(np.int16),
    onnx.TensorProto.INT8: np.dtype(np.int8),
    onnx.TensorProto.UINT8: np.dtype(np.uint8),
    onnx.TensorProto.UINT16: np.dtype(np.uint16),
    onnx.TensorProto.UINT32: np.dtype(np.uint32),
    onnx.TensorProto.UINT64: np.dtype(np.uint64),
    onnx.TensorProto.BOOL: np.dtype(np.bool_),
}
try:
    import ml_dtypes

    _ELEM_TO_NUMPY[onnx.TensorProto.BFLOAT16] = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes comes with burn-tensor
    pass

# ONNX element types narrower than any burn computes in (8-, 4- and 2-bit floats and integers,
# and the 8-bit exponent type): their values are held in float32 or int64, which represent every
# one of them exactly. A cast to one rounds as that type does (`burn.onnx.runtime.narrow`), and
# `burn.onnx.backend` hands such values back in the ONNX type.
_NARROW_HELD = {
    onnx.TensorProto.FLOAT8E4M3FN: np.dtype(np.float32),
    onnx.TensorProto.FLOAT8E4M3FNUZ: np.dtype(np.float32),
    onnx.TensorProto.FLOAT8E5M2: np.dtype(np.float32),
    onnx.TensorProto.FLOAT8E5M2FNUZ: np.dtype(np.float32),
    onnx.TensorProto.FLOAT4E2M1: np.dtype(np.float32),
    onnx.TensorProto.FLOAT8E8M0: np.dtype(np.float32),
    onnx.TensorProto.INT4: np.dtype(np.int64),
    onnx.TensorProto.UINT4: np.dtype(np.int64),
    onnx.TensorProto.INT2: np.dtype(np.int64),
    onnx.TensorProto.UINT2: np.dtype(np.int64),
}

# How many values of the 4- and 2-bit types one stored word holds.
_PACKED = {
    onnx.TensorProto.INT4: 2,
    onnx.TensorProto.UINT4: 2,
    onnx.TensorProto.FLOAT4E2M1: 2,
    onnx.TensorProto.INT2: 4,
    onnx.TensorProto.UINT2: 4,
}

# The opset older models are raised to before translation (newer models are kept as they are).
DEFAULT_OPSET = 17


def elem_dtype(elem_type: int) -> np.dtype | None:
    """The numpy dtype burn computes values of an ONNX element type in (for a narrow type, the
    wider one that holds it), or None for one burn does not compute in."""
    return _ELEM_TO_NUMPY.get(elem_type) or _NARROW_HELD.get(elem_type)


def is_narrow(elem_type: int) -> bool:
    """Whether the element type is one burn holds in a wider type (see `_NARROW_HELD`)."""
    return elem_type in _NARROW_HELD


def stored_dtype(elem_type: int) -> np.dtype | None:
    """The numpy dtype ONNX values of this element type are exchanged in: the narrow types'
    own (ml_dtypes') dtypes, else `elem_dtype`'s."""
    if is_narrow(elem_type):
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    return elem_dtype(elem_type)


_HOLDERS = {stored_dtype(elem): held for elem, held in _NARROW_HELD.items()}


def held_array(array: np.ndarray) -> np.ndarray:
    """`array` in the dtype burn holds it in: values of a narrow type (ml_dtypes' float8,
    float4, int4, int2...) become float32 or int64, exactly; any other array is returned as
    it is."""
    held = _HOLDERS.get(array.dtype)
    return array if held is None else array.astype(held)


def elem_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"type {elem_type}"


@dataclass
class ValueInfo:
    """A value's element type and shape (dims are ints, symbolic names, or None)."""

    name: str
    elem_type: int = 0
    shape: list | None = None

    @property
    def dtype(self) -> np.dtype | None:
        return elem_dtype(self.elem_type)

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def static_shape(self) -> list[int] | None:
        if self.shape is None or not all(isinstance(d, int) and d >= 0 for d in self.shape):
            return None
        return list(self.shape)


@dataclass
class Node:
    """One ONNX node: attributes decoded to Python values (tensors as numpy, graphs as protos)."""

    op_type: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict = field(default_factory=dict)
    domain: str = ""
    proto: onnx.NodeProto | None = None

    def attr(self, key: str, default=None):
        return self.attrs.get(key, default)

    @property
    def qualified_op(self) -> str:
        return self.op_type if self.domain in ("", "ai.onnx") else f"{self.domain}:{self.op_type}"


@dataclass
class Graph:
    """A model ready for translation: constants are numpy arrays, every value has its info."""

    name: str
    source: str
    opset: int
    nodes: list[Node]
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    constants: dict[str, np.ndarray]
    values: dict[str, ValueInfo]
    doc: str = ""

    def info(self, name: str) -> ValueInfo:
        return self.values.get(name) or ValueInfo(name)

    def producers(self) -> dict[str, Node]:
        return {out: node for node in self.nodes for out in node.outputs if out}

    def consumers(self) -> dict[str, list[Node]]:
        found: dict[str, list[Node]] = {}
        for node in self.nodes:
            for name in node.inputs:
                if name:
                    found.setdefault(name, []).append(node)
        return found


def _value_info(proto: onnx.ValueInfoProto) -> ValueInfo:
    ttype = proto.type.tensor_type if proto.type.HasField("tensor_type") else None
    if ttype is None:
        return ValueInfo(proto.name)
    shape = None
    if ttype.HasField("shape"):
        shape = []
        for dim in ttype.shape.dim:
            if dim.HasField("dim_value"):
                shape.append(int(dim.dim_value))
            elif dim.HasField("dim_param"):
                shape.append(dim.dim_param)
            else:
                shape.append(None)
    return ValueInfo(proto.name, ttype.elem_type, shape)


# The typed repeated fields a tensor may keep its values in (instead of `raw_data`).
_VALUE_FIELDS = (
    "float_data",
    "int32_data",
    "int64_data",
    "double_data",
    "uint64_data",
    "string_data",
)
# The most elements a sparse initializer may declare for its dense form.
SPARSE_ELEMENT_LIMIT = 1 << 28


def declared_elements(dims, what: str) -> int:
    """The element count of `dims`, refusing negative dims before anything is allocated."""
    count = 1
    for d in dims:
        if d < 0:
            raise OnnxImportError(f"{what}: negative dimension in shape {list(dims)}")
        count *= int(d)
    return count


def tensor_array(proto: onnx.TensorProto, what: str) -> np.ndarray:
    """The values of a tensor proto, once its declared shape agrees with the data it holds.

    The check runs on the proto's sizes alone, so a file that declares a huge shape over a few
    bytes is refused without allocating: no tensor grows beyond the bytes the file stored.
    """
    what = f"{what}: tensor {proto.name!r}"
    count = declared_elements(proto.dims, what)
    dtype = _ELEM_TO_NUMPY.get(proto.data_type)
    if proto.data_location == onnx.TensorProto.EXTERNAL:
        raise OnnxImportError(f"{what}: external data was not loaded")
    if proto.HasField("raw_data"):
        needed = None
        if dtype is not None:
            needed = count * dtype.itemsize
        elif is_narrow(proto.data_type):  # one byte a value, or 2 or 4 values a byte
            needed = -(-count // _PACKED.get(proto.data_type, 1))
        if needed is not None and len(proto.raw_data) != needed:
            raise OnnxImportError(
                f"{what}: shape {list(proto.dims)} of {elem_name(proto.data_type)} needs "
                f"{needed} bytes, the file holds {len(proto.raw_data)}"
            )
    else:
        stored = max(len(getattr(proto, f)) for f in _VALUE_FIELDS)
        packed = -(-count // _PACKED.get(proto.data_type, 1))  # 4- and 2-bit values share words
        if stored not in (count, 2 * count, packed):  # complex values take two entries each
            raise OnnxImportError(
                f"{what}: shape {list(proto.dims)} declares {count} values, the file holds {stored}"
            )
    try:
        return held_array(numpy_helper.to_array(proto))
    except Exception as e:
        raise OnnxImportError(f"{what}: unreadable values ({type(e).__name__}: {e})") from None


def _attr_value(attr: onnx.AttributeProto, where: str):
    if attr.type == onnx.AttributeProto.TENSOR:
        return tensor_array(attr.t, f"{where}: attribute {attr.name!r}")
    if attr.type == onnx.AttributeProto.GRAPH:
        return attr.g
    if attr.type == onnx.AttributeProto.TENSORS:
        return [tensor_array(t, f"{where}: attribute {attr.name!r}") for t in attr.tensors]
    try:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode("utf-8") for v in value]
    except (ValueError, UnicodeDecodeError) as e:
        raise OnnxImportError(f"{where}: attribute {attr.name!r} is unreadable ({e})") from None
    return value


def node_from_proto(proto: onnx.NodeProto, index: int, where: str = "<model>") -> Node:
    name = proto.name or f"{proto.op_type}_{index}"
    attrs = {a.name: _attr_value(a, f"{where}: node {name!r}") for a in proto.attribute}
    return Node(
        proto.op_type, name, list(proto.input), list(proto.output), attrs, proto.domain, proto
    )


def read_model(source) -> tuple[onnx.ModelProto, str]:
    """The model proto of a path, bytes or proto, and a name for it in messages."""
    if isinstance(source, onnx.ModelProto):
        return source, source.graph.name or "<model>"
    if isinstance(source, bytes):
        try:
            return onnx.load_from_string(source), "<bytes>"
        except Exception as e:
            raise OnnxImportError(f"<bytes>: not an ONNX model ({e})") from None
    path = Path(source)
    if not path.is_file():
        raise OnnxImportError(f"{path}: no such ONNX file")
    try:
        return onnx.load(str(path)), str(path)
    except Exception as e:
        raise OnnxImportError(f"{path}: not an ONNX model ({type(e).__name__}: {e})") from None


def model_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 1


def _batch_major_scan(model: onnx.ModelProto) -> bool:
    """Whether the model has an opset-8 Scan (batch axis 0, scan axis 1). onnx's converter
    turns it into a later Scan by declaring the graph's inputs without their batch axis, which
    the data still has, so such a model is translated at its own opset instead."""
    return model_opset(model) < 9 and any(n.op_type == "Scan" for n in model.graph.node)


def prepare_model(model: onnx.ModelProto, where: str, opset: int) -> onnx.ModelProto:
    """Check the model, raise an older opset to `opset`, and infer shapes and types."""
    try:
        onnx.checker.check_model(model)
    except Exception as e:  # ValidationError, and decode errors of damaged strings
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OnnxImportError(f"{where}: the ONNX checker rejects the model: {first}") from None
    if model_opset(model) < opset and not _batch_major_scan(model):
        try:
            model = onnx.version_converter.convert_version(model, opset)
        except Exception:  # the converter lacks adapters for some ops; translate as written
            model = copy.copy(model)
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # inference is advice: the code generator falls back to runtime shapes
        pass
    return model


def graph_from_proto(
    proto: onnx.GraphProto, where: str, opset: int, outer: dict | None = None
) -> Graph:
    """The `Graph` of a graph proto (also used for the branches of `If`)."""
    values: dict[str, ValueInfo] = dict(outer or {})
    for vi in list(proto.input) + list(proto.value_info) + list(proto.output):
        info = _value_info(vi)
        if info.elem_type or info.name not in values:
            values[info.name] = info
    constants = {}
    for init in proto.initializer:
        array = tensor_array(init, where)
        constants[init.name] = array
        values[init.name] = ValueInfo(init.name, init.data_type, list(array.shape))
    for sparse in proto.sparse_initializer:
        what = f"{where}: sparse initializer {sparse.values.name!r}"
        if declared_elements(sparse.dims, what) > SPARSE_ELEMENT_LIMIT:
            raise OnnxImportError(f"{what}: dense shape {list(sparse.dims)} is too large")
        array = tensor_array(sparse.values, where)
        idx = tensor_array(sparse.indices, where)
        try:
            dense = np.zeros(tuple(sparse.dims), dtype=array.dtype)
            if idx.ndim == 1:
                dense.reshape(-1)[idx] = array
            else:
                dense[tuple(idx.T)] = array
        except (ValueError, IndexError, TypeError) as e:
            raise OnnxImportError(f"{what}: indices do not fit ({e})") from None
        constants[sparse.values.name] = dense
        values[sparse.values.name] = ValueInfo(
            sparse.values.name, sparse.values.data_type, list(dense.shape)
        )
    inputs = [_value_info(vi) for vi in proto.input if vi.name not in constants]
    outputs = [values.get(vi.name) or _value_info(vi) for vi in proto.output]
    nodes = [node_from_proto(n, i, where) for i, n in enumerate(proto.node)]
    return Graph(
        name=proto.name or "model",
        source=where,
        opset=opset,
        nodes=nodes,
        inputs=inputs,
        outputs=outputs,
        constants=constants,
        values=values,
        doc=proto.doc_string,
    )


def load_graph(source, opset: int = DEFAULT_OPSET) -> Graph:
    """Read, check, convert and type a model; the passes run next (`burn.onnx.passes`)."""
    model, where = read_model(source)
    model = prepare_model(model, where, opset)
    return graph_from_proto(model.graph, where, model_opset(model))
