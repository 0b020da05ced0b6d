"""Device memory of a training loop settles: the pool reuses buffers instead of growing."""

from __future__ import annotations

import gc

import numpy as np
from burn.autodiff import Autodiff
from burn.tensor import Int, Tensor, activation
from burn.wgpu import Wgpu

B = Autodiff(Wgpu)


def _step(params, x, labels, lr=0.1):
    w1, b1, w2, b2 = params
    hidden = activation.relu(x.matmul(w1) + b1)
    logits = hidden.matmul(w2) + b2
    loss = -activation.log_softmax(logits, 1).gather(1, labels).mean()
    grads = loss.backward()
    new = [
        Tensor[B, 2].from_inner(p.inner() - p.grad_remove(grads) * lr).require_grad()
        for p in params
    ]
    return new, float(loss.into_scalar())


def test_training_loop_device_memory_stops_growing():
    rng = np.random.default_rng(0)
    device = B.device()
    x = Tensor.from_data(rng.normal(size=(32, 16)).astype(np.float32), device)
    labels = Tensor[B, 2, Int].from_data(rng.integers(0, 4, size=(32, 1)).astype(np.int32), device)
    params = [
        Tensor.from_data((rng.normal(size=s) * 0.3).astype(np.float32), device).require_grad()
        for s in ((16, 32), (1, 32), (32, 4), (1, 4))
    ]
    pool = Wgpu.runtime().pool
    reserved, created, losses = [], [], []
    for _ in range(60):
        params, loss = _step(params, x, labels)
        gc.collect()
        reserved.append(pool.stats.reserved_bytes)
        created.append(pool.stats.created)
        losses.append(loss)
    # After a warm-up, every step's buffers come from the pool: nothing new is created and the
    # memory held (live tensors plus cached free buffers) no longer grows.
    assert created[-1] == created[20], (created[20], created[-1])
    assert max(reserved[20:]) <= reserved[20] * 1.05 + 65536, (reserved[20], max(reserved[20:]))
    assert pool.stats.reused > 0
    assert losses[-1] < losses[0]
