"""`WgpuDevice`: which WebGPU adapter a tensor lives on.

The variants follow Burn's: `BestAvailable` (the default), `DiscreteGpu(i)`, `IntegratedGpu(i)`,
`VirtualGpu(i)` and `Cpu` (a software adapter such as Mesa's lavapipe). The index counts
adapters of that type in the order wgpu enumerates them.
"""

from __future__ import annotations

from burn.backend import Device
from burn.tensor.errors import DeviceError

# adapter_type strings that wgpu reports, by device kind.
ADAPTER_TYPES = {
    "DiscreteGpu": "DiscreteGPU",
    "IntegratedGpu": "IntegratedGPU",
    "VirtualGpu": "VirtualGPU",
    "Cpu": "CPU",
}


class WgpuDevice(Device):
    """A WebGPU adapter, named by kind and index (`WgpuDevice.DiscreteGpu(0)`)."""

    __slots__ = ("kind", "index")

    BestAvailable: WgpuDevice
    Cpu: WgpuDevice

    def __init__(self, kind: str = "BestAvailable", index: int = 0):
        if kind != "BestAvailable" and kind not in ADAPTER_TYPES:
            kinds = ["BestAvailable", *ADAPTER_TYPES]
            raise DeviceError(f"unknown wgpu device kind {kind!r} (one of {kinds})")
        self.kind = kind
        self.index = int(index)

    @classmethod
    def DiscreteGpu(cls, index: int = 0) -> WgpuDevice:  # noqa: N802 - Burn's variant name
        return cls("DiscreteGpu", index)

    @classmethod
    def IntegratedGpu(cls, index: int = 0) -> WgpuDevice:  # noqa: N802
        return cls("IntegratedGpu", index)

    @classmethod
    def VirtualGpu(cls, index: int = 0) -> WgpuDevice:  # noqa: N802
        return cls("VirtualGpu", index)

    def _key(self):
        return (self.kind, self.index)

    def __repr__(self) -> str:
        if self.kind in ("BestAvailable", "Cpu"):
            return f"WgpuDevice.{self.kind}"
        return f"WgpuDevice.{self.kind}({self.index})"


WgpuDevice.BestAvailable = WgpuDevice("BestAvailable")
WgpuDevice.Cpu = WgpuDevice("Cpu")
