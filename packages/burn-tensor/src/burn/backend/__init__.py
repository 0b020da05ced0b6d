"""Backends: the contract, the registry, and lazy access to installed backends.

`from burn.backend import NdArray` resolves `NdArray` through the `burn.backends` entry points,
so this package never imports a backend distribution itself.
"""

from burn.backend.base import Backend
from burn.backend.device import Capabilities, Device
from burn.backend.ops import (
    ActivationOps,
    BoolTensorOps,
    FloatTensorOps,
    IntTensorOps,
    ModuleOps,
    PrimitiveOps,
)
from burn.backend.registry import (
    available,
    backends,
    default,
    get,
    refresh,
    register_backend,
    unregister_backend,
)

__all__ = [
    "ActivationOps",
    "Backend",
    "BoolTensorOps",
    "Capabilities",
    "Device",
    "FloatTensorOps",
    "IntTensorOps",
    "ModuleOps",
    "PrimitiveOps",
    "available",
    "backends",
    "default",
    "get",
    "refresh",
    "register_backend",
    "unregister_backend",
]


def __getattr__(name: str) -> Backend:
    if name.startswith("_"):
        raise AttributeError(name)
    backend: Backend = get(name)
    return backend
