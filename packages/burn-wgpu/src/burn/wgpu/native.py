"""wgpu-native's compute-pass functions, called without wgpu-py's per-call wrappers.

Every kernel launch records three commands on a compute pass: set the pipeline, set the bind
group, dispatch. wgpu-py wraps each native function in an error capture that costs several
times the call itself, and for a training step of a few hundred launches that is a large part
of the host's time. A compute pass's command errors are reported by WebGPU when its command
buffer is finished (which still goes through wgpu-py), so calling the three functions directly
loses nothing. Where this wgpu-py does not expose them as expected, `pass_calls()` is None and
callers use wgpu-py's public methods.
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


def pass_calls() -> PassCalls | None:
    """The native compute-pass functions, or None where wgpu-py's internals differ."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        return PassCalls(ffi, lib)
    except (ImportError, AttributeError):
        return None
