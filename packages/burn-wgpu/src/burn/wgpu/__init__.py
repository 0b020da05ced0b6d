"""burn-wgpu: the Wgpu backend, WGSL kernels on WebGPU through wgpu-py.

```python
from burn.backend import Wgpu
device = Wgpu.device()  # WgpuDevice.BestAvailable
```
"""

from burn.wgpu.backend import Wgpu, WgpuBackend
from burn.wgpu.custom import KernelSource, WorkGroup, build_info, empty, into_contiguous, launch
from burn.wgpu.device import WgpuDevice
from burn.wgpu.pool import DeviceMemoryError
from burn.wgpu.primitive import WgpuTensor

__all__ = [
    "DeviceMemoryError",
    "KernelSource",
    "Wgpu",
    "WgpuBackend",
    "WgpuDevice",
    "WgpuTensor",
    "WorkGroup",
    "build_info",
    "empty",
    "into_contiguous",
    "launch",
]
