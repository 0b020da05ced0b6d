"""Reductions on Wgpu: one kernel per pass, with the strategy (a thread per row, a workgroup
tree per row, or chunks of a row and a second pass) chosen by autotune (`autotune.py`).

A one-pass reduction's launch depends only on the operand's layout, so it is worked out once per
layout and kept on the runtime (`Runtime.op_plans`), as a matmul's is."""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu import autotune
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor, layout_of

_ACCESS = ("r", "rw")


def reduce_plan_key(op: str, p: WgpuTensor, dim: int) -> tuple:
    """What a reduction's launch depends on: the op, the dim and the operand's layout."""
    return ("reduce", op, dim, *layout_of(p))


class WgpuReduceOps:
    """`reduce` and `float_mean_dim` of the Wgpu backend (a mixin of `WgpuBackend`)."""

    def float_mean_dim(self, tensor: WgpuTensor, dim: int):
        """Float means divide inside the reduction kernel (one launch, not a sum and a divide)."""
        return self.reduce("mean", tensor, dim)

    def float_mean(self, tensor: WgpuTensor):
        """The mean of every element, as `float_mean_dim` of the flat tensor (a loss's mean:
        one launch where the contract's is a sum and a divide)."""
        return self.reduce("mean", self.reshape(tensor, (tensor.numel,)), 0)  # type: ignore[attr-defined]

    def reduce(self, op: str, p: WgpuTensor, dim: int):
        """`op` (sum, prod, max, min, argmax, argmin, or mean for floats) along `dim`."""
        rt = p.rt
        plan_key = reduce_plan_key(op, p, dim)
        plan = rt.op_plans.get(plan_key)
        if plan is not None:
            out_shape, out_dtype, source, info, groups = plan
            out = self._like(p, out_shape, out_dtype)
            rt.launch(source, _ACCESS, (p.handle, out.handle), info, groups)
            return out
        shape = p.shape
        length = shape[dim]
        out_shape = shape[:dim] + (1,) + shape[dim + 1 :]
        out_dtype = DType.I32 if op in ("argmax", "argmin") else p.dtype
        if length == 0:
            identity = {"sum": 0, "prod": 1, "mean": float("nan")}.get(op, 0)
            return self.full(out_shape, identity, out_dtype, p.device)
        out = self._like(p, out_shape, out_dtype)
        rows = out.numel
        vec = self._reduce_vec_ok(op, p, dim)
        contiguous = p.strides[dim] == 1
        cfg = autotune.reduce_config(p.rt, op, p.dtype, rows, length, contiguous, vec)
        if cfg is None:  # first of its shape class on this device: tuning computes `out`
            key = autotune.reduce_class(op, p.dtype, rows, length, contiguous, vec)
            candidates = autotune.reduce_candidates(p.rt, op, rows, length)
            autotune.tune_reduce(
                p.rt, key, candidates, lambda cfg: self._reduce_into(op, p, dim, out, cfg)
            )
        else:
            launch = self._reduce_into(op, p, dim, out, cfg)
            if launch is not None:
                rt.remember_plan(plan_key, (out_shape, out_dtype, *launch))
        return out

    @staticmethod
    def _reduce_vec_ok(op: str, p: WgpuTensor, dim: int) -> bool:
        """Whether a value reduction can read rows as vec4s (contiguous, 16-byte aligned)."""
        return (
            op not in ("argmax", "argmin")
            and p.dtype in K.VEC_DTYPES
            and p.strides[dim] == 1
            and p.shape[dim] % 4 == 0
            and p.offset % 4 == 0
            and all(s % 4 == 0 for d, s in enumerate(p.strides) if d != dim)
        )

    def _reduce_into(
        self, op: str, p: WgpuTensor, dim: int, out: WgpuTensor, cfg, divide_by: int = 0
    ) -> tuple | None:
        """Reduce `p` along `dim` into the contiguous `out` with strategy `cfg` (see
        `autotune.REDUCE_CANDIDATES`): a thread per row, a tree per row, or a tree per chunk of
        a row followed by a second pass over the partial results. A mean sums, and divides by
        `divide_by` (default: the length reduced) in its last pass. Returns the launch's
        `(source, info, groups)` when it was one launch (a plan `reduce` may keep)."""
        mode, wg, chunk = cfg
        serial = mode == 0
        length = p.shape[dim]
        other = p.shape[:dim] + p.shape[dim + 1 :]
        ostrides = p.strides[:dim] + p.strides[dim + 1 :]
        rows = out.numel
        vec = not serial and self._reduce_vec_ok(op, p, dim)
        chunks = 1 if serial or not chunk else min(1024, -(-length // chunk))
        divisor = divide_by or length
        chunk_len = -(-length // chunks)
        if vec:
            chunk_len = -(-chunk_len // 4) * 4
        info = K.REDUCE.pack(
            rows=rows,
            length=length,
            chunk_len=chunk_len,
            chunks=chunks,
            shape=other,
            offset=p.offset,
            strides=ostrides,
            step=p.strides[dim],
            divisor=divisor,
        )
        mean = op == "mean"
        kernel_op = "sum" if mean else op
        source = K.reduce(kernel_op, p.dtype, serial, vec, wg, mean and chunks == 1)
        if chunks == 1:
            groups = -(-rows // wg) if serial else rows
            p.rt.launch(source, _ACCESS, (p.handle, out.handle), info, groups)
            return source, info, groups
        partial = self._like(p, (rows, chunks), out.dtype)
        p.rt.launch(source, _ACCESS, (p.handle, partial.handle), info, rows * chunks)
        second = autotune.reduce_heuristic(op, rows, chunks)
        self._reduce_into(op, partial, 1, self.reshape(out, (rows, 1)), second, divisor)
        return None
