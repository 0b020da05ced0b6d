"""wgpu-native's functions for what every launch does, called without wgpu-py's wrappers.

Every kernel launch records three commands on a compute pass: set the pipeline, set the bind
group, dispatch. wgpu-py wraps each native function in an error capture that costs several
times the call itself, and for a training step of a few hundred launches that is a large part
of the host's time. A compute pass's command errors are reported by WebGPU when its command
buffer is finished (which still goes through wgpu-py), so calling the three functions directly
loses nothing (`PassCalls`).

A launch on buffers it has not bound before also makes a bind group, which wgpu-py builds
from Python dicts at about twice the cost of filling the C descriptor directly
(`BindGroupMaker`); the creation itself still goes through wgpu-py's error capture, so a
rejected bind group raises as before.

Where this wgpu-py does not expose these internals as expected, `pass_calls()` and
`bind_group_maker()` are None and callers use wgpu-py's public methods.
"""

from __future__ import annotations

from typing import Any


class PassCalls:
    """The native set-pipeline, set-bind-group and dispatch functions of a compute pass."""

    def __init__(self, ffi: Any, lib: Any):
        self.ffi = ffi
        self.set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        self.set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        self.dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self._offsets: dict[int, Any] = {}

    def offset(self, value: int) -> Any:
        """A one-element `uint32_t` array holding a dynamic offset (made once per value: a
        batch's info offsets are the same few hundred multiples of the alignment)."""
        cell = self._offsets.get(value)
        if cell is None:
            if len(self._offsets) >= 4096:
                self._offsets.clear()
            cell = self._offsets[value] = self.ffi.new("uint32_t[1]", [value])
        return cell

    @staticmethod
    def handle(compute: Any) -> Any:
        """The native handle of a wgpu-py compute pass, or None."""
        return getattr(compute, "_internal", None)


class BindGroupMaker:
    """Bind groups of whole buffers, with the C descriptor filled directly."""

    def __init__(self, ffi: Any, safe_lib: Any, bind_group_class: type):
        self.ffi = ffi
        self._create = safe_lib.wgpuDeviceCreateBindGroup  # wgpu-py's error capture kept
        self._wrap = bind_group_class

    def create(self, device: Any, layout: Any, entries: list[tuple[int, Any, int]]) -> Any:
        """A bind group of `layout` binding `(binding, buffer, size)` at offset 0 each; a
        wgpu-py `GPUBindGroup`, released like any other when dropped."""
        ffi = self.ffi
        array = ffi.new("WGPUBindGroupEntry[]", len(entries))
        for k, (binding, buffer, size) in enumerate(entries):
            entry = array[k]  # zero-filled: no sampler, no texture view, no chain
            entry.binding = binding
            entry.buffer = buffer._internal
            entry.size = size
        descriptor = ffi.new("WGPUBindGroupDescriptor *")  # zero-filled: an empty label
        descriptor.layout = layout._internal
        descriptor.entries = array
        descriptor.entryCount = len(entries)
        return self._wrap("", self._create(device._internal, descriptor), device)


def bind_group_maker() -> BindGroupMaker | None:
    """The direct bind-group maker, or None where wgpu-py's internals differ."""
    try:
        from wgpu.backends.wgpu_native import _api
        from wgpu.backends.wgpu_native._ffi import ffi

        return BindGroupMaker(ffi, _api.libf, _api.GPUBindGroup)
    except (ImportError, AttributeError):
        return None


def pass_calls() -> PassCalls | None:
    """The native compute-pass functions, or None where wgpu-py's internals differ."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        return PassCalls(ffi, lib)
    except (ImportError, AttributeError):
        return None
