"""The NdArray device: the host CPU."""

from __future__ import annotations

from burn.backend import Device


class NdArrayDevice(Device):
    """The CPU. NdArray has one device, `NdArrayDevice.Cpu`, as in Burn."""

    def __repr__(self) -> str:
        return "Cpu"


NdArrayDevice.Cpu = NdArrayDevice()
