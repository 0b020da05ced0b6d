"""Device memory of a training loop settles: the pool reuses buffers instead of growing, and
the same buffers come back step after step, so cached bind groups keep serving."""

from __future__ import annotations

import gc

import numpy as np
from burn.autodiff import Autodiff
from burn.tensor import Int, Tensor, activation
from burn.wgpu import Wgpu, runtime

B = Autodiff(Wgpu)


def _step(params, moments, x, labels, lr=0.01):
    """A forward, a backward and an Adam-style update (its moments outlive the step)."""
    w1, b1, w2, b2 = params
    hidden = activation.relu(x.matmul(w1) + b1)
    logits = hidden.matmul(w2) + b2
    loss = -activation.log_softmax(logits, 1).gather(1, labels).mean()
    grads = loss.backward()
    new = []
    for p, (m, v) in zip(params, moments, strict=True):
        g = p.grad_remove(grads)
        m[0] = m[0] * 0.9 + g * 0.1
        v[0] = v[0] * 0.999 + g * g * 0.001
        update = m[0] / (v[0].sqrt() + 1e-8) * lr
        new.append(Tensor[B, 2].from_inner(p.inner() - update).require_grad())
    return new, float(loss.into_scalar())


def test_training_loop_device_memory_and_bind_groups_stop_growing(monkeypatch):
    monkeypatch.setattr(runtime, "MAX_BIND_GROUPS", 1 << 30)  # no cache reset mid-test
    rng = np.random.default_rng(0)
    device = B.device()
    x = Tensor.from_data(rng.normal(size=(32, 16)).astype(np.float32), device)
    labels = Tensor[B, 2, Int].from_data(rng.integers(0, 4, size=(32, 1)).astype(np.int32), device)
    params = [
        Tensor.from_data((rng.normal(size=s) * 0.3).astype(np.float32), device).require_grad()
        for s in ((16, 32), (1, 32), (32, 4), (1, 4))
    ]
    moments = [
        (
            [Tensor[Wgpu, 2].zeros(p.shape(), Wgpu.device())],
            [Tensor[Wgpu, 2].zeros(p.shape(), Wgpu.device())],
        )
        for p in params
    ]
    rt = Wgpu.runtime()
    pool = rt.pool
    reserved, created, groups, losses = [], [], [], []
    for _ in range(60):
        params, loss = _step(params, moments, x, labels)
        gc.collect()
        reserved.append(pool.stats.reserved_bytes)
        created.append(pool.stats.created)
        groups.append(rt.bind_groups_created)
        losses.append(loss)
    # After a warm-up, every step's buffers come from the pool: nothing new is created and the
    # memory held (live tensors plus cached free buffers) no longer grows.
    assert created[-1] == created[20], (created[20], created[-1])
    assert max(reserved[20:]) <= reserved[20] * 1.05 + 65536, (reserved[20], max(reserved[20:]))
    assert pool.stats.reused > 0
    # Tensors get the same buffers each step (the oldest free buffer first), so no launch needs
    # a new bind group any more (last-freed-first reuse kept adding about ten a step here).
    assert groups[-1] == groups[20], groups[20:]
    assert losses[-1] < losses[0]
