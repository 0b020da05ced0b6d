"""Optimizer updates on Wgpu: Adam's step of a parameter as one kernel (`kernels/optim.py`)
instead of the contract's twelve elementwise ops, for contiguous float32 tensors; anything
else (another dtype, a strided view) runs the contract's composition."""

from __future__ import annotations

import math

import numpy as np
from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor

# The step's scalars, in the order of their words in `K.ADAM`.
_SCALARS = ("beta_1", "beta_2", "one_b1", "one_b2", "c1", "c2", "epsilon", "lr", "decay", "shrink")


class WgpuOptimOps:
    """`float_adam_step` of the Wgpu backend (a mixin of `WgpuBackend`)."""

    def float_adam_step(
        self,
        tensor: WgpuTensor,
        grad: WgpuTensor,
        moment_1: WgpuTensor | None,
        moment_2: WgpuTensor | None,
        time: int,
        lr: float,
        beta_1: float,
        beta_2: float,
        epsilon: float,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ):
        first = moment_1 is None or moment_2 is None
        operands = [tensor, grad] if first else [tensor, grad, moment_1, moment_2]
        shape = tensor.shape
        if any(
            t.dtype is not DType.F32 or t.shape != shape or not t.is_contiguous() for t in operands
        ):
            return super().float_adam_step(  # type: ignore[misc]  # the contract's composition
                tensor,
                grad,
                moment_1,
                moment_2,
                time,
                lr,
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
                decoupled_weight_decay,
            )
        l2 = bool(weight_decay) and not decoupled_weight_decay
        decoupled = bool(weight_decay) and decoupled_weight_decay
        m_in = grad if first else moment_1
        v_in = grad if first else moment_2
        outs = [self._like(tensor, shape) for _ in range(3)]  # type: ignore[attr-defined]
        n = math.prod(shape)
        # Each scalar as the contract's composition rounds it: computed in float64, stored as
        # float32 (one word each).
        values = (
            beta_1,
            beta_2,
            1.0 - beta_1,
            1.0 - beta_2,
            1.0 - beta_1**time,
            1.0 - beta_2**time,
            epsilon,
            lr,
            weight_decay,
            lr * weight_decay,
        )
        words = np.array(values, dtype=np.float32).view(np.uint32).tolist()
        info = K.ADAM.pack(
            n=n,
            t_offset=tensor.offset,
            g_offset=grad.offset,
            m_offset=m_in.offset,  # type: ignore[union-attr]
            v_offset=v_in.offset,  # type: ignore[union-attr]
            **dict(zip(_SCALARS, words, strict=True)),
        )
        handles = [t.handle for t in (tensor, grad, m_in, v_in)] + [o.handle for o in outs]  # type: ignore[union-attr]
        tensor.rt.launch(
            K.adam_step(first, l2, decoupled),
            ("r", "r", "r", "r", "rw", "rw", "rw"),
            handles,
            info,
            (n + K.WG - 1) // K.WG,
        )
        return tuple(outs)
