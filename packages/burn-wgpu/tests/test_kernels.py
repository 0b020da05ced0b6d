"""The fast paths: every matmul tile shape and layout, vec4 elementwise ops and reductions,
and the runtime's reuse rules (freed buffers reused inside a batch, uploads never clobbering
work that is recorded but not yet submitted)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from burn.tensor import DType, Tensor, TensorData
from burn.wgpu import Wgpu, autotune
from burn.wgpu import kernels as K
from burn.wgpu.matmul_ops import _vec_layout


def up(array, dtype=np.float32):
    return Wgpu.from_data(TensorData(np.ascontiguousarray(array, dtype=dtype)), Wgpu.device())


def down(p):
    return Wgpu.into_data(p).array


def transposed(array):
    """A transposed view of an uploaded transpose: the same values, the other layout."""
    return Wgpu.permute(up(array.T.copy()), (1, 0))


@pytest.mark.parametrize("cfg", autotune.CANDIDATES + (autotune.SMALL,))
@pytest.mark.parametrize("a_t, b_t", [(False, False), (True, False), (False, True)])
def test_every_matmul_tile_shape_and_layout(cfg, a_t, b_t):
    rng = np.random.default_rng(0)
    m, k, n = 72, 40, 36  # partial tiles everywhere, K a multiple of 4 but not of BK
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    lhs = transposed(a) if a_t else up(a)
    rhs = transposed(b) if b_t else up(b)
    layout = _vec_layout(lhs, rhs, (), m, n, k)
    assert layout == (not a_t, b_t)
    for variant in (None, layout):
        if not Wgpu.matmul_variant_ok(cfg, variant):
            continue
        out = Wgpu._like(lhs, (m, n))
        Wgpu._matmul_launch(lhs, rhs, out, (), cfg, variant)
        np.testing.assert_allclose(down(out), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cfg", [c for c in autotune.CANDIDATES if c[3] % 4 == 0 and c[4] % 4 == 0])
def test_bounds_check_free_matmul_on_sizes_the_tile_divides(cfg):
    rng = np.random.default_rng(5)
    m, k, n = 256, 64, 256
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    lhs, rhs = up(a), up(b)
    out = Wgpu._like(lhs, (m, n))
    Wgpu._matmul_launch(lhs, rhs, out, (), cfg, (True, False))
    exact = K.matmul_vec4(*cfg, True, False, True)
    assert any(key[0] == exact for key in lhs.rt._pipelines)  # the unchecked form ran
    np.testing.assert_allclose(down(out), a @ b, rtol=1e-4, atol=1e-4)


def test_batched_broadcast_matmul_on_the_vec4_kernel():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 8, 12)).astype(np.float32)
    b = rng.standard_normal((3, 12, 20)).astype(np.float32)
    lhs, rhs = up(a), Wgpu.expand(up(b[None]), (2, 3, 12, 20))
    assert _vec_layout(lhs, rhs, (2, 3), 8, 20, 12) == (True, False)
    out = Wgpu._like(lhs, (2, 3, 8, 20))
    Wgpu._matmul_launch(lhs, rhs, out, (2, 3), (64, 64, 16, 4, 4), (True, False))
    np.testing.assert_allclose(down(out), a @ b, rtol=1e-4, atol=1e-4)


def test_unaligned_operands_use_the_generic_kernel():
    a = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    assert _vec_layout(up(a), up(a.T), (), 6, 6, 5) is None
    np.testing.assert_allclose(down(Wgpu.matmul(up(a), up(a.T))), a @ a.T, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_vec4_elementwise_matches_the_strided_path(dtype):
    x = np.arange(-8, 16, dtype=dtype).reshape(4, 6)
    y = (np.arange(24, dtype=dtype).reshape(4, 6) % 5) + 1
    px, py = up(x, dtype), up(y, dtype)
    views = (Wgpu.slice(up(np.concatenate([x, x]), dtype), ((4, 8, 1), (0, 6, 1))), px)
    for v in views:  # an offset view (offset 24) and a plain buffer
        np.testing.assert_array_equal(down(Wgpu.binary("mul", v, py)), x * y)
        np.testing.assert_array_equal(down(Wgpu.binary("lt", v, py)), x < y)
        np.testing.assert_array_equal(down(Wgpu.binary_scalar("sub", v, 3)), x - 3)
        np.testing.assert_array_equal(down(Wgpu.unary("abs", v)), np.abs(x))


def test_vec4_reductions_over_contiguous_rows():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 40000)).astype(np.float32)
    p = up(x)
    np.testing.assert_allclose(down(Wgpu.reduce("sum", p, 1))[:, 0], x.sum(1), rtol=1e-4)
    np.testing.assert_allclose(down(Wgpu.reduce("max", p, 1))[:, 0], x.max(1))
    np.testing.assert_array_equal(down(Wgpu.reduce("argmin", p, 1))[:, 0], x.argmin(1))
    flat = Wgpu.reshape(p, (120000,))
    np.testing.assert_allclose(down(Wgpu.reduce("sum", flat, 0))[0], x.sum(), rtol=1e-4)


# Arg reductions are never split into chunks (autotune does not offer them those strategies).
STRATEGIES = [
    (op, cfg)
    for op in ("sum", "mean", "max", "argmax", "argmin")
    for cfg in autotune.REDUCE_CANDIDATES
    if not (op.startswith("arg") and cfg[2])
]


@pytest.mark.parametrize("op, cfg", STRATEGIES)
def test_every_reduction_strategy_along_contiguous_and_strided_dims(op, cfg):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 9000)).astype(np.float32)
    x[2, 17] = x[2, 8000] = 9.0  # a tie for argmax: the lower index wins
    x[4, 5] = x[4, 6000] = -9.0  # and for argmin
    reference = {
        "sum": np.sum,
        "mean": np.mean,
        "max": np.max,
        "argmax": np.argmax,
        "argmin": np.argmin,
    }[op]
    p = up(x)
    for array, view, dim in ((x, p, 1), (x, p, 0), (x.T, Wgpu.permute(p, (1, 0)), 0)):
        out_shape = tuple(1 if d == dim else s for d, s in enumerate(array.shape))
        out = Wgpu._like(view, out_shape, DType.I32 if op.startswith("arg") else None)
        Wgpu._reduce_into(op, view, dim, out, cfg)
        expected = reference(array.astype(np.float64), axis=dim, keepdims=True)
        np.testing.assert_allclose(down(out), expected, rtol=1e-4, atol=1e-3)


def test_freed_buffers_are_reused_inside_a_batch():
    rt = Wgpu.runtime()
    a = up(np.ones(1 << 14))
    rt.flush()
    created = rt.pool.stats.created
    for _ in range(20):
        Wgpu.binary("add", a, a)  # the result is dropped at once
    assert rt.pool.stats.created - created <= 2
    rt.sync()


def test_an_upload_never_lands_in_a_buffer_the_open_batch_uses():
    rt = Wgpu.runtime()
    rt.flush()
    x = up(np.full(64, 2.0))
    y = Wgpu.binary_scalar("mul", x, 3.0)  # recorded, not submitted
    z = Wgpu.binary("add", y, y)  # reads y
    del y
    gc.collect()  # y's buffer is free again while the batch still reads it
    assert rt._pending
    fresh = up(np.full(64, 100.0), np.float32)
    np.testing.assert_array_equal(down(z), np.full(64, 12.0))
    np.testing.assert_array_equal(down(fresh), np.full(64, 100.0))
    assert Wgpu.dtype(fresh) is DType.F32


def test_a_float_mean_is_one_launch():
    rt = Wgpu.runtime()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = up(x)
    launches = rt.launches
    out = Wgpu.float_mean_dim(p, 1)
    assert rt.launches - launches == 1
    np.testing.assert_allclose(down(out), x.mean(1, keepdims=True), rtol=1e-6)
    ints = up(np.array([[1, 2], [4, 4]]), np.int32)
    np.testing.assert_array_equal(down(Wgpu.int_mean_dim(ints, 1)), [[1], [4]])  # integer division


@pytest.mark.parametrize(
    ("batch", "m", "k", "n"),
    [((), 64, 512, 10), ((64,), 8, 676, 9), ((2, 3), 5, 256, 7), ((), 3, 1000, 5)],
)
def test_a_matmul_split_along_k_matches_numpy(batch, m, k, n):
    """Few output tiles and a long k: the product is summed over k-slices (strided views)."""
    from burn.wgpu.matmul_ops import split_k

    assert split_k(m, n, k, int(np.prod(batch))) > 1
    rng = np.random.default_rng(5)
    a = rng.standard_normal((*batch, m, k)).astype(np.float32)
    b = rng.standard_normal((*batch, k, n)).astype(np.float32)
    want = a.astype(np.float64) @ b
    ta = Tensor[Wgpu, a.ndim].from_data(a)
    tb = Tensor[Wgpu, b.ndim].from_data(b)
    np.testing.assert_allclose((ta @ tb).to_data().array, want, rtol=1e-4, atol=1e-4)
    # a transposed right operand and a broadcast left one read through the same views
    bt = Tensor[Wgpu, b.ndim].from_data(np.ascontiguousarray(np.swapaxes(b, -1, -2)))
    got = ta @ bt.swap_dims(b.ndim - 1, b.ndim - 2)
    np.testing.assert_allclose(got.to_data().array, want, rtol=1e-4, atol=1e-4)
    if batch:  # a left operand broadcast over the batch (stride 0 in the views)
        first = a.reshape(-1, m, k)[:1].reshape((1,) * len(batch) + (m, k))
        got = Tensor[Wgpu, a.ndim].from_data(first) @ tb
        np.testing.assert_allclose(
            got.to_data().array, first.astype(np.float64) @ b, rtol=1e-4, atol=1e-4
        )


@pytest.mark.parametrize(
    ("first", "decay", "decoupled"), [(True, 0.0, False), (False, 0.1, False), (False, 0.1, True)]
)
def test_adam_step_is_one_kernel_and_a_strided_view_takes_the_composition(first, decay, decoupled):
    """Wgpu's `float_adam_step`: one launch over contiguous float32 operands; a transposed
    view of the parameter runs the contract's composition instead, to the same values."""
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((12, 20)).astype(np.float32) for _ in range(4)]
    arrays[3] = np.abs(arrays[3])
    grad, m, v = (up(a) for a in arrays[1:])
    moments = (None, None) if first else (m, v)
    args = (1 if first else 4, 1e-3, 0.9, 0.999, 1e-8, decay, decoupled)
    rt = Wgpu.runtime()
    before = rt.launches
    fast = Wgpu.float_adam_step(up(arrays[0]), grad, *moments, *args)
    assert rt.launches - before == 1
    before = rt.launches
    view = transposed(arrays[0])
    assert not view.is_contiguous()
    composed = Wgpu.float_adam_step(view, grad, *moments, *args)
    assert rt.launches - before > 1
    for a, b in zip(fast, composed, strict=True):
        np.testing.assert_allclose(down(a), down(b), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("first", [True, False])
def test_adam_step_many_launches_once_per_group_of_parameters(first, monkeypatch):
    """Wgpu's `float_adam_step_many`: the parameters the kernel takes go a group per launch,
    as many per group as the device's storage-buffer bindings allow; a strided one takes the
    one-parameter op's composition. Every result is bit for bit the one-parameter op's, and a
    group's results are views of one buffer at offsets that keep vec4 kernels on them."""
    from burn.wgpu import optim_ops

    rng = np.random.default_rng(3)
    shapes = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (300, 70), (70,), (70, 10), (10,)]

    def uploads(positive=False):
        return [up(np.abs(a) if positive else a) for a in (rng.standard_normal(s) for s in shapes)]

    params, grads = uploads(), uploads()
    moments = (None, None) if first else (uploads(), uploads(positive=True))
    args = (1 if first else 3, 1e-3, 0.9, 0.999, 1e-8, 0.01, True)
    rt = Wgpu.runtime()
    per = optim_ops.params_per_launch(rt, first)
    bindings = rt.limits["max-storage-buffers-per-shader-stage"]
    assert per == min(optim_ops.MAX_PARAMS_PER_LAUNCH, (bindings - 2) // (2 if first else 4))

    def one_by_one():
        return [
            Wgpu.float_adam_step(
                params[k],
                grads[k],
                None if first else moments[0][k],
                None if first else moments[1][k],
                *args,
            )
            for k in range(len(shapes))
        ]

    def check(got):
        want = one_by_one()
        for k in range(len(shapes)):
            for j in range(3):
                np.testing.assert_array_equal(down(got[j][k]), down(want[k][j]))

    for limit, launches in [(per, -(-len(shapes) // per)), (3, 3)]:
        monkeypatch.setattr(optim_ops, "MAX_PARAMS_PER_LAUNCH", limit)
        before = rt.launches
        got = Wgpu.float_adam_step_many(params, grads, *moments, *args)
        assert rt.launches - before == launches
        check(got)
        results = [got[j][k] for k in range(len(shapes)) for j in range(3)]
        assert len({id(t.handle) for t in results}) == launches  # one buffer per group
        assert all(t.offset % 4 == 0 and t.is_contiguous() for t in results)
    # A transposed parameter leaves the groups for the composition; the other seven group.
    monkeypatch.setattr(optim_ops, "MAX_PARAMS_PER_LAUNCH", 16)
    square = rng.standard_normal((10, 10))
    params[7], grads[7] = transposed(square), up(square)
    shapes[7] = (10, 10)
    if not first:
        moments[0][7], moments[1][7] = up(square), up(np.abs(square))
    before = rt.launches
    got = Wgpu.float_adam_step_many(params, grads, *moments, *args)
    composition = rt.launches - before - -(-7 // per)
    assert composition > 1
    check(got)


def test_dropout_is_one_kernel_with_the_compositions_bits():
    """Wgpu's `dropout`: one launch (draw, scale and product) for a contiguous float32 input,
    the same bits as the contract's three-launch composition after the same seed; a
    transposed view takes the composition."""
    from burn.backend import Backend

    rng = np.random.default_rng(4)
    x = up(rng.standard_normal((37, 64)))
    rt = Wgpu.runtime()
    Wgpu.seed(21)
    before = rt.launches
    out, mask = Wgpu.dropout(x, 0.35)
    assert rt.launches - before == 1
    Wgpu.seed(21)
    before = rt.launches
    want_out, want_mask = Backend.dropout(Wgpu, x, 0.35)
    assert rt.launches - before == 3
    np.testing.assert_array_equal(down(out), down(want_out))
    np.testing.assert_array_equal(down(mask), down(want_mask))
    view = transposed(rng.standard_normal((64, 37)))
    before = rt.launches
    Wgpu.dropout(view, 0.35)
    assert rt.launches - before == 3


def test_cross_entropy_is_one_kernel_each_way_and_flags_device_targets():
    """Wgpu's `cross_entropy` and its backward: one launch each (the composition takes four and
    five), close to the composition; a target computed on the device out of range is
    reported at the next read, as `gather` reports its indices."""
    from burn.backend import Backend
    from burn.tensor import Int, OutOfRangeError, module

    rng = np.random.default_rng(6)
    logits = up(rng.standard_normal((64, 10)) * 3)
    targets = Wgpu.from_data(TensorData(rng.integers(0, 10, 64).astype(np.int32)), Wgpu.device())
    grad = up(np.array([0.5]))
    rt = Wgpu.runtime()
    before = rt.launches
    loss = Wgpu.cross_entropy(logits, targets)
    dlogits = Wgpu.cross_entropy_backward(logits, targets, grad)
    assert rt.launches - before == 2
    np.testing.assert_allclose(
        down(loss), down(Backend.cross_entropy(Wgpu, logits, targets)), rtol=1e-6
    )
    np.testing.assert_allclose(
        down(dlogits),
        down(Backend.cross_entropy_backward(Wgpu, logits, targets, grad)),
        rtol=1e-5,
        atol=1e-7,
    )
    scores = Tensor[Wgpu, 2].from_data(np.zeros((2, 3), np.float32))
    computed = Tensor[Wgpu, 1, Int].from_data(np.array([0, 1], np.int32)) + 2  # [2, 3]
    with pytest.raises(OutOfRangeError, match="cross_entropy"):
        module.cross_entropy(scores, computed).to_data()
