"""Whole-step capture: record the kernel launches of a step once, replay them without Python.

`capture(step)` wraps a function of tensors (a training step: forward, backward, optimizer
update). Its first call runs normally (pipelines compile, autotune settles). The second and third
calls run normally too, while every launch they make is recorded: kernel source, buffers, info
words, workgroups. A second call can still differ from the ones after it (state an optimizer
makes on its first update, a choice `Fusion` makes once it has seen an op run alone), so when
the two recordings disagree the fourth call is recorded too and compared with the third, once.
If two recordings agree, later calls replay them: the recorded launches are issued again on the
new input buffers, as one command buffer whose pipelines, bind groups and info words were made
beforehand (`replay.py`), and none of the step's Python (tensor API, autodiff, fusion) runs. Two
recordings also give two sets of internal buffers, used in turn, so the outputs of one call can
be the inputs of the next (a training loop) without a kernel reading a buffer it also
overwrites.

The validity rule: a step can be replayed when it is a pure function of its tensor arguments:

- tensor arguments are Tensors of `Wgpu` or `Fusion(Wgpu)` (autodiff happens inside the step)
  with the same shapes, dtypes and layouts on every call;
- every value that changes between calls is a tensor argument: Python scalars and tensors the
  function reads from elsewhere (a closure, a module attribute) are baked into the recording;
  the two recordings are compared word by word, so a Python scalar that changes from call to
  call (a step counter in an info word) is caught;
- the step neither reads values back to the host nor uploads new host data;
- random draws are allowed (dropout's too): their kernels get fresh counters at each replay,
  as an uncaptured call would.

When the recordings still disagree, or the step reads or uploads, the capture is refused with
the reason in `CapturedStep.reason`, and every call runs the function normally (the fallback).
A call whose arguments differ from the recorded ones (another shape, a non-tensor argument that
changed) also runs normally, without giving up the capture. Outputs of a replay live in the
capture's internal buffers: they stay valid until the call after next (read or copy them
before).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from burn.tensor import DType, Tensor
from burn.tensor.errors import BackendError
from burn.wgpu import kernels as K
from burn.wgpu.backend import Wgpu
from burn.wgpu.fusion.replay import Replayer
from burn.wgpu.primitive import WgpuTensor, layout_of


class CaptureError(BackendError):
    """A step cannot be captured (the message says why)."""


def _random_sources() -> frozenset[str]:
    sources = set()
    for kind in ("uniform", "normal", "bernoulli"):
        for dtype in (DType.F32, DType.I32, DType.BOOL):
            try:
                sources.add(K.random(kind, dtype))
            except Exception:  # noqa: BLE001 - a combination the kernel does not offer
                pass
    sources.add(K.dropout(DType.F32))
    return frozenset(sources)


RANDOM_SOURCES = _random_sources()
# Where the RANDOM layout keeps the element count and the generator counter; DROPOUT's are
# at the same words.
_PROBE = list(K.RANDOM.pack(n=1, counter=2, key0=0, key1=0, p0=0, p1=0))
N_WORD, COUNTER_WORD = _PROBE.index(1), _PROBE.index(2)
_DROP_PROBE = list(K.DROPOUT.pack(n=1, counter=2, key0=0, key1=0, keep=0, scale=0, x_offset=0))
assert (_DROP_PROBE.index(1), _DROP_PROBE.index(2)) == (N_WORD, COUNTER_WORD)


@dataclass
class Launch:
    source: str
    access: tuple[str, ...]
    handles: tuple[Any, ...]
    info: np.ndarray
    groups: Any
    info_last: bool
    checks_indices: bool


@dataclass
class Recording:
    launches: list[Launch] = field(default_factory=list)
    created: dict[int, Any] = field(default_factory=dict)  # id -> handle made during the call
    inputs: list[WgpuTensor] = field(default_factory=list)
    outputs: list[WgpuTensor] = field(default_factory=list)
    problem: str | None = None
    replayer: Any = None  # a Replayer, built at the first replay (False: replay launch by launch)


def _primitive(t: Tensor) -> WgpuTensor:
    """The Wgpu primitive of a tensor of Wgpu or Fusion(Wgpu), its pending work run."""
    if not isinstance(t, Tensor):
        raise CaptureError(f"capture: expected tensors, got {type(t).__name__}")
    backend = t.backend
    p = t.primitive
    if backend.tracks_gradients():
        raise CaptureError(
            f"capture: arguments and results must be tensors of Wgpu or Fusion(Wgpu), not of "
            f"{backend!r}; mark them with require_grad() inside the step"
        )
    if hasattr(backend, "flush"):
        backend.flush()
        p = getattr(p, "value", p)  # a handle of a recorded value, or a computed primitive
    if not isinstance(p, WgpuTensor):
        raise CaptureError(f"capture: {backend!r} is not Wgpu or Fusion(Wgpu)")
    return p


def _primitives(tensors: list[Tensor]) -> list[WgpuTensor]:
    """`_primitive` of each tensor, checking and flushing each backend once: a replayed call
    takes every parameter and optimizer state of a model as arguments, and checking and
    flushing each of them was about a quarter of its host time."""
    checked: set[int] = set()
    out = []
    for t in tensors:
        backend = t.backend
        if id(backend) not in checked:
            _primitive(t)  # the checks and the flush, once per backend
            checked.add(id(backend))
        p = t.primitive
        if not isinstance(p, WgpuTensor):
            p = getattr(p, "value", None)  # a handle of Fusion(Wgpu), already computed
            if not isinstance(p, WgpuTensor):
                return [_primitive(x) for x in tensors]  # raises the error naming the tensor
        out.append(p)
    return out


def _rewrapper(template: Tensor):
    """A function making a tensor like `template` (its backend, rank, kind) around a Wgpu
    primitive; made once per result, since a replay wraps every result of the step."""
    backend, new = template.backend, template._new
    wrap = getattr(backend, "wrap", None)
    if wrap is None:
        return new
    return lambda p: new(wrap(p))


def _flatten(value) -> tuple[list[Tensor], Any]:
    """Tensors of `value` (a tensor or a list/tuple of them) and a rebuilding spec."""
    if isinstance(value, Tensor):
        return [value], None
    if isinstance(value, list | tuple) and all(isinstance(v, Tensor) for v in value):
        return list(value), (type(value), len(value))
    raise CaptureError("capture: a step returns a tensor or a list or tuple of tensors")


# Recordings that may be made past the first two when consecutive ones disagree.
RETRIES = 1


class CapturedStep:
    """A step function that is recorded on its 2nd and 3rd calls (a 4th when those disagree)
    and replayed after."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0
        self.replays = 0
        self.reason: str | None = None
        self.retries = 0  # recordings made again after a disagreement
        self._recordings: list[Recording] = []
        self._static: tuple | None = None
        self._rewrap: list = []  # per result: Wgpu primitive -> Tensor
        self._layouts: list[tuple] = []
        self._spec: Any = None

    # ------------------------------------------------------------------ calls
    def __call__(self, *args):
        tensors, static = self._split(args)
        self.calls += 1
        if self.reason is not None or self.calls == 1:
            return self.fn(*args)
        if len(self._recordings) < 2:
            return self._record(args, tensors, static)
        chosen = self._choose(tensors, static)
        if chosen is None:
            return self.fn(*args)
        return self._replay(*chosen)

    def _split(self, args) -> tuple[list[Tensor], tuple]:
        tensors, static = [], []
        for a in args:
            if isinstance(a, Tensor):
                tensors.append(a)
                static.append(("tensor", a.kind, a.backend))
            elif isinstance(a, list | tuple) and a and all(isinstance(v, Tensor) for v in a):
                tensors.extend(a)
                static.append(("tensors", len(a)) + tuple((v.kind, v.backend) for v in a))
            else:
                static.append(("value", a))
        return tensors, tuple(static)

    # ------------------------------------------------------------------ recording
    def _record(self, args, tensors, static):
        rec = Recording(inputs=[_primitive(t) for t in tensors])
        rt = rec.inputs[0].rt if rec.inputs else Wgpu.runtime()
        launch, alloc, upload, read = rt.launch, rt.alloc, rt.upload, rt.read_many

        def recording_launch(source, access, handles, info, groups, info_last=False,
                             checks_indices=False):  # fmt: skip
            words = np.asarray(info, dtype=np.int64).astype(np.uint32)
            rec.launches.append(
                Launch(
                    source, tuple(access), tuple(handles), words, groups, info_last, checks_indices
                )  # fmt: skip
            )
            return launch(source, access, handles, info, groups, info_last, checks_indices)

        def recording_alloc(nbytes):
            handle = alloc(nbytes)
            rec.created[id(handle)] = handle
            return handle

        def recording_upload(array):
            rec.problem = rec.problem or "the step uploads host data (pass it as an argument)"
            return upload(array)

        def recording_read(*a, **k):
            rec.problem = rec.problem or "the step reads values back to the host"
            return read(*a, **k)

        rt.launch, rt.alloc, rt.upload, rt.read_many = (
            recording_launch,
            recording_alloc,
            recording_upload,
            recording_read,
        )
        try:
            with ExitStack() as fusing:
                # `Fusion` records products of every size for a recording: what it saves is
                # saved at every replay, and what recording costs the host is paid once.
                for backend in {id(t.backend): t.backend for t in tensors}.values():
                    if hasattr(backend, "fuse_all"):
                        fusing.enter_context(backend.fuse_all())
                result = self.fn(*args)
                outs, spec = _flatten(result)
                rec.outputs = [_primitive(t) for t in outs]
        except CaptureError as error:
            rec.problem = str(error)
            result, outs, spec = None, [], None
        finally:
            del rt.launch, rt.alloc, rt.upload, rt.read_many
        if rec.problem is not None:
            self._give_up(rec.problem)
            return result if result is not None else self.fn(*args)
        if self._recordings and (static != self._static or spec != self._spec):
            self._give_up("the arguments or results changed between the recorded calls")
            return result
        self._static, self._spec = static, spec
        self._rewrap = [_rewrapper(t) for t in outs]
        self._layouts = [layout_of(p) for p in rec.inputs]
        self._recordings.append(rec)
        if len(self._recordings) == 2:
            problem = _compare(*self._recordings)
            if problem and self.retries < RETRIES:
                # The earlier call may have been the odd one: compare the next with this one.
                self.retries += 1
                self._recordings.pop(0)
            elif problem:
                self._give_up(problem)
        return result

    def _give_up(self, reason: str) -> None:
        self.reason = reason
        self._recordings.clear()

    # ------------------------------------------------------------------ replay
    def _choose(self, tensors, static) -> tuple[Recording, list[WgpuTensor]] | None:
        """The recording to replay on these arguments and their primitives, or None (run the
        function): the other recording than the one whose buffers the arguments live in."""
        if static != self._static:
            return None
        prims = _primitives(tensors)
        if [layout_of(p) for p in prims] != self._layouts:
            return None
        ids = {id(p.handle) for p in prims}
        usable = [r for r in self._recordings if not ids & r.created.keys()]
        if not usable:
            return None
        plan = usable[0]
        # Inputs sharing a buffer must share it as recorded (and only then).
        recorded = [id(p.handle) for p in plan.inputs]
        given = [id(p.handle) for p in prims]
        if len(set(zip(recorded, given, strict=True))) != len(set(recorded)) or len(
            set(given)
        ) != len(set(recorded)):
            return None
        return plan, prims

    def _replay(self, plan: Recording, prims: list[WgpuTensor]) -> Any:
        swap = {id(r.handle): p.handle for r, p in zip(plan.inputs, prims, strict=True)}
        rt = prims[0].rt if prims else Wgpu.runtime()
        if plan.replayer is None:
            try:
                plan.replayer = Replayer(rt, plan.launches, RANDOM_SOURCES, COUNTER_WORD, N_WORD)
            except Exception:  # noqa: BLE001 - replay launch by launch instead
                plan.replayer = False
        if plan.replayer:
            Wgpu._counter = plan.replayer.replay(swap, Wgpu._counter)
        else:
            for step in plan.launches:
                handles = tuple(swap.get(id(h), h) for h in step.handles)
                info = step.info
                if step.source in RANDOM_SOURCES:
                    info = info.copy()
                    info[COUNTER_WORD] = Wgpu._counter & 0xFFFFFFFF
                    Wgpu._counter += int(info[N_WORD])
                rt.launch(
                    step.source, step.access, handles, info, step.groups, step.info_last,
                    step.checks_indices,
                )  # fmt: skip
        self.replays += 1
        outs = [
            rewrap(p.with_handle(swap.get(id(p.handle), p.handle)))
            for rewrap, p in zip(self._rewrap, plan.outputs, strict=True)
        ]
        if self._spec is None:
            return outs[0]
        kind, _ = self._spec
        return kind(outs)


def _compare(a: Recording, b: Recording) -> str | None:
    """Why two recordings of the same step differ in what replay depends on, or None."""
    if len(a.launches) != len(b.launches):
        return f"the step launched {len(a.launches)} kernels, then {len(b.launches)}"
    pairs: dict[int, int] = {}
    inputs_a = {id(p.handle): k for k, p in enumerate(a.inputs)}
    inputs_b = {id(p.handle): k for k, p in enumerate(b.inputs)}

    def same_role(ha, hb) -> bool:
        if id(ha) in inputs_a or id(hb) in inputs_b:
            return inputs_a.get(id(ha)) == inputs_b.get(id(hb))
        if id(ha) in a.created or id(hb) in b.created:
            if id(ha) not in a.created or id(hb) not in b.created:
                return False
            return pairs.setdefault(id(ha), id(hb)) == id(hb)
        return ha is hb  # a buffer from outside the step: the same one both times

    for k, (la, lb) in enumerate(zip(a.launches, b.launches, strict=True)):
        same = (la.source, la.access, la.groups, la.info_last, la.checks_indices) == (
            lb.source,
            lb.access,
            lb.groups,
            lb.info_last,
            lb.checks_indices,
        )
        if not same:
            return f"launch {k} differs between the recorded calls (another kernel or size)"
        ia, ib = la.info, lb.info
        if la.source in RANDOM_SOURCES:
            ia, ib = np.delete(ia, COUNTER_WORD), np.delete(ib, COUNTER_WORD)
        if ia.shape != ib.shape or not np.array_equal(ia, ib):
            return (
                f"launch {k} got other parameters on the second recorded call: a Python value "
                "that changes between calls (pass it as a tensor argument)"
            )
        if not all(same_role(x, y) for x, y in zip(la.handles, lb.handles, strict=True)):
            return f"launch {k} uses other buffers between the recorded calls"
    for pa, pb in zip(a.outputs, b.outputs, strict=True):
        if layout_of(pa) != layout_of(pb) or not same_role(pa.handle, pb.handle):
            return "the results come from other buffers or layouts between the recorded calls"
    return None


def capture(fn) -> CapturedStep:
    """`fn` recorded on its 2nd and 3rd calls (a 4th when those disagree) and replayed after
    (see the module docstring)."""
    return CapturedStep(fn)
