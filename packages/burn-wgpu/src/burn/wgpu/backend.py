"""`Wgpu`: the WebGPU backend. Tensors are GPU buffers plus a strided view (`WgpuTensor`, in
`primitive.py`); ops are WGSL kernels (`kernels/`).

This module holds data movement, layout, creation, indexing and the elementwise ops; the other
op groups are mixins of their own: reductions (`reduce_ops.py`), matmul (`matmul_ops.py`) and
the module ops (`module_ops.py`). Nothing here waits for the GPU except `into_data`.
"""

from __future__ import annotations

import functools
import math
import struct

import numpy as np
from burn.backend import Backend, Capabilities
from burn.tensor import DType, TensorData
from burn.tensor.distribution import Bernoulli, Normal, Uniform, _Default
from burn.tensor.errors import DTypeError, OutOfRangeError
from burn.wgpu import kernels as K
from burn.wgpu.activation_ops import WgpuActivationOps
from burn.wgpu.device import WgpuDevice
from burn.wgpu.matmul_ops import WgpuMatmulOps
from burn.wgpu.module_ops import WgpuModuleOps
from burn.wgpu.norm_ops import WgpuNormOps
from burn.wgpu.optim_ops import WgpuOptimOps
from burn.wgpu.primitive import WgpuTensor, block, broadcast_shape, row_major
from burn.wgpu.reduce_ops import WgpuReduceOps
from burn.wgpu.runtime import Runtime, runtime_for

BASE_DTYPES = frozenset({DType.F32, DType.I32, DType.BOOL})
# How the host stores each dtype's buffer words.
HOST = {DType.F32: np.float32, DType.F16: np.float16, DType.I32: np.int32, DType.BOOL: np.uint32}
ITEMSIZE = {dtype: np.dtype(host).itemsize for dtype, host in HOST.items()}
HOST_COPY_LIMIT = 1 << 16  # keep host values of small uploads (index checks, cheap reads)


_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")


def scalar_bits(value, dtype: DType) -> int:
    """The info word holding a Python scalar for a kernel of `dtype`."""
    if dtype.is_float:
        return _U32.unpack(_F32.pack(float(value)))[0]
    if dtype is DType.BOOL:
        return int(bool(value))
    v = float(value)
    if not math.isfinite(v):
        v = 2**31 - 1 if v > 0 else -(2**31) if v < 0 else 0
    return int(v) & 0xFFFFFFFF


_DROPOUT_ACCESS = ("r", "rw", "rw")
# The words of `K.DROPOUT` in order, as `dropout` writes them (checked once, here).
_DROPOUT_WORDS = {"n": 1, "counter": 2, "key0": 3, "key1": 4, "keep": 5, "scale": 6, "x_offset": 7}
assert K.DROPOUT.pack(**_DROPOUT_WORDS) == list(range(1, 8)), "K.DROPOUT's words are not in order"


def _groups(n: int) -> int:
    return (n + K.WG - 1) // K.WG


def _vec_ok(t: WgpuTensor, shape) -> bool:
    """Whether `t` can be read as vec4s for an elementwise op producing `shape`."""
    return (
        t.dtype in K.VEC_DTYPES
        and t.shape == (shape if shape.__class__ is tuple else tuple(shape))
        and t.offset % 4 == 0
        and t.is_contiguous()
    )


@functools.cache
def _binary_dtype(op: str, dtype: DType) -> DType:
    """The result dtype of `op` on `dtype` operands: bool for comparisons (and logic on bools).
    Raises `DTypeError` for an op the dtype does not define, as the kernel generator does."""
    return DType.BOOL if K.binary_expr(op, dtype)[1] else dtype


class WgpuBackend(
    WgpuReduceOps,
    WgpuMatmulOps,
    WgpuModuleOps,
    WgpuOptimOps,
    WgpuActivationOps,
    WgpuNormOps,
    Backend,
):
    """The WebGPU backend. Use the `Wgpu` instance."""

    name = "wgpu"

    def __init__(self):
        self._seed = (0x2545F491, 0x9E3779B9)
        self._counter = 0

    # ------------------------------------------------------------------ identity
    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        """f32, i32 and bool everywhere; f16 where the adapter has `shader-f16`; never f64/i64."""
        caps = self.__dict__.get("_caps")
        if caps is None:
            dtypes = set(BASE_DTYPES)
            try:
                if runtime_for(WgpuDevice.BestAvailable).has_f16:
                    dtypes.add(DType.F16)
            except Exception:  # noqa: BLE001 - no adapter: the base set, errors come on use
                pass
            caps = self.__dict__["_caps"] = Capabilities(
                dtypes=frozenset(dtypes), float_dtype=DType.F32, int_dtype=DType.I32
            )
        return caps

    def device(self, *args, **kwargs) -> WgpuDevice:
        if args and isinstance(args[0], WgpuDevice):
            return args[0]
        return WgpuDevice.BestAvailable

    def devices(self) -> list[WgpuDevice]:
        """The devices of every native adapter this machine has (OpenGL duplicates left out)."""
        from burn.wgpu.adapters import adapter_devices

        return adapter_devices() or [WgpuDevice.BestAvailable]

    def priority(self) -> int:
        """10 on a discrete GPU, 1 on an integrated one; -1 (never default) on software.

        On a software adapter such as lavapipe the numpy backend is much faster, so `default()`
        should pick wgpu only where a real GPU does the work.
        """
        try:
            rt = runtime_for(WgpuDevice.BestAvailable)
        except Exception:  # noqa: BLE001
            return -1
        if rt.is_software:
            return -1
        return {"DiscreteGPU": 10, "IntegratedGPU": 1}.get(rt.adapter_type, -1)

    def display_name(self) -> str:
        return "Wgpu"

    def unavailable_reason(self) -> str | None:
        """Why this machine cannot run Wgpu (no adapter), or None; the test suite skips on it."""
        from burn.wgpu.runtime import adapter_available

        return adapter_available()

    def runtime(self, device=None) -> Runtime:
        return runtime_for(device or WgpuDevice.BestAvailable)

    def sync(self, device=None) -> None:
        self.runtime(device).sync()

    def submit(self, device=None) -> None:
        """Submit the device's open batch of kernels (does not wait for them)."""
        self.runtime(device).flush()

    def _check_dtype(self, dtype: DType) -> None:
        if not self.capabilities.supports(dtype):
            raise DTypeError(f"Wgpu does not support {dtype.value} (WGSL has no such type)")

    # ------------------------------------------------------------------ helpers
    def _empty(self, shape, dtype: DType, device, rt: Runtime) -> WgpuTensor:
        """A new contiguous tensor (every kernel's result: kept cheap)."""
        shape = tuple(map(int, shape))
        handle = rt.alloc(math.prod(shape) * ITEMSIZE[dtype])
        return WgpuTensor.contiguous(handle, shape, dtype, device, rt)

    def _like(self, t: WgpuTensor, shape, dtype: DType | None = None) -> WgpuTensor:
        return self._empty(shape, dtype or t.dtype, t.device, t.rt)

    def contiguous(self, t: WgpuTensor) -> WgpuTensor:
        """`t` itself when already contiguous, else a contiguous copy."""
        if t.is_contiguous():
            return t
        return self._copy(t, t.dtype)

    def _copy(self, t: WgpuTensor, dtype: DType) -> WgpuTensor:
        out = self._like(t, t.shape, dtype)
        n = t.numel
        info = K.COPY.pack(n=n, shape=t.shape, src=block(t, t.shape), dst=block(out, out.shape))
        t.rt.launch(K.copy(t.dtype, dtype), ("r", "rw"), (t.handle, out.handle), info, _groups(n))
        return out

    def _write_region(self, dst: WgpuTensor, src: WgpuTensor, offset: int, strides) -> None:
        """Copy `src` (any layout) into the strided region (`offset`, `strides`) of `dst`."""
        n = src.numel
        if n == 0:
            return
        region = [0, offset, *strides]
        info = K.COPY.pack(n=n, shape=src.shape, src=block(src, src.shape), dst=region)
        src.rt.launch(
            K.copy(src.dtype, dst.dtype), ("r", "rw"), (src.handle, dst.handle), info, _groups(n)
        )

    # ------------------------------------------------------------------ data
    def from_data(self, data: TensorData, device):
        dtype = data.dtype
        self._check_dtype(dtype)
        device = device if isinstance(device, WgpuDevice) else WgpuDevice.BestAvailable
        rt = runtime_for(device)
        array = np.ascontiguousarray(data.array)
        stored = array.astype(HOST[dtype], copy=False)
        handle = rt.upload(stored)
        # A private copy: the caller may change its array after handing it over.
        host = array.copy() if array.size <= HOST_COPY_LIMIT else None
        return WgpuTensor(handle, array.shape, row_major(array.shape), 0, dtype, device, rt, host)

    def into_data(self, p: WgpuTensor) -> TensorData:
        return self.into_data_many([p])[0]

    def into_data_many(self, ps) -> list[TensorData]:
        """Values kept on the host (uploads) are copied; the others come back from each
        runtime in one round trip (`Runtime.read_many`)."""
        out: list[TensorData | None] = [None] * len(ps)
        reads: dict[int, tuple[Runtime, list[tuple[int, WgpuTensor]]]] = {}
        for i, p in enumerate(ps):
            if p.host is not None:
                out[i] = TensorData(p.host.copy())
            else:
                t = self.contiguous(p)
                reads.setdefault(id(t.rt), (t.rt, []))[1].append((i, t))
        for rt, items in reads.values():
            ranges = []
            for _, t in items:
                itemsize = np.dtype(HOST[t.dtype]).itemsize
                ranges.append((t.handle, t.offset * itemsize, t.numel * itemsize))
            for (i, t), raw in zip(items, rt.read_many(ranges), strict=True):
                array = np.frombuffer(raw, dtype=HOST[t.dtype]).reshape(t.shape)
                out[i] = TensorData((array != 0) if t.dtype is DType.BOOL else array.copy())
        return out  # type: ignore[return-value]

    def shape(self, p: WgpuTensor):
        return p.shape

    def dtype(self, p: WgpuTensor) -> DType:
        return p.dtype

    def device_of(self, p: WgpuTensor):
        return p.device

    def to_device(self, p: WgpuTensor, device):
        if device == p.device:
            return p
        if runtime_for(device) is p.rt:
            out = p.view(p.shape, p.strides, p.offset)
            out.device = device
            return out
        return self.from_data(self.into_data(p), device)

    def cast(self, p: WgpuTensor, dtype: DType):
        if p.dtype is dtype:
            return p
        self._check_dtype(dtype)
        return self._copy(p, dtype)

    # ------------------------------------------------------------------ layout (views)
    def reshape(self, p: WgpuTensor, shape):
        shape = tuple(shape)
        if shape == p.shape:
            return p
        t = self.contiguous(p)
        out = t.view(shape, row_major(shape), t.offset)
        if p.host is not None:
            out.host = p.host.reshape(shape)
        return out

    def permute(self, p: WgpuTensor, axes):
        axes = tuple(axes)
        if axes == tuple(range(len(axes))):
            return p
        return p.view([p.shape[a] for a in axes], [p.strides[a] for a in axes], p.offset)

    def expand(self, p: WgpuTensor, shape):
        shape = tuple(shape)
        if shape == p.shape:
            return p
        strides = [
            0 if n == 1 and m != 1 else s for n, m, s in zip(p.shape, shape, p.strides, strict=True)
        ]
        return p.view(shape, strides, p.offset)

    def slice(self, p: WgpuTensor, ranges):
        shape = [len(range(*r)) for r in ranges]
        offset = p.offset + sum(r[0] * s for r, s in zip(ranges, p.strides, strict=True))
        strides = [r[2] * s for r, s in zip(ranges, p.strides, strict=True)]
        return p.view(shape, strides, offset)

    def slice_assign(self, p: WgpuTensor, ranges, value: WgpuTensor):
        out = self._copy(p, p.dtype)
        offset = sum(r[0] * s for r, s in zip(ranges, out.strides, strict=True))
        strides = [r[2] * s for r, s in zip(ranges, out.strides, strict=True)]
        self._write_region(out, value, offset, strides)
        return out

    def cat(self, ps, dim: int):
        shape = list(ps[0].shape)
        shape[dim] = sum(p.shape[dim] for p in ps)
        out = self._like(ps[0], shape)
        start = 0
        for p in ps:
            self._write_region(out, p, start * out.strides[dim], out.strides)
            start += p.shape[dim]
        return out

    # ------------------------------------------------------------------ creation
    def full(self, shape, value, dtype: DType, device):
        self._check_dtype(dtype)
        device = device if isinstance(device, WgpuDevice) else WgpuDevice.BestAvailable
        out = self._empty(tuple(shape), dtype, device, runtime_for(device))
        n = out.numel
        info = K.FILL.pack(n=n, value=scalar_bits(value, dtype))
        out.rt.launch(K.fill(dtype), ("rw",), (out.handle,), info, _groups(n))
        return out

    def scalar_like(self, p: WgpuTensor, value):
        return self.full((1,) * len(p.shape), value, p.dtype, p.device)

    def arange(self, start: int, end: int, step: int, dtype: DType, device):
        self._check_dtype(dtype)
        n = len(range(start, end, step))
        device = device if isinstance(device, WgpuDevice) else WgpuDevice.BestAvailable
        out = self._empty((n,), dtype, device, runtime_for(device))
        info = K.ARANGE.pack(n=n, start=start & 0xFFFFFFFF, step=step & 0xFFFFFFFF)
        out.rt.launch(K.arange(dtype), ("rw",), (out.handle,), info, _groups(n))
        return out

    def seed(self, seed: int) -> None:
        """Reset the GPU generator: draws after `seed(n)` repeat exactly."""
        super().seed(seed)
        mixed = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & (2**64 - 1)
        self._seed = (mixed & 0xFFFFFFFF, mixed >> 32)
        self._counter = 0

    def random(self, shape, distribution, dtype: DType, device):
        kind, p0, p1 = None, 0.0, 1.0
        if isinstance(distribution, Uniform):
            kind, p0, p1 = "uniform", distribution.low, distribution.high
        elif isinstance(distribution, _Default):
            kind = "uniform"
        elif isinstance(distribution, Normal):
            kind, p0, p1 = "normal", distribution.mean, distribution.std
        elif isinstance(distribution, Bernoulli):
            kind, p0 = "bernoulli", distribution.prob
        if kind is None:
            return super().random(shape, distribution, dtype, device)
        self._check_dtype(dtype)
        device = device if isinstance(device, WgpuDevice) else WgpuDevice.BestAvailable
        out = self._empty(tuple(shape), dtype, device, runtime_for(device))
        n = out.numel
        info = K.RANDOM.pack(
            n=n,
            counter=self._counter & 0xFFFFFFFF,
            key0=self._seed[0],
            key1=self._seed[1],
            p0=scalar_bits(p0, DType.F32),
            p1=scalar_bits(p1, DType.F32),
        )
        self._counter += n
        out.rt.launch(K.random(kind, dtype), ("rw",), (out.handle,), info, _groups(n))
        return out

    def dropout(self, x: WgpuTensor, prob: float):
        """One kernel draws the mask and applies it (the contract's composition is a draw, a
        scale and a product: three launches), from the same stream as `random`'s Bernoulli
        draws, so the bits are the composition's (contiguous f32; other inputs take it)."""
        keep = 1.0 - prob
        if x.dtype is not DType.F32 or not x.is_contiguous() or keep == 0.0:
            return super().dropout(x, prob)
        out, mask = self._like(x, x.shape), self._like(x, x.shape)
        n = out.numel
        info = [
            n,
            self._counter & 0xFFFFFFFF,
            self._seed[0],
            self._seed[1],
            scalar_bits(keep, DType.F32),
            scalar_bits(1.0 / keep, DType.F32),
            x.offset,
        ]
        self._counter += n
        x.rt.launch(
            K.dropout(DType.F32),
            _DROPOUT_ACCESS,
            (x.handle, out.handle, mask.handle),
            info,
            _groups(n),
        )
        return out, mask

    # ------------------------------------------------------------------ indexing
    def _check_indices(self, indices: WgpuTensor, size: int, op: str) -> None:
        """Range-check indices whose values are known on the host (no GPU round trip)."""
        host = indices.host
        if host is None or host.size == 0:
            return
        lo, hi = int(host.min()), int(host.max())
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise OutOfRangeError(f"{op}: index {bad} is out of range for a dim of size {size}")

    def _index(self, indices: WgpuTensor) -> WgpuTensor:
        return indices if indices.dtype is DType.I32 else self.cast(indices, DType.I32)

    def gather(self, p: WgpuTensor, dim: int, indices: WgpuTensor):
        self._check_indices(indices, p.shape[dim], "gather")
        idx = self._index(indices)
        out = self._like(p, idx.shape)
        n = out.numel
        info = K.GATHER.pack(
            n=n,
            shape=idx.shape,
            idx=block(idx, idx.shape),
            p_offset=p.offset,
            p_strides=p.strides,
            dim=dim,
            dim_size=p.shape[dim],
        )
        p.rt.launch(
            K.gather(p.dtype),
            ("r", "r", "rw"),
            (p.handle, idx.handle, out.handle),
            info,
            _groups(n),
            checks_indices=True,
        )
        return out

    def scatter_add(self, p: WgpuTensor, dim: int, indices: WgpuTensor, values: WgpuTensor):
        self._check_indices(indices, p.shape[dim], "scatter")
        idx = self._index(indices)
        out = self._like(p, p.shape)
        n = out.numel
        info = K.SCATTER_ADD.pack(
            n=n,
            shape=p.shape,
            p=block(p, p.shape),
            idx_shape=idx.shape,
            idx_offset=idx.offset,
            idx_strides=idx.strides,
            v_offset=values.offset,
            v_strides=block(values, idx.shape)[2:],
            dim=dim,
        )
        handles = (p.handle, idx.handle, values.handle, out.handle)
        source = K.scatter_add(p.dtype)
        access = ("r", "r", "r", "rw")
        p.rt.launch(source, access, handles, info, _groups(n), checks_indices=True)
        return out

    def float_is_nan(self, tensor: WgpuTensor):
        """`x != x` in a comparison kernel of its own, reading the value through two bindings.

        The contract's default is the same comparison; overriding it keeps it out of fused
        kernels (`Fusion` forwards an override instead of recording it), where a driver that
        sees one value compared with itself may fold `x != x` to false (seen on NVIDIA's
        Vulkan compiler)."""
        return self.binary("ne", tensor, tensor)

    def float_select(self, tensor: WgpuTensor, dim: int, indices: WgpuTensor):
        self._check_indices(indices, tensor.shape[dim], "select")
        return super().float_select(tensor, dim, indices)

    def float_select_assign(
        self, tensor: WgpuTensor, dim: int, indices: WgpuTensor, value: WgpuTensor
    ):
        self._check_indices(indices, tensor.shape[dim], "select_assign")
        return super().float_select_assign(tensor, dim, indices, value)

    def mask_where(self, p: WgpuTensor, mask: WgpuTensor, value: WgpuTensor):
        shape = broadcast_shape(p.shape, mask.shape, value.shape)
        out = self._like(p, shape)
        n = out.numel
        info = K.MASK_WHERE.pack(
            n=n, shape=shape, p=block(p, shape), mask=block(mask, shape), value=block(value, shape)
        )
        handles = (p.handle, mask.handle, value.handle, out.handle)
        p.rt.launch(K.mask_where(p.dtype), ("r", "r", "r", "rw"), handles, info, _groups(n))
        return out

    # ------------------------------------------------------------------ compute
    def unary(self, op: str, p: WgpuTensor):
        out = self._like(p, p.shape)
        n = out.numel
        if n % 4 == 0 and _vec_ok(p, p.shape):
            source = K.unary_vec4(op, p.dtype)
            info = K.UNARY_VEC4.pack(n=n // 4, a_offset=p.offset // 4)
            p.rt.launch(source, ("r", "rw"), (p.handle, out.handle), info, _groups(n // 4))
            return out
        info = K.UNARY.pack(n=n, shape=p.shape, a=block(p, p.shape))
        p.rt.launch(K.unary(op, p.dtype), ("r", "rw"), (p.handle, out.handle), info, _groups(n))
        return out

    def binary(self, op: str, lhs: WgpuTensor, rhs: WgpuTensor):
        shape = broadcast_shape(lhs.shape, rhs.shape)
        out = self._like(lhs, shape, _binary_dtype(op, lhs.dtype))
        n = out.numel
        if n % 4 == 0 and _vec_ok(lhs, shape) and _vec_ok(rhs, shape):
            info = K.BINARY_VEC4.pack(n=n // 4, a_offset=lhs.offset // 4, b_offset=rhs.offset // 4)
            lhs.rt.launch(
                K.binary_vec4(op, lhs.dtype, False),
                ("r", "r", "rw"),
                (lhs.handle, rhs.handle, out.handle),
                info,
                _groups(n // 4),
            )
            return out
        info = K.BINARY.pack(n=n, shape=shape, a=block(lhs, shape), b=block(rhs, shape))
        lhs.rt.launch(
            K.binary(op, lhs.dtype, False),
            ("r", "r", "rw"),
            (lhs.handle, rhs.handle, out.handle),
            info,
            _groups(n),
        )
        return out

    def binary_scalar(self, op: str, p: WgpuTensor, value):
        shape = p.shape
        out = self._like(p, shape, _binary_dtype(op, p.dtype))
        n = out.numel
        if n % 4 == 0 and _vec_ok(p, shape):
            info = K.BINARY_SCALAR_VEC4.pack(
                n=n // 4, a_offset=p.offset // 4, b=scalar_bits(value, p.dtype)
            )
            source = K.binary_vec4(op, p.dtype, True)
            p.rt.launch(source, ("r", "rw"), (p.handle, out.handle), info, _groups(n // 4))
            return out
        info = K.BINARY_SCALAR.pack(
            n=n, shape=shape, a=block(p, shape), b=scalar_bits(value, p.dtype)
        )
        source = K.binary(op, p.dtype, True)
        p.rt.launch(source, ("r", "rw"), (p.handle, out.handle), info, _groups(n))
        return out

    def sort_with_indices(self, p: WgpuTensor, dim: int, descending: bool = False):
        """A stable bitonic sort along `dim`: one launch per (k, j) step over all rows."""
        shape = p.shape
        n = shape[dim]
        rank = len(shape)
        if n <= 1 or p.numel == 0:
            return p, self.full(shape, 0, DType.I32, p.device)
        perm = [d for d in range(rank) if d != dim] + [dim]
        inverse = [perm.index(d) for d in range(rank)]
        v = self.permute(p, perm)
        lead = v.shape[:-1]
        rows = math.prod(lead)
        size = 1 << (n - 1).bit_length()
        vals = self._like(p, (*lead, size))
        self._write_region(vals, v, 0, vals.strides)
        idx = self._like(p, (*lead, size), DType.I32)
        total = rows * size
        info = K.IOTA_ROWS.pack(n=total, cols=size)
        p.rt.launch(K.iota_rows(), ("rw",), (idx.handle,), info, _groups(total))
        source = K.bitonic_step(p.dtype, descending)
        k = 2
        while k <= size:
            j = k // 2
            while j >= 1:
                info = K.BITONIC_STEP.pack(n=total // 2, padded=size, length=n, k=k, j=j)
                p.rt.launch(
                    source, ("rw", "rw"), (vals.handle, idx.handle), info, _groups(total // 2)
                )
                j //= 2
            k *= 2
        ranges = [(0, s, 1) for s in lead] + [(0, n, 1)]
        values = self.permute(self.slice(vals, ranges), inverse)
        indices = self.permute(self.slice(idx, ranges), inverse)
        return values, indices

    # The contract's named ops that the kernels above serve, for every kind they apply to.
    float_cat = int_cat = bool_cat = cat
    int_select = bool_select = float_select
    int_select_assign = bool_select_assign = float_select_assign
    float_matmul = int_matmul = WgpuMatmulOps.matmul
    float_sort_with_indices = int_sort_with_indices = sort_with_indices


Wgpu = WgpuBackend()
WgpuDevice.backend = Wgpu
