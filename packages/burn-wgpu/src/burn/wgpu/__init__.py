"""burn-wgpu: the Wgpu backend, WGSL kernels on WebGPU through wgpu-py.

```python
from burn.backend import Wgpu
device = Wgpu.device()  # WgpuDevice.BestAvailable
```
"""

from burn.wgpu.backend import Wgpu, WgpuBackend, WgpuTensor
from burn.wgpu.device import WgpuDevice

__all__ = ["Wgpu", "WgpuBackend", "WgpuDevice", "WgpuTensor"]
