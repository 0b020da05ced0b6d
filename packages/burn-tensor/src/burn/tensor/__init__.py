"""The Tensor API of burn for Python: one `Tensor` type for every backend.

```python
from burn.tensor import Tensor, Int, TensorData, Distribution
x = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]])
```
"""

from burn.tensor.data import TensorData
from burn.tensor.display import PrintOptions, set_print_options
from burn.tensor.distribution import Distribution
from burn.tensor.dtype import DType
from burn.tensor.errors import (
    AllocationError,
    BackendError,
    BackendNotFoundError,
    BurnError,
    DeviceError,
    DTypeError,
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
    UnknownNameError,
    UsageError,
)
from burn.tensor.kind import Bool, Float, Int, Kind
from burn.tensor.shape import Shape
from burn.tensor.tensor import Tensor

__all__ = [
    "AllocationError",
    "BackendError",
    "BackendNotFoundError",
    "Bool",
    "BurnError",
    "DType",
    "DTypeError",
    "DeviceError",
    "Distribution",
    "Float",
    "Int",
    "Kind",
    "KindError",
    "OutOfRangeError",
    "PrintOptions",
    "RankError",
    "Shape",
    "ShapeError",
    "UnknownNameError",
    "UsageError",
    "Tensor",
    "TensorData",
    "set_print_options",
]
