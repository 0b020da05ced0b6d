"""Averaging gradients across ranks, packed in buckets of megabytes.

One all-reduce per parameter pays MPI's latency, and a rendezvous of every rank, once per
tensor; packing the gradients into a few flat buffers pays it once per buffer and moves the same
bytes. On a GPU backend packing also means one download and one upload per bucket instead of
one per tensor. Each bucket has a buffer of its own, kept from step to step (fresh memory for
every reduction costs page faults that showed in the measurements). A bucket is packed into it
(on a GPU backend: one concatenation on the device, one download), reduced, and cut back into
the parameters' shapes; on numpy memory the result goes back into the gradients' own arrays.

What it costs, measured on one 2-core machine shared with other work (benches/RESULTS.md): 2 to
4 times a bare `Allreduce` of the same bytes in one ready buffer (packing and unpacking are
passes over memory that the bare reduction does not make), and steadier than one reduction per
tensor, which ranged from less than half to five times the bucketed time from run to run.

With `overlap=True` the reduction starts during the backward pass: `overlapped()` (which
`DataParallel` uses) packs each gradient as backward finishes it and starts each full bucket's
all-reduce without blocking (`overlap.py`). `all_reduce` itself, called once backward has
returned, then only starts each bucket without blocking and packs the next one meanwhile.
Either can pay where the MPI library progresses non-blocking collectives in the background (an
asynchronous progress thread) and where cores are free for it; on one shared 2-core machine
with the mpich wheel it measured no faster than blocking reductions (benches/RESULTS.md), so it
is off by default.

With `wire_dtype="bfloat16"` (or `"float16"`) the float gradients travel in 2 bytes instead of
4: each rank's scaled gradients are rounded to that type on the host, summed in float32 and
rounded again, then widened back to the parameters' dtype. Half the bytes cross MPI; the
download from a GPU is still in the parameters' dtype. The rounding (8 bits of mantissa for
bfloat16) changes the training a little, so the result is no longer what one process would
compute; float16 keeps more mantissa but overflows above 65504.

Every rank weighs its gradients by its share of the global batch (`items / total items`), so the
result is the gradient one process would compute over the whole batch with a loss averaged
over the batch (the default of burn.nn's losses). A rank without items that step (the last
batch of an epoch may be smaller than the number of ranks) takes part with zeros.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from burn.collective.communicator import Communicator
from burn.collective.errors import CollectiveError
from burn.module import Module
from burn.optim import GradientsParams
from burn.tensor import DType, Float, Tensor

if TYPE_CHECKING:
    from burn.collective.overlap import OverlappedStep

DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024

# numpy dtypes MPI reduces natively; others (f16, bf16) travel as float32.
_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
# The formats gradients may travel in: None keeps each parameter's own (or float32).
WIRE_DTYPES = {"float32": None, "bfloat16": DType.BF16.numpy, "float16": DType.F16.numpy}


@dataclass
class _Slot:
    """One parameter's place in a bucket."""

    pid: object
    dims: list[int]
    offset: int
    length: int


@dataclass
class _Bucket:
    slots: list[_Slot]
    dtype: object  # the parameters' DType
    wire: np.dtype
    buffer: np.ndarray | None = None
    request: object = None


def trainable_params(model) -> list[tuple[object, Tensor]]:
    """(id, tensor) of every float parameter that takes gradients, in the module's order
    (the same on every rank, since every rank builds the same model)."""
    if isinstance(model, Module):
        return [(p.id, p.val()) for p in model.params() if p.val().kind is Float and p.require_grad]
    if isinstance(model, dict):
        return [(pid, t) for pid, t in model.items() if t.kind is Float]
    raise TypeError(f"expected a Module or a dict of id -> Tensor, got {type(model).__name__}")


class GradientBuckets:
    """Averages a step's gradients over every rank of `comm` in buckets of `bucket_bytes`.

    ```python
    from burn.backend import Autodiff, NdArray
    from burn.collective import Communicator, GradientBuckets
    from burn.optim import GradientsParams
    from burn.tensor import Tensor

    w = Tensor.from_data([1.0, 2.0], Autodiff(NdArray).device()).require_grad()
    grads = GradientsParams({"w": w.grad((w * w).sum().backward())})
    averaged = GradientBuckets(Communicator.world()).all_reduce({"w": w}, grads, items=4)
    assert averaged.get("w").to_data().to_list() == [2.0, 4.0]  # one rank: unchanged
    ```
    """

    def __init__(
        self,
        comm: Communicator,
        bucket_bytes: int = DEFAULT_BUCKET_BYTES,
        overlap: bool = False,
        wire_dtype: str = "float32",
    ):
        if bucket_bytes < 1:
            raise CollectiveError(
                f"GradientBuckets: bucket_bytes must be positive, got {bucket_bytes}"
            )
        if wire_dtype not in WIRE_DTYPES:
            raise CollectiveError(
                f"GradientBuckets: wire_dtype must be one of {sorted(WIRE_DTYPES)}, "
                f"got {wire_dtype!r}"
            )
        self.wire_dtype = wire_dtype
        self._wire = WIRE_DTYPES[wire_dtype]
        self.comm = comm
        self.bucket_bytes = int(bucket_bytes)
        self.overlap = bool(overlap)
        self._plan_key: tuple | None = None
        self._buckets: list[_Bucket] = []

    def all_reduce(self, model, grads: GradientsParams | None, items: int) -> GradientsParams:
        """The gradients of the whole global batch, identical on every rank.

        `grads` are this rank's (None when it had no items), `items` the number of items they
        were averaged over. On a backend whose tensors live in numpy memory, the result is
        written into the memory of `grads` where a gradient owns its array (fresh pages for
        every step cost more than the reduction), so `grads` must not be used afterwards.
        """
        params = trainable_params(model)
        local = grads if grads is not None else GradientsParams()
        # Which parameters have a gradient anywhere, and the global item count: one small
        # reduction so that every rank packs the same buckets.
        header = np.zeros(len(params) + 1, np.float64)
        for i, (pid, _) in enumerate(params):
            header[i] = 1.0 if local.get(pid) is not None else 0.0
        header[-1] = float(items) if local.len() else 0.0
        self.comm.all_reduce_sum(header)
        total = header[-1]
        if total <= 0 or not header[:-1].any():
            return GradientsParams()
        scale = float(items) / total if local.len() else 0.0
        present = [(pid, t) for (pid, t), flag in zip(params, header[:-1], strict=True) if flag]
        buckets = self._buckets_for(present)
        device = _grad_device(local, present)
        host = bool(getattr(present[0][1].inner().backend, "host_memory", False))
        out = GradientsParams()
        reused: set[int] | None = set() if host else None
        if not self.overlap:
            for bucket in buckets:
                _pack(bucket, local, scale, device, host)
                self.comm.all_reduce_sum(bucket.buffer)
                _unpack(bucket, local, out, device, reused)
            return out
        for bucket in buckets:
            _pack(bucket, local, scale, device, host)
            bucket.request = self.comm.start_all_reduce_sum(bucket.buffer)
        for bucket in buckets:
            bucket.request.Wait()
            _unpack(bucket, local, out, device, reused)
        return out

    def overlapped(self, model, items: int) -> OverlappedStep:
        """A context in which backward passes start this step's reduction as they go.

        Every rank enters it, runs its forward and backward pass inside (a rank without items
        runs nothing), then calls `finish(grads)` on it; `items` is the number of items this
        rank's gradients average over (0 without any).
        """
        from burn.collective.overlap import OverlappedStep

        return OverlappedStep(self, model, items)

    @property
    def wire_bytes(self) -> int:
        """Bytes of gradients the last `all_reduce` sent through MPI (its buckets' buffers)."""
        return sum(b.buffer.nbytes for b in self._buckets if b.buffer is not None)

    @property
    def num_buckets(self) -> int:
        """How many buckets (one all-reduce each) the last `all_reduce` used."""
        return len(self._buckets)

    def _buckets_for(self, present: list[tuple[object, Tensor]]) -> list[_Bucket]:
        """The buckets of these parameters, with their buffers: planned once, reused while the
        parameters stay the same."""
        key = tuple((pid, tuple(t.dims()), t.dtype) for pid, t in present)
        if key != self._plan_key:
            self._buckets = self._plan(present)
            for bucket in self._buckets:
                length = sum(slot.length for slot in bucket.slots)
                bucket.buffer = np.empty(length, bucket.wire)
            self._plan_key = key
        return self._buckets

    def _plan(self, present: list[tuple[object, Tensor]]) -> list[_Bucket]:
        """Consecutive parameters of one dtype, up to `bucket_bytes` a bucket (a larger tensor
        gets a bucket of its own)."""
        buckets: list[_Bucket] = []
        current: _Bucket | None = None
        used = 0
        for pid, tensor in present:
            dims = tensor.dims()
            length = int(np.prod(dims)) if dims else 1
            wire = _wire_dtype(tensor.dtype.numpy) if self._wire is None else self._wire
            size = length * wire.itemsize
            if current is None or current.dtype != tensor.dtype or used + size > self.bucket_bytes:
                if current is None or current.slots:
                    current = _Bucket([], tensor.dtype, wire)
                    buckets.append(current)
                used = 0
            current.slots.append(_Slot(pid, dims, used // wire.itemsize, length))
            used += size
        return buckets


def _wire_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype in _NATIVE else np.dtype(np.float32)


def _grad_device(local: GradientsParams, present: list[tuple[object, Tensor]]):
    for _, grad in local.items():
        return grad.device()
    return present[0][1].inner().device()


def _pack(bucket: _Bucket, local: GradientsParams, scale: float, device, host: bool) -> None:
    """This rank's gradients of `bucket`, times `scale`, into its buffer."""
    buffer = bucket.buffer
    assert buffer is not None
    if host:  # numpy memory: each gradient scaled straight into place (one pass)
        for slot in bucket.slots:
            target = buffer[slot.offset : slot.offset + slot.length]
            grad = local.get(slot.pid)
            if grad is None:
                target[:] = 0
            else:
                source = np.asarray(grad.to_data().as_array()).reshape(-1)
                if scale == 1.0:
                    np.copyto(target, source, casting="unsafe")
                else:
                    np.multiply(source, scale, out=target, casting="unsafe")
        return
    # device memory: one concatenation there, one download
    parts = []
    for slot in bucket.slots:
        grad = local.get(slot.pid)
        if grad is None:
            grad = Tensor.zeros(slot.dims, device, dtype=bucket.dtype)
        parts.append(grad.reshape([slot.length]))
    flat = parts[0] if len(parts) == 1 else Tensor.cat(parts, 0)
    if scale != 1.0:
        flat = flat * scale
    np.copyto(buffer, np.asarray(flat.to_data().as_array()).reshape(-1), casting="unsafe")


def _unpack(
    bucket: _Bucket, local: GradientsParams, out: GradientsParams, device, reused: set | None
) -> None:
    """The reduced buffer cut back into gradients: on numpy memory, into the arrays of this
    rank's own gradients where each owns its memory (`reused` tracks them so two gradients
    sharing one array are not both overwritten); otherwise into new tensors (the buffer
    itself is overwritten by the next step, and gradients may be kept longer)."""
    buffer = bucket.buffer
    assert buffer is not None
    if reused is None:
        flat = Tensor.from_data(buffer.astype(bucket.dtype.numpy), device, dtype=bucket.dtype)
        for slot in bucket.slots:
            out.register(slot.pid, flat.narrow(0, slot.offset, slot.length).reshape(slot.dims))
        return
    for slot in bucket.slots:
        values = buffer[slot.offset : slot.offset + slot.length]
        grad = local.get(slot.pid)
        array = None if grad is None else grad.to_data().as_array()
        if (
            isinstance(array, np.ndarray)
            and array.flags.owndata
            and array.flags.writeable
            and array.flags.c_contiguous
            and array.dtype == bucket.dtype.numpy
            and id(array) not in reused
        ):
            reused.add(id(array))
            np.copyto(array.reshape(-1), values, casting="unsafe")
            out.register(slot.pid, grad)
        else:
            copy = values.reshape(slot.dims).astype(bucket.dtype.numpy)
            out.register(slot.pid, Tensor.from_data(copy, device, dtype=bucket.dtype))
