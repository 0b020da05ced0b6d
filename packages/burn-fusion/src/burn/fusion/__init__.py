"""burn-fusion: `Fusion(B)` records elementwise ops lazily and runs them as fused kernels.

```python
from burn.backend import Autodiff, Fusion, NdArray
B = Autodiff(Fusion(NdArray))  # NdArray has no fuser: Fusion runs its ops eagerly
```
"""

from burn.fusion.backend import FusedBackend, Fusion, FusionDevice, FusionTensor
from burn.fusion.contract import (
    FUSABLE_CORE_OPS,
    FusionBackend,
    fusion_backend_for,
    register_fusion_backend,
)
from burn.fusion.ir import Node, Segment
from burn.fusion.stream import FusionStats

__all__ = [
    "FUSABLE_CORE_OPS",
    "FusedBackend",
    "Fusion",
    "FusionBackend",
    "FusionDevice",
    "FusionStats",
    "FusionTensor",
    "Node",
    "Segment",
    "fusion_backend_for",
    "register_fusion_backend",
]
