"""Activations on Wgpu as one kernel each (`kernels/activation.py`): relu's backward and
log-softmax with its backward, which the contract composes from three, six and four kernels;
and the loss built on log-softmax, cross-entropy, one kernel each way (`kernels/loss.py`)
where the contract's composition takes four forward and five backward.

They serve contiguous float32 tensors; anything else (another dtype, a strided view) runs the
contract's composition. A training step of the guide's model launches twelve kernels fewer.
"""

from __future__ import annotations

import math

from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.kernels.activation import SERIAL_LENGTH
from burn.wgpu.primitive import WgpuTensor

# The loss kernels' reach: a thread walks a row three times, and one workgroup every row.
MAX_LOSS_CLASSES = 1024
MAX_LOSS_SCORES = 1 << 20
# The loss launches write `K.CROSS_ENTROPY`'s words as a list in this order (checked once).
_LOSS_WORDS = {"rows": 1, "cols": 2, "x_offset": 3, "t_offset": 4, "g_offset": 5}
assert K.CROSS_ENTROPY.pack(**_LOSS_WORDS) == [1, 2, 3, 4, 5], "K.CROSS_ENTROPY's words moved"


def _served(*tensors: WgpuTensor) -> bool:
    """Whether the kernels take these operands: contiguous float32 of one shape."""
    shape = tensors[0].shape
    return all(t.dtype is DType.F32 and t.shape == shape and t.is_contiguous() for t in tensors)


class WgpuActivationOps:
    """`relu_backward`, `log_softmax` and `log_softmax_backward`, `cross_entropy` and
    `cross_entropy_backward` of the Wgpu backend (a mixin of `WgpuBackend`)."""

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

    def cross_entropy(self, logits: WgpuTensor, targets: WgpuTensor):
        classes = self._loss_served(logits, targets)
        if classes is None:
            return super().cross_entropy(logits, targets)  # type: ignore[misc]
        out = self._like(logits, (1,))  # type: ignore[attr-defined]
        idx = self._index(targets)  # type: ignore[attr-defined]
        info = [logits.shape[0], classes, logits.offset, idx.offset, 0]
        logits.rt.launch(
            K.cross_entropy(),
            ("r", "r", "rw"),
            (logits.handle, idx.handle, out.handle),
            info,
            1,
            checks_indices=True,
        )
        return out

    def cross_entropy_backward(self, logits: WgpuTensor, targets: WgpuTensor, grad: WgpuTensor):
        classes = self._loss_served(logits, targets)
        if classes is None or grad.dtype is not DType.F32:
            return super().cross_entropy_backward(logits, targets, grad)  # type: ignore[misc]
        out = self._like(logits, logits.shape)  # type: ignore[attr-defined]
        idx = self._index(targets)  # type: ignore[attr-defined]
        rows = logits.shape[0]
        info = [rows, classes, logits.offset, idx.offset, grad.offset]
        logits.rt.launch(
            K.cross_entropy_backward(),
            ("r", "r", "r", "rw"),
            (logits.handle, idx.handle, grad.handle, out.handle),
            info,
            (rows + K.WG - 1) // K.WG,
            checks_indices=True,
        )
        return out

    def _loss_served(self, logits: WgpuTensor, targets: WgpuTensor) -> int | None:
        """The class count when the loss kernels take these operands (contiguous float32
        scores, contiguous targets, every row in one workgroup's reach), else None; targets
        known on the host are checked here, as `gather` checks them."""
        rows, classes = logits.shape
        if (
            not _served(logits)
            or not targets.is_contiguous()
            or not 0 < classes <= MAX_LOSS_CLASSES
            or not 0 < rows * classes <= MAX_LOSS_SCORES
        ):
            return None
        self._check_indices(targets, classes, "cross_entropy")  # type: ignore[attr-defined]
        return classes

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
