"""One device per rank, chosen from the rank's index on its machine."""

from __future__ import annotations

from typing import Any

from burn.collective.communicator import Communicator

# Preferred kinds of device, best first (Wgpu's names); a backend with one device (NdArray)
# gives every rank that device.
_PREFERENCE = ("DiscreteGpu", "IntegratedGpu", "VirtualGpu")


def rank_device(backend: Any, comm: Communicator | None = None) -> Any:
    """The device of `backend` for this rank: GPU number `local_rank` (modulo the GPUs found)
    on a GPU backend, the one device of a CPU backend.

    ```python
    from burn.backend import Autodiff, NdArray
    from burn.collective import rank_device

    device = rank_device(Autodiff(NdArray))  # with Wgpu: the 2nd GPU for the 2nd rank
    ```
    """
    comm = comm if comm is not None else Communicator.world()
    devices = list(backend.devices())
    for kind in _PREFERENCE:
        matching = [d for d in devices if _kind(d) == kind]
        if matching:
            devices = matching
            break
    if not devices:
        return backend.device()
    return devices[comm.local_rank % len(devices)]


def _kind(device: Any) -> str | None:
    inner = getattr(device, "inner", device)
    inner = inner() if callable(inner) else inner
    return getattr(inner, "kind", None)
