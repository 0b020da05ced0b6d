"""Per-channel ops on Wgpu (`kernels/norm.py`): batch norm in two kernels forward and two
backward, where the contract composes it from per-dim reductions and broadcast elementwise ops
(about twenty launches for a 4-d input), and the bias gradients of convolutions and transposed
convolutions in one (the contract's takes two reductions). Contiguous float32 operands only;
anything else (another dtype, a strided view) runs the composition."""

from __future__ import annotations

import math

from burn.backend.ops.module import ModuleOps
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
    from burn.wgpu.backend import scalar_bits  # the backend imports this module

    channels = x.shape[1]
    inner = math.prod(x.shape[2:])
    return K.CHANNELS.pack(
        n=x.numel,
        channels=channels,
        inner=inner,
        count=x.numel // channels,
        x_offset=x.offset,
        g_offset=0 if g is None else g.offset,
        gamma_offset=0 if gamma is None else gamma.offset,
        beta_offset=0 if beta is None else beta.offset,
        epsilon=scalar_bits(epsilon, DType.F32),
    )


def _bias_backward(name: str):
    """`name` (a convolution's bias gradient): the output gradient summed per channel."""

    def bias_backward(self, x, bias, output_grad):
        if not _served(output_grad):
            return getattr(super(WgpuNormOps, self), name)(x, bias, output_grad)
        out = self._like(output_grad, (output_grad.shape[1],))
        output_grad.rt.launch(
            K.sum_per_channel(),
            ("r", "rw"),
            (output_grad.handle, out.handle),
            _info(output_grad, 0.0),
            output_grad.shape[1],
        )
        return out

    bias_backward.__name__ = name
    bias_backward.__qualname__ = f"WgpuNormOps.{name}"
    bias_backward.__doc__ = getattr(ModuleOps, name).__doc__
    return bias_backward


class WgpuNormOps:
    """`batch_norm` and `batch_norm_backward`, and the bias gradients of convolutions, of the
    Wgpu backend (a mixin of `WgpuBackend`)."""

    conv1d_bias_backward = _bias_backward("conv1d_bias_backward")
    conv2d_bias_backward = _bias_backward("conv2d_bias_backward")
    conv3d_bias_backward = _bias_backward("conv3d_bias_backward")
    conv_transpose1d_bias_backward = _bias_backward("conv_transpose1d_bias_backward")
    conv_transpose2d_bias_backward = _bias_backward("conv_transpose2d_bias_backward")
    conv_transpose3d_bias_backward = _bias_backward("conv_transpose3d_bias_backward")

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
