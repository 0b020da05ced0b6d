"""What a model file needs, in one import: `from burn.prelude import *`."""

from burn.backend import Backend, Device
from burn.config import config
from burn.module import Module, Param
from burn.tensor import Bool, Distribution, Float, Int, Shape, Tensor, TensorData

__all__ = [
    "Backend",
    "Bool",
    "Device",
    "Distribution",
    "Float",
    "Int",
    "Module",
    "Param",
    "Shape",
    "Tensor",
    "TensorData",
    "config",
]
