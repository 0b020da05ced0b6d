"""`DataParallel` in a job of one (plain `python`, no `mpiexec`): the Learner trains exactly as
with the default strategy, and bad settings are refused."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.collective import CollectiveError, DataParallel
from burn.data import DataLoaderBuilder, InMemDataset
from burn.nn import LinearConfig
from burn.optim import AdamConfig
from burn.train import LearnerBuilder
from burn.train.metric import AccuracyMetric, LossMetric

sys.path.insert(0, str(Path(__file__).parent))
from toy_job import Batcher, Model, Quiet, blobs  # noqa: E402

B = Autodiff(NdArray)


def train(directory: Path, strategy=None):
    device = B.device()
    B.seed(0)
    model = Model(LinearConfig(2, 16).init(device), LinearConfig(16, 3).init(device))
    loader = DataLoaderBuilder(Batcher()).batch_size(8).shuffle(3).set_device(device)
    valid = DataLoaderBuilder(Batcher()).batch_size(8).set_device(device.inner)
    builder = (
        LearnerBuilder(directory)
        .metric_train_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .renderer(Quiet())
        .num_epochs(2)
    )
    if strategy is not None:
        builder = builder.with_training_strategy(strategy)
    learner = builder.build(model, AdamConfig().init(), 1e-2)
    return learner.fit(
        loader.build(InMemDataset(blobs(30, 1))), valid.build(InMemDataset(blobs(13, 2)))
    )


def test_a_job_of_one_trains_like_the_default_strategy(tmp_path):
    plain = train(tmp_path / "plain")
    strategy = DataParallel(debug=True)
    assert (strategy.rank, strategy.size, strategy.is_main()) == (0, 1, True)
    parallel = train(tmp_path / "parallel", strategy)
    for (name, a), (_, b) in zip(plain.named_params(), parallel.named_params(), strict=True):
        np.testing.assert_allclose(
            a.val().to_data().array, b.val().to_data().array, rtol=1e-6, atol=1e-7, err_msg=name
        )
    for log in (
        "train/epoch-2/Loss.log",
        "train/epoch-2/Accuracy.log",
        "valid/epoch-1/Accuracy.log",
    ):
        left = np.loadtxt(tmp_path / "plain" / log, delimiter=",", ndmin=2)
        right = np.loadtxt(tmp_path / "parallel" / log, delimiter=",", ndmin=2)
        np.testing.assert_allclose(left, right, rtol=1e-6)


@pytest.mark.parametrize("size", [0, -1.0])
def test_bucket_size_must_be_positive(size):
    with pytest.raises(CollectiveError, match="bucket_size_mb must be positive"):
        DataParallel(bucket_size_mb=size)


def _grads_of_squares(values: np.ndarray, backend):
    from burn.optim import GradientsParams
    from burn.tensor import Tensor

    w = Tensor.from_data(values, backend.device()).require_grad()
    return {"w": w}, GradientsParams({"w": w.grad((w * w).sum().backward())})


@pytest.mark.parametrize("wire", ["bfloat16", "float16"])
@pytest.mark.parametrize("backend_name", ["ndarray", "wgpu"])
def test_gradients_travel_in_two_bytes_rounded_like_numpy(wire, backend_name):
    from burn.collective import Communicator, GradientBuckets
    from burn.tensor import DType

    backend = Autodiff(NdArray)
    if backend_name == "wgpu":
        from burn.backend import Wgpu

        backend = Autodiff(Wgpu)
    values = np.random.default_rng(0).normal(size=257).astype(np.float32) * 3
    params, grads = _grads_of_squares(values, backend)
    buckets = GradientBuckets(Communicator.world(), overlap=True, wire_dtype=wire)
    out = buckets.all_reduce(params, grads, items=3).get("w")
    assert out.dtype is DType.F32 and out.dims() == [257]
    rounded = (2.0 * values).astype({"bfloat16": DType.BF16, "float16": DType.F16}[wire].numpy)
    np.testing.assert_array_equal(out.to_data().as_array(), rounded.astype(np.float32))
    assert buckets.wire_bytes == 2 * 257 and buckets.num_buckets == 1
    exact = GradientBuckets(Communicator.world())
    exact.all_reduce(*_grads_of_squares(values, backend), items=3)
    assert exact.wire_bytes == 4 * 257


def test_wire_dtype_must_be_known():
    from burn.collective import Communicator, GradientBuckets

    with pytest.raises(CollectiveError, match="wire_dtype must be one of"):
        GradientBuckets(Communicator.world(), wire_dtype="int8")
    with pytest.raises(CollectiveError, match="wire_dtype"):
        DataParallel(wire_dtype="float8", abort_on_error=False)


def _three_layers(backend):
    from burn.tensor import Tensor, activation

    rng = np.random.default_rng(3)
    device = backend.device()

    def leaf(*shape):
        return Tensor.from_data(rng.normal(size=shape).astype(np.float32), device).require_grad()

    params = {"unused": leaf(4), "w1": leaf(2, 8), "w2": leaf(8, 8), "w3": leaf(8, 3)}
    x = Tensor.from_data(rng.normal(size=(5, 2)).astype(np.float32), device)
    h = activation.relu(x.matmul(params["w1"]))
    h = activation.tanh(h.matmul(params["w2"]))
    return params, h.matmul(params["w3"]).sum()


@pytest.mark.parametrize("backend_name", ["ndarray", "wgpu"])
def test_overlapped_step_starts_buckets_during_backward(backend_name):
    from burn.collective import Communicator, GradientBuckets
    from burn.optim import GradientsParams

    backend = Autodiff(NdArray)
    if backend_name == "wgpu":
        from burn.backend import Wgpu

        backend = Autodiff(Wgpu)
    params, loss = _three_layers(backend)
    plain = loss.backward()
    expected = {k: t.grad(plain).to_data().as_array() for k, t in params.items() if k != "unused"}
    params, loss = _three_layers(backend)
    # One bucket per parameter (buckets smaller than any of them).
    buckets = GradientBuckets(Communicator.world(), bucket_bytes=16, overlap=True)
    step = buckets.overlapped(params, items=5)
    with step:
        grads = loss.backward()
        local = GradientsParams({k: t.grad(grads) for k, t in params.items() if k != "unused"})
    # The plan is the reverse of the parameters' order, which is the order backward finished
    # them (w3, w2, w1): each bucket started as soon as its gradient was in; `unused` got
    # none, so its bucket (the last) waited for the end.
    assert buckets.num_buckets == 4 and step.started_in_backward == 3
    out = step.finish(local)
    assert sorted(out.ids()) == ["w1", "w2", "w3"]
    for name, values in expected.items():
        np.testing.assert_array_equal(out.get(name).to_data().as_array(), values)
    assert backend.set_grad_hook(None) is None  # the hook was removed


def test_overlapped_step_refuses_a_second_backward_pass():
    from burn.collective import Communicator, GradientBuckets

    params, loss = _three_layers(B)
    step = GradientBuckets(Communicator.world(), overlap=True).overlapped(params, items=5)
    with pytest.raises(CollectiveError, match="parameter 'w3' got a second gradient"):
        with step:
            loss.backward()
            (params["w3"] * 2.0).sum().backward()
    assert B.set_grad_hook(None) is None


def test_overlapped_step_packs_what_no_hook_delivered():
    from burn.collective import Communicator, GradientBuckets
    from burn.optim import GradientsParams

    params, loss = _three_layers(B)
    grads = loss.backward()  # before the step: nothing reaches its hook
    local = GradientsParams({k: t.grad(grads) for k, t in params.items() if k != "unused"})
    expected = {k: g.to_data().as_array().copy() for k, g in local.items()}
    step = GradientBuckets(Communicator.world(), bucket_bytes=16, overlap=True).overlapped(
        params, items=5
    )
    with step:
        pass
    assert step.started_in_backward == 0
    out = step.finish(local)
    assert sorted(out.ids()) == ["w1", "w2", "w3"]
    for name, values in expected.items():
        np.testing.assert_array_equal(out.get(name).to_data().as_array(), values)
