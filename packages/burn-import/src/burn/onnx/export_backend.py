"""The recording backend of ONNX export: a decorator on the backend contract.

Its primitives pair the inner backend's primitive (so shapes and values are real, and layers
may branch on shapes) with the name of the graph value holding it. Like every decorator it
forwards each named op to the inner backend's op of the same name, so whatever the model's
backend overrides is what computes the values; what it adds is the ONNX node for the op,
taken from the table in `export_ops`. Three kinds of op:

- The required core, and the named ops ONNX has a node for (`float_matmul`, `float_cat`,
  `float_select`, `float_mean_dim`, `float_flip`, the convolutions, pools, `embedding`, a few
  activations): recorded directly.
- Creation ops (`full`, `arange`, `bool_tri_mask`...): the inner backend's result becomes a
  constant of the graph.
- Every other op of the contract: its default composition runs on this backend, so it is
  recorded through the ops it is made of. Where the inner backend overrides that op, the
  values still come from the override (the composition only supplies the nodes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from burn.backend import Backend, Device
from burn.backend.ops import BOOL_OPS, FLOAT_OPS, INT_OPS, ActivationOps, ModuleOps, PrimitiveOps
from burn.onnx import export_ops as ops
from burn.onnx.export_graph import ExportError, GraphBuilder
from burn.tensor import DType, TensorData


class Traced:
    """An inner primitive plus the name of the graph value that holds it."""

    __slots__ = ("value", "name")

    def __init__(self, value, name: str):
        self.value = value
        self.name = name

    def __repr__(self) -> str:
        return f"Traced({self.name!r})"


class TracingDevice(Device):
    """A device of the inner backend, seen through the recording backend."""

    def __init__(self, inner: Device, backend: TracingBackend):
        self.inner = inner
        self.backend = backend

    def __eq__(self, other) -> bool:
        return self.inner == (other.inner if isinstance(other, TracingDevice) else other)

    def __hash__(self) -> int:
        return hash(self.inner)

    def __repr__(self) -> str:
        return repr(self.inner)


def _dims(value, n: int) -> tuple[int, ...]:
    """Pool geometry as an n-tuple (1-d pools take plain ints)."""
    if isinstance(value, int):
        return (value,) * n
    return tuple(int(v) for v in value)


def _inner_device(device):
    return device.inner if isinstance(device, TracingDevice) else device


class TracingBackend(Backend):
    """Records the ops of one forward pass into `graph` while `inner` computes them.

    It is built by `export` for one trace and is not registered in `burn.backends`: a graph
    cannot depend on the values it computes, so it refuses host reads (`into_data`) and random
    numbers, which a backend picked by name must serve.
    """

    def __init__(self, inner: Backend, graph: GraphBuilder):
        self._inner = inner
        self.graph = graph
        self.name = f"onnx-trace({inner.name})"
        self.capabilities = inner.capabilities
        self.host_memory = False  # index checks would read values on the host

    # ------------------------------------------------------------------ identity
    def inner(self) -> Backend:
        return self._inner

    def device(self, *args, **kwargs) -> TracingDevice:
        return TracingDevice(self._inner.device(*args, **kwargs), self)

    def devices(self) -> list[Device]:
        return [TracingDevice(d, self) for d in self._inner.devices()]

    def display_name(self) -> str:
        return f"TracingBackend({self._inner!r})"

    def priority(self) -> int:
        return -1

    def constant(self, value) -> Traced:
        """An inner primitive (a plain tensor a module holds) as a constant of the graph."""
        return self._constant(value)

    def _unsupported(self, what: str):
        raise ExportError(f"export: {self.graph.where()} uses {what}, which ONNX cannot express")

    def _out(self, value, name: str | None, what: str) -> Traced:
        if name is None:
            self._unsupported(what)
        return Traced(value, name)

    def _constant(self, value) -> Traced:
        data = self._inner.into_data(value)
        return Traced(value, self.graph.initializer(np.asarray(data.as_array())))

    # ================================================================== required core
    def from_data(self, data: TensorData, device):
        value = self._inner.from_data(data, _inner_device(device))
        return Traced(value, self.graph.initializer(np.asarray(data.as_array())))

    def into_data(self, p: Traced) -> TensorData:
        self._unsupported(
            "tensor values on the host (into_data, float(), item...) inside forward: an ONNX "
            "graph cannot depend on the values it computes"
        )

    def shape(self, p: Traced):
        return self._inner.shape(p.value)

    def dtype(self, p: Traced) -> DType:
        return self._inner.dtype(p.value)

    def device_of(self, p: Traced) -> TracingDevice:
        return TracingDevice(self._inner.device_of(p.value), self)

    def same_device(self, a: Traced, b: Traced) -> bool:
        return self._inner.same_device(a.value, b.value)

    def to_device(self, p: Traced, device):
        return Traced(self._inner.to_device(p.value, _inner_device(device)), p.name)

    def cast(self, p: Traced, dtype: DType):
        value = self._inner.cast(p.value, dtype)
        if self.dtype(p) is dtype:
            return Traced(value, p.name)
        return Traced(value, ops.cast(self.graph, p.name, dtype))

    def reshape(self, p: Traced, shape):
        return Traced(self._inner.reshape(p.value, shape), ops.reshape(self.graph, p.name, shape))

    def permute(self, p: Traced, axes):
        return Traced(self._inner.permute(p.value, axes), ops.permute(self.graph, p.name, axes))

    def expand(self, p: Traced, shape):
        return Traced(self._inner.expand(p.value, shape), ops.expand(self.graph, p.name, shape))

    def slice(self, p: Traced, ranges):
        value = self._inner.slice(p.value, ranges)
        return Traced(value, ops.slice_(self.graph, p.name, ranges))

    def slice_assign(self, p: Traced, ranges, value: Traced):
        out = self._inner.slice_assign(p.value, ranges, value.value)
        # The region's coordinates are known now: one ScatterND writes them.
        grids = np.meshgrid(*[np.arange(*r) for r in ranges], indexing="ij")
        coords = np.stack(grids, axis=-1).astype(np.int64)
        name = ops.scatter_nd(self.graph, p.name, self.graph.initializer(coords), value.name)
        return Traced(out, name)

    def _indices(self, indices: Traced) -> str:
        if self.dtype(indices) in (DType.I64, DType.I32):
            return indices.name
        return ops.cast(self.graph, indices.name, DType.I64)

    def gather(self, p: Traced, dim: int, indices: Traced):
        value = self._inner.gather(p.value, dim, indices.value)
        source = p.name
        shape, index_shape = self.shape(p), self.shape(indices)
        if any(s != i for d, (s, i) in enumerate(zip(shape, index_shape, strict=True)) if d != dim):
            ranges = [
                (0, i if d != dim else s, 1)
                for d, (s, i) in enumerate(zip(shape, index_shape, strict=True))
            ]
            source = ops.slice_(self.graph, source, ranges)
        name = ops.gather_elements(self.graph, source, dim, self._indices(indices))
        return Traced(value, name)

    def scatter_add(self, p: Traced, dim: int, indices: Traced, values: Traced):
        value = self._inner.scatter_add(p.value, dim, indices.value, values.value)
        name = ops.scatter_add(self.graph, p.name, dim, self._indices(indices), values.name)
        return Traced(value, name)

    def mask_where(self, p: Traced, mask: Traced, value: Traced):
        out = self._inner.mask_where(p.value, mask.value, value.value)
        return Traced(out, ops.where(self.graph, mask.name, value.name, p.name))

    def unary(self, op: str, p: Traced):
        value = self._inner.unary(op, p.value)
        return self._out(value, ops.unary(self.graph, op, p.name, self.dtype(p)), f"`{op}`")

    def binary(self, op: str, lhs: Traced, rhs: Traced):
        value = self._inner.binary(op, lhs.value, rhs.value)
        name = ops.binary(self.graph, op, lhs.name, rhs.name, self.dtype(lhs))
        return self._out(value, name, f"`{op}`")

    def reduce(self, op: str, p: Traced, dim: int):
        value = self._inner.reduce(op, p.value, dim)
        name = ops.reduce(self.graph, op, p.name, dim, self._inner.dtype(value))
        return self._out(value, name, f"the reduction `{op}`")

    def binary_scalar(self, op: str, p: Traced, value):
        out = self._inner.binary_scalar(op, p.value, value)
        scalar = self.graph.initializer(ops.scalar(value, self.dtype(p), len(self.shape(p))))
        name = ops.binary(self.graph, op, p.name, scalar, self.dtype(p))
        return self._out(out, name, f"`{op}`")

    # ================================================================== creation: constants
    def full(self, shape, value, dtype: DType, device):
        return self._constant(self._inner.full(shape, value, dtype, _inner_device(device)))

    def arange(self, start, end, step, dtype: DType, device):
        return self._constant(self._inner.arange(start, end, step, dtype, _inner_device(device)))

    def scalar_like(self, p: Traced, value):
        return self._constant(self._inner.scalar_like(p.value, value))

    def random(self, shape, distribution, dtype: DType, device):
        self._unsupported("random numbers (a layer in training mode?)")

    def bool_tri_mask(self, shape, offset: int, upper: bool, device):
        mask = self._inner.bool_tri_mask(shape, offset, upper, _inner_device(device))
        return self._constant(mask)

    # ================================================================== named ops with a node
    def float_is_nan(self, tensor: Traced):
        value = self._inner.float_is_nan(tensor.value)
        return Traced(value, ops.is_nan(self.graph, tensor.name))

    def float_mean_dim(self, tensor: Traced, dim: int):
        value = self._inner.float_mean_dim(tensor.value, dim)
        return Traced(value, ops.reduce(self.graph, "mean", tensor.name, dim, DType.I64))

    # ================================================================== module ops
    def _conv_nd(self, n: int, x, weight, bias, options):
        options = options.for_dims(n)
        fn = getattr(self._inner, f"conv{n}d")
        value = fn(x.value, weight.value, bias.value if bias is not None else None, options)
        kernel = self.shape(weight)[2:]
        b = bias.name if bias is not None else None
        return Traced(value, ops.conv(self.graph, x.name, weight.name, b, kernel, options))

    def conv1d(self, x, weight, bias, options):
        return self._conv_nd(1, x, weight, bias, options)

    def conv2d(self, x, weight, bias, options):
        return self._conv_nd(2, x, weight, bias, options)

    def conv3d(self, x, weight, bias, options):
        return self._conv_nd(3, x, weight, bias, options)

    def _conv_transpose_nd(self, n: int, x, weight, bias, options):
        options = options.for_dims(n)
        fn = getattr(self._inner, f"conv_transpose{n}d")
        value = fn(x.value, weight.value, bias.value if bias is not None else None, options)
        kernel = self.shape(weight)[2:]
        b = bias.name if bias is not None else None
        name = ops.conv_transpose(self.graph, x.name, weight.name, b, kernel, options)
        return Traced(value, name)

    def conv_transpose1d(self, x, weight, bias, options):
        return self._conv_transpose_nd(1, x, weight, bias, options)

    def conv_transpose2d(self, x, weight, bias, options):
        return self._conv_transpose_nd(2, x, weight, bias, options)

    def conv_transpose3d(self, x, weight, bias, options):
        return self._conv_transpose_nd(3, x, weight, bias, options)

    def _avg_pool_nd(self, n, x, kernel_size, stride, padding, count_include_pad):
        kernel, stride, padding = (_dims(v, n) for v in (kernel_size, stride, padding))
        fn = getattr(self._inner, f"avg_pool{n}d")
        value = fn(x.value, kernel, stride, padding, count_include_pad)
        name = ops.avg_pool(self.graph, x.name, kernel, stride, padding, count_include_pad)
        return Traced(value, name)

    def avg_pool1d(self, x, kernel_size, stride, padding, count_include_pad: bool):
        return self._avg_pool_nd(1, x, kernel_size, stride, padding, count_include_pad)

    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad: bool):
        return self._avg_pool_nd(2, x, kernel_size, stride, padding, count_include_pad)

    def _max_pool_nd(self, n, x, kernel_size, stride, padding, dilation):
        kernel, stride, padding, dilation = (
            _dims(v, n) for v in (kernel_size, stride, padding, dilation)
        )
        value = getattr(self._inner, f"max_pool{n}d")(x.value, kernel, stride, padding, dilation)
        name = ops.max_pool(self.graph, x.name, kernel, stride, padding, dilation)
        return Traced(value, name)

    def max_pool1d(self, x, kernel_size, stride, padding, dilation):
        return self._max_pool_nd(1, x, kernel_size, stride, padding, dilation)

    def max_pool2d(self, x, kernel_size, stride, padding, dilation):
        return self._max_pool_nd(2, x, kernel_size, stride, padding, dilation)

    def _adaptive_nd(self, n, x, output_size, composed):
        out = _dims(output_size, n)
        spatial = self.shape(x)[2:]
        value = getattr(self._inner, f"adaptive_avg_pool{n}d")(x.value, out)
        if all(o == 1 for o in out):
            return Traced(value, ops.global_avg_pool(self.graph, x.name))
        if all(s % o == 0 for s, o in zip(spatial, out, strict=True)):
            kernel = [s // o for s, o in zip(spatial, out, strict=True)]
            name = ops.avg_pool(self.graph, x.name, kernel, kernel, [0] * n, False)
            return Traced(value, name)
        return composed(x, output_size)  # uneven windows: the default's tensor ops

    def adaptive_avg_pool1d(self, x, output_size):
        return self._adaptive_nd(1, x, output_size, super().adaptive_avg_pool1d)

    def adaptive_avg_pool2d(self, x, output_size):
        return self._adaptive_nd(2, x, output_size, super().adaptive_avg_pool2d)

    def embedding(self, weights: Traced, indices: Traced):
        value = self._inner.embedding(weights.value, indices.value)
        return Traced(value, ops.gather(self.graph, weights.name, 0, self._indices(indices)))

    # ================================================================== activations
    def relu(self, x: Traced):
        return Traced(self._inner.relu(x.value), ops.ACTIVATIONS["relu"](self.graph, x.name))

    def gelu(self, x: Traced):
        if self.graph.opset < 20:  # ONNX's Gelu node came with opset 20: Erf and friends before
            return _composed("gelu")(self, x)
        return Traced(self._inner.gelu(x.value), ops.ACTIVATIONS["gelu"](self.graph, x.name))

    def sigmoid(self, x: Traced):
        return Traced(self._inner.sigmoid(x.value), ops.ACTIVATIONS["sigmoid"](self.graph, x.name))

    def leaky_relu(self, x: Traced, negative_slope: float):
        value = self._inner.leaky_relu(x.value, negative_slope)
        return Traced(value, ops.ACTIVATIONS["leaky_relu"](self.graph, x.name, negative_slope))

    def hard_sigmoid(self, x: Traced, alpha: float, beta: float):
        value = self._inner.hard_sigmoid(x.value, alpha, beta)
        return Traced(value, ops.ACTIVATIONS["hard_sigmoid"](self.graph, x.name, alpha, beta))


# ====================================================================== per-kind named ops
def _matmul(name: str):
    def method(self: TracingBackend, lhs: Traced, rhs: Traced) -> Traced:
        value = getattr(self._inner, name)(lhs.value, rhs.value)
        return Traced(value, ops.matmul(self.graph, lhs.name, rhs.name))

    return method


def _cat(name: str):
    def method(self: TracingBackend, tensors: list, dim: int) -> Traced:
        value = getattr(self._inner, name)([t.value for t in tensors], dim)
        return Traced(value, ops.concat(self.graph, [t.name for t in tensors], dim))

    return method


def _select(name: str):
    def method(self: TracingBackend, tensor: Traced, dim: int, indices: Traced) -> Traced:
        value = getattr(self._inner, name)(tensor.value, dim, indices.value)
        name_ = ops.gather(self.graph, tensor.name, dim, self._indices(indices))
        return Traced(value, name_)

    return method


def _flip(name: str):
    def method(self: TracingBackend, tensor: Traced, axes) -> Traced:
        value = getattr(self._inner, name)(tensor.value, tuple(axes))
        if not axes:
            return Traced(value, tensor.name)
        return Traced(value, ops.flip(self.graph, tensor.name, tuple(axes)))

    return method


_PER_KIND: dict[str, Callable[[str], Callable[..., Any]]] = {
    "matmul": _matmul,
    "cat": _cat,
    "select": _select,
    "flip": _flip,
}


# ====================================================================== everything else
def _unwrap(value):
    """An argument as the inner backend takes it."""
    if isinstance(value, Traced):
        return value.value
    if isinstance(value, TracingDevice):
        return value.inner
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _with_values(recorded, value):
    """The nodes of the composition, holding the values of the inner backend's own op."""
    if isinstance(recorded, Traced):
        return Traced(value, recorded.name)
    if isinstance(recorded, tuple):
        return tuple(_with_values(r, v) for r, v in zip(recorded, value, strict=True))
    return value


def _composed(name: str):
    """`name` recorded as its default composition on the tracer; where the inner backend
    overrides it, that override computes the values (whatever a backend overrides runs)."""
    default = getattr(Backend, name)

    @functools.wraps(default, assigned=("__doc__", "__annotations__"))
    def method(self, *args, **kwargs):
        recorded = default(self, *args, **kwargs)
        if getattr(type(self._inner), name, default) is default:
            return recorded
        value = getattr(self._inner, name)(
            *[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()}
        )
        return _with_values(recorded, value)

    method.__name__ = name
    method.__wrapped__ = default  # type: ignore[attr-defined]
    return method


def _public(group: type) -> set[str]:
    return {n for n in dir(group) if not n.startswith("_") and callable(getattr(group, n))}


# Helpers of the core that are not ops, and the host reads the tracer refuses itself.
_NOT_OPS = frozenset({"rng", "seed", "same_device", "index_dtype", "numel"})
CONTRACT_OPS = frozenset(
    FLOAT_OPS | INT_OPS | BOOL_OPS | _public(ModuleOps) | _public(ActivationOps)
) | (_public(PrimitiveOps) - _NOT_OPS)

for _kind in ("float", "int", "bool"):
    for _op, _maker in _PER_KIND.items():
        _name = f"{_kind}_{_op}"
        if _name in CONTRACT_OPS and _name not in vars(TracingBackend):
            _method = _maker(_name)
            _method.__name__ = _name
            _method.__doc__ = getattr(Backend, _name).__doc__
            setattr(TracingBackend, _name, _method)
for _name in sorted(CONTRACT_OPS - set(vars(TracingBackend))):
    setattr(TracingBackend, _name, _composed(_name))
for _name in CONTRACT_OPS:
    _method = vars(TracingBackend)[_name]
    if _method.__doc__ is None:  # written out above: `help()` reads like the contract
        _method.__doc__ = getattr(Backend, _name).__doc__
