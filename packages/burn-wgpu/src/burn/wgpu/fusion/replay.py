"""Replaying a captured step as one command buffer built from parts made beforehand.

`Runtime.launch` does per launch what a replay need not repeat: packing info words into the
batch's arena, looking up pipelines and bind groups, tracking buffers. A `Replayer` does it once
per recording: every launch's info words live in one buffer of their own (written once; only
the random kernels' counters are rewritten before each replay), pipelines are looked up once,
and bind groups are made once per set of input buffers, which a training loop repeats every
other step. A replay is then one compute pass of `set_pipeline`, `set_bind_group` and
`dispatch_workgroups` calls, submitted after the runtime's own pending work.
"""

from __future__ import annotations

import numpy as np
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

    def replay(self, swap: dict[int, object], counter: int) -> int:
        """Encode and submit every launch; returns the random counter after the draws."""
        rt = self.rt
        groups = self._bind_groups(swap)
        with rt._lock:
            rt.flush()  # what the runtime recorded before runs first
            for word, n in self.random:
                rt.queue.write_buffer(
                    self.info, word * 4, np.array([counter & 0xFFFFFFFF], np.uint32)
                )
                counter += n
            encoder = rt.device.create_command_encoder()
            compute = encoder.begin_compute_pass()
            current = None
            for (pipe, _, _, _, offset, _, groups_xyz), group in zip(
                self.steps, groups, strict=True
            ):
                if pipe is not current:
                    compute.set_pipeline(pipe)
                    current = pipe
                compute.set_bind_group(0, group, [offset])
                compute.dispatch_workgroups(*groups_xyz)
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
