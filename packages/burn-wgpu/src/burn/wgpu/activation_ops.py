"""Activations on Wgpu as one kernel each (`kernels/activation.py`): relu's backward and
log-softmax with its backward, which the contract composes from three, six and four kernels.

They serve contiguous float32 tensors; anything else (another dtype, a strided view) runs the
contract's composition. A training step of the guide's model launches twelve kernels fewer.
"""

from __future__ import annotations

import math

from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.kernels.activation import SERIAL_LENGTH
from burn.wgpu.primitive import WgpuTensor


def _served(*tensors: WgpuTensor) -> bool:
    """Whether the kernels take these operands: contiguous float32 of one shape."""
    shape = tensors[0].shape
    return all(t.dtype is DType.F32 and t.shape == shape and t.is_contiguous() for t in tensors)


class WgpuActivationOps:
    """`relu_backward`, `log_softmax` and `log_softmax_backward` of the Wgpu backend (a mixin
    of `WgpuBackend`)."""

    def relu_backward(self, output: WgpuTensor, grad: WgpuTensor):
        if not _served(output, grad) or output.numel == 0:
            return super().relu_backward(output, grad)  # type: ignore[misc]
        out = self._like(grad, grad.shape)  # type: ignore[attr-defined]
        n = out.numel
        info = K.RELU_BACKWARD.pack(n=n, o_offset=output.offset, g_offset=grad.offset)
        grad.rt.launch(
            K.relu_backward(),
            ("r", "r", "rw"),
            (output.handle, grad.handle, out.handle),
            info,
            (n + K.WG - 1) // K.WG,
        )
        return out

    def log_softmax(self, x: WgpuTensor, dim: int):
        if not _served(x) or x.numel == 0:
            return super().log_softmax(x, dim)  # type: ignore[misc]
        out = self._like(x, x.shape)  # type: ignore[attr-defined]
        self._rows(K.log_softmax, (x,), out, dim)
        return out

    def log_softmax_backward(self, output: WgpuTensor, grad: WgpuTensor, dim: int):
        if not _served(output, grad) or output.numel == 0:
            return super().log_softmax_backward(output, grad, dim)  # type: ignore[misc]
        out = self._like(grad, grad.shape)  # type: ignore[attr-defined]
        self._rows(K.log_softmax_backward, (output, grad), out, dim)
        return out

    @staticmethod
    def _rows(generator, operands: tuple[WgpuTensor, ...], out: WgpuTensor, dim: int) -> None:
        """Launch a row kernel (layout `K.ROWS`) over the rows along `dim` of `operands`."""
        shape = out.shape
        dim %= len(shape)
        length = shape[dim]
        inner = math.prod(shape[dim + 1 :])
        rows = out.numel // length
        serial = length <= SERIAL_LENGTH
        offsets = [t.offset for t in operands] + [0]
        info = K.ROWS.pack(
            rows=rows, length=length, inner=inner, a_offset=offsets[0], b_offset=offsets[1]
        )
        out.rt.launch(
            generator(serial),
            ("r",) * len(operands) + ("rw",),
            tuple(t.handle for t in operands) + (out.handle,),
            info,
            (rows + K.WG - 1) // K.WG if serial else rows,
        )
