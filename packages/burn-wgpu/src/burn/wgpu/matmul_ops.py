"""Matmul on Wgpu: the tiled kernel for any layout and dtype, or the vec4 kernel where both
operands can be read as vec4s; the tile shape comes from autotune (`autotune.py`).

A matmul with few output tiles and a long inner dim (a weight gradient: `[64, 512]^T @
[64, 10]`, or the logits `[64, 512] @ [512, 10]`) would leave most of the GPU idle while a few
workgroups walk the whole inner dim. It is split along k instead (`split_k`): the operands are
viewed, without copies, as a batch of k-slices, multiplied as one batched matmul, and the
partial products summed, two launches that keep the GPU busy.

What a matmul launches depends only on its operands' layouts (shapes, strides, offsets, dtypes)
and the tuned tile shape, so the launch is worked out once per layout and kept on the runtime
(`Runtime.op_plans`): a training loop's matmuls then cost about what an elementwise op costs on
the host."""

from __future__ import annotations

import math

from burn.tensor import DType
from burn.wgpu import autotune
from burn.wgpu import kernels as K
from burn.wgpu.primitive import WgpuTensor, block, broadcast_shape, layout_of
from burn.wgpu.reduce_ops import reduce_plan_key


def _vec_layout(lhs: WgpuTensor, rhs: WgpuTensor, batch, m: int, n: int, k: int):
    """(A contiguous along k?, B contiguous along k?) when the vec4 matmul can read both
    operands as they are, else None."""
    if k % 4 or n % 4:
        return None
    ab = block(lhs, (*batch, m, k))
    bb = block(rhs, (*batch, k, n))
    a_off, a_batch, (a_rs, a_cs) = ab[1], ab[2:-2], ab[-2:]
    b_off, b_batch, (b_rs, b_cs) = bb[1], bb[2:-2], bb[-2:]
    if a_off % 4 or b_off % 4 or any(s % 4 for s in (*a_batch, *b_batch)):
        return None
    if a_cs == 1 and a_rs % 4 == 0:
        a_k = True
    elif a_rs == 1 and a_cs % 4 == 0 and m % 4 == 0:
        a_k = False
    else:
        return None
    if b_cs == 1 and b_rs % 4 == 0:
        b_k = False
    elif b_rs == 1 and b_cs % 4 == 0:
        b_k = True
    else:
        return None
    return a_k, b_k


SPLIT_TARGET_GROUPS = 512  # a few resident workgroups per multiprocessor of a large GPU
SPLIT_MIN_SLICE = 32  # the shortest k-slice worth its own workgroup
SPLIT_TILE = 32  # the output tile the estimate assumes


def split_k(m: int, n: int, k: int, batches: int) -> int:
    """How many k-slices a matmul of this shape runs as (1: not split). Only a matmul with few
    output tiles and k at least twice its smaller output side is split, into enough workgroups to
    reach about `SPLIT_TARGET_GROUPS`, slices of at least `SPLIT_MIN_SLICE`, and a slice count
    that divides k (the slices are strided views of the operands), with slices a multiple of 4
    long where one is (so the vec4 kernel can read them)."""
    groups = -(-m // SPLIT_TILE) * -(-n // SPLIT_TILE) * batches
    if groups * 2 > SPLIT_TARGET_GROUPS or k < max(4 * SPLIT_MIN_SLICE, 2 * min(m, n)):
        return 1
    want = min(SPLIT_TARGET_GROUPS // groups, k // SPLIT_MIN_SLICE)
    # Fewer than 4 slices do not repay the extra launch that sums them.
    divisors = [s for s in range(want, 3, -1) if k % s == 0]
    return next((s for s in divisors if (k // s) % 4 == 0), divisors[0] if divisors else 1)


def matmul_words(lhs: WgpuTensor, rhs: WgpuTensor, batch, cfg) -> tuple[list[int], tuple]:
    """The info words (layout `MATMUL`) and the workgroup grid of `lhs @ rhs` with tiles
    `cfg`, for the plain kernels and for those with an epilogue alike."""
    bm, bn = cfg[0], cfg[1]
    m, k, n = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    batches = math.prod(batch)
    info = K.MATMUL.pack(
        m=m,
        n=n,
        k=k,
        batches=batches,
        batch_shape=batch,
        a_offset=lhs.offset,
        a_strides=block(lhs, (*batch, m, k))[2:],
        b_offset=rhs.offset,
        b_strides=block(rhs, (*batch, k, n))[2:],
    )
    total = -(-m // bm) * batches
    gy = min(total, lhs.rt.max_groups)
    return info, (-(-n // bn), gy, -(-total // gy))


_ACCESS = ("r", "r", "rw")
_SUM_ACCESS = ("r", "rw")


def matmul_plan_key(lhs: WgpuTensor, rhs: WgpuTensor) -> tuple:
    """What a matmul's launch plan depends on: both operands' layouts."""
    return ("matmul", *layout_of(lhs), *layout_of(rhs))


class WgpuMatmulOps:
    """`matmul` of the Wgpu backend (a mixin of `WgpuBackend`)."""

    def matmul(self, lhs: WgpuTensor, rhs: WgpuTensor):
        rt = lhs.rt
        plan_key = matmul_plan_key(lhs, rhs)
        plan = rt.op_plans.get(plan_key)
        if plan is not None:
            shape, source, info, groups, then = plan
            out = self._like(lhs, shape)
            rt.launch(source, _ACCESS, (lhs.handle, rhs.handle, out.handle), info, groups)
            if then is not None:  # split along k: the partial products' sum, one more launch
                shape, source, info, groups = then
                partial, out = out, self._like(lhs, shape)
                rt.launch(source, _SUM_ACCESS, (partial.handle, out.handle), info, groups)
            return out
        a, b = lhs.shape, rhs.shape
        m, k, n = a[-2], a[-1], b[-1]
        batch = broadcast_shape(a[:-2], b[:-2])
        batches = math.prod(batch)
        slices = split_k(m, n, k, batches) if lhs.dtype.is_float else 1
        if slices > 1 and batches * m * n:
            return self._matmul_split(lhs, rhs, slices, plan_key)
        out = self._like(lhs, (*batch, m, n))
        if out.numel == 0:
            return out
        if k == 0:
            return self.full(out.shape, 0, lhs.dtype, lhs.device)
        operands = lhs, rhs
        lhs, rhs, layout, cfg = self._matmul_setup(lhs, rhs, batch, m, n, k)
        if cfg is None:  # first of its shape class on this device: tuning computes `out`
            autotune.tune(self, lhs.rt, lhs.dtype, lhs, rhs, out, batch, m, n, k, layout)
            return out
        source, _, _, info, groups = self._matmul_plan(lhs, rhs, out, batch, cfg, layout)
        rt.launch(source, _ACCESS, (lhs.handle, rhs.handle, out.handle), info, groups)
        if lhs is operands[0] and rhs is operands[1]:  # read as they are (no copies): kept
            rt.remember_plan(plan_key, (out.shape, source, info, groups, None))
        return out

    def _matmul_setup(self, lhs: WgpuTensor, rhs: WgpuTensor, batch, m: int, n: int, k: int):
        """`(lhs, rhs, layout, cfg)`: the operands as the kernel reads them, the vec4 kernel's
        layout for them (None: the tiled kernel) and the tile shape autotune chose for the
        shape class (None: not tuned yet on this device). Operands the vec4 kernel cannot read
        as they are laid out are copied to contiguous first, where the product is big enough
        for that kernel to repay the copy. Fusion's matmul epilogues make the same choices."""
        layout = None
        vec_sizes = k % 4 == 0 and n % 4 == 0  # else no layout makes the vec4 kernel apply
        batches = math.prod(batch)
        if (
            lhs.dtype is DType.F32
            and vec_sizes
            and 2 * m * n * k * batches >= autotune.VEC_MIN_FLOPS
        ):
            layout = _vec_layout(lhs, rhs, batch, m, n, k)
            if layout is None:
                # Copying a strided operand costs O(size); the vec4 kernel saves far more.
                lhs, rhs = self.contiguous(lhs), self.contiguous(rhs)
                layout = _vec_layout(lhs, rhs, batch, m, n, k)
        variant = autotune.variant(layout, m, n, k)
        cfg = autotune.matmul_config(self, lhs.rt, lhs.dtype, m, n, k, batches, variant)
        return lhs, rhs, layout, cfg

    def _matmul_split(self, lhs: WgpuTensor, rhs: WgpuTensor, slices: int, plan_key: tuple):
        """`lhs @ rhs` as the sum over `slices` k-slices, each a batch entry of one matmul.
        When the products and their sum were one planned launch each, the pair is kept as
        this product's plan."""
        rt = lhs.rt
        a, b = self._split_views(lhs, rhs, slices)
        partial = self.matmul(a, b)  # [..., S, m, n]
        dim = len(partial.shape) - 3
        total = self.reduce("sum", partial, dim)
        out = self.reshape(total, partial.shape[:dim] + partial.shape[dim + 1 :])
        products = rt.op_plans.get(matmul_plan_key(a, b))
        summed = rt.op_plans.get(reduce_plan_key("sum", partial, dim))
        if products is not None and products[4] is None and summed is not None:
            shape, source, info, groups, _ = products
            rt.remember_plan(plan_key, (shape, source, info, groups, (out.shape, *summed[2:])))
        return out

    def split_products(self, lhs: WgpuTensor, rhs: WgpuTensor, slices: int) -> WgpuTensor:
        """The `[..., S, m, n]` products of `S = slices` k-slices, whose sum is `lhs @ rhs`,
        multiplied as one batched matmul (split again only where still worth it)."""
        return self.matmul(*self._split_views(lhs, rhs, slices))

    @staticmethod
    def _split_views(lhs: WgpuTensor, rhs: WgpuTensor, slices: int):
        """`[..., m, k]` viewed as `[..., S, m, k/S]` and `[..., k, n]` as `[..., S, k/S, n]`
        (strides only, so any layout works, broadcast batch dims included)."""
        *a_batch, m, k = lhs.shape
        *b_batch, _, n = rhs.shape
        part = k // slices
        *a_bs, a_ms, a_ks = lhs.strides
        *b_bs, b_ks, b_ns = rhs.strides
        a = lhs.view((*a_batch, slices, m, part), (*a_bs, part * a_ks, a_ms, a_ks), lhs.offset)
        b = rhs.view((*b_batch, slices, part, n), (*b_bs, part * b_ks, b_ks, b_ns), rhs.offset)
        return a, b

    def _matmul_launch(self, lhs, rhs, out, batch, cfg, layout=None) -> None:
        lhs.rt.launch(*self._matmul_plan(lhs, rhs, out, batch, cfg, layout))

    def _matmul_plan(self, lhs, rhs, out, batch, cfg, layout=None) -> tuple:
        """The arguments of `Runtime.launch` for one matmul (autotune replays them as they are,
        so that its timings are the GPU's, not this method's)."""
        bm, bn, bk, tm, tn = cfg
        m, k, n = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
        if layout is None:
            source = K.matmul(lhs.dtype, bm, bn, bk, tm, tn)
        else:
            exact = m % bm == 0 and n % bn == 0 and k % bk == 0
            source = K.matmul_vec4(bm, bn, bk, tm, tn, *layout, exact)
        info, groups = matmul_words(lhs, rhs, batch, cfg)
        handles = (lhs.handle, rhs.handle, out.handle)
        return source, _ACCESS, handles, info, groups

    def matmul_variant_ok(self, cfg, layout) -> bool:
        """Whether tile shape `cfg` exists for the kernel variant `layout` (vec4 needs TM, TN
        multiples of 4 and whole vec4 loads per tile)."""
        if layout is None:
            return True
        bm, bn, bk, tm, tn = cfg
        return tm % 4 == 0 and tn % 4 == 0 and bk % 4 == 0
