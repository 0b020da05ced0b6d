"""Adapter probing: which WebGPU adapters this machine has, and which one a device names.

Probing costs milliseconds and, on a headless machine, makes wgpu's OpenGL probe print noise
on the process's standard error; it is done once per process, with that noise filtered out.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

from burn.tensor.errors import BackendError
from burn.wgpu.device import ADAPTER_TYPES, WgpuDevice

import wgpu


class NoAdapterError(BackendError):
    """No WebGPU adapter of the requested kind exists on this machine."""


# Lines that native libraries print while wgpu probes its OpenGL backend on a headless machine
# (libwayland looking for a display server): noise, not errors.
_PROBE_NOISE = (b"XDG_RUNTIME_DIR is invalid",)


@contextmanager
def _native_stderr_filtered():
    """Route file descriptor 2 through a temporary file and put back all but probe noise."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [
                line
                for line in captured.read().splitlines(keepends=True)
                if not any(noise in line for noise in _PROBE_NOISE)
            ]
            if kept:
                os.write(2, b"".join(kept))


_adapters: list | None = None


def enumerate_adapters() -> list[wgpu.GPUAdapter]:
    """Every adapter wgpu finds, probed once per process (each probe costs milliseconds and,
    on headless machines, makes the OpenGL probe print noise, which is filtered out)."""
    global _adapters
    if _adapters is None:
        with _native_stderr_filtered():
            _adapters = list(wgpu.gpu.enumerate_adapters_sync())
    return _adapters


def select_adapter(kind: str, index: int) -> wgpu.GPUAdapter:
    """The adapter for a device kind; `BestAvailable` prefers discrete > integrated > ... ."""
    adapters = list(enumerate_adapters())
    # Native backends first: OpenGL adapters duplicate Vulkan ones with fewer features.
    adapters.sort(key=lambda a: a.info.get("backend_type") == "OpenGL")
    if kind == "BestAvailable":
        if not adapters:
            raise NoAdapterError("no WebGPU adapter found (install a Vulkan driver)")
        # Discrete > integrated > virtual > software > whatever else wgpu reports.
        rank = ["DiscreteGPU", "IntegratedGPU", "VirtualGPU", "CPU"]
        return min(adapters, key=lambda a: _position(rank, a.info.get("adapter_type")))
    wanted = ADAPTER_TYPES[kind]
    matching = [a for a in adapters if a.info.get("adapter_type") == wanted]
    if index >= len(matching):
        raise NoAdapterError(f"no {kind} adapter #{index} (found {len(matching)})")
    return matching[index]


def _position(order: list[str], item) -> int:
    return order.index(item) if item in order else len(order)


def adapter_devices() -> list[WgpuDevice]:
    """A device for each native adapter, numbered per kind in enumeration order (OpenGL
    adapters duplicate Vulkan ones, so they are left out)."""
    kinds = {adapter_type: kind for kind, adapter_type in ADAPTER_TYPES.items()}
    found: list[WgpuDevice] = []
    counts: dict[str, int] = {}
    for adapter in enumerate_adapters():
        kind = kinds.get(adapter.info.get("adapter_type"))
        if kind is None or adapter.info.get("backend_type") == "OpenGL":
            continue
        i = counts[kind] = counts.get(kind, -1) + 1
        found.append(WgpuDevice.Cpu if kind == "Cpu" and i == 0 else WgpuDevice(kind, i))
    return found
