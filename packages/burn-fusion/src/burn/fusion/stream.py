"""The lazy stream: recorded tensors waiting to be computed, and the cache of compiled plans.

Every tensor handle whose value is a recorded node is *pending*. The stream keeps weak
references to pending handles only, so when the stream is flushed the handles still alive
are exactly the values somebody can still read: they become kernel outputs, and every other
recorded node is an expression inlined into the kernels that need it, never written.

A flush groups the live handles by shape and device; each group becomes one `Segment` (split
if it would read more primitives than the fuser can bind), and each segment runs the plan
cached under its signature, compiling one only the first time a signature is seen.

A kernel of one op gains nothing from fusion, and recording and planning it costs the host more
than running it at once. So the stream runs a lone op (one output, every input concrete) as the
inner backend's own op, and it remembers the op's *pattern* (the op, its shapes and dtypes) in
`alone`; a recorded matmul computed on its own is remembered so too. The next op of a pattern in
`alone` is not recorded: it runs at once, as on the inner backend. A pattern seen in a kernel of
several ops is never remembered as alone. A traced training step repeats its ops, so after its
first step only the ops that fused are recorded (Burn's fusion caches its choice of running a
stream's ops one by one in the same spirit).

A recorded matmul waits in the stream too, so that what follows it (a bias, an activation, an
optimizer's update of a weight gradient) can run as its epilogue: applied to each product as it
is stored, in the matmul's own kernel. At a flush, each matmul whose consumers are all in one
group of its shape becomes that group's kernel; one that only its own handles read waits for
its consumers, unless the flush is for its value; any other (read by two groups, or broadcast)
runs on its own first, and its consumers read the result.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from burn.fusion.contract import FusionBackend
from burn.fusion.ir import Node, Segment, leaf_count, leaf_ids, matmul_nodes

# A node inlining more ops than this flushes the stream first (kernels stay small to compile).
MAX_COST = 48
# This many pending handles flush the stream (bounds the host memory a stream holds).
MAX_PENDING = 512
# Patterns remembered as alone (or as fused) before the memory starts over (ever-new shapes).
MAX_PATTERNS = 4096


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
    matmul_epilogues: int = 0
    eager_matmuls: int = 0
    eager_ops: int = 0
    unrecorded: int = 0

    def reset(self) -> None:
        for name in vars(self):
            setattr(self, name, 0)


class Stream:
    """Pending handles of one `Fusion(B)` backend and the plans compiled for them."""

    def __init__(
        self,
        fuser: FusionBackend,
        eager_matmul: Callable[[Any, Any, tuple], Any],
        eager_op: Callable[[Node], Any],
    ):
        self.fuser = fuser
        # How a recorded matmul that cannot be an epilogue's product runs on its own:
        # `eager_matmul(lhs, rhs, shape)`, the product at the node's shape (a reshape of it).
        self.eager_matmul = eager_matmul
        # How a lone op (one output, every input a leaf) runs: `eager_op(node)`, the inner
        # backend's own op, one kernel as a fused one would be, without planning one.
        self.eager_op = eager_op
        # Patterns (`Node.pattern`) of ops that ran as a kernel of their own: not recorded
        # again. `_fused`: patterns seen in a kernel of several ops, never taken as alone.
        self.alone: set[Hashable] = set()
        self._fused: set[Hashable] = set()
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

    def flush(self, need: list[Any] | None = None) -> None:
        """Compute every live pending handle; the stream is empty afterwards.

        A flush for some handles' values (`need`) leaves out the recorded matmuls that nothing
        computed now reads: they wait for their consumers (a weight gradient for the
        optimizer's update), which then run as their epilogue."""
        with self._lock:
            live = [h for h in (r() for r in self._pending) if h is not None and h.node is not None]
            self._pending.clear()
            if not live:
                return
            self.stats.flushes += 1
            if len(live) == 1 and not live[0].node.matmuls:
                # One pending value and no product (a traced step's common flush): it fits
                # one kernel (`too_big` saw to that when it was recorded).
                handle = live[0]
                if not _settled(handle):
                    try:
                        self._run(live)
                    except BaseException:
                        self._pending.append(weakref.ref(handle))
                        raise
                return
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
            products: dict[tuple, Node] = {}
            waiting: list[Any] = []
            try:
                if any(h.node.matmuls for h in live):
                    products, waiting = self._place_matmuls(groups, need)
                left_out = {id(h) for h in waiting}
                for key, handles in groups.items():
                    handles = [h for h in handles if id(h) not in left_out and not _settled(h)]
                    if not handles:
                        continue
                    chunks = self._chunks(handles, self._inputs_limit(devices[key[1]]))
                    if len(chunks) > 1 and key in products:
                        # Its consumers are split over kernels: the product is computed once.
                        self._compute_matmul(products[key])
                        handles = [h for h in handles if not _settled(h)]
                        chunks = self._chunks(handles, self._inputs_limit(devices[key[1]]))
                    for chunk in chunks:
                        self._run(chunk)
            except BaseException:
                # What did not run stays pending, so a later read tries again (and raises again).
                self._pending.extend(weakref.ref(h) for h in live if h.node is not None)
                raise
            self._pending.extend(weakref.ref(h) for h in waiting)

    def _place_matmuls(
        self, groups: dict[tuple, list[Any]], need: list[Any] | None
    ) -> tuple[dict[tuple, Node], list[Any]]:
        """Which group's kernel each recorded matmul becomes, which wait, and which run now.

        A matmul read by nothing but its own handles waits when the flush is for other
        handles (`need`), and otherwise runs as the backend's own matmul. One read by other
        handles is the product of their group's kernel (its consumers the epilogue) when they
        are all of one group, at the matmul's shape, and it is the group's first; any other is
        computed now. Returns (group key -> its matmul node, the handles left waiting)."""
        found: dict[int, Node] = {}
        readers: dict[int, list[tuple[tuple, Any]]] = {}
        for key, handles in groups.items():
            for h in handles:
                node = h.node
                if node.matmuls:
                    for m in (node,) if node.kind == "matmul" else matmul_nodes([node]):
                        found[id(m)] = m
                        readers.setdefault(id(m), []).append((key, h))
        products: dict[tuple, Node] = {}
        waiting: list[Any] = []
        needed = None if need is None else {id(h) for h in need}
        for ident, node in found.items():
            reads = readers[ident]
            if all(h.node is node for _, h in reads):
                if needed is not None and all(id(h) not in needed for _, h in reads):
                    waiting.extend(h for _, h in reads)
                else:
                    self._compute_matmul(node)
                continue
            key = reads[0][0]
            if key in products or node.shape != key[0] or any(k != key for k, _ in reads):
                self._compute_matmul(node)
            else:
                products[key] = node
        return products, waiting

    def _compute_matmul(self, node: Node) -> None:
        """Run a recorded matmul on its own; the node becomes a leaf reading the result."""
        lhs, rhs, _ = node.arg
        node.become_leaf(self.eager_matmul(lhs, rhs, node.shape))
        self.stats.eager_matmuls += 1
        self._ran_alone(node.pattern)

    def _ran_alone(self, pattern: Hashable | None) -> None:
        if pattern is not None and pattern not in self._fused:
            if len(self.alone) >= MAX_PATTERNS:
                self.alone.clear()
            self.alone.add(pattern)

    def _ran_fused(self, segment: Segment) -> None:
        """Remember the patterns of a segment's nodes as fused (once per new plan: a segment of
        the same signature holds the same patterns)."""
        for node in segment.nodes:
            if node.pattern is not None:
                if len(self._fused) >= MAX_PATTERNS:
                    self._fused.clear()
                self._fused.add(node.pattern)
                self.alone.discard(node.pattern)

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
        if len(outputs) == 1 and _lone(outputs[0]):
            node = outputs[0]
            value = self.eager_op(node)
            for h in handles:
                h.value = value
                h.node = None
            self.stats.eager_ops += 1
            self._ran_alone(node.pattern)
            return
        segment = Segment(outputs, self.fuser.layout_key)
        fuser: Any = self.fuser
        epilogue = segment.matmul is not None
        plan = self.plans.get(segment.signature)
        if plan is None:
            compile_ = fuser.compile_matmul if epilogue else fuser.compile
            plan = self.plans[segment.signature] = compile_(segment)
            self.stats.compiles += 1
            self._ran_fused(segment)
        else:
            self.stats.replays += 1
        if epilogue:
            values = fuser.execute_matmul(plan, segment)
            self.stats.matmul_epilogues += 1
        else:
            values = fuser.execute(plan, segment)
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
                self._ran_fused(segment)
            else:
                self.stats.replays += 1
            self.stats.segments += 1
            self.stats.fused_reductions += 1
            return self.fuser.execute_reduce(plan, segment, dim)  # type: ignore[attr-defined]


def _lone(node: Node) -> bool:
    """Whether `node` is one op over leaves: nothing to fuse it with (a matmul is not one)."""
    return node.kind not in ("leaf", "matmul") and all(i.kind == "leaf" for i in node.inputs)


def _settled(handle: Any) -> bool:
    """Whether a pending handle's node was a matmul computed on its own (now a leaf): the
    handle takes the value, and its leaf node serves whoever reads it from now on."""
    node = handle.node
    if node.kind != "leaf":
        return False
    handle.value, handle.leaf, handle.node = node.arg, node, None
    return True
