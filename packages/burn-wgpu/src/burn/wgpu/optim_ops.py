"""Optimizer updates on Wgpu: Adam's step of a parameter as one kernel (`kernels/optim.py`)
instead of the contract's twelve elementwise ops, for contiguous float32 tensors; anything
else (another dtype, a strided view) runs the contract's composition."""

from __future__ import annotations

import math
import struct

import numpy as np
from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor

# The step's scalars, in the order of their words in `K.ADAM`, which puts them after the size
# and the four offsets: every parameter of every step packs these words, so they are written
# as a list in that order, checked against the layout once here.
_SCALARS = ("beta_1", "beta_2", "one_b1", "one_b2", "c1", "c2", "epsilon", "lr", "decay", "shrink")
_PROBE = {"n": 1, "t_offset": 2, "g_offset": 3, "m_offset": 4, "v_offset": 5}
assert list(K.ADAM.pack(**_PROBE, **{k: 6 + i for i, k in enumerate(_SCALARS)})) == list(
    range(1, 6 + len(_SCALARS))
), "K.ADAM's words are not the size, the four offsets and the scalars in order"
_SCALAR_FLOATS = struct.Struct(f"<{len(_SCALARS)}f")
_SCALAR_WORDS = struct.Struct(f"<{len(_SCALARS)}I")
_ACCESS = ("r", "r", "r", "r", "rw", "rw", "rw")


def _scalar_words(*values: float) -> tuple[int, ...]:
    """The float32 bits of each value; one beyond float32's range is an infinity, as numpy
    rounds it (struct refuses it)."""
    try:
        return _SCALAR_WORDS.unpack(_SCALAR_FLOATS.pack(*values))
    except (OverflowError, struct.error):
        with np.errstate(over="ignore"):
            return tuple(np.array(values, dtype=np.float32).view(np.uint32).tolist())


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
        like = self._like  # type: ignore[attr-defined]
        outs = (like(tensor, shape), like(tensor, shape), like(tensor, shape))
        n = math.prod(shape)
        # Each scalar as the contract's composition rounds it: computed in float64, stored as
        # float32 (one word each), after the sizes and offsets (`_SCALARS_AT`).
        scalars = _scalar_words(
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
        info = [n, tensor.offset, grad.offset, m_in.offset, v_in.offset, *scalars]  # type: ignore[union-attr]
        handles = (tensor.handle, grad.handle, m_in.handle, v_in.handle, *[o.handle for o in outs])  # type: ignore[union-attr]
        tensor.rt.launch(
            K.adam_step(first, l2, decoupled), _ACCESS, handles, info, (n + K.WG - 1) // K.WG
        )
        return outs
