"""Averaging gradients while the backward pass still runs.

A step's backward pass finishes the gradients of the last layers first. With the autodiff
backend's gradient hook (`set_grad_hook`), each gradient is packed into its bucket the moment it
is final, and a bucket whose gradients are all in starts its all-reduce without blocking, so
the reduction of the last layers' gradients runs while the first layers are differentiated.
The step then waits for every bucket before the optimizer sees the gradients.

Non-blocking collectives must be started in the same order on every rank, so the buckets are planned
in the reverse of the module's parameter order (about the order backward finishes them) and started
strictly in that order: a bucket that fills early waits for the ones before it, so a parameter that
gets no gradient, or one used only early in the forward pass yet listed late in the module, holds
back the buckets after it until backward returns. A rank without items that step, and parameters no
gradient reached, take part with zeros once backward has returned; afterwards one small reduction
says which parameters had a gradient on any rank, and only those are returned, as in
`GradientBuckets.all_reduce`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from burn.collective.buckets import _Bucket, _grad_device, _unpack, trainable_params
from burn.collective.errors import CollectiveError
from burn.optim import GradientsParams

if TYPE_CHECKING:
    from burn.collective.buckets import GradientBuckets


class OverlappedStep:
    """One step's reduction, started from inside its backward pass.

    ```python
    from burn.backend import Autodiff, NdArray
    from burn.collective import Communicator, GradientBuckets
    from burn.optim import GradientsParams
    from burn.tensor import Tensor

    w = Tensor.from_data([1.0, 2.0], Autodiff(NdArray).device()).require_grad()
    step = GradientBuckets(Communicator.world(), overlap=True).overlapped({"w": w}, items=4)
    with step:  # gradients are packed and sent as backward finishes them
        grads = GradientsParams({"w": w.grad((w * w).sum().backward())})
    averaged = step.finish(grads)
    assert averaged.get("w").to_data().to_list() == [2.0, 4.0]  # one rank: unchanged
    ```
    """

    def __init__(self, owner: GradientBuckets, model: Any, items: int):
        self._owner = owner
        self._comm = owner.comm
        self._params = trainable_params(model)
        self._items = int(items)
        self._backend: Any = None
        self._previous: Any = None
        self._slots: dict[int, tuple[_Bucket, int, Any]] = {}
        self._buckets: list[_Bucket] = []
        self._missing: list[int] = []
        self._filled: list[list[bool]] = []
        self._requests: list[Any] = []
        self.scale = 0.0
        self.started_in_backward = 0
        """How many buckets started their all-reduce before backward returned."""

    def __enter__(self) -> OverlappedStep:
        # The global item count first (one small blocking reduction), so that each gradient
        # can be scaled by this rank's share as it is packed.
        total = np.array([float(self._items)], np.float64)
        self._comm.all_reduce_sum(total)
        self.scale = float(self._items) / total[0] if total[0] > 0 else 0.0
        if not self._params:
            return self
        self._buckets = self._owner._buckets_for(list(reversed(self._params)))
        self._missing = [len(b.slots) for b in self._buckets]
        self._filled = [[False] * len(b.slots) for b in self._buckets]
        self._backend = self._params[0][1].backend
        by_pid = dict(self._params)
        for b, bucket in enumerate(self._buckets):
            for s, slot in enumerate(bucket.slots):
                leaf = self._backend.leaf_id(by_pid[slot.pid].primitive)
                if leaf is not None:
                    self._slots[leaf] = (bucket, b, s)
        self._previous = self._backend.set_grad_hook(self._on_grad)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._backend is not None:
            self._backend.set_grad_hook(self._previous)
            self._backend = None

    def _on_grad(self, leaf: int, grad: Any) -> None:
        found = self._slots.get(leaf)
        if found is None:  # a leaf that is not one of the model's parameters
            return
        bucket, b, s = found
        slot = bucket.slots[s]
        if self._filled[b][s]:
            raise CollectiveError(
                f"DataParallel(overlap=True): parameter {slot.pid!r} got a second gradient in "
                "one step (a second backward pass?); its first one is already being reduced"
            )
        values = np.asarray(self._backend.inner().into_data(grad).as_array()).reshape(-1)
        assert bucket.buffer is not None
        target = bucket.buffer[slot.offset : slot.offset + slot.length]
        if self.scale == 1.0:
            np.copyto(target, values, casting="unsafe")
        else:
            np.multiply(values, self.scale, out=target, casting="unsafe")
        self._filled[b][s] = True
        self._missing[b] -= 1
        before = len(self._requests)
        self._start_ready()
        self.started_in_backward += len(self._requests) - before

    def _start_ready(self) -> None:
        """Start the next buckets in plan order whose gradients are all packed, and poll the
        oldest running one (without a progress thread, MPI advances only inside its calls)."""
        while len(self._requests) < len(self._buckets) and self._missing[len(self._requests)] == 0:
            buffer = self._buckets[len(self._requests)].buffer
            assert buffer is not None
            self._requests.append(self._comm.start_all_reduce_sum(buffer))
        for request in self._requests:
            if not request.Test():
                break

    def finish(self, grads: GradientsParams | None) -> GradientsParams:
        """Wait for every bucket and return the averaged gradients (as `all_reduce` does).

        `grads` are the ones this rank's step returned (None without items); on numpy memory
        the result is written into their arrays. A gradient that the hook delivered is sent as
        backward produced it: a step that changes its gradients after backward (rather than
        leaving that to the optimizer, which sees the averaged ones) must not overlap.
        """
        self.__exit__()
        local = grads if grads is not None else GradientsParams()
        # What no hook delivered (no gradient, or a backward pass run elsewhere) is packed
        # from `grads` now; those buckets have not started yet.
        for b, bucket in enumerate(self._buckets):
            assert bucket.buffer is not None
            for s, slot in enumerate(bucket.slots):
                if self._filled[b][s]:
                    continue
                target = bucket.buffer[slot.offset : slot.offset + slot.length]
                grad = local.get(slot.pid)
                if grad is None:
                    target[:] = 0
                else:
                    values = np.asarray(grad.to_data().as_array()).reshape(-1)
                    np.multiply(values, self.scale, out=target, casting="unsafe")
                self._filled[b][s] = True
            self._missing[b] = 0
        self._start_ready()
        presence = np.zeros(len(self._params) + 1, np.float64)
        for i, (pid, _) in enumerate(self._params):
            presence[i] = 1.0 if local.get(pid) is not None else 0.0
        presence[-1] = float(self._items) if local.len() else 0.0
        self._comm.all_reduce_sum(presence)
        for request in self._requests:
            request.Wait()
        if presence[-1] <= 0 or not presence[:-1].any():
            return GradientsParams()
        present = [
            (pid, t) for (pid, t), flag in zip(self._params, presence[:-1], strict=True) if flag
        ]
        absent = [
            pid for (pid, _), flag in zip(self._params, presence[:-1], strict=True) if not flag
        ]
        device = _grad_device(local, present)
        host = bool(getattr(present[0][1].inner().backend, "host_memory", False))
        out = GradientsParams()
        reused: set[int] | None = set() if host else None
        for bucket in self._buckets:
            _unpack(bucket, local, out, device, reused)
        for pid in absent:
            out.remove(pid)
        return out
