"""`Fusion(B)`: a decorator backend that records elementwise ops and runs them fused.

Its primitives are the inner backend's own, for every value that is computed, and
`FusionTensor` handles for recorded ones: a `Node` waiting in the stream, which becomes the
inner primitive it computed when the stream runs. An op that runs at once takes and returns
inner primitives as they are, so a step that fuses little pays little for passing through.
Which ops are recorded is decided once per backend:

- a core elementwise op (`unary`, `binary`, `binary_scalar`, `cast`, `mask_where`, `expand`,
  `full`, `scalar_like`) is recorded when the backend's fuser stands for it, i.e. `type(B)`
  still uses the very function the fuser lists in `implementations()`, and the fuser supports
  the node's op and dtype; otherwise it runs on the inner backend at once;
- a named op (`float_add`, `relu`...) that the inner backend overrides is forwarded to that
  override (its inputs computed first), as every decorator does; one the inner backend leaves
  to the contract runs as the contract's default composition on the decorator, so its
  elementwise pieces are recorded and fused; module ops (`conv2d`, pooling...) are forwarded,
  since their defaults call hooks the backend may replace, except a convolution whose whole
  composition the backend leaves to the contract when matmuls are recorded (below);
- a reduction (`reduce`, `float_mean_dim`) of a pending value runs with the recorded chain as
  its prologue when the fuser offers that (an optional part of the contract) and stands for
  the backend's reduction; otherwise it is computed like everything else;
- `float_matmul` is recorded when the fuser offers epilogues (another optional part),
  stands for the backend's matmul, and the product has at least `min_recorded_matmul`
  elements: its operands are computed, the product waits in the stream, and the elementwise
  ops recorded over it run in its kernel (a reshape of it stays recorded, so a convolution's
  bias runs in its matmul's kernel too). A smaller product runs at once on the inner
  backend, and so do the linear layer and convolution ops that would be composed around it:
  recording it and planning its epilogue cost the host more than the launch it saves (see
  `FusedBackend.min_recorded_matmul`); `fuse_all()` lifts the limit for a step recorded once
  and replayed;
- everything else (reads, layout, indexing, random) flushes the stream where its inputs are
  pending and runs on the inner backend.

Without a fuser (NdArray registers none) every op is forwarded, so `Fusion(B)` behaves as `B`.
"""

from __future__ import annotations

import math
import threading
import types
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from burn.backend import Backend, Device
from burn.backend.ops import (
    BOOL_OPS,
    COMPARISON_OPS,
    FLOAT_OPS,
    INT_OPS,
    ActivationOps,
    ModuleOps,
    PrimitiveOps,
)
from burn.backend.ops.module_blocks import ModuleBlocks
from burn.backend.ops.recurrent import RecurrentOps
from burn.fusion.contract import (
    FUSABLE_CORE_OPS,
    MATMUL_OP,
    REDUCIBLE_OPS,
    FusionBackend,
    fusion_backend_for,
)
from burn.fusion.ir import ARG_IS_KEY, Node
from burn.fusion.stream import FusionStats, Stream
from burn.tensor import DType
from burn.tensor.errors import BackendError


class FusionDevice(Device):
    """A device of the inner backend seen through `Fusion`: equal to it, building fused tensors."""

    def __init__(self, inner: Device, backend: FusedBackend):
        self.inner = inner
        self.backend = backend

    def __eq__(self, other) -> bool:
        return self.inner == (other.inner if isinstance(other, FusionDevice) else other)

    def __hash__(self) -> int:
        return hash(self.inner)

    def __repr__(self) -> str:
        return repr(self.inner)


def _inner_device(device):
    return device.inner if isinstance(device, FusionDevice) else device


class FusionTensor:
    """A recorded value: a node waiting in the stream (`node`), or, once the stream has run
    it, the inner primitive it computed (`value`, `node` None). A value computed at once is
    the inner primitive itself, never a handle (`FusedBackend._handle` makes one to record an
    op over it)."""

    __slots__ = ("value", "node", "leaf", "shape", "dtype", "device", "__weakref__")

    def __init__(self, value, node: Node | None, shape, dtype: DType, device):
        self.value = value
        self.node = node
        self.leaf: Node | None = None  # the leaf node reading `value`, made when first used
        self.shape = shape if shape.__class__ is tuple else tuple(shape)
        self.dtype = dtype
        self.device = device

    @property
    def is_pending(self) -> bool:
        return self.node is not None

    def __repr__(self) -> str:
        state = "pending" if self.node is not None else "ready"
        return f"FusionTensor({state}, shape={list(self.shape)}, {self.dtype.value})"


# Argument types that `_unwrap` changes (a list may hold handles): an op given none of them
# (nor a tuple holding a handle) runs on its arguments as they are.
_WRAPPING = frozenset({FusionTensor, FusionDevice, list})


def _public(group: type) -> set[str]:
    return {n for n, v in vars(group).items() if not n.startswith("_") and callable(v)}


# Helpers of the core that are not ops.
_NOT_OPS = frozenset({"rng", "seed", "same_device", "index_dtype", "numel"})
# Ops answered from the handle, or whose result is not a primitive.
_METADATA = frozenset({"shape", "dtype", "device_of", "into_data", "same_device"})
# The module ops, the public building blocks they are made of (`im2col`, `resample`...) and
# the recurrent ops (`lstm`...), whose `vars` live in their own mixin.
_MODULE = _public(ModuleOps) | _public(ModuleBlocks) | _public(RecurrentOps)
NAMED_OPS = frozenset(FLOAT_OPS | INT_OPS | BOOL_OPS | _MODULE | _public(ActivationOps)) - {
    "float_into_data",
    "int_into_data",
    "bool_into_data",
}
MODULE_OPS = frozenset(_MODULE)
# Convolutions that run as the contract's composition on a fusing decorator (see
# `FusedBackend.__init__`), and the hooks of that composition the backend must leave as they are.
COMPOSED_CONVS = ("conv1d", "conv2d", "conv3d")
CONV_HOOKS = ("_conv", "_grouped_matmul", "_add_bias")
# A linear layer's ops, run as the contract's composition on a fusing decorator when the
# backend leaves them to the contract: the matmul and the bias add are then recorded (the bias
# becomes the matmul's epilogue), as they were when `Linear` was written with tensor ops.
COMPOSED_LINEAR = ("linear", "linear_x_backward", "linear_weight_backward", "linear_bias_backward")
CORE_OPS = frozenset(_public(PrimitiveOps) - _NOT_OPS - _METADATA - FUSABLE_CORE_OPS)


class FusedBackend(Backend):
    """Fusion around a backend. Build with `Fusion(B)`; `stats` counts flushes and compiles."""

    #: The fewest elements of a product that `float_matmul` records for an epilogue (and that
    #: a composed linear layer or convolution needs in one of its tensors to be composed).
    #: Recording a matmul and planning its epilogue cost the host about 30 us more than
    #: running the product and its bias add as two ops (lavapipe's host, `[64, 1024] @
    #: [1024, 512]`), and a traced step is bound by its host: on the guide's step the four
    #: recorded products saved four launches and cost 0.19 ms of its 1.55 ms of host time. The
    #: epilogue saves the GPU one pass over the product, which outweighs that only for
    #: products of millions of elements (an H100 reads and writes 4M float32 elements in
    #: about 11 us).
    min_recorded_matmul: int = 1 << 22

    def __init__(self, inner: Backend, fuser: FusionBackend | None):
        self._inner = inner
        # The inner backend's metadata readers, bound once: asked of every computed primitive
        # that an op records over.
        self._shape_of, self._dtype_of, self._device_of = inner.shape, inner.dtype, inner.device_of
        self.name = f"fusion({inner.name})"
        self.capabilities = inner.capabilities
        self.host_memory = inner.host_memory
        self.fuser = fuser
        cls = type(inner)
        self._recorded: frozenset[str] = frozenset()
        self._reducible: frozenset[str] = frozenset()
        self._matmul_recorded = False
        if fuser is not None:
            impls = fuser.implementations()
            self._recorded = frozenset(
                op for op in FUSABLE_CORE_OPS if op in impls and getattr(cls, op, None) is impls[op]
            )
            if hasattr(fuser, "supports_reduce"):
                self._reducible = frozenset(
                    op
                    for op in REDUCIBLE_OPS
                    if op in impls and getattr(cls, op, None) is impls[op]
                )
            self._matmul_recorded = (
                hasattr(fuser, "matmul_operands")
                and MATMUL_OP in impls
                and getattr(cls, MATMUL_OP, None) is impls[MATMUL_OP]
            )
        # Named ops run as the contract's composition only where that fuses something: not the
        # module ops, whose defaults call hooks a backend may replace (Wgpu's im2col), except
        # a convolution whose whole composition the backend leaves to the contract, when
        # matmuls are recorded: its bias (and what follows) is then its matmul's epilogue;
        # and a linear layer's ops that the backend leaves to the contract (`COMPOSED_LINEAR`).
        composed = frozenset(
            op
            for op in COMPOSED_CONVS
            if self._matmul_recorded
            and all(getattr(cls, n, None) is getattr(Backend, n) for n in (op, *CONV_HOOKS))
        ) | frozenset(
            op
            for op in COMPOSED_LINEAR
            if fuser is not None and getattr(cls, op, None) is getattr(Backend, op)
        )
        self._composed = composed
        self._overridden = (MODULE_OPS - composed) | frozenset(
            n for n in NAMED_OPS if getattr(cls, n, None) is not getattr(Backend, n)
        )
        self.stream = Stream(fuser, self._product, self._eager) if fuser is not None else None
        self._support_cache: dict[tuple, bool] = {}
        # Ops that always run on the inner backend get a forwarder of their own on the
        # instance: one call deep, and inputs passed through without a copy of the argument
        # list when none is a handle (the common case: a traced step forwards most of its ops).
        named = NAMED_OPS if self.stream is None else self._overridden & NAMED_OPS
        for name in (CORE_OPS | named) - _WRITTEN:
            setattr(self, name, self._forwarder(name))

    # ------------------------------------------------------------------ identity
    def inner(self) -> Backend:
        return self._inner

    @property
    def stats(self) -> FusionStats:
        """Counters of the stream (all zero without a fuser)."""
        return self.stream.stats if self.stream is not None else FusionStats()

    @property
    def fuses(self) -> bool:
        """Whether any op is recorded (False: every op runs eagerly on the inner backend)."""
        return bool(self._recorded)

    def device(self, *args, **kwargs) -> FusionDevice:
        return FusionDevice(self._inner.device(*args, **kwargs), self)

    def devices(self) -> list[FusionDevice]:
        return [FusionDevice(d, self) for d in self._inner.devices()]

    def display_name(self) -> str:
        return f"Fusion({self._inner!r})"

    def priority(self) -> int:
        return -1

    def unavailable_reason(self) -> str | None:
        return self._inner.unavailable_reason()

    def seed(self, seed: int) -> None:
        self._inner.seed(seed)

    def rng(self):
        return self._inner.rng()

    def index_dtype(self) -> DType:
        return self._inner.index_dtype()

    def flush(self) -> None:
        """Compute every pending tensor now."""
        if self.stream is not None:
            self.stream.flush()

    def sync(self, device=None) -> None:
        self.flush()
        self._inner.sync(_inner_device(device))

    def submit(self, device=None) -> None:
        """Run the recorded ops (their kernels join the inner backend's queue), then start the
        inner backend's queue without waiting for it."""
        self.flush()
        self._inner.submit(_inner_device(device))

    # ------------------------------------------------------------------ handles
    def wrap(self, value):
        """A primitive of the inner backend as one of this backend's: the same object (a
        computed value is the inner primitive itself)."""
        return value

    def is_pending(self, p) -> bool:
        """Whether `p` is a recorded value that the stream has not computed yet."""
        return p.__class__ is FusionTensor and p.node is not None

    def _handle(self, p) -> FusionTensor:
        """`p` as a handle, to record an op over it: a handle as it is, a computed inner
        primitive in a ready handle (its metadata asked of the inner backend)."""
        if p.__class__ is FusionTensor:
            return p
        return FusionTensor(p, None, self._shape_of(p), self._dtype_of(p), self._device_of(p))

    def _value(self, p):
        """The concrete inner primitive of `p`, flushing the stream if it is pending."""
        if p.__class__ is not FusionTensor:
            return p
        if p.node is not None:
            self.stream.flush([p])  # type: ignore[union-attr]
        return p.value

    def _unwrap(self, arg):
        cls = arg.__class__
        if cls is FusionTensor:
            if arg.node is not None:
                self.stream.flush([arg])  # type: ignore[union-attr]
            return arg.value
        if cls is FusionDevice:
            return arg.inner
        if cls is list:
            if not any([a.__class__ in _WRAPPING or a.__class__ is tuple for a in arg]):
                return arg  # computed primitives (or plain values) only
            need = [a for a in arg if a.__class__ is FusionTensor and a.node is not None]
            if len(need) > 1:
                # Many pending values (an optimizer's gradients): one flush computes them all.
                self.stream.flush(need)  # type: ignore[union-attr]
            return [self._unwrap(a) for a in arg]
        if cls is tuple and any([a.__class__ is FusionTensor for a in arg]):
            return tuple([self._unwrap(a) for a in arg])
        return arg

    def _forwarder(self, name: str) -> Callable[..., Any]:
        """`name` run on the inner backend: `_forward`, with the argument list checked for
        handles first and passed on as it is when it holds none."""
        inner, forward = self._inner, self._forward
        contract = getattr(Backend, name)

        def method(_, *args, **kwargs):
            for a in args:
                cls = a.__class__
                if cls in _WRAPPING or (
                    cls is tuple and any([x.__class__ is FusionTensor for x in a])
                ):
                    return forward(name, args, kwargs)
            if kwargs:
                return forward(name, args, kwargs)
            return getattr(inner, name)(*args)

        method.__name__ = name
        method.__doc__ = contract.__doc__
        method.__wrapped__ = contract  # type: ignore[attr-defined]
        return types.MethodType(method, self)  # `help` shows the contract's signature

    def _forward(self, name: str, args, kwargs):
        """Run `name` on the inner backend over `args` (pending ones computed first): its
        results are this backend's primitives as they are."""
        unwrap = self._unwrap
        op = getattr(self._inner, name)
        if kwargs:
            return op(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
        return op(*[unwrap(a) for a in args])

    def _eager(self, node: Node):
        """A recorded op over leaves computed by the inner backend's own op (the stream runs
        a lone op so: one kernel either way, and no plan to look up or info words to build)."""
        inner, kind, arg = self._inner, node.kind, node.arg
        inputs = [i.arg for i in node.inputs]
        if kind == "unary":
            return inner.unary(arg, *inputs)
        if kind == "binary":
            return inner.binary(arg, *inputs)
        if kind == "scalar":
            return inner.binary_scalar(arg[0], inputs[0], arg[1])
        if kind == "cast":
            return inner.cast(inputs[0], arg)
        if kind == "where":
            return inner.mask_where(*inputs)
        if kind == "expand":
            return inner.expand(inputs[0], node.shape)
        if kind == "const":
            return inner.full(node.shape, arg, node.dtype, node.device)
        raise BackendError(f"Fusion: no eager form of a recorded {kind!r} node")

    def _node(self, handle: FusionTensor) -> Node:
        """The node standing for `handle` in a new node's inputs: its recorded node, or the
        leaf reading its value (one per handle, however often it is read; a segment binds a
        primitive once, however many leaves read it)."""
        node = handle.node
        if node is not None:
            return node
        leaf = handle.leaf
        if leaf is None:
            leaf = handle.leaf = Node(
                "leaf", handle.value, (), handle.shape, handle.dtype, handle.device
            )
        return leaf

    def _record(self, kind: str, arg, inputs: tuple, metas: tuple, shape, dtype):
        """A pending handle for a new node over `inputs` (primitives of this backend, whose
        `(shape, dtype)` are `metas`), or None when the op runs at once: its pattern ran alone
        before, or the fuser declines.

        Every recorded op of a traced step comes through here, so the common path is kept
        short: an op over computed inputs is checked against `Stream.alone` before any handle
        is made, support is looked up by op and dtypes (`_supported`), and the size limits are
        read from the new node's own bounds (`Stream.too_big`)."""
        stream = self.stream
        pattern = None
        if all([p.__class__ is not FusionTensor or p.node is None for p in inputs]):
            # Over concrete inputs only: an op that ran alone before runs at once (see
            # `Stream.alone`; it was supported when it was recorded).
            op = arg if kind in ARG_IS_KEY else arg[0] if kind == "scalar" else None
            pattern = (kind, op, shape, dtype, *metas)
            if pattern in stream.alone:  # type: ignore[union-attr]
                stream.stats.unrecorded += 1  # type: ignore[union-attr]
                return None
        if not self._supported(kind, arg, inputs, metas, shape, dtype):
            return None
        handles = [self._handle(p) for p in inputs]
        if handles:
            inputs = tuple([self._node(h) for h in handles])
            node = Node(kind, arg, inputs, shape, dtype, inputs[0].device)
            if stream.too_big(node):  # type: ignore[union-attr]
                stream.flush()  # type: ignore[union-attr]
                inputs = tuple([self._node(h) for h in handles])
                node = Node(kind, arg, inputs, shape, dtype, node.device)
        else:
            node = Node(kind, arg[0], (), shape, dtype, arg[1])
        node.pattern = pattern
        handle = FusionTensor(None, node, shape, dtype, node.device)
        stream.record(handle)  # type: ignore[union-attr]
        return handle

    def _large(self, tensors) -> bool:
        """Whether a composed linear layer or convolution has a tensor (of `tensors`, None
        for a missing bias) of at least `min_recorded_matmul` elements, so that its products
        are recorded."""
        least = self.min_recorded_matmul
        for p in tensors:
            if p is not None:
                shape = p.shape if p.__class__ is FusionTensor else self._shape_of(p)
                if math.prod(shape) >= least:
                    return True
        return False

    @contextmanager
    def fuse_all(self):
        """While entered, matmuls of every size are recorded (`min_recorded_matmul` is 0): for
        a step recorded once and replayed without its Python, where the host cost of
        recording is paid once and every launch saved is saved at each replay."""
        own = vars(self)
        before = own.get("min_recorded_matmul")  # set by an enclosing `fuse_all`, or None
        self.min_recorded_matmul = 0
        try:
            yield self
        finally:
            if before is None:
                del self.min_recorded_matmul  # back to the class's value
            else:
                self.min_recorded_matmul = before

    def _supported(self, kind: str, arg, inputs, metas, shape, dtype: DType) -> bool:
        """The fuser's `supports`, remembered per op, dtypes and ranks (sizes asked anew only
        past 2^24 elements, where a fuser may refuse)."""
        # What of `arg` the answer may depend on: the op name or the target dtype, never a
        # value (a scalar's or a constant's).
        op = arg if kind in ARG_IS_KEY else arg[0] if kind == "scalar" else None
        if len(metas) == 1:
            in_shape, in_dtype = metas[0]
            key: tuple = (kind, op, dtype, len(shape), in_dtype, len(in_shape))
        else:
            key = (kind, op, dtype, len(shape), *[(d, len(s)) for s, d in metas])
        big = math.prod(shape) > 1 << 24
        known = None if big else self._support_cache.get(key)
        if known is None:
            nodes = tuple([self._node(self._handle(p)) for p in inputs])
            device = nodes[0].device if nodes else arg[1]
            probe = Node(kind, arg if nodes else arg[0], nodes, shape, dtype, device)
            known = bool(self.fuser.supports(probe))  # type: ignore[union-attr]
            if not big:
                self._support_cache[key] = known
        return known

    # ================================================================== metadata and data
    # A handle knows its metadata (a ready one was computed at the recorded shape and dtype);
    # a computed primitive is the inner backend's, which answers for it.
    def shape(self, p):
        return p.shape if p.__class__ is FusionTensor else self._shape_of(p)

    def dtype(self, p) -> DType:
        return p.dtype if p.__class__ is FusionTensor else self._dtype_of(p)

    def _device(self, p):
        """The inner device of `p`."""
        return p.device if p.__class__ is FusionTensor else self._device_of(p)

    def device_of(self, p) -> FusionDevice:
        return FusionDevice(self._device(p), self)

    def same_device(self, a, b) -> bool:
        if a.__class__ is not FusionTensor and b.__class__ is not FusionTensor:
            return self._inner.same_device(a, b)
        da, db = self._device(a), self._device(b)
        return da is db or da == db

    def into_data(self, p):
        return self._inner.into_data(self._value(p))

    def into_data_many(self, ps):
        return self._inner.into_data_many([self._value(p) for p in ps])

    def float_into_data(self, tensor):
        return self._inner.float_into_data(self._value(tensor))

    def int_into_data(self, tensor):
        return self._inner.int_into_data(self._value(tensor))

    def bool_into_data(self, tensor):
        return self._inner.bool_into_data(self._value(tensor))

    # ================================================================== recorded core ops
    def unary(self, op: str, p):
        if "unary" in self._recorded:
            meta = (self.shape(p), self.dtype(p))
            out = self._record("unary", op, (p,), (meta,), *meta)
            if out is not None:
                return out
        if p.__class__ is not FusionTensor:  # computed: the inner op, as it is
            return self._inner.unary(op, p)
        return self._forward("unary", (op, p), {})

    def binary(self, op: str, lhs, rhs):
        if "binary" in self._recorded and self.same_device(lhs, rhs):
            metas = ((self.shape(lhs), self.dtype(lhs)), (self.shape(rhs), self.dtype(rhs)))
            (ls, ld), (rs, _) = metas
            shape = ls if ls == rs else _broadcast(ls, rs)
            dtype = DType.BOOL if op in COMPARISON_OPS else ld
            out = self._record("binary", op, (lhs, rhs), metas, shape, dtype)
            if out is not None:
                return out
        if lhs.__class__ is not FusionTensor and rhs.__class__ is not FusionTensor:
            return self._inner.binary(op, lhs, rhs)
        return self._forward("binary", (op, lhs, rhs), {})

    def binary_scalar(self, op: str, p, value):
        if "binary_scalar" in self._recorded:
            meta = (self.shape(p), self.dtype(p))
            dtype = DType.BOOL if op in COMPARISON_OPS else meta[1]
            out = self._record("scalar", (op, value), (p,), (meta,), meta[0], dtype)
            if out is not None:
                return out
        if p.__class__ is not FusionTensor:
            return self._inner.binary_scalar(op, p, value)
        return self._forward("binary_scalar", (op, p, value), {})

    def cast(self, p, dtype: DType):
        current = self.dtype(p)
        if current is dtype:
            return p
        if "cast" in self._recorded and self.capabilities.supports(dtype):
            shape = self.shape(p)
            out = self._record("cast", dtype, (p,), ((shape, current),), shape, dtype)
            if out is not None:
                return out
        return self._forward("cast", (p, dtype), {})

    def mask_where(self, p, mask, value):
        if "mask_where" in self._recorded and self._device(p) == self._device(mask) == self._device(
            value
        ):
            inputs = (p, mask, value)
            metas = tuple([(self.shape(a), self.dtype(a)) for a in inputs])
            shape = _broadcast(*[s for s, _ in metas])
            out = self._record("where", None, inputs, metas, shape, metas[0][1])
            if out is not None:
                return out
        return self._forward("mask_where", (p, mask, value), {})

    def expand(self, p, shape):
        shape = tuple(shape)
        if shape == self.shape(p):
            return p
        if "expand" in self._recorded and p.__class__ is FusionTensor and p.node is not None:
            out = self._record("expand", None, (p,), ((p.shape, p.dtype),), shape, p.dtype)
            if out is not None:
                return out
        return self._forward("expand", (p, shape), {})

    def full(self, shape, value, dtype: DType, device):
        if "full" in self._recorded and self.capabilities.supports(dtype):
            out = self._record("const", (value, _inner_device(device)), (), (), tuple(shape), dtype)
            if out is not None:
                return out
        return self._forward("full", (shape, value, dtype, device), {})

    # ================================================================== fused reductions
    def _reduce_recorded(self, op: str, p, dim: int):
        """`op` along `dim` with `p`'s recorded chain as its prologue, or None (also when `p`
        is computed, or the chain reads a recorded matmul: that runs with the chain as its
        epilogue instead)."""
        if p.__class__ is not FusionTensor:
            return None
        node = p.node
        if node is None or node.matmuls or not self.fuser.supports_reduce(op, node, dim):  # type: ignore[union-attr]
            return None
        return self.stream.reduce(node, op, dim)  # type: ignore[union-attr]

    def reduce(self, op: str, p, dim: int):
        if "reduce" in self._reducible:
            out = self._reduce_recorded(op, p, dim)
            if out is not None:
                return out
        return self._forward("reduce", (op, p, dim), {})

    def float_mean_dim(self, tensor, dim: int):
        if "float_mean_dim" in self._reducible:
            out = self._reduce_recorded("mean", tensor, dim)
            if out is not None:
                return out
        if self.stream is None or "float_mean_dim" in self._overridden:
            return self._forward("float_mean_dim", (tensor, dim), {})
        return Backend.float_mean_dim(self, tensor, dim)

    float_mean_dim.__doc__ = Backend.float_mean_dim.__doc__

    # ================================================================== matmul epilogues
    def float_matmul(self, lhs, rhs):
        if self._matmul_recorded and self.same_device(lhs, rhs):
            a, b = self.shape(lhs), self.shape(rhs)
            if (
                len(a) == len(b) >= 2
                and a[-1] == b[-2]
                and all(x == y or x == 1 or y == 1 for x, y in zip(a[:-2], b[:-2], strict=False))
            ):
                shape = (*_broadcast(a[:-2], b[:-2]), a[-2], b[-1])
                if math.prod(shape) >= self.min_recorded_matmul:  # small ones: at once, below
                    recorded = self._record_matmul(self._handle(lhs), self._handle(rhs), shape)
                    if recorded is not None:
                        return recorded
        return self._forward(MATMUL_OP, (lhs, rhs), {})

    def _record_matmul(self, lhs: FusionTensor, rhs: FusionTensor, shape):
        """A pending handle for the product `lhs @ rhs` of `shape`, or None when it runs at
        once: its pattern ran alone before, or the fuser declines the operands."""
        pattern = ("matmul", lhs.shape, rhs.shape, lhs.dtype)
        stream = self.stream
        if pattern in stream.alone:  # type: ignore[union-attr]
            stream.stats.unrecorded += 1  # type: ignore[union-attr]
            return None
        found = self.fuser.matmul_operands(self._value(lhs), self._value(rhs))  # type: ignore[union-attr]
        if found is None:
            return None
        node = Node("matmul", found, (), shape, lhs.dtype, lhs.device)
        node.pattern = pattern
        handle = FusionTensor(None, node, shape, lhs.dtype, lhs.device)
        stream.record(handle)  # type: ignore[union-attr]
        return handle

    float_matmul.__doc__ = Backend.float_matmul.__doc__

    def _product(self, lhs, rhs, shape):
        """A recorded matmul computed on its own by the inner backend, at the node's shape."""
        inner = self._inner
        out = inner.float_matmul(lhs, rhs)
        return out if tuple(inner.shape(out)) == shape else inner.reshape(out, shape)

    def reshape(self, p, shape):
        if p.__class__ is not FusionTensor:
            return self._inner.reshape(p, shape)
        node = p.node
        if node is not None and node.kind == "matmul" and math.prod(shape) == math.prod(p.shape):
            # A product is contiguous, so any reshape of it lists its elements in the same
            # order: the reshaped value is the same matmul seen at another shape, and can still
            # take an epilogue (a convolution's bias). If the product is read at both shapes,
            # each computes it.
            shape = tuple(shape)
            reshaped = Node("matmul", node.arg, (), shape, node.dtype, node.device)
            reshaped.pattern = node.pattern
            handle = FusionTensor(None, reshaped, shape, p.dtype, p.device)
            self.stream.record(handle)  # type: ignore[union-attr]
            return handle
        return self._forward("reshape", (p, shape), {})

    reshape.__doc__ = Backend.reshape.__doc__

    def scalar_like(self, p, value):
        if "scalar_like" in self._recorded:
            return self.full((1,) * len(self.shape(p)), value, self.dtype(p), self._device(p))
        return self._forward("scalar_like", (p, value), {})


def _broadcast(*shapes) -> tuple[int, ...]:
    out = []
    for dims in zip(*shapes, strict=True):
        big = [n for n in dims if n != 1]
        out.append(big[0] if big else 1)
    return tuple(out)


def _forwarding(name: str) -> Callable[..., Any]:
    """A core op that runs on the inner backend (pending inputs computed first)."""
    contract = getattr(Backend, name)

    def method(self, *args, **kwargs):
        return self._forward(name, args, kwargs)

    method.__name__ = name
    method.__doc__ = contract.__doc__
    method.__wrapped__ = contract  # type: ignore[attr-defined]
    return method


def _named(name: str) -> Callable[..., Any]:
    """A named op: the inner backend's override when it has one, else the contract's default
    composition on the decorator (so its elementwise pieces are recorded)."""
    default = getattr(Backend, name)

    def method(self, *args, **kwargs):
        if self.stream is None or name in self._overridden:
            return self._forward(name, args, kwargs)
        if name in self._composed and not self._large(args[:3] if name in COMPOSED_CONVS else args):
            return self._forward(name, args, kwargs)  # its products would not be recorded
        return default(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = default.__doc__
    method.__wrapped__ = default  # type: ignore[attr-defined]
    return method


# What the class body defines: every other op is generated below.
_WRITTEN = frozenset(vars(FusedBackend))
for _name in sorted(CORE_OPS - _WRITTEN):
    setattr(FusedBackend, _name, _forwarding(_name))
for _name in sorted(NAMED_OPS - _WRITTEN):
    setattr(FusedBackend, _name, _named(_name))
FusedBackend.__abstractmethods__ = frozenset()


_lock = threading.Lock()
_cache: dict[int, FusedBackend] = {}


def Fusion(inner: Backend) -> FusedBackend:  # noqa: N802 - a decorator reads like a type
    """The fusion decorator of `inner`: `B = Fusion(Wgpu)`, and `Autodiff(Fusion(Wgpu))` to train.

    The fuser comes from the `burn.fusion` entry point named like the backend; a backend
    without one runs eagerly. Calling it twice with the same backend returns the same object.
    """
    if not isinstance(inner, Backend):
        raise TypeError(f"Fusion: expected a backend, got {inner!r}")
    if isinstance(inner, FusedBackend):
        raise BackendError("Fusion: the backend is already fused")
    if inner.tracks_gradients():
        raise BackendError(
            f"Fusion: {inner!r} tracks gradients; fuse the backend it wraps instead "
            f"(Autodiff(Fusion(B)), not Fusion(Autodiff(B)))"
        )
    with _lock:
        backend = _cache.get(id(inner))
        if backend is None or backend.inner() is not inner:
            backend = _cache[id(inner)] = FusedBackend(inner, fusion_backend_for(inner.name))
        return backend
