"""The wgpu runtime: one per adapter, owning the device, the buffer pool, the pipeline cache
and the command batch.

Work is recorded lazily: every kernel launch is appended to one open compute pass and the
batch is submitted when it grows large, when a host write must be ordered after it, or when
the host reads a buffer (`read`). Nothing waits for the GPU except a read.

Kernel parameters (shapes, strides, offsets, scalars) go into one small storage buffer, the
*info arena*, refilled for each batch: each launch appends its words and binds its slice
through a dynamic offset. The arena is written to the GPU right before the batch is
submitted, so launches cost no extra transfer.

A launch costs the host a dictionary lookup for its pipeline and one for its bind group: bind
groups are cached by the buffers they bind (the info slice is a dynamic offset, so it is not
part of the key), and the pool's oldest-first reuse gives a training loop's tensors the same
buffers step after step, so after a warm-up nearly every launch finds its group.
Freed buffers return to the pool at once and kernels may reuse them inside the open batch
(dispatches run in recording order); only a host upload avoids buffers that the open batch
touches, since queue writes land before the batch runs.
"""

from __future__ import annotations

import functools
import struct
import threading

import numpy as np
from burn.tensor.errors import OutOfRangeError
from burn.wgpu.adapters import select_adapter
from burn.wgpu.device import WgpuDevice
from burn.wgpu.kernels.indexing import GATHER_ERROR, SCATTER_ERROR
from burn.wgpu.kernels.loss import CROSS_ENTROPY_ERROR
from burn.wgpu.native import bind_group_maker, pass_calls
from burn.wgpu.pool import MIN_BUFFER, STORAGE_USAGE, BufferPool, Handle

import wgpu

ARENA_BYTES = 1 << 16
INFO_WINDOW = 256  # bytes bound for a launch's info words (larger lists get a larger window)
MAX_BATCH = 128
MAX_BIND_GROUPS = 8192
MAX_OP_PLANS = 4096


# What index kernels write into the runtime's error word when an index is out of range.
INDEX_ERROR_OPS = {
    GATHER_ERROR: "gather (or an op built on it: select, take, embedding)",
    SCATTER_ERROR: "scatter_add",
    CROSS_ENTROPY_ERROR: "cross_entropy (a target class)",
}


@functools.lru_cache(maxsize=256)
def _words_struct(count: int) -> struct.Struct:
    """Packs `count` unsigned 32-bit words (native order, as the arena's words are read)."""
    return struct.Struct(f"={count}I")


class Runtime:
    """Everything that belongs to one wgpu device."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.info = dict(adapter.info)
        features = set(adapter.features)
        wanted = [f for f in ("shader-f16",) if f in features]
        limits = dict(adapter.limits)
        # Ask for everything the adapter offers that matters for big tensors and tiles.
        required = {
            k: limits[k]
            for k in (
                "max-buffer-size",
                "max-storage-buffer-binding-size",
                "max-compute-workgroup-storage-size",
                "max-compute-invocations-per-workgroup",
                "max-compute-workgroup-size-x",
                "max-compute-workgroup-size-y",
                "max-storage-buffers-per-shader-stage",
            )
            if k in limits
        }
        self.device = adapter.request_device_sync(
            required_features=wanted, required_limits=required
        )
        self.queue = self.device.queue
        self.features = set(self.device.features)
        self.limits = dict(self.device.limits)
        self.has_f16 = "shader-f16" in self.features
        self.align = max(4, int(self.limits.get("min-storage-buffer-offset-alignment", 256)))
        self.max_groups = int(self.limits.get("max-compute-workgroups-per-dimension", 65535))
        self.pool = BufferPool(self.device, label=self.describe())
        self.pool.on_destroy = self._forget_bind_groups
        self.pool.before_reclaim = self.flush
        self._pipelines: dict[tuple, tuple] = {}
        self._layouts: dict[tuple, tuple] = {}
        self._groups: dict[tuple, object] = {}
        # Launch plans of ops whose kernels, info words and grid depend only on their
        # operands' layouts (`remember_plan`): a training loop's matmuls and reductions repeat
        # them step after step, and working them out was most of those ops' host time.
        self.op_plans: dict[tuple, tuple] = {}
        self._lock = threading.RLock()
        self._encoder = None
        self._pass = None
        self._pass_pipeline = None
        self._native = pass_calls()
        self._bind_group_maker = bind_group_maker()
        self._pass_native = None  # the open pass's native handle (None: use wgpu-py's methods)
        self._pass_objects: list = []  # bind groups the open pass uses, kept until submitted
        self._pending = 0
        self._touched: set[int] = set()  # ids of the buffers the open batch reads or writes
        # One arena for the runtime's life: the queue orders its write before the batch that
        # reads it and after every batch submitted earlier, and a fixed buffer keeps the cached
        # bind groups valid from one batch to the next.
        self._arena = self.device.create_buffer(
            size=ARENA_BYTES, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
        )
        self._arena_words = np.zeros(ARENA_BYTES // 4, dtype=np.uint32)
        self._arena_used = 0
        self.launches = 0
        self.bind_groups_created = 0
        self._fence = None
        # Index kernels flag out-of-range indices here (they clamp, so every read stays in
        # bounds); the flag is read back at the next host read after such a kernel, like CUDA's
        # asynchronous device-side asserts.
        self.error_word = Handle(
            self.device.create_buffer(size=MIN_BUFFER, usage=STORAGE_USAGE), MIN_BUFFER, None
        )
        self._index_checks = False

    # ------------------------------------------------------------------ description
    @property
    def adapter_type(self) -> str:
        return self.info.get("adapter_type", "Unknown")

    @property
    def is_software(self) -> bool:
        return self.adapter_type == "CPU" or "llvmpipe" in self.info.get("device", "")

    def describe(self) -> str:
        backend = self.info.get("backend_type", "?")
        return f"{self.info.get('device', '?')} ({self.adapter_type}, {backend})"

    # ------------------------------------------------------------------ buffers
    def alloc(self, nbytes: int) -> Handle:
        return self.pool.acquire(nbytes)

    def upload(self, array: np.ndarray) -> Handle:
        """A new buffer holding `array`'s bytes (ordered after all recorded work)."""
        raw = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        with self._lock:
            # Queue writes land before the open batch runs, so the buffer must be one that the
            # batch does not use (a fresh or untouched pooled one); no flush is needed.
            handle = self.pool.acquire(raw.nbytes, self._touched if self._pending else None)
            if raw.nbytes:
                if raw.nbytes % 4:
                    raw = np.concatenate([raw, np.zeros(4 - raw.nbytes % 4, np.uint8)])
                self.queue.write_buffer(handle.buffer, 0, raw)
        return handle

    def read(self, handle: Handle, offset: int, nbytes: int) -> bytes:
        """`nbytes` at byte `offset` of a buffer, after all recorded work (the only sync)."""
        return self.read_many([(handle, offset, nbytes)])[0]

    def read_many(self, parts: list[tuple[Handle, int, int]]) -> list[bytes]:
        """The `nbytes` at byte `offset` of each `(handle, offset, nbytes)`, after all recorded
        work (the only sync), in one round trip: several ranges are copied into one mappable
        buffer by one submission (`_read_ranges`).

        When an index kernel ran since the last check, the error word comes back in the same
        round trip: a training step that gathers (a cross-entropy) and then reads its loss and
        outputs waits for the GPU once."""
        with self._lock:
            self.flush()
            ranges, spans = [], []
            for handle, offset, nbytes in parts:
                start = offset & ~3
                spans.append((offset - start, nbytes))
                if nbytes:
                    ranges.append((handle.buffer, start, ((offset + nbytes + 3) & ~3) - start))
            checks = self._index_checks
            if checks:
                self._index_checks = False
                ranges.append((self.error_word.buffer, 0, 4))
            if len(ranges) == 1:
                raw = [bytes(self.queue.read_buffer(*ranges[0]))]
            else:
                raw = self._read_ranges(ranges) if ranges else []
            if checks:
                self._raise_index_error(int.from_bytes(raw.pop(), "little"))
            chunks = iter(raw)
            return [next(chunks)[skip : skip + n] if n else b"" for skip, n in spans]

    def _read_ranges(self, ranges: list[tuple[object, int, int]]) -> list[bytes]:
        """The bytes of each `(buffer, offset, size)` (multiples of 4), copied into one mappable
        buffer by one submission and mapped once."""
        staging = self.device.create_buffer(
            size=sum(size for _, _, size in ranges),
            usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
        )
        encoder = self.device.create_command_encoder()
        at = 0
        for buffer, offset, size in ranges:
            encoder.copy_buffer_to_buffer(buffer, offset, staging, at, size)
            at += size
        self.queue.submit([encoder.finish()])
        staging.map_sync(wgpu.MapMode.READ)
        raw = bytes(staging.read_mapped(copy=False))  # one copy, made before the unmap
        staging.unmap()
        staging.destroy()
        parts, at = [], 0
        for _, _, size in ranges:
            parts.append(raw[at : at + size])
            at += size
        return parts

    # ------------------------------------------------------------------ pipelines
    def _layout(self, access: tuple[str, ...], info_last: bool = False):
        """Bind group layout + pipeline layout: info at binding 0 (or last), then `access`."""
        entry = self._layouts.get((access, info_last))
        if entry is None:
            data = tuple("storage" if a == "rw" else "read-only-storage" for a in access)
            kinds = data + ("read-only-storage",) if info_last else ("read-only-storage",) + data
            info_at = len(access) if info_last else 0
            bgl = self.device.create_bind_group_layout(
                entries=[
                    {
                        "binding": i,
                        "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": t, "has_dynamic_offset": i == info_at},
                    }
                    for i, t in enumerate(kinds)
                ]
            )
            pl = self.device.create_pipeline_layout(bind_group_layouts=[bgl])
            entry = self._layouts[(access, info_last)] = (bgl, pl)
        return entry

    def pipeline(self, source: str, access: tuple[str, ...], info_last: bool = False):
        """The compiled pipeline for WGSL `source` (cached by source text and layout).

        Kernel sources are cached strings, whose hash Python keeps: the lookup is cheap.
        """
        key = (source, access, info_last)
        entry = self._pipelines.get(key)
        if entry is None:
            bgl, pl = self._layout(access, info_last)
            module = self.device.create_shader_module(code=source)
            pipe = self.device.create_compute_pipeline(
                layout=pl, compute={"module": module, "entry_point": "main"}
            )
            entry = self._pipelines[key] = (pipe, bgl)
        return entry

    @property
    def pipeline_count(self) -> int:
        return len(self._pipelines)

    # ------------------------------------------------------------------ launches
    def _ensure_encoder(self):
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()

    def _begin(self):
        """Mark a batch open: freed buffers may be in use until it is submitted."""
        self.pool.deferring = True

    def _forget_bind_groups(self, ids: set[int]) -> None:
        """Drop the cached bind groups that bind any of the buffers `ids` (destroyed)."""
        with self._lock:
            stale = [key for key in self._groups if not ids.isdisjoint(key[2:])]
            for key in stale:
                del self._groups[key]

    def _end_pass(self):
        if self._pass is not None:
            self._pass.end()
            self._pass = None

    def _arena_slice(self, words) -> tuple[int, int]:
        """Reserve room for `words` (a list or array of ints) in the batch's info arena;
        (byte offset, window size).

        The window (the bound size) is `INFO_WINDOW` bytes, or a larger power of two for long
        info lists, so that bind groups do not depend on how many words a launch has.
        """
        count = len(words)
        nbytes = (count or 1) * 4
        window = INFO_WINDOW if nbytes <= INFO_WINDOW else 1 << (nbytes - 1).bit_length()
        align = self.align
        start = (self._arena_used + align - 1) // align * align
        if start + window > ARENA_BYTES:
            self.flush()
            start = 0
        first = start >> 2
        try:
            # Plain non-negative ints go in as they are (the common case, and the cheap one): a
            # list (what layouts pack) with a struct, an array with numpy.
            if words.__class__ is list:
                _words_struct(count).pack_into(self._arena_words, start, *words)
            else:
                self._arena_words[first : first + count] = words
        except (struct.error, OverflowError, ValueError, TypeError):
            # Negative words (and numpy integers of other types) wrap to 32 bits.
            wrapped = np.asarray(words, dtype=np.int64).astype(np.uint32)
            self._arena_words[first : first + count] = wrapped
        self._arena_used = start + nbytes
        return start, window

    def launch(
        self,
        source: str,
        access,
        handles,
        info,
        groups,
        info_last: bool = False,
        checks_indices: bool = False,
    ) -> None:
        """Record one dispatch of `source` over `groups` workgroups.

        `handles` are the buffers for bindings 1.. (in `access` order), `info` the words of
        binding 0, `groups` a workgroup count (x or (x, y, z)); counts above the adapter's
        per-dimension limit are folded into y (kernels index with `num_workgroups`).
        With `info_last`, the info words are bound after the data buffers instead (the layout
        of custom kernels). With `checks_indices`, the runtime's error word is bound last
        (read-write) and checked at the next host read.

        Launches are the host cost of every op, so the pass commands go straight to
        wgpu-native's functions where they are available (`burn.wgpu.native`): wgpu-py's wrappers
        capture errors around each call, at several times the cost of the call, and a compute
        pass reports its errors when its command buffer is finished anyway.
        """
        if checks_indices:
            access = (*access, "rw")
            handles = (*handles, self.error_word)
            self._index_checks = True
        if groups.__class__ is int:
            gx, gy, gz = groups, 1, 1
        else:
            gx, gy, gz = (tuple(groups) + (1, 1))[:3]
        if gx == 0 or gy == 0 or gz == 0:
            return
        if gx > self.max_groups:
            # Fold into y as evenly as possible (few idle workgroups past the end).
            fold = -(-gx // self.max_groups)
            gx = -(-gx // fold)
            gy = gy * fold
        if access.__class__ is not tuple:
            access = tuple(access)
        with self._lock:
            pipe, bgl = self.pipeline(source, access, info_last)
            off, window = self._arena_slice(info)
            ids = [id(h.buffer) for h in handles]
            key = (id(bgl), window, *ids)
            group = self._groups.get(key)
            if group is None:
                buffers = [h.buffer for h in handles]
                group = self._bind_group(key, bgl, buffers, window, info_last)
            compute = self._pass
            calls = self._native
            if compute is None:
                self._ensure_encoder()
                compute = self._pass = self._encoder.begin_compute_pass()
                self._pass_pipeline = None
                self._pass_native = None if calls is None else calls.handle(compute)
                self._begin()
            native = self._pass_native
            if native is not None:
                if pipe is not self._pass_pipeline:  # a pass keeps its pipeline
                    calls.set_pipeline(native, pipe._internal)
                    self._pass_pipeline = pipe
                calls.set_bind_group(native, 0, group._internal, 1, calls.offset(off))
                calls.dispatch(native, gx, gy, gz)
                # The Python objects must outlive the recorded pass: the cache may drop them.
                self._pass_objects.append(group)
            else:
                if pipe is not self._pass_pipeline:
                    compute.set_pipeline(pipe)
                    self._pass_pipeline = pipe
                compute.set_bind_group(0, group, [off])
                compute.dispatch_workgroups(gx, gy, gz)
            self._touched.update(ids)
            self._pending += 1
            self.launches += 1
            if self._pending >= MAX_BATCH:
                self.flush()

    def remember_plan(self, key: tuple, plan: tuple) -> None:
        """Keep an op's launch plan under `key` (its operands' layouts); bounded, as the bind
        groups are: a program with ever-new shapes starts over instead of growing."""
        if len(self.op_plans) >= MAX_OP_PLANS:
            self.op_plans.clear()
        self.op_plans[key] = plan

    def _bind_group(self, key: tuple, bgl, buffers: list, window: int, info_last: bool):
        """Create (and cache under `key`) the bind group of `buffers` and the info window."""
        first = 0 if info_last else 1
        bound = [(i + first, b, b.size) for i, b in enumerate(buffers)]
        bound.append((len(buffers) if info_last else 0, self._arena, window))
        if len(self._groups) >= MAX_BIND_GROUPS:
            self._groups.clear()
        self.bind_groups_created += 1
        group = None
        maker = self._bind_group_maker
        if maker is not None:
            try:
                group = maker.create(self.device, bgl, bound)
            except (AttributeError, TypeError):  # this wgpu-py's structs differ: its own way
                self._bind_group_maker = None
        if group is None:
            entries = [
                {"binding": i, "resource": {"buffer": b, "offset": 0, "size": size}}
                for i, b, size in bound
            ]
            group = self.device.create_bind_group(layout=bgl, entries=entries)
        self._groups[key] = group
        return group

    def flush(self) -> None:
        """Submit the recorded batch (does not wait for it)."""
        with self._lock:
            if self._encoder is None:
                return
            self._end_pass()
            if self._arena_used:
                self.queue.write_buffer(
                    self._arena, 0, self._arena_words[: (self._arena_used + 3) // 4]
                )
            self.queue.submit([self._encoder.finish()])
            self._encoder = None
            self._pending = 0
            self._pass_objects.clear()
            # Submitted work is ordered before any later write, so the arena may be refilled,
            # uploads may use any buffer, and the pool may destroy what it holds too much.
            self._touched.clear()
            self._arena_used = 0
            self.pool.deferring = False
            self.pool.trim()

    def sync(self) -> None:
        """Submit and wait until the GPU has done everything recorded so far.

        Waits by reading a few bytes back (a read completes only after all earlier work), which
        works on every wgpu version.
        """
        with self._lock:
            self.flush()
            if self._fence is None:
                self._fence = self.alloc(MIN_BUFFER)
            self.queue.read_buffer(self._fence.buffer, 0, 4)
            self._raise_index_errors()

    def _raise_index_errors(self) -> None:
        """Raise (once) what index kernels flagged since the last check; call after a flush."""
        if not self._index_checks:
            return
        self._index_checks = False
        code = int.from_bytes(bytes(self.queue.read_buffer(self.error_word.buffer, 0, 4)), "little")
        self._raise_index_error(code)

    def _raise_index_error(self, code: int) -> None:
        """Raise what the error word `code` says, clearing the word first (0: nothing)."""
        if code:
            self.queue.write_buffer(self.error_word.buffer, 0, np.zeros(1, np.uint32))
            op = INDEX_ERROR_OPS.get(code, "an index kernel")
            raise OutOfRangeError(
                f"{op}: an index computed on the device was out of range; detected at this "
                "read from the device (GPU work runs ahead of Python), the kernel used the "
                "nearest valid index instead"
            )


_runtimes: dict[tuple, Runtime] = {}
_by_adapter: dict[tuple, Runtime] = {}
_lock = threading.Lock()


def runtime_for(device: WgpuDevice) -> Runtime:
    """The runtime behind `device` (created once; devices naming one adapter share it)."""
    key = device._key()
    rt = _runtimes.get(key)
    if rt is not None:
        return rt
    with _lock:
        rt = _runtimes.get(key)
        if rt is None:
            adapter = select_adapter(device.kind, device.index)
            ident = (
                adapter.info.get("device"),
                adapter.info.get("backend_type"),
                adapter.info.get("adapter_type"),
            )
            rt = _by_adapter.get(ident)
            if rt is None:
                rt = _by_adapter[ident] = Runtime(adapter)
            _runtimes[key] = rt
    return rt


def adapter_available() -> str | None:
    """None when some adapter exists, else the reason there is none."""
    try:
        runtime_for(WgpuDevice.BestAvailable)
    except Exception as e:  # noqa: BLE001 - any failure to find a device is "unavailable"
        return f"no usable WebGPU adapter: {e}"
    return None
