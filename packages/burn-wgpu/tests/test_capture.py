"""Whole-step capture: replayed steps give the values of uncaptured ones, or capture is refused."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import registry
from burn.tensor import Distribution, Tensor, module
from burn.tensor import activation as act
from burn.wgpu import Wgpu
from burn.wgpu.fusion.capture import capture

Fusion = registry.get("Fusion")
Autodiff = registry.get("Autodiff")
FB = Fusion(Wgpu)
AD = Autodiff(FB)


def pending(t: Tensor) -> bool:
    """Whether a tensor of a Fusion backend holds a recorded value not computed yet."""
    return t.backend.is_pending(t.primitive)


def values(t) -> np.ndarray:
    return np.asarray(t.to_data().array)


def sgd_momentum_step(w, m, x, drop: str | None = None):
    """Forward, backward and a momentum update; everything that changes is an argument.
    `drop`: a dropout written as a Bernoulli draw ("draw") or the dropout op ("op")."""
    wt = Tensor[AD, 2].from_inner(w).require_grad()
    h = act.gelu(Tensor[AD, 2].from_inner(x).matmul(wt))
    if drop == "draw":
        keep = Tensor[AD, 2].random(h.dims(), Distribution.Bernoulli(0.5), AD.device())
        h = h * keep * 2.0
    elif drop == "op":
        h = module.dropout(h, 0.5)
    loss = (act.sigmoid(h) - 0.25).powf_scalar(2.0).mean()
    g = wt.grad(loss.backward())
    m2 = m * 0.9 + g
    return w - m2 * 0.1, m2, loss.inner()


def run(step, steps: int, rng_seed: int = 0):
    rng = np.random.default_rng(1)
    w = Tensor[FB, 2].from_data(rng.standard_normal((6, 4)).astype(np.float32), FB.device())
    m = Tensor[FB, 2].zeros([6, 4], FB.device())
    x = Tensor[FB, 2].from_data(rng.standard_normal((8, 6)).astype(np.float32), FB.device())
    Wgpu.seed(rng_seed)
    losses = []
    for _ in range(steps):
        w, m, loss = step(w, m, x)
        losses.append(float(values(loss)[0]))
    return values(w), values(m), losses


def test_a_captured_training_step_replays_to_the_same_values():
    captured = capture(sgd_momentum_step)
    w, m, losses = run(captured, 7)
    w0, m0, losses0 = run(sgd_momentum_step, 7)
    assert captured.reason is None and captured.replays == 4
    assert all(r.replayer for r in captured._recordings), "replayed from prepared commands"
    np.testing.assert_allclose(w, w0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(m, m0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(losses, losses0, rtol=1e-6)
    assert losses[-1] < losses[0]


def test_replay_through_wgpu_py_when_wgpu_native_is_not_reachable(monkeypatch):
    from burn.wgpu.fusion import replay

    monkeypatch.setattr(replay, "pass_calls", lambda: None)
    captured = capture(sgd_momentum_step)
    w, m, losses = run(captured, 6)
    w0, m0, losses0 = run(sgd_momentum_step, 6)
    assert captured.replays == 3 and all(r.replayer._native is None for r in captured._recordings)
    np.testing.assert_allclose(w, w0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(losses, losses0, rtol=1e-6)


def test_replay_launches_no_more_kernels_than_the_step():
    captured = capture(sgd_momentum_step)
    rt = Wgpu.runtime()
    run(captured, 3)
    counts = {}
    for name, step in (("plain", sgd_momentum_step), ("replay", captured)):
        rng = np.random.default_rng(1)
        wt = Tensor[FB, 2].from_data(rng.standard_normal((6, 4)).astype(np.float32), FB.device())
        mt = Tensor[FB, 2].zeros([6, 4], FB.device())
        xt = Tensor[FB, 2].from_data(rng.standard_normal((8, 6)).astype(np.float32), FB.device())
        FB.flush()
        before = rt.launches
        results = step(wt, mt, xt)
        FB.flush()
        assert all(not pending(r) for r in results)
        counts[name] = rt.launches - before
    assert counts["replay"] <= counts["plain"], counts


def test_a_recording_fuses_products_too_small_to_record_when_traced():
    """The step's `[8, 4]` product is below `Fusion`'s size limit, so a traced call computes
    it on its own and then the gelu; the recording records it whatever its size (`fuse_all`),
    so each replay runs the gelu as its epilogue, one launch fewer, and the limit is back
    once the recording is done."""
    assert 8 * 4 < FB.min_recorded_matmul
    captured = capture(sgd_momentum_step)
    rt = Wgpu.runtime()
    rng = np.random.default_rng(1)
    w = Tensor[FB, 2].from_data(rng.standard_normal((6, 4)).astype(np.float32), FB.device())
    m = Tensor[FB, 2].zeros([6, 4], FB.device())
    x = Tensor[FB, 2].from_data(rng.standard_normal((8, 6)).astype(np.float32), FB.device())
    counts = []
    for _ in range(4):  # a traced call, two recordings, a replay
        FB.flush()
        epilogues, before = FB.stats.matmul_epilogues, rt.launches
        w, m, loss = captured(w, m, x)
        FB.flush()
        counts.append((rt.launches - before, FB.stats.matmul_epilogues - epilogues))
    assert captured.replays == 1 and FB.min_recorded_matmul == type(FB).min_recorded_matmul
    (traced, traced_epilogues), (recorded, recorded_epilogues), _, (replayed, _) = counts
    assert traced_epilogues == 0 and recorded_epilogues > 0
    assert replayed == recorded < traced, counts


@pytest.mark.parametrize("drop", ["draw", "op"])
def test_random_draws_inside_a_replay_are_fresh_and_reproducible(drop):
    def dropout_step(w, m, x):
        return sgd_momentum_step(w, m, x, drop=drop)

    captured = capture(dropout_step)
    w, _, losses = run(captured, 6, rng_seed=3)
    w0, _, losses0 = run(dropout_step, 6, rng_seed=3)
    assert captured.reason is None and captured.replays == 3
    np.testing.assert_allclose(losses, losses0, rtol=1e-6)
    np.testing.assert_allclose(w, w0, rtol=1e-6, atol=1e-7)
    assert len(set(losses)) == len(losses)


def test_a_python_value_that_changes_refuses_capture_and_falls_back():
    counter = {"t": 0}

    def step_with_counter(w, m, x):
        counter["t"] += 1
        w2, m2, loss = sgd_momentum_step(w, m, x)
        return w2 * (1.0 / counter["t"]), m2, loss

    captured = capture(step_with_counter)
    w, _, _ = run(captured, 5)
    counter["t"] = 0
    w0, _, _ = run(step_with_counter, 5)
    assert captured.reason and "Python value" in captured.reason
    assert captured.replays == 0
    np.testing.assert_allclose(w, w0, rtol=1e-6)


def test_a_second_call_unlike_the_later_ones_is_recorded_again():
    calls = {"n": 0}

    def warming_step(w, m, x):
        calls["n"] += 1
        w2, m2, loss = sgd_momentum_step(w, m, x)
        if calls["n"] == 2:  # the first recorded call does one more launch
            w2 = w2 + 0.0
        return w2, m2, loss

    captured = capture(warming_step)
    w, m, losses = run(captured, 7)
    calls["n"] = 0
    w0, m0, losses0 = run(warming_step, 7)
    assert captured.reason is None and captured.retries == 1 and captured.replays == 3
    np.testing.assert_allclose(w, w0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(m, m0, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(losses, losses0, rtol=1e-6)


def test_a_step_that_reads_back_is_not_captured():
    def reading_step(w, m, x):
        w2, m2, loss = sgd_momentum_step(w, m, x)
        if float(values(loss)[0]) > 1e9:  # a host read decides what happens next
            w2 = w2 * 0.0
        return w2, m2, loss

    captured = capture(reading_step)
    w, _, _ = run(captured, 5)
    w0, _, _ = run(reading_step, 5)
    assert captured.reason and "reads" in captured.reason
    np.testing.assert_allclose(w, w0, rtol=1e-6)


def test_the_readme_example():
    from burn.wgpu.fusion import capture

    def step(w, x):
        return w - (x * w).tanh() * 0.1

    replayed = capture(step)
    w = Tensor[FB, 1].from_data(np.ones(4, np.float32), FB.device())
    x = Tensor[FB, 1].from_data(np.arange(4, dtype=np.float32), FB.device())
    expected = np.ones(4)
    for _ in range(5):
        w = replayed(w, x)
        expected = expected - np.tanh(np.arange(4) * expected) * 0.1
    assert replayed.replays == 2 and replayed.reason is None
    np.testing.assert_allclose(values(w), expected, rtol=1e-5)


def test_plain_wgpu_arguments_replay_and_another_layout_runs_the_function():
    """Arguments of `Wgpu` itself replay too; an argument with another layout (a transposed
    view) is not one the recordings were made on, so the function runs instead."""
    calls = []

    def step(a, b):
        calls.append(1)
        return (a * 2.0 + b).exp(), a - b

    captured = capture(step)
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    a, b = (Tensor[Wgpu, 2].from_data(d, Wgpu.device()) for d in data)
    for _ in range(5):
        out, diff = captured(a, b)
        np.testing.assert_allclose(values(out), np.exp(data[0] * 2 + data[1]), rtol=1e-5)
        np.testing.assert_allclose(values(diff), data[0] - data[1], rtol=1e-6)
    assert captured.reason is None and captured.replays == 2 and len(calls) == 3
    square = Tensor[Wgpu, 2].from_data(data[0][:, :3], Wgpu.device())
    out, _ = captured(square.transpose(), b[:3, :3])
    assert len(calls) == 4 and captured.replays == 2
    np.testing.assert_allclose(
        values(out), np.exp(data[0][:, :3].T * 2 + data[1][:3, :3]), rtol=1e-5
    )
