"""`Fusion(Wgpu)`: fused chains give the unfused values, in fewer launches, from cached plans."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Backend, registry
from burn.tensor import Bool, Distribution, Int, Tensor
from burn.tensor import activation as act
from burn.wgpu import Wgpu
from burn.wgpu.backend import WgpuBackend

Fusion = registry.get("Fusion")
Autodiff = registry.get("Autodiff")


def pending(t: Tensor) -> bool:
    """Whether a tensor of a Fusion backend holds a recorded value not computed yet."""
    return t.backend.is_pending(t.primitive)


FusedBackend = type(Fusion(Wgpu))
DEFAULT_MIN_RECORDED_MATMUL = FusedBackend.min_recorded_matmul


@pytest.fixture(autouse=True)
def _every_product(monkeypatch):
    """Products of every size are recorded here: these tests are about what a recorded
    product becomes (its epilogue, its kernels). `test_small_products_run_as_wgpus_own_ops`
    checks the default size limit."""
    monkeypatch.setattr(FusedBackend, "min_recorded_matmul", 0)


@pytest.fixture
def fused():
    backend = Fusion(Wgpu)
    backend.flush()
    backend.stats.reset()
    return backend


def launches() -> int:
    return Wgpu.runtime().launches


def values(t) -> np.ndarray:
    return np.asarray(t.to_data().array)


def chain(t, bias, scale: float):
    """Eight elementwise ops with a broadcast bias."""
    y = (t * scale + bias).exp()
    y = act.relu(y - 1.5)
    y = act.sigmoid(y).sqrt()
    return y.clamp(0.2, 0.9)


def chain_np(x, bias, scale):
    y = np.exp(x * scale + bias)
    y = np.maximum(y - 1.5, 0)
    y = np.sqrt(1 / (1 + np.exp(-y)))
    return np.clip(y, 0.2, 0.9)


def test_a_chain_is_one_kernel_with_the_unfused_values(fused, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    bias = rng.standard_normal((1, 6)).astype(np.float32)
    fx = Tensor[fused, 2].from_data(x, fused.device())
    fb = Tensor[fused, 2].from_data(bias, fused.device())
    before = launches()
    out = chain(fx, fb, 0.5)
    assert launches() == before, "recording launches nothing"
    got = values(out)
    assert launches() == before + 1
    plain = chain(Tensor[Wgpu, 2].from_data(x), Tensor[Wgpu, 2].from_data(bias), 0.5)
    np.testing.assert_allclose(got, values(plain), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, chain_np(x.astype(np.float64), bias, 0.5), rtol=1e-5)


def test_strided_and_broadcast_inputs(fused, rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    col = rng.standard_normal((3, 1)).astype(np.float32)
    fx = Tensor[fused, 2].from_data(x, fused.device()).swap_dims(0, 1)  # a permuted view
    fc = Tensor[fused, 2].from_data(col, fused.device())
    sliced = Tensor[fused, 2].from_data(x, fused.device())[1:4, :].swap_dims(0, 1)
    pending_col = fc * 2.0  # a recorded (3, 1) value broadcast inside a (3, 3) kernel
    out = (fx[:, 1:4] * fc - sliced).abs() + pending_col.expand([3, 3])
    expected = np.abs(x.T[:, 1:4] * col - x[1:4].T) + col * 2.0
    np.testing.assert_allclose(values(out), expected, rtol=1e-6)


def test_plans_are_compiled_once_and_replayed(fused, rng):
    bias = Tensor[fused, 2].from_data(np.zeros((1, 8), np.float32), fused.device())
    for step in range(4):
        x = rng.standard_normal((16, 8)).astype(np.float32)
        fx = Tensor[fused, 2].from_data(x, fused.device())
        got = values(chain(fx, bias, 0.1 * (step + 1)))  # new values, new scalars, same plan
        np.testing.assert_allclose(got, chain_np(x, 0.0, 0.1 * (step + 1)), rtol=1e-5)
    assert fused.stats.compiles == 1
    assert fused.stats.replays == 3
    pipelines = Wgpu.runtime().pipeline_count
    values(chain(Tensor[fused, 2].from_data(x, fused.device()), bias, 3.0))
    assert Wgpu.runtime().pipeline_count == pipelines


def test_a_new_shape_is_a_new_plan(fused):
    for n in (3, 5, 3):
        t = Tensor[fused, 1].from_data(np.arange(n, dtype=np.float32), fused.device())
        values(t * 2.0 + 1.0)
    assert fused.stats.compiles == 2 and fused.stats.replays == 1


def test_only_values_still_referenced_are_written(fused):
    x = Tensor[fused, 1].from_data(np.arange(8, dtype=np.float32), fused.device())
    a = x + 1.0
    b = a * 2.0
    del a
    c = b.exp().log() - 1.0
    values(c)
    # b is alive (one kernel writes b and c), a and the exp/log intermediates are not.
    assert fused.stats.outputs == 2 and fused.stats.segments == 1
    np.testing.assert_allclose(values(b), (np.arange(8) + 1.0) * 2.0)


def test_aliasing_clones_and_self_operands(fused):
    x = Tensor[fused, 1].from_data(np.array([1.0, -2.0, 3.0], np.float32), fused.device())
    y = x + 1.0
    alias = y.clone()
    square = y * y
    both = alias - y + square
    np.testing.assert_allclose(values(both), [4.0, 1.0, 16.0])
    np.testing.assert_allclose(values(alias), [2.0, -1.0, 4.0])
    np.testing.assert_allclose(values(x), [1.0, -2.0, 3.0])


def test_reads_and_unfused_ops_in_the_middle_of_a_stream(fused):
    x = Tensor[fused, 2].from_data(np.arange(12, dtype=np.float32).reshape(3, 4), fused.device())
    y = x * 2.0
    first = values(y)  # a read flushes
    z = y[1:, 1:3] + 1.0  # a slice of a computed value, then more recorded work
    s = (z * x[1:, :2]).sum_dim(1)  # a reduction flushes its input
    w = s + y[:, :1][1:]
    np.testing.assert_allclose(first, np.arange(12).reshape(3, 4) * 2.0)
    yn = np.arange(12.0).reshape(3, 4) * 2
    zn = yn[1:, 1:3] + 1
    sn = (zn * np.arange(12.0).reshape(3, 4)[1:, :2]).sum(1, keepdims=True)
    np.testing.assert_allclose(values(w), sn + yn[1:, :1])


def test_ints_bools_casts_and_mask_where(fused, rng):
    a = rng.integers(-9, 9, (4, 5)).astype(np.int32)
    m = rng.random((4, 1)) > 0.5
    ta = Tensor[fused, 2, Int].from_data(a, fused.device())
    tm = Tensor[fused, 2, Bool].from_data(m, fused.device())
    q = (ta * 3 - 2) // 4
    r = ta % 5
    f = q.float() / 2.0
    chosen = f.mask_fill(tm, -1.0)
    cmp = ta > 0
    np.testing.assert_array_equal(values(q), np.floor_divide(a * 3 - 2, 4))
    np.testing.assert_array_equal(values(r), np.remainder(a, 5))
    np.testing.assert_allclose(values(chosen), np.where(m, -1.0, np.floor_divide(a * 3 - 2, 4) / 2))
    np.testing.assert_array_equal(values(cmp), a > 0)
    np.testing.assert_array_equal(values((f > 0.5).int()), np.floor_divide(a * 3 - 2, 4) / 2 > 0.5)


def test_random_draws_repeat_after_seed(fused):
    fused.seed(7)
    a = values(Tensor[fused, 2].random([3, 4], Distribution.Default, fused.device()) * 2.0 + 1.0)
    fused.seed(7)
    b = values(Tensor[fused, 2].random([3, 4], Distribution.Default, fused.device()) * 2.0 + 1.0)
    Wgpu.seed(7)
    c = values(Tensor[Wgpu, 2].random([3, 4], Distribution.Default) * 2.0 + 1.0)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_an_overridden_op_runs_itself_eagerly():
    seen = []

    class Patched(WgpuBackend):
        def binary(self, op, lhs, rhs):
            seen.append(op)
            return super().binary(op, lhs, rhs)

    backend = Fusion(Patched())
    assert "binary" not in backend._recorded and "unary" in backend._recorded
    x = Tensor[backend, 1].from_data(np.array([1.0, 2.0], np.float32), backend.device())
    np.testing.assert_allclose(values((x + x).exp()), np.exp([2.0, 4.0]), rtol=1e-6)
    assert seen == ["add"]


def test_every_kind_of_lone_op_runs_as_wgpus_own_then_unrecorded(rng):
    backend = Fusion(WgpuBackend())  # its own stream: nothing learned before this test
    a = rng.standard_normal((3, 4)).astype(np.float32)
    m = rng.random((3, 1)) > 0.5

    def on(b):
        ta = Tensor[b, 2].from_data(a, b.device())
        tb = Tensor[b, 2].from_data(a[::-1].copy(), b.device())
        tm = Tensor[b, 2, Bool].from_data(m, b.device())
        return {
            "unary": lambda: ta.exp(),
            "binary": lambda: ta * tb,
            "scalar": lambda: ta - 0.5,
            "cast": lambda: ta.int(),
            "where": lambda: Tensor(b.mask_where(ta.primitive, tm.primitive, tb.primitive), b),
            "const": lambda: Tensor[b, 2].full([3, 4], 2.5, b.device()),
        }

    fused_cases, plain_cases = on(backend), on(Wgpu)
    for kind, make in fused_cases.items():
        want = values(plain_cases[kind]())
        recorded = make()
        assert pending(recorded), kind
        np.testing.assert_array_equal(values(recorded), want)  # run alone: Wgpu's op
        unrecorded = make()
        assert not pending(unrecorded), kind
        np.testing.assert_array_equal(values(unrecorded), want)
    n = len(fused_cases)
    assert backend.stats.eager_ops == n and backend.stats.unrecorded == n
    assert backend.stats.compiles == 0


def test_a_broadcast_of_a_product_computed_on_its_own_runs_as_wgpus_expand(rng):
    backend = Fusion(WgpuBackend())
    a = rng.standard_normal((4, 3)).astype(np.float32)
    v = rng.standard_normal((3, 1)).astype(np.float32)
    Tensor[Wgpu, 2].from_data(a).matmul(Tensor[Wgpu, 2].from_data(v)).to_data()  # tiles chosen
    column = (
        Tensor[backend, 2]
        .from_data(a, backend.device())
        .matmul(Tensor[backend, 2].from_data(v, backend.device()))
    )
    assert column.primitive.node.kind == "matmul"
    spread = Tensor(backend.expand(column.primitive, (4, 5)), backend)
    assert spread.primitive.node.kind == "expand"
    # The product is read at two shapes: computed on its own, then the broadcast of it is a
    # lone op over a computed value.
    np.testing.assert_allclose(values(spread), np.broadcast_to(a @ v, (4, 5)), rtol=1e-5)
    np.testing.assert_allclose(values(column), a @ v, rtol=1e-5)
    assert backend.stats.eager_matmuls == 1 and backend.stats.eager_ops == 1
    assert backend.stats.compiles == 0


def test_a_training_step_matches_autodiff_wgpu_in_fewer_launches(rng):
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)

    def step(backend):
        device = backend.device()
        tw = Tensor[backend, 2].from_data(w, device).require_grad()
        tx = Tensor[backend, 2].from_data(x, device)
        h = act.gelu(tx.matmul(tw))
        loss = (act.sigmoid(h) * 2.0 - 1.0).powf_scalar(2.0).mean()
        grads = loss.backward()
        g = tw.grad(grads)
        updated = tw.inner() - g * 0.1
        before = launches()
        out = values(updated), values(loss)
        return out, before

    plain_start = launches()
    (plain_w, plain_loss), _ = step(Autodiff(Wgpu))
    plain = launches() - plain_start
    fused_start = launches()
    (fused_w, fused_loss), _ = step(Autodiff(Fusion(Wgpu)))
    fused = launches() - fused_start
    np.testing.assert_allclose(fused_w, plain_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused_loss, plain_loss, rtol=1e-5)
    assert fused < plain / 2, (fused, plain)


def test_aligned_contiguous_segments_run_four_elements_per_thread(fused, rng):
    known = set(fused.stream.plans)

    def new_plans():
        return [p for key, p in fused.stream.plans.items() if key not in known]

    x = rng.standard_normal(64).astype(np.float32)
    k = rng.integers(-5, 5, 64).astype(np.int32)
    fx = Tensor[fused, 1].from_data(x, fused.device())
    fk = Tensor[fused, 1, Int].from_data(k, fused.device())
    y = (fx * 2.0 - 1.0).exp().mask_fill(fk > 0, 0.5)
    q = (fk * 3) % 4
    np.testing.assert_allclose(values(y), np.where(k > 0, 0.5, np.exp(x * 2 - 1)), rtol=1e-6)
    np.testing.assert_array_equal(values(q), np.remainder(k * 3, 4))
    assert [plan.vec4 for plan in new_plans()] == [True]
    # An offset that is not a multiple of 4, and a count that is not, take the scalar kernel.
    shifted = Tensor[fused, 1].from_data(x, fused.device())[1:61]
    np.testing.assert_allclose(values(shifted * 2.0 - 1.0), x[1:61] * 2 - 1, rtol=1e-6)
    odd = Tensor[fused, 1].from_data(x[:7], fused.device())
    np.testing.assert_allclose(values(odd * 2.0 - 1.0), x[:7] * 2 - 1, rtol=1e-6)
    assert sorted(plan.vec4 for plan in new_plans()) == [False, False, True]


def test_a_recorded_chain_feeding_a_reduction_is_its_prologue(fused, rng):
    x = rng.standard_normal((16, 300)).astype(np.float32)
    x[3, 7] = np.nan
    t = Tensor[fused, 2].from_data(x, fused.device())
    bias = Tensor[fused, 2].from_data(np.ones((16, 1), np.float32), fused.device())
    square = (t - bias) * (t - bias)
    before = launches()
    total = square.sum_dim(0)
    mean = square.mean_dim(0)
    top = (t.swap_dims(0, 1) * 2.0).max_dim(1)  # a strided leaf, reduced along its last dim
    low = (t * -1.0).min_dim(0)
    assert launches() == before + 4 and fused.stats.fused_reductions == 4
    assert fused.stats.outputs == 0, "the squares were never written"
    xs = (x.astype(np.float64) - 1) ** 2
    np.testing.assert_allclose(values(total), xs.sum(0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(values(mean), xs.mean(0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(values(top), (x.T * 2).max(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(values(low), (-x).min(0, keepdims=True), rtol=1e-6)
    k = rng.integers(-50, 50, (8, 256)).astype(np.int32)
    ik = Tensor[fused, 2, Int].from_data(k, fused.device())
    np.testing.assert_array_equal(
        values((ik * 3 - 1).sum_dim(0)), (k * 3 - 1).sum(0, keepdims=True)
    )


@pytest.mark.parametrize("length", [5, 13])
def test_a_prologue_reduction_whose_length_the_four_lanes_do_not_divide(fused, rng, length):
    x = rng.standard_normal((length, 300)).astype(np.float32)
    x[length - 1, 5] = np.nan  # in the remainder loop, where the lanes do not reach
    t = Tensor[fused, 2].from_data(x, fused.device())
    np.testing.assert_allclose(
        values((t * 0.5).sum_dim(0)), (x * 0.5).sum(0, keepdims=True), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(values((t + 1.0).prod_dim(0)), (x + 1.0).prod(0, keepdims=True),
                               rtol=1e-4)  # fmt: skip
    np.testing.assert_allclose(values((t * 2.0).max_dim(0)), (x * 2).max(0, keepdims=True))
    assert fused.stats.fused_reductions == 3


def test_fused_steps_leave_no_reference_cycles(fused):
    # Buffers held only by a cycle would go back to the pool at the next collection instead
    # of at once (and each collection costs the step): recording, flushing, launching and a
    # fused reduction must free everything by reference counting alone.
    import gc

    rng = np.random.default_rng(0)
    x = Tensor[fused, 2].from_data(rng.standard_normal((32, 64)).astype(np.float32), fused.device())
    bias = Tensor[fused, 2].from_data(
        rng.standard_normal((1, 64)).astype(np.float32), fused.device()
    )
    values(chain(x, bias, 0.5))  # plans compiled, pipelines and bind groups made
    (x * 2.0).square().mean_dim(0).to_data()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            y = chain(x, bias, 0.5)
            m = (y * 2.0).square().mean_dim(0)
            fused.flush()  # no read: wgpu-py's mapped reads make a (small) cycle of their own
            assert not pending(y) and not pending(m)
            del y, m
        # Only our objects count: in a whole test run, threads that earlier tests left behind
        # can make garbage of their own while this loop runs.
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        ours = [o for o in gc.garbage if _from_burn_or_wgpu(o)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not ours, f"objects freed only by the cycle collector: {ours[:5]}"


def _from_burn_or_wgpu(obj) -> bool:
    """Whether `obj` is an instance, function or method of burn's or wgpu-py's code."""
    names = (getattr(type(obj), "__module__", None), getattr(obj, "__module__", None))
    return any(isinstance(n, str) and n.startswith(("burn", "wgpu")) for n in names)


def test_small_reductions_read_the_computed_chain(fused):
    x = Tensor[fused, 2].from_data(np.arange(12, dtype=np.float32).reshape(3, 4), fused.device())
    s = (x * 2.0).sum_dim(1)  # 3 outputs: too few threads, the chain is computed first
    assert fused.stats.fused_reductions == 0
    np.testing.assert_allclose(values(s), (np.arange(12).reshape(3, 4) * 2).sum(1, keepdims=True))


def test_an_adam_step_is_wgpus_one_kernel_with_the_unfused_values(fused, rng):
    """Wgpu has a kernel of its own for `float_adam_step`, which Fusion runs as it is (an op
    the backend overrides): one launch writes the parameter and both moments, with the values
    of plain Wgpu and of the contract's composition."""
    from burn.tensor.optim import adam_step

    shape = (6, 5)
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    arrays[3] = np.abs(arrays[3]) * 0.01  # a second moment
    args = (3, 0.01, 0.9, 0.999, 1e-5, 0.1, True)
    ours = [Tensor[fused, 2].from_data(a, fused.device()) for a in arrays]
    plain = [Tensor[Wgpu, 2].from_data(a) for a in arrays]
    values(ours[0])  # uploads done before counting
    before = launches()
    got = [values(t) for t in adam_step(*ours, *args)]
    assert launches() == before + 1
    composed = Backend.float_adam_step(Wgpu, *[t.primitive for t in plain], *args)
    for a, b, c in zip(got, adam_step(*plain, *args), composed, strict=True):
        np.testing.assert_allclose(a, values(b), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(a, np.asarray(Wgpu.into_data(c).array), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- matmul epilogues
def epilogue_plans(backend, known) -> list:
    """The sources of the matmul plans compiled since `known`."""
    plans = [p for key, p in backend.stream.plans.items() if key not in known]
    return [p.source for p in plans if hasattr(p, "slices")]


@pytest.mark.parametrize(
    ("m", "k", "n", "transposed", "kernel"),
    [
        (33, 20, 7, False, "tiled"),  # ragged tiles
        (256, 128, 128, False, "vec4"),
        (256, 128, 128, True, "vec4"),  # over a transposed view of the weight
        (96, 64, 98, True, "tiled"),  # n not a multiple of 4, a strided weight
        (64, 512, 10, False, "split"),  # few output tiles, a long k: split along k
        (64, 1024, 96, True, "split"),
    ],
)
def test_a_matmul_and_what_follows_it_are_one_kernel(
    fused, rng, monkeypatch, m, k, n, transposed, kernel
):
    """One launch, or two when the matmul is split along k: the slices' products, then one
    kernel that sums them and applies the epilogue. The operands' key is worked out once per
    layout: the repeated steps never ask for the tiles again."""
    known = set(fused.stream.plans)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k) if transposed else (k, n)).astype(np.float32)
    bias = rng.standard_normal((1, n)).astype(np.float32)
    fx = Tensor[fused, 2].from_data(x, fused.device())
    fw = Tensor[fused, 2].from_data(w, fused.device())
    fb = Tensor[fused, 2].from_data(bias, fused.device())
    if transposed:
        fw, w = fw.swap_dims(0, 1), w.T
    values(fx), values(fw), values(fb)  # uploads done before counting
    values(act.relu(fx.matmul(fw) + fb) * 0.5)  # a first run tunes what it needs

    def refuse(*args, **kwargs):
        raise AssertionError("the epilogue's operands were planned again")

    monkeypatch.setattr(WgpuBackend, "_matmul_setup", refuse)
    for _ in range(2):  # the same plan again
        before = launches()
        out = act.relu(fx.matmul(fw) + fb) * 0.5
        assert launches() == before, "recording launches nothing"
        got = values(out)
        assert launches() == before + (2 if kernel == "split" else 1)
    want = np.maximum(x.astype(np.float64) @ w + bias, 0) * 0.5
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    assert fused.stats.matmul_epilogues == 3
    (source,) = epilogue_plans(fused, known)
    assert ("part[" in source) is (kernel == "split")
    assert ("epilogue4(" in source.split("fn main")[1]) is (kernel == "vec4")


def test_an_epilogue_writes_the_product_too_when_it_is_still_read(fused, rng):
    x = rng.standard_normal((40, 24)).astype(np.float32)
    w = rng.standard_normal((24, 16)).astype(np.float32)
    fx = Tensor[fused, 2].from_data(x, fused.device())
    fw = Tensor[fused, 2].from_data(w, fused.device())
    product = fx.matmul(fw)
    doubled = product * 2.0
    negated = -product
    before = launches()
    got = values(doubled)
    assert launches() == before + 1
    want = x.astype(np.float64) @ w
    np.testing.assert_allclose(values(product), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want * 2.0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values(negated), -want, rtol=1e-5, atol=1e-5)
    assert launches() == before + 1, "one kernel wrote all three"


def test_batched_epilogues_with_broadcast_batch_dims(fused, rng):
    a = rng.standard_normal((2, 1, 9, 12)).astype(np.float32)
    b = rng.standard_normal((1, 3, 12, 5)).astype(np.float32)
    c = rng.standard_normal((2, 3, 1, 5)).astype(np.float32)
    fa, fb, fc = (Tensor[fused, 4].from_data(v, fused.device()) for v in (a, b, c))
    out = (fa.matmul(fb) - fc).abs()
    np.testing.assert_allclose(values(out), np.abs(a @ b - c), rtol=1e-5, atol=1e-5)
    assert fused.stats.matmul_epilogues == 1


def test_products_read_at_another_shape_or_reduced_are_computed_first(fused, rng):
    x = rng.standard_normal((48, 20)).astype(np.float32)
    w = rng.standard_normal((20, 1)).astype(np.float32)
    fx = Tensor[fused, 2].from_data(x, fused.device())
    column = fx.matmul(Tensor[fused, 2].from_data(w, fused.device()))  # [48, 1]
    spread = column.expand([48, 6]) * 3.0  # the product broadcast: it cannot be an epilogue
    del column
    np.testing.assert_allclose(values(spread), np.broadcast_to(x @ w * 3.0, (48, 6)), rtol=1e-5)
    assert fused.stats.eager_matmuls == 1 and fused.stats.matmul_epilogues == 0
    square = Tensor[fused, 2].from_data(rng.standard_normal((20, 20)).astype(np.float32))
    total = (fx.matmul(square) * 2.0).sum_dim(1)  # the reduction reads the epilogue's output
    np.testing.assert_allclose(
        values(total), (x @ values(square) * 2.0).sum(1, keepdims=True), rtol=1e-4, atol=1e-4
    )
    assert fused.stats.matmul_epilogues == 1


def adam_by_ops(param, grad, m, v, time, lr, b1=0.9, b2=0.999, eps=1e-5):
    """Adam's update written with tensor ops (as a training loop may write it): elementwise
    ops that Fusion records."""
    m = m * b1 + grad * (1 - b1)
    v = v * b2 + grad * grad * (1 - b2)
    delta = (m / (1 - b1**time)) / ((v / (1 - b2**time)).sqrt() + eps)
    return param - delta * lr, m, v


def test_a_weight_gradient_and_its_adam_update_are_one_kernel(fused, rng):
    x = rng.standard_normal((64, 24)).astype(np.float32)
    g = rng.standard_normal((64, 16)).astype(np.float32)
    state = [rng.standard_normal((24, 16)).astype(np.float32) for _ in range(3)]
    state[2] = np.abs(state[2]) * 0.01

    def update(backend):
        device = backend.device()
        tx = Tensor[backend, 2].from_data(x, device).swap_dims(0, 1)
        tg = Tensor[backend, 2].from_data(g, device)
        param, m, v = (Tensor[backend, 2].from_data(s, device) for s in state)
        values(param), values(m), values(v), values(tx), values(tg)
        before = launches()
        # The gradient is read by the update alone: it is never written.
        out = [values(t) for t in adam_by_ops(param, tx.matmul(tg), m, v, 3, 0.01)]
        return out, launches() - before

    got, fused_launches = update(fused)
    want, _ = update(Wgpu)
    assert fused_launches == 1 and fused.stats.outputs == 3
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_linear_layer_trains_the_same_with_epilogues(rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 24)).astype(np.float32)
    b = rng.standard_normal((1, 24)).astype(np.float32)

    def step(backend):
        device = backend.device()
        tw = Tensor[backend, 2].from_data(w, device).require_grad()
        tb = Tensor[backend, 2].from_data(b, device).require_grad()
        tx = Tensor[backend, 2].from_data(x, device).require_grad()
        loss = (act.relu(tx.matmul(tw) + tb) * 0.5).powf_scalar(2.0).mean()
        grads = loss.backward()
        return [values(t.grad(grads)) for t in (tw, tb, tx)] + [values(loss)]

    plain = step(Autodiff(Wgpu))
    backend = Autodiff(Fusion(Wgpu))
    fusion = backend.inner()
    before = fusion.stats.matmul_epilogues
    ours = step(backend)
    assert fusion.stats.matmul_epilogues > before
    for a, b_ in zip(ours, plain, strict=True):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-6)


def test_small_products_run_as_wgpus_own_ops(monkeypatch, rng):
    """Under the default size limit a linear layer's small product is not recorded: the
    layer's training step runs Wgpu's own linear ops (no more launches than plain Wgpu, the
    same values); with the limit at the product's size its bias and relu become the
    epilogue, one launch fewer."""
    from burn.tensor import module

    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 24)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)

    def step(backend):
        """(the gradients and the loss, the launches of the step until they are read)."""
        device = backend.device()
        tw = Tensor[backend, 2].from_data(w, device).require_grad()
        tb = Tensor[backend, 1].from_data(b, device).require_grad()
        tx = Tensor[backend, 2].from_data(x, device)
        Fusion(Wgpu).flush()  # the uploads, if they wait in the stream
        before = launches()
        loss = act.relu(module.linear(tx, tw, tb)).mean()
        grads = loss.backward()
        got = [values(t) for t in (tw.grad(grads), tb.grad(grads), loss)]
        return got, launches() - before

    plain, plain_launches = step(Autodiff(Wgpu))
    fusion = Fusion(Wgpu)
    counts = []
    for limit, fused_epilogue in ((DEFAULT_MIN_RECORDED_MATMUL, False), (64 * 24, True)):
        monkeypatch.setattr(FusedBackend, "min_recorded_matmul", limit)
        before = fusion.stats.matmul_epilogues
        ours, ours_launches = step(Autodiff(fusion))
        assert (fusion.stats.matmul_epilogues > before) is fused_epilogue
        counts.append(ours_launches)
        for a, b_ in zip(ours, plain, strict=True):
            np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-6)
    assert counts[1] < counts[0] <= plain_launches, (counts, plain_launches)


@pytest.mark.parametrize(
    ("shape", "weight", "options"),
    [
        ((4, 3, 12, 12), (8, 3, 3, 3), {}),
        ((2, 4, 9, 11), (6, 2, 3, 2), {"stride": [2, 1], "padding": [1, 1], "groups": 2}),
        ((3, 5, 17), (4, 5, 3), {"dilation": [2]}),  # conv1d
    ],
)
def test_a_convolution_runs_its_bias_and_what_follows_as_its_epilogue(
    fused, rng, shape, weight, options
):
    """The convolution is the contract's composition (im2col, then a grouped matmul) recorded
    by Fusion: the matmul's product, reshaped to `[N, O, *out]`, takes the bias and the relu
    as its epilogue, with the values plain Wgpu computes."""
    from burn.tensor import module
    from burn.tensor.module import ConvOptions

    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(weight).astype(np.float32)
    b = rng.standard_normal(weight[0]).astype(np.float32)
    conv = module.conv1d if len(shape) == 3 else module.conv2d
    opts = ConvOptions(**options)

    def run(backend):
        device = backend.device()
        tx, tw, tb = (Tensor[backend, a.ndim].from_data(a, device) for a in (x, w, b))
        return values(act.relu(conv(tx, tw, tb, opts)) * 2.0)

    want = run(Wgpu)
    run(fused)  # a first run tunes the matmul's shape class
    before = fused.stats.matmul_epilogues
    np.testing.assert_allclose(run(fused), want, rtol=1e-5, atol=1e-5)
    assert fused.stats.matmul_epilogues == before + 1


def test_a_reshaped_product_read_at_both_shapes(fused, rng):
    x = rng.standard_normal((12, 8)).astype(np.float32)
    w = rng.standard_normal((8, 6)).astype(np.float32)
    product = (
        Tensor[fused, 2]
        .from_data(x, fused.device())
        .matmul(Tensor[fused, 2].from_data(w, fused.device()))
    )
    flat = product.reshape([72]) + 1.0
    doubled = product * 2.0
    want = x.astype(np.float64) @ w
    np.testing.assert_allclose(values(flat), want.reshape(72) + 1.0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values(doubled), want * 2.0, rtol=1e-5, atol=1e-5)
    assert fused.stats.matmul_epilogues == 2  # one kernel per shape, each computing the product


def _program(backend, seed: int) -> list[np.ndarray]:
    """A random program of matmuls, reshapes, elementwise ops, reductions, reads and dropped
    tensors (the same for a given seed on any backend); returns every value it read."""
    rng = np.random.default_rng(seed)
    device = backend.device()
    dims = (3, 4, 8)

    def fresh(shape):
        return Tensor[backend, 2].from_data(rng.standard_normal(shape).astype(np.float32), device)

    live = [fresh((rng.choice(dims), rng.choice(dims))) for _ in range(3)]
    reads = []
    for _ in range(40):
        a = live[rng.integers(len(live))]
        m, n = a.dims()
        op = rng.integers(8)
        if op == 0:  # a product, with a fresh right operand
            out = a.matmul(fresh((n, rng.choice(dims))))
        elif op == 1:  # another view of the same elements
            out = a.reshape([n, m])
        elif op == 2:
            out = act.relu(a) * 0.5 - 0.25
        elif op == 3:  # a bias broadcast over rows
            out = a + fresh((1, n))
        elif op == 4:
            same = [t for t in live if t.dims() == [m, n]]
            out = a * same[rng.integers(len(same))]
        elif op == 5:
            out = a.sum_dim(1) * 0.1  # [m, 1]
        elif op == 6:  # a read in the middle of the stream
            reads.append(values(a))
            continue
        else:  # a tensor nothing reads again
            if len(live) > 2:
                live = [t for t in live if t is not a]
            continue
        live.append(out.clamp(-50.0, 50.0))
    reads.extend(values(t) for t in live)
    return reads


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_with_matmuls_give_the_unfused_values(seed):
    fused = Fusion(Wgpu)
    before = fused.stats.matmul_epilogues
    ours, plain = _program(fused, seed), _program(Wgpu, seed)
    assert len(ours) == len(plain)
    for got, want in zip(ours, plain, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert fused.stats.matmul_epilogues > before  # every seed's program has some


def test_submit_runs_the_recorded_ops_and_starts_them(fused):
    """`submit` under Fusion (and Autodiff over it) computes what is recorded and submits the
    kernels: nothing is left pending, nor waiting in the runtime's open batch."""
    rt = Wgpu.runtime()
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = Tensor.from_data(data, fused.device())
    y = chain(x, x, 0.5)
    assert y.primitive.node is not None
    fused.submit(fused.device())
    assert y.primitive.node is None and rt._pending == 0
    ad = Autodiff(fused)
    w = Tensor.from_data(np.ones((2, 3), np.float32), ad.device()).require_grad()
    z = (w * 2.0 + 1.0).exp()
    assert z.inner().primitive.node is not None
    ad.submit(ad.device())
    assert z.inner().primitive.node is None and rt._pending == 0
    plain = Tensor.from_data(data, Wgpu.device())
    np.testing.assert_allclose(values(y), values(chain(plain, plain, 0.5)), rtol=1e-6)
    np.testing.assert_allclose(values(z), np.exp(3.0), rtol=1e-6)
