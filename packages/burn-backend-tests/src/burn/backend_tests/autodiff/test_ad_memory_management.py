"""The graph is freed by backward (Burn's memory_management.rs).

After `backward()`, every node it walked through is released; a later backward that needs one
of them raises `BackendError`, while graphs that share only leaves stay usable.
"""

import gc
import tracemalloc

import numpy as np
import pytest
from burn.backend_tests.autodiff.gradcheck import grad_dtype
from burn.backend_tests.helpers import tensor
from burn.tensor import activation
from burn.tensor.errors import BackendError

DATA = np.array([[1.0, 2.0], [3.0, 4.0]])


def _leaves(ad_backend, n):
    return [tensor(ad_backend, DATA, grad_dtype(ad_backend)).require_grad() for _ in range(n)]


def test_mm_independent_trees(ad_backend):
    t0, t1, t2, t3, t7, t8, t9, t10 = _leaves(ad_backend, 8)
    first = (t0 * t1) * (t2 * t3)
    second = (t7 * t8) * (t9 * t10)
    first.backward()
    grads = second.backward()
    assert all(t.grad(grads) is not None for t in (t7, t8, t9, t10))


def test_mm_crossover_trees_root_unavailable(ad_backend):
    t0, t1, t2, t3, t7, t8 = _leaves(ad_backend, 6)
    t4 = t0 * t1
    t6 = t4 * (t2 * t3)
    t10 = t4 * (t7 * t8)
    t6.backward()
    with pytest.raises(BackendError, match="freed"):
        t10.backward()


def test_mm_crossover_trees_with_referred_subtree(ad_backend):
    t0, t1, t2, t3, t7, t8 = _leaves(ad_backend, 6)
    t4 = t0 * t1
    t6 = t4 * (t2 * t3)
    t9 = t7 * t8
    _t10 = t4 * t9
    t6.backward()
    grads = t9.backward()
    assert t7.grad(grads) is not None


def test_mm_three_crossover_trees_last_still_usable(ad_backend):
    t0, t1, t2, t3, t7, t8, t9, t10 = _leaves(ad_backend, 8)
    t5 = t2 * t3
    t6 = (t0 * t1) * t5
    t12 = t9 * t10
    t13 = (t7 * t8) * t12
    _t14 = t5 * t12
    t6.backward()
    t13.backward()


def test_mm_three_crossover_trees_middle_one_unavailable(ad_backend):
    t0, t1, t2, t3, t7, t8, t9, t10 = _leaves(ad_backend, 8)
    t5 = t2 * t3
    t6 = (t0 * t1) * t5
    t12 = t9 * t10
    _t13 = (t7 * t8) * t12
    t14 = t5 * t12
    t6.backward()
    with pytest.raises(BackendError):
        t14.backward()


def test_mm_self_referencing_tree(ad_backend):
    t0, t1, t2 = _leaves(ad_backend, 3)
    t3 = t0 * t1
    grads = (t3 * (t2 * t3)).backward()
    assert all(t.grad(grads) is not None for t in (t0, t1, t2))


def test_mm_with_non_impacting_detach(ad_backend):
    t1, t2, t3 = _leaves(ad_backend, 3)
    grads = ((t1 * t2).detach() * t3).backward()
    assert t3.grad(grads) is not None
    assert t1.grad(grads) is None and t2.grad(grads) is None


def test_mm_with_missing_require_grad_after_cleanup(ad_backend):
    (t1,) = _leaves(ad_backend, 1)
    t2 = tensor(ad_backend, DATA, grad_dtype(ad_backend))
    t3 = tensor(ad_backend, DATA, grad_dtype(ad_backend))
    t5 = (t1 * t2) * t3
    _leaves(ad_backend, 1)[0].backward()
    grads = t5.backward()
    assert t1.grad(grads) is not None
    assert t2.grad(grads) is None and t3.grad(grads) is None


def test_mm_with_detach_after_cleanup(ad_backend):
    t1, t2, t3 = _leaves(ad_backend, 3)
    t5 = (t1 * t2) * t3.detach()
    _leaves(ad_backend, 1)[0].backward()
    grads = t5.backward()
    assert t1.grad(grads) is not None and t2.grad(grads) is not None
    assert t3.grad(grads) is None


def test_mm_deletables_propagate_well(ad_backend):
    t0, t1 = _leaves(ad_backend, 2)
    t2 = t0 * t1
    t3 = t2.exp()
    _t4 = t3.log()
    t2.backward()
    with pytest.raises(BackendError):
        t3.backward()


def test_mm_node_explored_once_can_still_be_tagged_as_useful_when_found_again_deeper(ad_backend):
    for _ in range(4):
        t0, t1 = _leaves(ad_backend, 2)
        t2 = t1.exp()
        t3 = t0.exp()
        _t4 = t3 * t2
        t8 = t2.exp().exp().exp().exp()
        t3.backward()
        grads = t8.backward()
        assert t1.grad(grads) is not None


def _mlp_step(ad_backend, params, x, targets):
    w1, b1, w2, b2 = params
    hidden = activation.relu(x.matmul(w1) + b1)
    logits = hidden.matmul(w2) + b2
    loss = activation.log_softmax(logits, 1).gather(1, targets).mean().neg()
    grads = loss.backward()
    # Plain SGD: read each gradient on the inner backend and make fresh leaves.
    out = []
    for p in params:
        g = p.grad_remove(grads)
        new = (p.inner() - g * 0.05).detach()
        out.append(type(p).from_inner(new, ad_backend).require_grad())
    return out, float(loss.into_scalar())


def test_graph_is_freed_after_backward(ad_backend):
    """200 training steps of a small MLP: memory held at the end of steps 100..200 does not grow
    beyond what steps 1..100 held (a leaking graph would grow with every step)."""
    rng = np.random.default_rng(3)
    dtype = grad_dtype(ad_backend)
    x = tensor(ad_backend, rng.normal(size=(16, 8)), dtype)
    targets = tensor(ad_backend, rng.integers(0, 4, size=(16, 1)))
    params = [
        tensor(ad_backend, rng.normal(size=s) * 0.3, dtype).require_grad()
        for s in ((8, 16), (1, 16), (16, 4), (1, 4))
    ]
    gc.collect()
    tracemalloc.start()
    try:
        currents, peaks, losses = [], [], []
        for _ in range(200):
            tracemalloc.reset_peak()
            params, loss = _mlp_step(ad_backend, params, x, targets)
            current, peak = tracemalloc.get_traced_memory()
            currents.append(current)
            peaks.append(peak)
            losses.append(loss)
    finally:
        tracemalloc.stop()
    early_current, late_current = max(currents[:100]), max(currents[100:])
    early_peak, late_peak = max(peaks[:100]), max(peaks[100:])
    assert late_current <= early_current * 1.5 + 64 * 1024, (early_current, late_current)
    assert late_peak <= early_peak * 1.5 + 64 * 1024, (early_peak, late_peak)
    assert losses[-1] < losses[0], "the MLP should learn something"


def test_backward_releases_saved_tensors_while_the_loss_lives(ad_backend):
    """The nodes keep their inputs for backward; after it, a loss still in scope holds none."""
    if not getattr(ad_backend, "host_memory", False):
        pytest.skip("tensor values live outside the Python heap that tracemalloc sees")
    dtype = grad_dtype(ad_backend)
    a = tensor(ad_backend, np.full((1, 1), 0.5), dtype).require_grad()
    big = a.expand([512, 512]) * 1.0  # 2 MiB (f64) saved by the nodes after it
    gc.collect()
    tracemalloc.start()
    try:
        loss = (big.exp() * big).sum()
        del big
        before, _ = tracemalloc.get_traced_memory()
        loss.backward()
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loss.is_require_grad()
    assert after < before - 512 * 512 * 2, (before, after)
