"""GlobalLpPool and MaxRoiPool against onnxruntime, and Multinomial by its distribution (its
draws come from the backend's generator, so no reference gives the same samples)."""

from __future__ import annotations

import numpy as np
import pytest
from burn.onnx import backend
from burn.tensor.errors import BurnError, OutOfRangeError
from burn_import_reference import same_as_onnxruntime
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")

F32 = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 6)])
def test_global_lp_pool(p, shape):
    out_shape = list(shape[:2]) + [1] * (len(shape) - 2)
    model = _model(
        [helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)],
        [helper.make_tensor_value_info("x", F32, list(shape))],
        [helper.make_tensor_value_info("y", F32, out_shape)],
    )
    x = np.random.default_rng(p).standard_normal(shape).astype(np.float32)
    same_as_onnxruntime(model, [x])


@pytest.mark.parametrize("scale", [1.0, 0.5])
@pytest.mark.parametrize("pooled", [(2, 2), (3, 2)])
def test_max_roi_pool(scale, pooled):
    rois = np.array(
        [
            [0, 0, 0, 7, 7],  # the whole map
            [1, 2.5, 1.4, 5.5, 6.6],  # fractional corners, rounded half away from zero
            [0, 6, 6, 6, 6],  # one pixel
            [1, -3, -2, 2, 3],  # partly outside
            [0, 30, 30, 40, 40],  # wholly outside: empty bins give 0
        ],
        np.float32,
    )
    model = _model(
        [
            helper.make_node(
                "MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=list(pooled), spatial_scale=scale
            )
        ],
        [
            helper.make_tensor_value_info("x", F32, [2, 3, 8, 8]),
            helper.make_tensor_value_info("rois", F32, [5, 5]),
        ],
        [helper.make_tensor_value_info("y", F32, [5, 3, *pooled])],
    )
    x = np.random.default_rng(7).standard_normal((2, 3, 8, 8)).astype(np.float32)
    same_as_onnxruntime(model, [x, rois])


def test_max_roi_pool_refuses_a_bad_batch_index():
    model = _model(
        [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[1, 1])],
        [
            helper.make_tensor_value_info("x", F32, [1, 1, 4, 4]),
            helper.make_tensor_value_info("rois", F32, [1, 5]),
        ],
        [helper.make_tensor_value_info("y", F32, [1, 1, 1, 1])],
    )
    rois = np.array([[3, 0, 0, 2, 2]], np.float32)
    with pytest.raises(OutOfRangeError, match="batch index"):
        backend.prepare(model).run([np.zeros((1, 1, 4, 4), np.float32), rois])


@pytest.mark.parametrize("dtype", [TensorProto.INT32, TensorProto.INT64])
def test_multinomial_draws_follow_the_softmax(dtype):
    probabilities = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    with np.errstate(divide="ignore"):
        logits = np.log(probabilities).astype(np.float32) + 3.0  # unnormalized log-probs
    samples = 20000
    model = _model(
        [helper.make_node("Multinomial", ["x"], ["y"], sample_size=samples, dtype=dtype)],
        [helper.make_tensor_value_info("x", F32, [2, 3])],
        [helper.make_tensor_value_info("y", dtype, [2, samples])],
    )
    (y,) = backend.prepare(model).run([logits])
    assert y.shape == (2, samples) and y.dtype == (np.int32 if dtype == 6 else np.int64)
    assert y.min() >= 0 and y.max() <= 2
    for row, expected in zip(y, probabilities, strict=True):
        freq = np.bincount(row, minlength=3) / samples
        np.testing.assert_allclose(freq, expected, atol=0.02)  # about 6 standard deviations
    assert not (y[1] == 1).any()  # a class of probability 0 is never drawn


def test_an_unknown_pooled_shape_is_refused():
    model = _model(
        [helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[1])],
        [
            helper.make_tensor_value_info("x", F32, [1, 1, 4, 4]),
            helper.make_tensor_value_info("rois", F32, [1, 5]),
        ],
        [helper.make_tensor_value_info("y", F32, [1, 1, 1, 1])],
    )
    with pytest.raises(BurnError, match="pooled_shape"):
        backend.prepare(model).run(
            [np.zeros((1, 1, 4, 4), np.float32), np.zeros((1, 5), np.float32)]
        )
