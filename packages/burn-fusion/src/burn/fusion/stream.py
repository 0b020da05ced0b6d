"""The lazy stream: recorded tensors waiting to be computed, and the cache of compiled plans.

Every tensor handle whose value is a recorded node is *pending*. The stream keeps weak
references to pending handles only, so when the stream is flushed the handles still alive
are exactly the values somebody can still read: they become kernel outputs, and every other
recorded node is an expression inlined into the kernels that need it, never written.

A flush groups the live handles by shape and device; each group becomes one `Segment` (split
if it would read more primitives than the fuser can bind), and each segment runs the plan
cached under its signature, compiling one only the first time a signature is seen.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from burn.fusion.contract import FusionBackend
from burn.fusion.ir import Node, Segment, leaf_count, leaf_ids

# A node inlining more ops than this flushes the stream first (kernels stay small to compile).
MAX_COST = 48
# This many pending handles flush the stream (bounds the host memory a stream holds).
MAX_PENDING = 512


@dataclass
class FusionStats:
    """Counters of a stream, for tests and benchmarks (`Fusion(B).stats`)."""

    flushes: int = 0
    segments: int = 0
    compiles: int = 0
    replays: int = 0
    fused_ops: int = 0
    outputs: int = 0
    fused_reductions: int = 0

    def reset(self) -> None:
        for name in vars(self):
            setattr(self, name, 0)


class Stream:
    """Pending handles of one `Fusion(B)` backend and the plans compiled for them."""

    def __init__(self, fuser: FusionBackend):
        self.fuser = fuser
        self.stats = FusionStats()
        self.plans: dict[Any, Any] = {}
        self._pending: list[weakref.ref] = []
        self._lock = threading.RLock()
        self._max_inputs: dict[Any, int] = {}
        # The last device asked and its limit (one device is the common case: no hashing).
        self._limit_device: Any = None
        self._limit = 0

    def record(self, handle: Any) -> None:
        """Remember a handle whose value is a recorded node."""
        with self._lock:
            self._pending.append(weakref.ref(handle))
            self.stats.fused_ops += 1
            if len(self._pending) >= MAX_PENDING:
                self.flush()

    def too_big(self, node: Node) -> bool:
        """Whether `node` (not yet recorded) inlines too much: flush first, then record it.

        Its own bounds decide at once in nearly every case; only when its upper bound on reads
        is past the fuser's limit are the distinct primitives counted."""
        if node.cost > MAX_COST:
            return True
        device = node.device
        limit = self._limit if device is self._limit_device else self._inputs_limit(device)
        if node.reads + 1 <= limit:
            return False
        return len(frozenset().union(*[leaf_ids(i) for i in node.inputs])) + 1 > limit

    def _inputs_limit(self, device: Any) -> int:
        """The fuser's bound on a kernel's inputs on `device` (asked once per device)."""
        if device is self._limit_device:
            return self._limit
        limit = self._max_inputs.get(device)
        if limit is None:
            limit = self._max_inputs[device] = max(2, int(self.fuser.max_inputs(device)))
        self._limit_device, self._limit = device, limit
        return limit

    def flush(self) -> None:
        """Compute every live pending handle; the stream is empty afterwards."""
        with self._lock:
            live = [h for h in (r() for r in self._pending) if h is not None and h.node is not None]
            self._pending.clear()
            if not live:
                return
            self.stats.flushes += 1
            # Grouped by shape and device; devices by position in `devices` (one device is the
            # common case, found by identity without hashing it).
            groups: dict[tuple, list[Any]] = {}
            devices: list[Any] = []
            for handle in live:
                node = handle.node
                device = node.device
                if devices and device is devices[-1]:
                    slot = len(devices) - 1
                else:
                    slot = next((k for k, d in enumerate(devices) if d == device), len(devices))
                    if slot == len(devices):
                        devices.append(device)
                key = (node.shape, slot)
                group = groups.get(key)
                if group is None:
                    groups[key] = [handle]
                else:
                    group.append(handle)
            try:
                for (_, slot), handles in groups.items():
                    for chunk in self._chunks(handles, self._inputs_limit(devices[slot])):
                        self._run(chunk)
            except BaseException:
                # What did not run stays pending, so a later read tries again (and raises again).
                self._pending.extend(weakref.ref(h) for h in live if h.node is not None)
                raise

    def _chunks(self, handles: list[Any], limit: int) -> list[list[Any]]:
        """Handles split so that each chunk's kernel binds at most `limit` primitives."""
        nodes = [h.node for h in handles]
        # The nodes' upper bounds on reads settle most groups without a walk.
        if sum([n.reads for n in nodes]) + len(handles) <= limit:
            return [handles]
        if leaf_count(nodes) + len(handles) <= limit:
            return [handles]
        chunks: list[list[Any]] = [[]]
        for handle in handles:
            trial = chunks[-1] + [handle]
            if chunks[-1] and leaf_count([h.node for h in trial]) + len(trial) > limit:
                chunks.append([handle])
            else:
                chunks[-1] = trial
        return chunks

    def _run(self, handles: list[Any]) -> None:
        # Handles sharing one node (clones) are one output.
        unique: dict[int, Node] = {}
        for h in handles:
            unique.setdefault(id(h.node), h.node)
        outputs = list(unique.values())
        segment = Segment(outputs, self.fuser.layout_key)
        plan = self.plans.get(segment.signature)
        if plan is None:
            plan = self.plans[segment.signature] = self.fuser.compile(segment)
            self.stats.compiles += 1
        else:
            self.stats.replays += 1
        values = self.fuser.execute(plan, segment)
        by_node = {id(node): value for node, value in zip(outputs, values, strict=True)}
        for h in handles:
            h.value = by_node[id(h.node)]
            h.node = None
        self.stats.segments += 1
        self.stats.outputs += len(outputs)

    def reduce(self, node: Node, op: str, dim: int) -> Any:
        """`op` along `dim` of the recorded `node`, run with its chain as the prologue (the
        node itself stays pending: computed later only if a handle still needs it)."""
        with self._lock:
            segment = Segment([node], self.fuser.layout_key)
            key = ("reduce", op, dim, segment.signature)
            plan = self.plans.get(key)
            if plan is None:
                plan = self.plans[key] = self.fuser.compile_reduce(segment, op, dim)  # type: ignore[attr-defined]
                self.stats.compiles += 1
            else:
                self.stats.replays += 1
            self.stats.segments += 1
            self.stats.fused_reductions += 1
            return self.fuser.execute_reduce(plan, segment, dim)  # type: ignore[attr-defined]
