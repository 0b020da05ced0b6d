"""The burn exception hierarchy.

Every error raised for bad input derives from `BurnError` and names the operation and the shapes,
dtypes or devices involved, so a user never has to decode a bare numpy error from deep inside.
"""

from __future__ import annotations


class BurnError(Exception):
    """Base class of every error burn raises on purpose."""


class ShapeError(BurnError, ValueError):
    """Shapes that do not fit the operation (broadcasting, reshape, matmul...)."""


class RankError(ShapeError):
    """A tensor of the wrong rank (number of dimensions) for the operation."""


class KindError(BurnError, TypeError):
    """A tensor of the wrong kind (Float, Int, Bool) for the operation."""


class DTypeError(BurnError, TypeError):
    """A dtype the operation or the backend does not support, or mixed dtypes."""


class DeviceError(BurnError, ValueError):
    """Tensors on different devices or backends used together."""


class OutOfRangeError(BurnError, IndexError):
    """An index or a dimension outside the tensor."""


class BackendNotFoundError(BurnError, ImportError):
    """A backend name that no installed distribution provides."""


class BackendError(BurnError, RuntimeError):
    """A backend that cannot do what was asked (for example `backward` without autodiff)."""


class AllocationError(BurnError, MemoryError):
    """A tensor too large for the device's memory (names the op and the shape)."""


class UsageError(BurnError, TypeError):
    """A call spelled for another library (PyTorch, numpy); the message names Burn's spelling."""


class UnknownNameError(BurnError, AttributeError):
    """An attribute `Tensor` does not have; PyTorch names get the Burn equivalent."""
