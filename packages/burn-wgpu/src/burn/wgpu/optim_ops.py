"""Optimizer updates on Wgpu: Adam's step of a parameter as one kernel (`kernels/optim.py`)
instead of the contract's twelve elementwise ops, for contiguous float32 tensors; anything
else (another dtype, a strided view) runs the contract's composition.

The step of a whole model (`float_adam_step_many`) updates its parameters a group at a time,
one launch per group, as many per group as the adapter's storage-buffer bindings allow (four
buffers a parameter after the first step, two on it, and one for all the results) up to
`MAX_PARAMS_PER_LAUNCH`: a launch's host time is worth more than most parameters' update on
the device. A group's results share one new buffer, each a view at an offset that keeps vec4
kernels on it (a multiple of `_ALIGN` elements), so a group costs one allocation, not three a
parameter."""

from __future__ import annotations

import math
import struct

import numpy as np
from burn.tensor import DType
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor, row_major

# The step's scalars, in the order of their words in `K.ADAM`, which puts them after the size
# and the four offsets: every parameter of every step packs these words, so they are written
# as a list in that order, checked against the layout once here.
_SCALARS = K.ADAM_SCALARS
_PROBE = {"n": 1, "t_offset": 2, "g_offset": 3, "m_offset": 4, "v_offset": 5}
assert list(K.ADAM.pack(**_PROBE, **{k: 6 + i for i, k in enumerate(_SCALARS)})) == list(
    range(1, 6 + len(_SCALARS))
), "K.ADAM's words are not the size, the four offsets and the scalars in order"
_TABLES = ("starts", "sizes", "t_offsets", "g_offsets", "m_offsets", "v_offsets", "out_offsets")
assert list(
    K.ADAM_MANY.pack(
        count=1,
        **{k: 2 + i for i, k in enumerate(_SCALARS)},
        stride=2 + len(_SCALARS),
        **{k: [3 + len(_SCALARS) + i] for i, k in enumerate(_TABLES)},
    )
) == list(range(1, 3 + len(_SCALARS) + len(_TABLES))), (
    "K.ADAM_MANY's words are not the count, the scalars, the stride and the tables in order"
)
# Results in a group's shared buffer start at multiples of this many elements (vec4 reads).
_ALIGN = 64

# The most parameters one launch updates: the kernel's source grows with the count, and a
# group of 16 already turns a model's step of small parameters into a launch or two.
MAX_PARAMS_PER_LAUNCH = 16
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


def _step_scalars(time, lr, beta_1, beta_2, epsilon, weight_decay) -> tuple[int, ...]:
    """The step's scalar words in `K.ADAM_SCALARS`' order, each as the contract's composition
    rounds it: computed in float64, stored as float32."""
    return _scalar_words(
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


def _fits_kernel(operands, shape) -> bool:
    """Whether the kernels take these operands: contiguous float32 of the parameter's shape."""
    return all(t.dtype is DType.F32 and t.shape == shape and t.is_contiguous() for t in operands)


def params_per_launch(rt, first: bool) -> int:
    """How many parameters one launch of `K.adam_step_many` may update on `rt`'s device: its
    storage-buffer bindings (the info words, the results, and two or four per parameter), at
    most `MAX_PARAMS_PER_LAUNCH`."""
    buffers = int(rt.limits.get("max-storage-buffers-per-shader-stage", 8))
    return max(1, min(MAX_PARAMS_PER_LAUNCH, (buffers - 2) // (2 if first else 4)))


class WgpuOptimOps:
    """`float_adam_step` and `float_adam_step_many` of the Wgpu backend (a mixin of
    `WgpuBackend`)."""

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
        if not _fits_kernel(operands, shape):
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
        scalars = _step_scalars(time, lr, beta_1, beta_2, epsilon, weight_decay)
        info = [n, tensor.offset, grad.offset, m_in.offset, v_in.offset, *scalars]  # type: ignore[union-attr]
        handles = (tensor.handle, grad.handle, m_in.handle, v_in.handle, *[o.handle for o in outs])  # type: ignore[union-attr]
        tensor.rt.launch(
            K.adam_step(first, l2, decoupled), _ACCESS, handles, info, (n + K.WG - 1) // K.WG
        )
        return outs

    def float_adam_step_many(
        self,
        tensors: list[WgpuTensor],
        grads: list[WgpuTensor],
        moments_1: list[WgpuTensor] | None,
        moments_2: list[WgpuTensor] | None,
        time: int,
        lr: float,
        beta_1: float,
        beta_2: float,
        epsilon: float,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ):
        first = moments_1 is None or moments_2 is None
        count = len(tensors)
        if first:
            moments_1 = moments_2 = [None] * count  # type: ignore[list-item]
        assert moments_1 is not None and moments_2 is not None
        results: list = [None] * count
        groups: dict[int, list[int]] = {}  # runtime id -> the parameters the kernel takes
        for k in range(count):
            tensor = tensors[k]
            operands = (
                (tensor, grads[k]) if first else (tensor, grads[k], moments_1[k], moments_2[k])
            )
            if _fits_kernel(operands, tensor.shape) and all(t.rt is tensor.rt for t in operands):
                groups.setdefault(id(tensor.rt), []).append(k)
        scalars = _step_scalars(time, lr, beta_1, beta_2, epsilon, weight_decay)
        l2 = bool(weight_decay) and not decoupled_weight_decay
        decoupled = bool(weight_decay) and decoupled_weight_decay
        for members in groups.values():
            rt = tensors[members[0]].rt
            per = params_per_launch(rt, first)
            launches = -(-len(members) // per)
            for at in range(launches):  # groups of even sizes: fewer kernels to compile
                group = members[at * len(members) // launches : (at + 1) * len(members) // launches]
                if len(group) == 1:
                    continue  # one parameter: the single kernel, below
                outs = self._adam_group(
                    rt, group, (tensors, grads, moments_1, moments_2), first, l2, decoupled, scalars
                )
                for k, out in zip(group, outs, strict=True):
                    results[k] = out
        step = (time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled_weight_decay)
        for k in range(count):
            if results[k] is None:  # not in a group: the single op (and its own fallback)
                results[k] = self.float_adam_step(
                    tensors[k], grads[k], moments_1[k], moments_2[k], *step
                )
        updated, new_1, new_2 = (list(part) for part in zip(*results, strict=True))
        return updated, new_1, new_2

    def _adam_group(self, rt, group, lists, first, l2, decoupled, scalars):
        """One launch of `K.adam_step_many` over the parameters `group` (indices into `lists`,
        the op's tensors, gradients and moments): their `(tensor, moment_1, moment_2)`
        results, in order, views of one new buffer."""
        tensors, grads, moments_1, moments_2 = lists
        wg = K.WG
        starts, sizes, out_offsets, handles, access = [], [], [], [], []
        offsets: list[list[int]] = [[], [], [], []]
        groups = stride = 0
        for k in group:
            tensor, grad = tensors[k], grads[k]
            n = math.prod(tensor.shape)
            starts.append(groups)
            sizes.append(n)
            out_offsets.append(stride)
            groups += (n + wg - 1) // wg
            stride += (n + _ALIGN - 1) // _ALIGN * _ALIGN
            inputs = (tensor, grad) if first else (tensor, grad, moments_1[k], moments_2[k])
            for table, t in zip(offsets, inputs, strict=False):
                table.append(t.offset)
                handles.append(t.handle)
            access.extend(_ACCESS[:2] if first else _ACCESS[:4])
        if first:
            offsets[2] = offsets[3] = [0] * len(group)
        out = rt.alloc(3 * stride * 4)
        handles.append(out)
        access.append("rw")
        info = [len(group), *scalars, stride, *starts, *sizes, *offsets[0], *offsets[1]]
        info += offsets[2]
        info += offsets[3]
        info += out_offsets
        kernel = K.adam_step_many(len(group), first, l2, decoupled)
        rt.launch(kernel, tuple(access), handles, info, groups)
        view = WgpuTensor._unchecked
        results = []
        for k, at in zip(group, out_offsets, strict=True):
            tensor = tensors[k]
            shape, strides, device = tensor.shape, row_major(tensor.shape), tensor.device
            results.append(
                tuple(
                    view(out, shape, strides, at + role * stride, DType.F32, device, rt)
                    for role in range(3)
                )
            )
        return results
