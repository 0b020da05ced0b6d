"""burn-wgpu: the Wgpu backend, WGSL kernels on WebGPU through wgpu-py.

```python
from burn.backend import Wgpu
device = Wgpu.device()  # WgpuDevice.BestAvailable
```
"""

from burn.wgpu.backend import Wgpu, WgpuBackend
from burn.wgpu.custom import (
    KernelSource,
    WorkGroup,
    build_info,
    empty,
    info_layout,
    into_contiguous,
    launch,
)
from burn.wgpu.device import WgpuDevice
from burn.wgpu.kernels.layout import Dims, InfoLayout, InfoLayoutError, Strided, Word
from burn.wgpu.pool import DeviceMemoryError
from burn.wgpu.primitive import WgpuTensor

__all__ = [
    "DeviceMemoryError",
    "Dims",
    "InfoLayout",
    "InfoLayoutError",
    "KernelSource",
    "Strided",
    "Wgpu",
    "WgpuBackend",
    "WgpuDevice",
    "WgpuTensor",
    "Word",
    "WorkGroup",
    "build_info",
    "empty",
    "info_layout",
    "into_contiguous",
    "launch",
]
