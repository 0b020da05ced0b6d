"""Replaying a captured step as one command buffer built from parts made beforehand.

`Runtime.launch` does per launch what a replay need not repeat: packing info words into the
batch's arena, looking up pipelines and bind groups, tracking buffers. A `Replayer` does it once
per recording: every launch's info words live in one buffer of their own (written once; only
the random kernels' counters are rewritten before each replay), pipelines are looked up once,
and bind groups are made once per set of input buffers, which a training loop repeats every
other step. A replay is then one compute pass of `set_pipeline`, `set_bind_group` and
`dispatch_workgroups` calls, submitted after the runtime's own pending work.

Those calls are the replay's whole host cost, so they are made straight on wgpu-native's
functions rather than through wgpu-py's per-call wrappers, whose error capture costs several
times the call itself (`burn.wgpu.native`; `Runtime.launch` does the same).
"""

from __future__ import annotations

import numpy as np
from burn.wgpu.native import pass_calls
from burn.wgpu.runtime import INFO_WINDOW, Runtime

import wgpu


class Replayer:
    """The launches of one recording, ready to be encoded again on other input buffers."""

    def __init__(
        self,
        rt: Runtime,
        launches,
        random_sources: frozenset[str],
        counter_word: int,
        n_word: int,
    ):
        self.rt = rt
        self.launches = launches
        self.steps = []  # (pipeline, bgl, access, handles, byte offset, window, groups)
        self.random: list[tuple[int, int]] = []  # (word index of the counter, element count)
        words: list[np.ndarray] = []
        used = 0
        align = rt.align
        self.checks_indices = False
        for launch in launches:
            info = launch.info
            nbytes = max(1, len(info)) * 4
            window = INFO_WINDOW if nbytes <= INFO_WINDOW else 1 << (nbytes - 1).bit_length()
            start = (used + align - 1) // align * align
            if start > used:
                words.append(np.zeros((start - used) // 4, np.uint32))
            words.append(info.astype(np.uint32))
            used = start + len(info) * 4
            if launch.source in random_sources:
                self.random.append((start // 4 + counter_word, int(info[n_word])))
            access = launch.access
            handles = launch.handles
            if launch.checks_indices:
                access = (*access, "rw")
                handles = (*handles, rt.error_word)
                self.checks_indices = True
            pipe, bgl = rt.pipeline(launch.source, access, launch.info_last)
            self.steps.append(
                (pipe, bgl, access, handles, start, window, _fold(launch.groups, rt.max_groups))
            )
        self.words = np.concatenate(words) if words else np.zeros(1, np.uint32)
        size = used + max((s[5] for s in self.steps), default=INFO_WINDOW)
        size = (size + 3) // 4 * 4
        self.info = rt.device.create_buffer(
            size=size, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
        )
        rt.queue.write_buffer(self.info, 0, self.words)
        self._groups: list[dict[tuple, tuple]] = [{} for _ in self.steps]
        # Encoding programs by the ids of the swapped-in buffers (a loop alternates two sets).
        self._programs: dict[tuple, tuple[list, list]] = {}
        self._native = pass_calls()

    def _bind_groups(self, swap: dict[int, object]) -> list:
        """One bind group per launch; a launch keeps the groups of its last few sets of
        swapped-in buffers (the handles are kept with them, so no buffer they bind is freed)."""
        groups = []
        for k, ((_, bgl, _, handles, _, window, _), launch) in enumerate(
            zip(self.steps, self.launches, strict=True)
        ):
            bound = [swap.get(id(h), h) for h in handles]
            key = tuple(id(h) for h in bound)
            cache = self._groups[k]
            entry = cache.get(key)
            if entry is None:
                if len(cache) >= 4:
                    cache.clear()
                first = 0 if launch.info_last else 1
                entries = [
                    {
                        "binding": i + first,
                        "resource": {"buffer": h.buffer, "offset": 0, "size": h.buffer.size},
                    }
                    for i, h in enumerate(bound)
                ]
                entries.append(
                    {
                        "binding": len(bound) if launch.info_last else 0,
                        "resource": {"buffer": self.info, "offset": 0, "size": window},
                    }
                )
                group = self.rt.device.create_bind_group(layout=bgl, entries=entries)
                entry = cache[key] = (group, bound)
            groups.append(entry[0])
        return groups

    def _program(self, swap: dict[int, object]) -> tuple[list, list]:
        """(commands, keep-alive) for these swapped-in buffers: per launch the native pipeline
        (None when it is the previous launch's), bind group, dynamic offset and workgroups."""
        # `swap` maps the recording's inputs, always in the same order, so the swapped-in
        # buffers alone say which program this is.
        key = tuple(map(id, swap.values()))
        program = self._programs.get(key)
        if program is not None:
            return program
        if len(self._programs) >= 4:
            self._programs.clear()
        groups = self._bind_groups(swap)
        commands, keep = [], [groups]
        current = None
        for (pipe, _, _, _, offset, _, (x, y, z)), group in zip(self.steps, groups, strict=True):
            native_pipe = None if pipe is current else pipe
            current = pipe
            if self._native is not None:
                offsets = self._native.offset(offset)
                commands.append(
                    (
                        None if native_pipe is None else native_pipe._internal,
                        group._internal,
                        offsets,
                        x,
                        y,
                        z,
                    )
                )
            else:
                commands.append((native_pipe, group, [offset], x, y, z))
        program = self._programs[key] = (commands, keep)
        return program

    def replay(self, swap: dict[int, object], counter: int) -> int:
        """Encode and submit every launch; returns the random counter after the draws."""
        rt = self.rt
        commands, _ = self._program(swap)
        with rt._lock:
            rt.flush()  # what the runtime recorded before runs first
            for word, n in self.random:
                rt.queue.write_buffer(
                    self.info, word * 4, np.array([counter & 0xFFFFFFFF], np.uint32)
                )
                counter += n
            encoder = rt.device.create_command_encoder()
            compute = encoder.begin_compute_pass()
            handle = None if self._native is None else self._native.handle(compute)
            if self._native is not None and handle is not None:
                calls = self._native
                set_pipeline, set_bind_group, dispatch = (
                    calls.set_pipeline,
                    calls.set_bind_group,
                    calls.dispatch,
                )
                for pipe, group, offsets, x, y, z in commands:
                    if pipe is not None:
                        set_pipeline(handle, pipe)
                    set_bind_group(handle, 0, group, 1, offsets)
                    dispatch(handle, x, y, z)
            else:
                if self._native is not None:  # no native handle: encode through wgpu-py
                    self._native = None
                    self._programs.clear()
                    commands, _ = self._program(swap)
                for pipe, group, offsets, x, y, z in commands:
                    if pipe is not None:
                        compute.set_pipeline(pipe)
                    compute.set_bind_group(0, group, offsets)
                    compute.dispatch_workgroups(x, y, z)
            compute.end()
            rt.queue.submit([encoder.finish()])
            rt.launches += len(self.steps)
            if self.checks_indices:
                rt._index_checks = True
        return counter


def _fold(groups, limit: int) -> tuple[int, int, int]:
    """Workgroup counts as the runtime dispatches them (x above the limit folded into y)."""
    if isinstance(groups, int):
        groups = (groups, 1, 1)
    gx, gy, gz = (tuple(groups) + (1, 1))[:3]
    if gx > limit:
        fold = -(-gx // limit)
        gx = -(-gx // fold)
        gy = gy * fold
    return gx, gy, gz
