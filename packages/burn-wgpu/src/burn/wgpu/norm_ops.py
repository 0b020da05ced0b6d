"""Batch norm on Wgpu: two kernels forward and two backward (`kernels/norm.py`), where the
contract composes it from per-dim reductions and broadcast elementwise ops (about twenty
launches for a 4-d input). Contiguous float32 operands only; anything else (another dtype, a
strided view) runs the composition."""

from __future__ import annotations

import math

import numpy as np
from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor


def _served(x: WgpuTensor, *vectors: WgpuTensor) -> bool:
    """Whether the kernels take these operands: contiguous float32, with something per
    channel to normalize, and `[C]` vectors."""
    tensors = (x, *vectors)
    channels = x.shape[1] if len(x.shape) >= 2 else 0
    return (
        channels > 0
        and x.numel > 0
        and all(t.dtype is DType.F32 and t.is_contiguous() for t in tensors)
        and all(v.shape == (channels,) for v in vectors)
    )


def _info(x: WgpuTensor, epsilon: float, g=None, gamma=None, beta=None) -> list[int]:
    channels = x.shape[1]
    inner = math.prod(x.shape[2:])
    return K.BATCH_NORM.pack(
        n=x.numel,
        channels=channels,
        inner=inner,
        count=x.numel // channels,
        x_offset=x.offset,
        g_offset=0 if g is None else g.offset,
        gamma_offset=0 if gamma is None else gamma.offset,
        beta_offset=0 if beta is None else beta.offset,
        epsilon=int(np.array(epsilon, np.float32).view(np.uint32)),
    )


class WgpuNormOps:
    """`batch_norm` and `batch_norm_backward` of the Wgpu backend (a mixin of `WgpuBackend`)."""

    def batch_norm(self, x: WgpuTensor, gamma: WgpuTensor, beta: WgpuTensor, epsilon: float):
        if not _served(x, gamma, beta):
            return super().batch_norm(x, gamma, beta, epsilon)  # type: ignore[misc]
        channels = (x.shape[1],)
        mean = self._like(x, channels)  # type: ignore[attr-defined]
        var = self._like(x, channels)  # type: ignore[attr-defined]
        out = self._like(x, x.shape)  # type: ignore[attr-defined]
        info = _info(x, epsilon, gamma=gamma, beta=beta)
        rt = x.rt
        rt.launch(
            K.batch_norm_stats(),
            ("r", "rw", "rw"),
            (x.handle, mean.handle, var.handle),
            info,
            channels[0],
        )
        rt.launch(
            K.batch_norm_apply(),
            ("r", "r", "r", "r", "r", "rw"),
            (x.handle, mean.handle, var.handle, gamma.handle, beta.handle, out.handle),
            info,
            (x.numel + K.WG - 1) // K.WG,
        )
        return out, mean, var

    def batch_norm_backward(
        self, x: WgpuTensor, gamma: WgpuTensor, output_grad: WgpuTensor, epsilon: float
    ):
        if not _served(x, gamma) or not _served(output_grad) or output_grad.shape != x.shape:
            return super().batch_norm_backward(x, gamma, output_grad, epsilon)  # type: ignore[misc]
        channels = x.shape[1]
        stats = self._like(x, (2, channels))  # type: ignore[attr-defined]
        gamma_grad = self._like(x, (channels,))  # type: ignore[attr-defined]
        beta_grad = self._like(x, (channels,))  # type: ignore[attr-defined]
        x_grad = self._like(x, x.shape)  # type: ignore[attr-defined]
        info = _info(x, epsilon, g=output_grad, gamma=gamma)
        rt = x.rt
        rt.launch(
            K.batch_norm_grad_stats(),
            ("r", "r", "rw", "rw", "rw"),
            (x.handle, output_grad.handle, stats.handle, gamma_grad.handle, beta_grad.handle),
            info,
            channels,
        )
        rt.launch(
            K.batch_norm_x_grad(),
            ("r", "r", "r", "r", "r", "r", "rw"),
            (
                x.handle,
                output_grad.handle,
                stats.handle,
                gamma.handle,
                gamma_grad.handle,
                beta_grad.handle,
                x_grad.handle,
            ),
            info,
            (x.numel + K.WG - 1) // K.WG,
        )
        return x_grad, gamma_grad, beta_grad
