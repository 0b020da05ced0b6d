"""The `FusionBackend` contract: what a backend provides so that `Fusion(B)` can fuse its ops.

A backend joins fusion by registering an object in the `burn.fusion` entry-point group under
its backend name (`Backend.name`, e.g. `wgpu`). burn-fusion never imports the backend's
package: it finds the object through the entry point and talks to it only through the methods
below, so the object does not need to import burn-fusion either (the contract is structural).

The fuser answers three questions and does one job:

- `implementations()`: which of the backend's core ops (`unary`, `binary`, `binary_scalar`,
  `cast`, `mask_where`, `expand`, `full`, `scalar_like`) its fused kernels stand for, as the
  functions it replaces. `Fusion(B)` records an op only while `type(B)` still uses that very
  function, so a subclass that overrides `binary` (a spy, a patched backend) runs its own
  `binary`, eagerly.
- `supports(node)`: whether it can generate code for one recorded node (op and dtype). The
  answer may depend on the node's kind, op, dtypes and ranks, and on its size only past 2^24
  elements: `Fusion(B)` remembers it per kind, op, dtypes and ranks below that.
- `max_inputs(device)` and `layout_key(primitive, shape)`: how many primitives one kernel may
  read, and what of a leaf's layout the generated code depends on (contiguous or strided).
- `compile(segment)` returns a plan (anything) for a segment's signature, and
  `execute(plan, segment)` runs it and returns one new primitive per output. `Fusion(B)`
  caches plans by signature, so `compile` runs once per distinct segment.

Optionally, a fuser also runs reductions whose input is still recorded, so the chain feeding
a reduction is evaluated inside it and never written: it lists `reduce` (and
`float_mean_dim`) in `implementations()` and has `supports_reduce(op, node, dim)`,
`compile_reduce(segment, op, dim)` and `execute_reduce(plan, segment, dim)` (`op` is one of
the contract's reductions, or `mean`; the result keeps `dim` with size 1). Plans are cached by
the op, the dim and the segment's signature.

Optionally too, a fuser runs a matmul with the elementwise ops that consume it as its
epilogue, applied to each product as it is stored, so the product itself is written only if
something still reads it. It lists `float_matmul` in `implementations()` and has:

- `matmul_operands(lhs, rhs)`: for two concrete primitives, None (the matmul then runs eagerly)
  or `(lhs, rhs, key)`: the operands its kernel will read (possibly copies in a layout it
  prefers) and a hashable key of everything that kernel depends on besides the epilogue;
- `compile_matmul(segment)` and `execute_matmul(plan, segment)`, for a segment whose
  `matmul` is the position of its one `matmul` node (arg `(lhs, rhs, key)`); its other nodes
  are the epilogue, evaluated at the product's shape. Plans are cached by the signature, which
  holds the key.

A recorded matmul that cannot be an epilogue's product (read at another shape, or by kernels of
two shapes) runs on the inner backend's `float_matmul`, as it would without fusion.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from burn.fusion.ir import Node, Segment

GROUP = "burn.fusion"

# The core ops a fuser may stand for.
FUSABLE_CORE_OPS = frozenset(
    {"unary", "binary", "binary_scalar", "cast", "mask_where", "expand", "full", "scalar_like"}
)
# Reductions a fuser may run with a recorded chain as their prologue (optional, see below).
REDUCIBLE_OPS = frozenset({"reduce", "float_mean_dim"})
# The matmul a fuser may run with its consumers as the epilogue (optional, see below).
MATMUL_OP = "float_matmul"


@runtime_checkable
class FusionBackend(Protocol):
    """What a backend implements to be fused (see the module docstring)."""

    def implementations(self) -> Mapping[str, Callable[..., Any]]:
        """Core op name -> the backend's function that fused kernels replace."""
        ...

    def supports(self, node: Node) -> bool:
        """Whether the generated code can compute `node` (its op and dtypes)."""
        ...

    def max_inputs(self, device: Any) -> int:
        """The most primitives (leaves plus outputs) one kernel may bind on `device`."""
        ...

    def layout_key(self, primitive: Any, shape: tuple[int, ...]) -> Hashable:
        """What of `primitive`'s layout, read over `shape`, the generated code depends on."""
        ...

    def compile(self, segment: Segment) -> Any:
        """A plan for every segment with `segment.signature`."""
        ...

    def execute(self, plan: Any, segment: Segment) -> list[Any]:
        """Run `plan` on the segment's leaves and params: one primitive per output."""
        ...


_lock = threading.Lock()
_found: dict[str, FusionBackend | None] = {}


def fusion_backend_for(name: str) -> FusionBackend | None:
    """The fuser registered for backend `name`, or None (the backend then runs eagerly)."""
    with _lock:
        if name in _found:
            return _found[name]
        fuser = None
        for ep in entry_points(group=GROUP):
            if ep.name == name:
                fuser = ep.load()
                break
        if fuser is not None and not isinstance(fuser, FusionBackend):
            raise TypeError(
                f"the {GROUP!r} entry point {name!r} is {fuser!r}, which does not implement "
                "FusionBackend"
            )
        _found[name] = fuser
        return fuser


def register_fusion_backend(name: str, fuser: FusionBackend | None) -> None:
    """Use `fuser` for backend `name` from now on (tests; None turns fusion off for it)."""
    with _lock:
        _found[name] = fuser
