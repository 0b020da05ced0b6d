"""The Wgpu runtime: devices, dtypes, views, the buffer pool, batching, pipelines, autotune."""

from __future__ import annotations

import gc
import json

import numpy as np
import pytest
from burn.tensor import DType, DTypeError, Tensor, TensorData
from burn.wgpu import Wgpu, WgpuDevice, autotune
from burn.wgpu import kernels as K
from burn.wgpu.pool import BufferPool, size_class


def t(values, dtype=None):
    return Tensor.from_data(np.asarray(values, dtype=np.float32), Wgpu.device(), dtype)


def test_devices_compare_by_value_and_name_burns_variants():
    assert WgpuDevice.DiscreteGpu(1) == WgpuDevice.DiscreteGpu(1)
    assert WgpuDevice.DiscreteGpu(0) != WgpuDevice.IntegratedGpu(0)
    assert repr(WgpuDevice.VirtualGpu(2)) == "WgpuDevice.VirtualGpu(2)"
    assert Wgpu.device() is WgpuDevice.BestAvailable
    assert WgpuDevice.BestAvailable.backend is Wgpu


def test_capabilities_have_no_64_bit_types():
    caps = Wgpu.capabilities
    assert caps.int_dtype is DType.I32 and caps.float_dtype is DType.F32
    assert not caps.supports(DType.F64) and not caps.supports(DType.I64)
    with pytest.raises(DTypeError, match="f64"):
        Tensor.from_data(np.zeros(3), Wgpu.device(), DType.F64)
    with pytest.raises(DTypeError):
        t([1.0]).cast(DType.I64)


def test_software_adapter_is_never_the_default():
    rt = Wgpu.runtime()
    if rt.is_software:
        assert Wgpu.priority() == -1
    else:
        assert Wgpu.priority() >= 1


def test_layout_ops_are_views_sharing_the_buffer():
    x = t(np.arange(24).reshape(2, 3, 4))
    p = x.primitive
    for view in (
        x.permute([2, 0, 1]),
        x.swap_dims(0, 2),
        x.slice([(0, 2), (1, 3)]),
        x.reshape([6, 4]),
    ):
        assert view.primitive.handle is p.handle
    wide = t([[1.0], [2.0]]).expand([2, 5])
    assert wide.primitive.strides[1] == 0
    np.testing.assert_array_equal(
        x.permute([2, 0, 1]).to_data().array, np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)
    )


def test_reshape_of_a_strided_view_copies():
    x = t(np.arange(6).reshape(2, 3)).transpose()
    y = x.reshape([6])
    assert y.primitive.handle is not x.primitive.handle
    np.testing.assert_array_equal(y.to_data().array, [0, 3, 1, 4, 2, 5])


def test_size_classes_waste_at_most_half():
    for n in (1, 255, 256, 257, 1000, 4097, 10**6):
        c = size_class(n)
        assert c >= n and c % 4 == 0
        assert c <= max(256, n * 3 // 2 + 4)


def test_pool_reuses_freed_buffers_and_stays_bounded():
    rt = Wgpu.runtime()
    pool = BufferPool(rt.device, max_free_bytes=4096)
    h = pool.acquire(1000)
    buf = h.buffer
    del h
    gc.collect()
    again = pool.acquire(900)  # same size class
    assert again.buffer is buf and pool.stats.reused == 1
    handles = [pool.acquire(2048) for _ in range(4)]
    del handles, again
    gc.collect()
    assert pool.stats.free_bytes <= 4096 and pool.stats.destroyed >= 1


def test_work_is_batched_until_a_read():
    rt = Wgpu.runtime()
    x = t(np.ones((4, 4)))
    rt.flush()
    y = x
    for _ in range(10):
        y = y + 1.0
    assert rt._pending == 10  # recorded, nothing submitted or waited for
    assert y.to_data().array[0, 0] == 11.0
    assert rt._pending == 0


def test_submit_starts_the_open_batch_without_reading(monkeypatch):
    """`Wgpu.submit()` hands the recorded kernels to the queue and reads nothing back."""
    rt = Wgpu.runtime()
    y = t(np.ones((4, 4)))
    rt.flush()
    for _ in range(3):
        y = y + 1.0
    submitted, reads = [], []
    queue = rt.queue
    monkeypatch.setattr(
        queue, "submit", lambda buffers, submit=queue.submit: submitted.append(submit(buffers))
    )
    monkeypatch.setattr(
        queue,
        "read_buffer",
        lambda *a, read=queue.read_buffer, **k: reads.append(1) or read(*a, **k),
    )
    Wgpu.submit(Wgpu.device())
    assert rt._pending == 0 and len(submitted) == 1 and not reads
    Wgpu.submit()  # nothing open: nothing to submit
    assert len(submitted) == 1
    assert y.to_data().array[0, 0] == 4.0


def test_launches_encode_natively_and_the_same_through_wgpu_py_methods(monkeypatch):
    rt = Wgpu.runtime()
    a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)

    def compute():
        x = t(a)
        # A negative info word (the index offset of a flip) and a strided (permuted) operand.
        return ((x.flip([0]).swap_dims(0, 1) * 2.0 - 1.0).abs()).to_data().array

    expected = np.abs(np.flip(a, 0).T * 2.0 - 1.0)
    assert rt._native is not None  # this wgpu-py exposes wgpu-native's functions
    rt.flush()
    x = t(a) + 1.0
    assert rt._pass_native is not None and rt._pass_objects  # recorded natively, groups kept
    x.to_data()
    assert not rt._pass_objects  # released once submitted
    np.testing.assert_array_equal(compute(), expected)
    monkeypatch.setattr(rt, "_native", None)
    monkeypatch.setattr(rt, "_bind_group_maker", None)
    monkeypatch.setattr(rt, "_groups", {})  # made again, through wgpu-py's own methods
    created = rt.bind_groups_created
    np.testing.assert_array_equal(compute(), expected)
    assert rt._pass_native is None and rt.bind_groups_created > created


def test_bind_groups_made_directly_are_checked_like_wgpu_pys():
    import wgpu

    rt = Wgpu.runtime()
    maker = rt._bind_group_maker
    assert maker is not None  # this wgpu-py's internals are the expected ones
    _, bgl = rt.pipeline(K.copy(DType.F32, DType.F32), ("r", "rw"))
    buffer = rt.alloc(1024).buffer
    group = maker.create(
        rt.device, bgl, [(1, buffer, 1024), (2, buffer, 1024), (0, rt._arena, 256)]
    )
    assert isinstance(group, wgpu.GPUBindGroup)
    with pytest.raises(wgpu.GPUValidationError):
        maker.create(rt.device, bgl, [(1, buffer, 1024)])  # bindings missing


def test_dynamic_offsets_are_made_once_per_value():
    calls = Wgpu.runtime()._native
    cell = calls.offset(512)
    assert calls.offset(512) is cell and cell[0] == 512  # a hit: the same cell
    other = calls.offset(768)
    assert other is not cell and other[0] == 768  # another value: another cell


def test_info_words_wrap_to_32_bits_like_the_kernels_read_them():
    rt = Wgpu.runtime()
    rt.flush()
    for words in ([7, -1, 2**31], np.array([7, -1, 2**31], np.int64)):
        start, window = rt._arena_slice(words)
        got = rt._arena_words[start // 4 : start // 4 + 3]
        assert got.tolist() == [7, 2**32 - 1, 2**31] and window >= 12
    rt.flush()


def test_pipelines_are_shared_across_shapes_and_ranks():
    rt = Wgpu.runtime()
    (t(np.ones(3)) * 2.0).to_data()
    count = rt.pipeline_count
    (t(np.ones((2, 5, 7))) * 3.0).to_data()
    (t(np.ones((9, 1))).swap_dims(0, 1) * 4.0).to_data()
    assert rt.pipeline_count == count


def test_int_division_truncates_and_remainder_takes_the_divisor_sign():
    a = Tensor.from_data(np.array([7, -7, 7, -7], np.int32), Wgpu.device())
    b = Tensor.from_data(np.array([2, 2, -2, -2], np.int32), Wgpu.device())
    np.testing.assert_array_equal((a / b).to_data().array, [3, -3, -3, 3])
    np.testing.assert_array_equal((a % b).to_data().array, [1, 1, -1, -1])
    np.testing.assert_array_equal(t([1.7, -1.7, 2.5]).int().to_data().array, [1, -1, 2])


def test_random_is_reproducible_after_seed():
    from burn.tensor import Distribution

    Wgpu.seed(5)
    a = Wgpu.random((1000,), Distribution.Default, DType.F32, Wgpu.device())
    b = Wgpu.random((1000,), Distribution.Default, DType.F32, Wgpu.device())
    Wgpu.seed(5)
    c = Wgpu.random((1000,), Distribution.Default, DType.F32, Wgpu.device())
    va, vb, vc = (Wgpu.into_data(p).array for p in (a, b, c))
    np.testing.assert_array_equal(va, vc)
    assert not np.array_equal(va, vb)
    assert 0.0 <= va.min() and va.max() < 1.0 and abs(va.mean() - 0.5) < 0.05
    n = Wgpu.into_data(
        Wgpu.random((20000,), Distribution.Normal(2.0, 3.0), DType.F32, Wgpu.device())
    ).array
    assert abs(n.mean() - 2.0) < 0.1 and abs(n.std() - 3.0) < 0.1


def test_long_reductions_split_into_chunks():
    values = np.random.default_rng(0).normal(size=50_000).astype(np.float32)
    x = t(values)
    np.testing.assert_allclose(
        float(x.sum().into_scalar()), values.astype(np.float64).sum(), rtol=1e-4, atol=1e-2
    )
    assert float(x.max().into_scalar()) == values.max()
    assert int(x.argmax(0).into_scalar()) == int(values.argmax())


def test_sort_is_stable_and_handles_long_rows():
    values = np.random.default_rng(1).integers(0, 50, size=(3, 1000)).astype(np.float32)
    out, idx = t(values).sort_with_indices(1)
    np.testing.assert_array_equal(idx.to_data().array, np.argsort(values, axis=1, kind="stable"))
    np.testing.assert_array_equal(out.to_data().array, np.sort(values, axis=1))


def test_matmul_autotune_caches_the_winner_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_tables", {})
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})  # no launch planned before
    rng = np.random.default_rng(2)
    a, b = (
        rng.normal(size=(300, 260)).astype(np.float32),
        rng.normal(size=(260, 250)).astype(np.float32),
    )
    out = t(a) @ t(b)
    np.testing.assert_allclose(out.to_data().array, a @ b, rtol=1e-3, atol=1e-3)
    files = list((tmp_path / "wgpu-autotune").glob("*.json"))
    assert len(files) == 1
    table = json.loads(files[0].read_text())
    assert list(table) == ["f32-512x256x512-1-g"]  # n = 250: the generic kernel
    assert tuple(table["f32-512x256x512-1-g"]) in autotune.CANDIDATES
    calls = []
    monkeypatch.setattr(autotune, "tune", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(autotune, "_tables", {})  # a new process: read back from disk
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})
    (t(a) @ t(b)).to_data()
    assert calls == []


def test_reduction_autotune_caches_the_winner_per_shape_class(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(autotune, "_tables", {})
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})  # no launch planned before
    x = np.random.default_rng(4).standard_normal((520, 600)).astype(np.float32)
    np.testing.assert_allclose(t(x).sum_dim(0).to_data().array[0], x.sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(t(x).argmax(1).to_data().array[:, 0], x.argmax(1))
    files = list((tmp_path / "wgpu-autotune").glob("reduce-*.json"))
    assert len(files) == 1
    table = json.loads(files[0].read_text())
    assert sorted(table) == ["arg-f32-1024x1024-c", "val-f32-1024x1024-s"]
    assert all(tuple(cfg) in autotune.REDUCE_CANDIDATES for cfg in table.values())
    calls = []
    monkeypatch.setattr(autotune, "tune_reduce", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(autotune, "_tables", {})  # a new process: read back from disk
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})
    t(x).sum_dim(0).to_data()
    t(x[:513]).argmax(1).to_data()  # 513 rows round up to the same class
    assert calls == []


def _launches(fn):
    rt = Wgpu.runtime()
    before = rt.launches
    out = fn()
    return out, rt.launches - before


def _refuse(*args, **kwargs):
    raise AssertionError("planned again: the kept launch plan was not used")


@pytest.mark.parametrize(
    ("m", "k", "n", "split"),
    [(48, 40, 24, False), (64, 1024, 512, True), (64, 512, 10, True)],
)
def test_matmul_keeps_its_launch_plan_per_layout(monkeypatch, m, k, n, split):
    """The second product of the same layouts replays the kept launch (one, or two for a
    product split along k) on new operands; another layout is planned afresh."""
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=(2, m, k)).astype(np.float32), rng.normal(size=(k, n)).astype(np.float32)
    (t(a[0]) @ t(b)).to_data()  # the first product of a shape class may be tuned (no plan kept)
    first, launches = _launches(lambda: t(a[0]) @ t(b))
    assert launches == (2 if split else 1)
    assert len(Wgpu.runtime().op_plans) >= 1
    with monkeypatch.context() as patched:
        patched.setattr(type(Wgpu), "_matmul_setup", _refuse)
        patched.setattr(type(Wgpu), "_split_views", staticmethod(_refuse))
        patched.setattr(type(Wgpu), "reduce", _refuse)
        second, replayed = _launches(lambda: t(a[1]) @ t(b))
        with pytest.raises(AssertionError, match="planned again"):
            t(a[1]) @ t(b.T).transpose()  # the same values, another layout: planned afresh
    assert replayed == launches
    np.testing.assert_allclose(first.to_data().array, a[0] @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second.to_data().array, a[1] @ b, rtol=1e-4, atol=1e-4)
    # An operand at another offset (a row slice of a bigger tensor) is another plan.
    both = t(a.reshape(2 * m, k))
    np.testing.assert_allclose(
        (both.slice([(m, 2 * m)]) @ t(b)).to_data().array, a[1] @ b, rtol=1e-4, atol=1e-4
    )


def test_a_product_whose_operands_are_copied_first_keeps_no_plan(monkeypatch):
    """An operand that the vec4 kernel cannot read as it is (here at an odd offset) is copied
    before the product: the launch read the copy, not the operand, so no plan is kept for the
    operand's layout, and the next product of that layout copies again."""
    rt = Wgpu.runtime()
    monkeypatch.setattr(rt, "op_plans", {})
    b = np.random.default_rng(12).normal(size=(128, 128)).astype(np.float32)
    for seed in (0, 1):
        a = np.random.default_rng(seed).normal(size=(128, 256)).astype(np.float32)
        shifted = t(a).slice([(0, 128), (1, 129)])
        assert shifted.primitive.offset == 1
        out, launches = _launches(lambda x=shifted: x @ t(b))
        assert launches == 2  # the copy, then the product
        np.testing.assert_allclose(out.to_data().array, a[:, 1:129] @ b, rtol=1e-3, atol=1e-3)
    assert not [key for key in rt.op_plans if key[0] == "matmul" and key[3] == 1]


def test_reduction_keeps_its_launch_plan_per_layout(monkeypatch):
    monkeypatch.setattr(Wgpu.runtime(), "op_plans", {})
    rng = np.random.default_rng(13)
    x = rng.normal(size=(2, 37, 20)).astype(np.float32)
    first = t(x[0]).sum_dim(1)
    with monkeypatch.context() as patched:
        patched.setattr(autotune, "reduce_config", _refuse)
        second = t(x[1]).sum_dim(1)
        with pytest.raises(AssertionError, match="planned again"):
            t(x[1]).mean_dim(1)  # another op: planned afresh
    np.testing.assert_allclose(first.to_data().array[:, 0], x[0].sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second.to_data().array[:, 0], x[1].sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d", "max_pool2d"])
def test_im2col_and_col2im_keep_their_launch_plans(monkeypatch, op):
    """A convolution, a transposed one (col2im) and a pool (im2col padded with -inf) of the
    same layouts replay the kept launches, bit for bit what planning them afresh gives."""
    from burn.tensor import module as M

    rng = np.random.default_rng(14)
    xs = rng.normal(size=(2, 2, 3, 9, 7)).astype(np.float32)
    w = t(rng.normal(size=(3, 4, 3, 3)))  # [out, in, k, k] of conv2d; [in, out, k, k] of the other

    def run(x):
        x = x if isinstance(x, Tensor) else t(x)
        if op == "conv2d":
            return M.conv2d(x, w.swap_dims(0, 1))
        if op == "conv_transpose2d":
            return M.conv_transpose2d(x, w)
        return M.max_pool2d(x, [3, 3], [2, 2], [1, 1])

    rt = Wgpu.runtime()
    monkeypatch.setattr(rt, "op_plans", {})
    run(xs[0]).to_data()
    with monkeypatch.context() as patched:
        patched.setattr(type(Wgpu), "_conv_info", _refuse)
        replayed = run(xs[1]).to_data().array
    # The same shape at an offset (the second half of a stacked batch): another plan.
    shifted = run(t(xs.reshape(4, 3, 9, 7)).slice([(2, 4)])).to_data().array
    monkeypatch.setattr(rt, "op_plans", {})
    np.testing.assert_array_equal(replayed, run(xs[1]).to_data().array)
    np.testing.assert_array_equal(shifted, replayed)


def test_mean_of_every_element_is_one_launch():
    x = np.random.default_rng(15).normal(size=(64, 7)).astype(np.float32)
    out, launches = _launches(lambda: t(x).mean())
    assert launches == 1
    np.testing.assert_allclose(out.to_data().array, [x.mean(dtype=np.float64)], rtol=1e-5)
    strided = t(x).swap_dims(0, 1)  # not contiguous: flattened by a copy first
    np.testing.assert_allclose(strided.mean().to_data().array, [x.mean()], rtol=1e-5)


def test_f16_when_the_adapter_has_it():
    if not Wgpu.capabilities.supports(DType.F16):
        pytest.skip("adapter without shader-f16")
    x = Tensor.from_data(
        TensorData(np.array([1.5, -2.25, 3.0], np.float16)), Wgpu.device(), DType.F16
    )
    assert x.dtype is DType.F16
    np.testing.assert_array_equal((x * 2.0).to_data().array, np.array([3.0, -4.5, 6.0], np.float16))


def _stderr_of(code: str) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_probing_adapters_prints_nothing_on_a_headless_machine():
    code = "import burn.backend as b; b.default(); from burn.wgpu import Wgpu; Wgpu.devices()"
    assert "XDG_RUNTIME_DIR" not in _stderr_of(code)


def test_stderr_filter_keeps_everything_but_probe_noise():
    code = (
        "import os\n"
        "from burn.wgpu.adapters import _native_stderr_filtered\n"
        "with _native_stderr_filtered():\n"
        "    os.write(2, b'error: XDG_RUNTIME_DIR is invalid or not set\\nreal trouble\\n')\n"
    )
    assert _stderr_of(code) == "real trouble\n"


def test_unknown_devices_and_missing_adapters_are_burn_errors():
    from burn.tensor import BurnError, DeviceError
    from burn.wgpu.adapters import NoAdapterError, select_adapter

    with pytest.raises(DeviceError, match="unknown wgpu device kind 'Quantum'"):
        WgpuDevice("Quantum")
    with pytest.raises(NoAdapterError, match="no DiscreteGpu adapter #99") as caught:
        select_adapter("DiscreteGpu", 99)
    assert isinstance(caught.value, BurnError)


def test_adam_scalar_words_round_as_numpy_does():
    """Adam's step packs its scalars with `struct`; beyond float32's range it rounds to an
    infinity as numpy does instead of raising."""
    from burn.wgpu.optim_ops import _scalar_words

    for values in [(0.9, 0.999, 0.1, 1e-3, 0.1, 1e-3, 1e-8, 1e-3, 0.0, 0.0), (1e40,) + (0.1,) * 9]:
        with np.errstate(over="ignore"):
            expected = np.array(values, dtype=np.float32).view(np.uint32).tolist()
        assert list(_scalar_words(*values)) == expected
