"""The recording backend of ONNX export: a decorator that runs each op on the inner backend
and appends the matching ONNX node to a graph.

Its primitives pair the inner backend's primitive (so shapes and values are real, and layers
may branch on shapes) with the name of the graph value holding it. Ops it records directly are
the required core of the backend contract, the module ops ONNX has a node for (convolutions,
pools, embedding) and a few activations; every other op of the contract runs as its default
composition on this backend, so it is recorded through the core ops it is made of. The
mapping to ONNX lives in `export_ops`.
"""

from __future__ import annotations

import numpy as np
from burn.backend import Backend, Device
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
    """Records the ops of one forward pass into `graph` while `inner` computes them."""

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

    def wrap(self, value) -> Traced:
        """An inner primitive as a constant of the graph."""
        return self._constant(value)

    def unwrap(self, p: Traced):
        return p.value

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
        name = ops.reduce(self.graph, op, p.name, dim, self.index_dtype())
        return self._out(value, name, f"the reduction `{op}`")

    # ================================================================== recorded composites
    def full(self, shape, value, dtype: DType, device):
        return self._constant(self._inner.full(shape, value, dtype, _inner_device(device)))

    def arange(self, start, end, step, dtype: DType, device):
        return self._constant(self._inner.arange(start, end, step, dtype, _inner_device(device)))

    def random(self, shape, distribution, dtype: DType, device):
        self._unsupported("random numbers (a layer in training mode?)")

    def tri_mask(self, shape, offset, upper, device):
        return self._constant(self._inner.tri_mask(shape, offset, upper, _inner_device(device)))

    def is_nan(self, p: Traced):
        return Traced(self._inner.is_nan(p.value), self.graph.one("IsNaN", [p.name]))

    def matmul(self, lhs: Traced, rhs: Traced):
        value = self._inner.matmul(lhs.value, rhs.value)
        return Traced(value, self.graph.one("MatMul", [lhs.name, rhs.name]))

    def cat(self, ps: list, dim: int):
        value = self._inner.cat([p.value for p in ps], dim)
        return Traced(value, ops.concat(self.graph, [p.name for p in ps], dim))

    def select(self, p: Traced, dim: int, indices: Traced):
        value = self._inner.select(p.value, dim, indices.value)
        return Traced(value, ops.gather(self.graph, p.name, dim, self._indices(indices)))

    def mean_dim(self, p: Traced, dim: int):
        value = self._inner.mean_dim(p.value, dim)
        return Traced(value, ops.reduce(self.graph, "mean", p.name, dim, self.index_dtype()))

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

    def sigmoid(self, x: Traced):
        return Traced(self._inner.sigmoid(x.value), ops.ACTIVATIONS["sigmoid"](self.graph, x.name))

    def leaky_relu(self, x: Traced, negative_slope: float):
        value = self._inner.leaky_relu(x.value, negative_slope)
        return Traced(value, ops.ACTIVATIONS["leaky_relu"](self.graph, x.name, negative_slope))

    def hard_sigmoid(self, x: Traced, alpha: float, beta: float):
        value = self._inner.hard_sigmoid(x.value, alpha, beta)
        return Traced(value, ops.ACTIVATIONS["hard_sigmoid"](self.graph, x.name, alpha, beta))
