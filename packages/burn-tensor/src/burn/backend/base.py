"""`Backend`: the sum of the ops groups, plus identity, devices and capabilities."""

from __future__ import annotations

from typing import Any

from burn.backend.device import Capabilities, Device
from burn.backend.ops import (
    ActivationOps,
    AutodiffOps,
    BoolTensorOps,
    FloatTensorOps,
    IntTensorOps,
    ModuleOps,
    PrimitiveOps,
)


class Backend(
    FloatTensorOps,
    IntTensorOps,
    BoolTensorOps,
    ModuleOps,
    ActivationOps,
    AutodiffOps,
    PrimitiveOps,
):
    """Base class of every backend.

    A backend is an instance (usually a module-level singleton such as `NdArray`). Subclasses
    implement the abstract core of `PrimitiveOps`; Python refuses to instantiate one that misses
    a required method and names it. Every named op (`float_add`, `int_gather`, `conv2d`,
    `relu`...) has a default composed from that core; a backend overrides the ones it runs
    faster, and decorators (`Autodiff`) forward each named op to the same name on the backend
    they wrap. The autodiff protocol (`backward`, `grad`, `float_set_require_grad`...) has
    defaults for backends that do not track gradients.

    Class attributes to set:
        name: the registry name (`"ndarray"`).
        capabilities: a `Capabilities` (dtypes, default float/int dtypes).
        host_memory: True when primitives live in host memory, so reading them is cheap; the
            Tensor API then checks index values (gather, select, embedding...) and raises
            `OutOfRangeError` instead of leaving out-of-range indices to the backend.
    """

    name: str = "backend"
    capabilities: Capabilities = Capabilities()
    host_memory: bool = False

    def device(self, *args: Any, **kwargs: Any) -> Device:
        """The backend's default device (backends may accept a selector)."""
        raise NotImplementedError(f"{type(self).__name__} must define device()")

    def devices(self) -> list[Device]:
        """Every device of this backend on this machine."""
        return [self.device()]

    def unavailable_reason(self) -> str | None:
        """Why this installed backend cannot run on this machine (no GPU adapter...), or None.

        The conformance suite skips with this reason locally and fails in CI.
        """
        return None

    def priority(self) -> int:
        """How strongly `default()` prefers this backend (higher wins; negative: never)."""
        return 0

    def inner(self) -> Backend:
        """The backend this one decorates (itself when it decorates nothing)."""
        return self

    def sync(self, device: Device | None = None) -> None:
        """Wait for queued work (a no-op on synchronous backends)."""

    def submit(self, device: Device | None = None) -> None:
        """Start the work queued for `device` without waiting for it (a no-op on backends that
        run each op when it is called).

        A backend that batches its work (Wgpu) or records it lazily (Fusion) hands it to the
        device now, so the host can prepare what comes next (the Learner loads the next batch)
        while the device computes, instead of starting it only when a result is read."""

    def __repr__(self) -> str:
        return self.display_name()

    def display_name(self) -> str:
        return type(self).__name__
