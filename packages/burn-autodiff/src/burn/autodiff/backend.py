"""`Autodiff(B)`: a backend that records the ops on tensors requiring gradients.

Its primitives pair an inner primitive with a graph node. The node is None for anything that
does not depend on a tensor marked with `require_grad()`, so untracked work only pays for the
wrapper. Each tracked op stores a closure that maps the output's gradient to its inputs'
gradients, written with the inner backend's ops (the rules live in `rules.py`).
"""

from __future__ import annotations

import threading

from burn.autodiff import named, rules
from burn.autodiff.graph import Gradients, Node, leaf, run_backward
from burn.autodiff.module_rules import ModuleRules
from burn.autodiff.recurrent_rules import RecurrentRules
from burn.backend import Backend, Device
from burn.backend.ops import BOOL_OPS, INT_OPS, AutodiffOps
from burn.tensor.errors import BackendError, KindError


class ADPrimitive:
    """An inner primitive plus the node that produced it (None when untracked)."""

    __slots__ = ("value", "node")

    def __init__(self, value, node: Node | None = None):
        self.value = value
        self.node = node

    def __repr__(self) -> str:
        return f"ADPrimitive({self.node!r})"


class CheckpointingStrategy:
    """What the backward pass keeps from the forward pass.

    `NoCheckpointing` (the only strategy so far) keeps every saved input, trading memory for
    speed. Recomputing strategies can subclass this later without changing the API.
    """


class NoCheckpointing(CheckpointingStrategy):
    """Keep every saved input of the forward pass until backward."""


class AutodiffDevice(Device):
    """A device of the inner backend, seen through the autodiff decorator.

    It compares equal to the inner device, but knows its backend is the decorator, so
    `Tensor.from_data(values, B.device())` builds a tensor that can track gradients.
    """

    def __init__(self, inner: Device, backend: AutodiffBackend):
        self.inner = inner
        self.backend = backend

    def __eq__(self, other) -> bool:
        return self.inner == (other.inner if isinstance(other, AutodiffDevice) else other)

    def __hash__(self) -> int:
        return hash(self.inner)

    def __repr__(self) -> str:
        return repr(self.inner)


def _inner_device(device):
    return device.inner if isinstance(device, AutodiffDevice) else device


class AutodiffBackend(ModuleRules, RecurrentRules, named.NamedRules, Backend):
    """Reverse-mode automatic differentiation around any backend. Build with `Autodiff(B)`."""

    def __init__(self, inner: Backend, checkpointing: CheckpointingStrategy | None = None):
        self._inner = inner
        self.checkpointing = checkpointing or NoCheckpointing()
        self.name = f"autodiff({inner.name})"
        self.capabilities = inner.capabilities
        self.host_memory = inner.host_memory
        self._grad_hook = None

    # ------------------------------------------------------------------ identity
    def inner(self) -> Backend:
        return self._inner

    def device(self, *args, **kwargs) -> AutodiffDevice:
        return AutodiffDevice(self._inner.device(*args, **kwargs), self)

    def devices(self) -> list[AutodiffDevice]:
        return [AutodiffDevice(d, self) for d in self._inner.devices()]

    def display_name(self) -> str:
        return f"Autodiff({self._inner!r})"

    def priority(self) -> int:
        return -1

    def unavailable_reason(self) -> str | None:
        return self._inner.unavailable_reason()

    def seed(self, seed: int) -> None:
        self._inner.seed(seed)

    def sync(self, device=None) -> None:
        self._inner.sync(_inner_device(device))

    def submit(self, device=None) -> None:
        self._inner.submit(_inner_device(device))

    # ------------------------------------------------------------------ graph helpers
    def _track(self, value, inputs: tuple, backward, name: str) -> ADPrimitive:
        """Wrap `value`; record a node when any input is tracked.

        `backward(grad, tracked)` gets the output gradient and a tuple of booleans saying which
        inputs need a gradient; it returns one gradient (or None) per input.
        """
        parents = tuple([p.node for p in inputs])
        tracked = tuple([n is not None for n in parents])
        if True not in tracked:
            return ADPrimitive(value)
        node = Node(parents, lambda grad: backward(grad, tracked), name)
        return ADPrimitive(value, node)

    def _untracked(self, value) -> ADPrimitive:
        return ADPrimitive(value)

    def _inner_device(self, device):
        return _inner_device(device)

    # ------------------------------------------------------------------ the autodiff protocol
    def tracks_gradients(self) -> bool:
        return True

    def float_inner(self, tensor):
        return tensor.value

    int_inner = bool_inner = float_inner

    def float_from_inner(self, tensor):
        return ADPrimitive(tensor)

    int_from_inner = bool_from_inner = float_from_inner

    # ------------------------------------------------------------------ require grad
    def float_set_require_grad(self, tensor, require_grad: bool):
        if require_grad:
            if tensor.node is not None and tensor.node.is_leaf:
                return tensor
            return ADPrimitive(tensor.value, leaf())
        return ADPrimitive(tensor.value)

    def float_is_require_grad(self, tensor) -> bool:
        return tensor.node is not None

    def float_detach(self, tensor):
        return ADPrimitive(tensor.value)

    def backward(self, tensor) -> Gradients:
        """Gradients of `tensor` with respect to every leaf it depends on."""
        if tensor.kind.name != "Float":
            raise KindError(f"backward: needs a Float tensor, got {tensor.kind.name}")
        p = tensor.primitive
        if p.node is None:
            raise BackendError(
                "backward: this tensor does not depend on any tensor marked with require_grad()"
            )
        inner = self._inner
        seed = inner.full(inner.shape(p.value), 1, inner.dtype(p.value), inner.device_of(p.value))
        return run_backward(inner, p.node, seed, self._grad_hook)

    def set_grad_hook(self, hook):
        """Install `hook(leaf_id, grad)`, called as each leaf's gradient becomes final.

        The hook belongs to this backend object (shared by every `Autodiff(B)` call with the
        same `B`), so it sees every backward pass run on it, in any thread, until removed.
        """
        previous, self._grad_hook = self._grad_hook, hook
        return previous

    def leaf_id(self, tensor):
        node = tensor.node
        return node.id if node is not None and node.is_leaf else None

    def grad(self, tensor, grads: Gradients):
        """The gradient of a leaf as an inner primitive, or None."""
        if tensor.node is None:
            return None
        return grads.get(tensor.node.id)

    def grad_remove(self, tensor, grads: Gradients):
        if tensor.node is None:
            return None
        return grads.remove(tensor.node.id)

    def grad_replace(self, tensor, grads: Gradients, grad) -> None:
        if tensor.node is None:
            raise BackendError("grad_replace: the tensor does not require a gradient")
        grads.register(tensor.node.id, grad)

    # ================================================================== required core
    def from_data(self, data, device):
        return ADPrimitive(self._inner.from_data(data, _inner_device(device)))

    def into_data(self, p):
        return self._inner.into_data(p.value)

    def into_data_many(self, ps):
        return self._inner.into_data_many([p.value for p in ps])

    def shape(self, p):
        return self._inner.shape(p.value)

    def dtype(self, p):
        return self._inner.dtype(p.value)

    def device_of(self, p):
        return AutodiffDevice(self._inner.device_of(p.value), self)

    def same_device(self, a, b) -> bool:
        return self._inner.same_device(a.value, b.value)

    def to_device(self, p, device):
        inner = self._inner
        source = inner.device_of(p.value)
        return self._track(
            inner.to_device(p.value, _inner_device(device)),
            (p,),
            lambda g, t: (inner.to_device(g, source),),
            "to_device",
        )

    def cast(self, p, dtype):
        inner = self._inner
        out = inner.cast(p.value, dtype)
        source = inner.dtype(p.value)
        if not (dtype.is_float and source.is_float):
            return ADPrimitive(out)
        return self._track(out, (p,), lambda g, t: (inner.cast(g, source),), "cast")

    def reshape(self, p, shape):
        inner = self._inner
        source = inner.shape(p.value)
        return self._track(
            inner.reshape(p.value, shape), (p,), lambda g, t: (inner.reshape(g, source),), "reshape"
        )

    def permute(self, p, axes):
        inner = self._inner
        inverse = tuple(sorted(range(len(axes)), key=lambda i: axes[i]))
        return self._track(
            inner.permute(p.value, axes), (p,), lambda g, t: (inner.permute(g, inverse),), "permute"
        )

    def expand(self, p, shape):
        inner = self._inner
        source = inner.shape(p.value)
        return self._track(
            inner.expand(p.value, shape),
            (p,),
            lambda g, t: (rules.unbroadcast(inner, g, source),),
            "expand",
        )

    def slice(self, p, ranges):
        inner = self._inner
        value = p.value
        return self._track(
            inner.slice(value, ranges),
            (p,),
            lambda g, t: (rules.slice_backward(inner, g, value, ranges),),
            "slice",
        )

    def slice_assign(self, p, ranges, value):
        inner = self._inner

        def backward(g, tracked):
            gp = gv = None
            if tracked[0]:
                zeros = inner.full(inner.shape(value.value), 0, inner.dtype(g), inner.device_of(g))
                gp = inner.slice_assign(g, ranges, zeros)
            if tracked[1]:
                gv = inner.slice(g, ranges)
            return gp, gv

        return self._track(
            inner.slice_assign(p.value, ranges, value.value), (p, value), backward, "slice_assign"
        )

    # Reading at indices and adding at indices are each other's adjoint: gather/scatter_add
    # along a dim with indices of the output's shape, select/select_add with 1-D indices.
    def _indexed_read(self, read: str, add: str, p, dim, indices):
        inner = self._inner
        value, idx = p.value, indices.value

        def backward(g, tracked):
            zeros = inner.full(inner.shape(value), 0, inner.dtype(g), inner.device_of(g))
            return getattr(inner, add)(zeros, dim, idx, g), None

        return self._track(getattr(inner, read)(value, dim, idx), (p, indices), backward, read)

    def _indexed_add(self, read: str, add: str, p, dim, indices, values):
        inner = self._inner
        idx = indices.value

        def backward(g, tracked):
            gv = getattr(inner, read)(g, dim, idx) if tracked[2] else None
            return (g if tracked[0] else None), None, gv

        out = getattr(inner, add)(p.value, dim, idx, values.value)
        return self._track(out, (p, indices, values), backward, add)

    def gather(self, p, dim, indices):
        return self._indexed_read("gather", "scatter_add", p, dim, indices)

    def scatter_add(self, p, dim, indices, values):
        return self._indexed_add("gather", "scatter_add", p, dim, indices, values)

    def mask_where(self, p, mask, value):
        inner = self._inner
        m = mask.value
        p_shape, v_shape = inner.shape(p.value), inner.shape(value.value)

        def backward(g, tracked):
            zeros = inner.scalar_like(g, 0)
            gp = gv = None
            if tracked[0]:
                gp = rules.unbroadcast(inner, inner.mask_where(g, m, zeros), p_shape)
            if tracked[2]:
                gv = rules.unbroadcast(inner, inner.mask_where(zeros, m, g), v_shape)
            return gp, None, gv

        return self._track(
            inner.mask_where(p.value, m, value.value), (p, mask, value), backward, "mask_where"
        )

    def unary(self, op, p):
        inner = self._inner
        x = p.value
        out = inner.unary(op, x)
        rule = rules.UNARY.get(op)
        if rule is None or p.node is None:
            return ADPrimitive(out)
        return self._track(out, (p,), lambda g, t: (rule(inner, x, out, g),), op)

    def binary(self, op, lhs, rhs):
        inner = self._inner
        a, b = lhs.value, rhs.value
        out = inner.binary(op, a, b)
        rule = rules.BINARY.get(op)
        if rule is None or (lhs.node is None and rhs.node is None):
            return ADPrimitive(out)
        a_shape, b_shape = inner.shape(a), inner.shape(b)

        def backward(g, tracked):
            ga, gb = rule(inner, a, b, out, g, tracked)
            return (
                rules.unbroadcast(inner, ga, a_shape) if ga is not None else None,
                rules.unbroadcast(inner, gb, b_shape) if gb is not None else None,
            )

        return self._track(out, (lhs, rhs), backward, op)

    def binary_scalar(self, op, p, value):
        inner = self._inner
        x = p.value
        out = inner.binary_scalar(op, x, value)
        rule = rules.BINARY_SCALAR.get(op)
        if rule is None or p.node is None:
            return ADPrimitive(out)
        return self._track(out, (p,), lambda g, t: (rule(inner, x, value, out, g),), op + "_scalar")

    def reduce(self, op, p, dim):
        inner = self._inner
        x = p.value
        out = inner.reduce(op, x, dim)
        rule = rules.REDUCE.get(op)
        if rule is None or p.node is None:
            return ADPrimitive(out)
        return self._track(out, (p,), lambda g, t: (rule(inner, x, dim, out, g),), op)

    # ================================================================== creation (untracked)
    def full(self, shape, value, dtype, device):
        return ADPrimitive(self._inner.full(shape, value, dtype, _inner_device(device)))

    def arange(self, start, end, step, dtype, device):
        return ADPrimitive(self._inner.arange(start, end, step, dtype, _inner_device(device)))

    def random(self, shape, distribution, dtype, device):
        return ADPrimitive(self._inner.random(shape, distribution, dtype, _inner_device(device)))

    def scalar_like(self, p, value):
        return ADPrimitive(self._inner.scalar_like(p.value, value))


def _unwrap(value):
    """An argument as the inner backend takes it."""
    if isinstance(value, ADPrimitive):
        return value.value
    if isinstance(value, AutodiffDevice):
        return value.inner
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


# `AUTODIFF_OPS` names the protocol, which this class implements itself.
AUTODIFF_OPS = frozenset(n for n in vars(AutodiffOps) if not n.startswith("_"))
_RULES = named.build()
for _name, _method in _RULES.items():
    setattr(AutodiffBackend, _name, _method)
_HAS_RULE = frozenset(_RULES) | frozenset(
    n for n in vars(named.NamedRules) if n.startswith("float_")
)
# Forwarded untracked: Int and Bool ops, the float ops that carry no gradient, and the backward
# ops. A differentiable float op missing from both lists keeps the contract's default, which
# runs on this backend and is differentiated piece by piece.
_UNTRACKED = sorted(INT_OPS | BOOL_OPS | named.NOT_DIFFERENTIABLE) + sorted(
    n
    for n in dir(Backend)
    if n.endswith("_backward") and not n.startswith("_") and n not in vars(ModuleRules)
)
for _name in _UNTRACKED:
    setattr(AutodiffBackend, _name, named.forwarded(_name, ADPrimitive, _unwrap))


_lock = threading.Lock()
_cache: dict[int, AutodiffBackend] = {}


def Autodiff(inner: Backend, checkpointing: CheckpointingStrategy | None = None) -> AutodiffBackend:  # noqa: N802
    """The autodiff decorator of `inner`: `B = Autodiff(NdArray)`.

    Calling it twice with the same backend returns the same object, so tensors made through
    either call work together.
    """
    if not isinstance(inner, Backend):
        raise TypeError(f"Autodiff: expected a backend, got {inner!r}")
    if isinstance(inner, AutodiffBackend):
        raise BackendError("Autodiff: the backend already tracks gradients")
    if checkpointing is not None:
        return AutodiffBackend(inner, checkpointing)
    with _lock:
        backend = _cache.get(id(inner))
        if backend is None or backend.inner() is not inner:
            backend = _cache[id(inner)] = AutodiffBackend(inner)
        return backend
