"""RoiAlign (`burn.onnx.runtime.roi_align`) against onnx's reference implementation, on the
cases the node suite leaves out: adaptive sampling (a different grid per region), the opset-10
coordinates, regions past the image's edges or inverted, no regions; its gradient against
finite differences; and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from burn.autodiff import Autodiff
from burn.ndarray import NdArray
from burn.onnx import runtime as rt
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

BOXES = np.array(
    [
        [0.0, 0.0, 9.0, 9.0],  # the whole image
        [2.5, 1.0, 7.2, 4.4],  # a region smaller than a bin in places
        [-3.0, 6.0, 4.0, 13.0],  # past the top-left and bottom edges
        [8.0, 8.0, 2.0, 3.0],  # inverted
        [0.3, 0.7, 1.1, 0.9],  # tiny
    ]
)


def _reference(x, boxes, batch, **attrs) -> np.ndarray:
    node = helper.make_node("RoiAlign", ["X", "rois", "batch"], ["Y"], **attrs)
    graph = helper.make_graph(
        [node],
        "roi",
        [
            helper.make_tensor_value_info("X", TensorProto.DOUBLE, x.shape),
            helper.make_tensor_value_info("rois", TensorProto.DOUBLE, boxes.shape),
            helper.make_tensor_value_info("batch", TensorProto.INT64, batch.shape),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    return ReferenceEvaluator(model).run(None, {"X": x, "rois": boxes, "batch": batch})[0]


def _ours(x, boxes, batch, backend=NdArray, **attrs) -> Tensor:
    device = backend.device()
    return rt.roi_align(
        Tensor.from_data(x, device=device, dtype="f64"),
        Tensor.from_data(boxes, device=device, dtype="f64"),
        Tensor.from_data(batch, device=device, dtype="i64"),
        **attrs,
    )


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 1, 3])
def test_roi_align_matches_the_onnx_reference(mode, transform, sampling_ratio):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 10, 11))
    batch = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    attrs = dict(
        mode=mode,
        coordinate_transformation_mode=transform,
        output_height=3,
        output_width=4,
        sampling_ratio=sampling_ratio,
        spatial_scale=float(np.float32(0.9)),  # as ONNX stores the attribute
    )
    want = _reference(x, BOXES, batch, **attrs)
    got = _ours(x, BOXES, batch, **attrs).to_data().array
    assert got.shape == (5, 3, 3, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_roi_align_without_regions_is_empty():
    x = np.ones((1, 2, 4, 4))
    got = _ours(x, np.zeros((0, 4)), np.zeros(0, np.int64), output_height=2, output_width=2)
    assert got.dims() == [0, 2, 2, 2]


def test_roi_align_spans_chunks_of_regions(monkeypatch):
    from burn.onnx.runtime import detection

    monkeypatch.setattr(detection, "_ROI_CHUNK_ELEMENTS", 1)  # one region per chunk
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 8, 8))
    batch = np.array([1, 0, 1, 0, 0], dtype=np.int64)
    got = _ours(x, BOXES, batch, output_height=2, output_width=2, sampling_ratio=2)
    want = _reference(x, BOXES, batch, output_height=2, output_width=2, sampling_ratio=2)
    np.testing.assert_allclose(got.to_data().array, want, rtol=1e-12, atol=1e-12)


def test_roi_align_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 6, 7))
    boxes, batch = BOXES[:3] * 0.6, np.zeros(3, np.int64)
    weights = rng.standard_normal((3, 2, 2, 3))
    attrs = dict(output_height=2, output_width=3, sampling_ratio=2)
    B = Autodiff(NdArray)
    device = B.device()
    xt = Tensor.from_data(x, device=device, dtype="f64").require_grad()
    out = rt.roi_align(
        xt,
        Tensor.from_data(boxes, device=device, dtype="f64"),
        Tensor.from_data(batch, device=device, dtype="i64"),
        **attrs,
    )
    loss = (out * Tensor.from_data(weights, device=device, dtype="f64")).sum()
    grad = xt.grad(loss.backward()).to_data().array

    def f(v):
        return float((_reference(v, boxes, batch, **attrs) * weights).sum())

    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        numeric[i] = (f(x + step) - f(x - step)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_roi_align_rejects_bad_batch_indices_and_modes():
    x = np.zeros((2, 1, 4, 4))
    with pytest.raises(OutOfRangeError, match="RoiAlign"):
        _ours(x, BOXES[:2], np.array([0, 2], np.int64))
    with pytest.raises(ShapeError, match="2 regions but 1 batch"):
        _ours(x, BOXES[:2], np.array([0], np.int64))
    with pytest.raises(ShapeError, match="unknown mode"):
        _ours(x, BOXES[:2], np.array([0, 1], np.int64), mode="median")
    with pytest.raises(ShapeError, match="coordinate_transformation_mode"):
        _ours(x, BOXES[:2], np.array([0, 1], np.int64), coordinate_transformation_mode="edge")
    with pytest.raises(ShapeError, match="at least 1"):
        _ours(x, BOXES[:2], np.array([0, 1], np.int64), output_height=0)
    with pytest.raises(ShapeError, match="finite"):
        _ours(x, np.array([[0.0, 0.0, np.nan, 1.0]]), np.array([0], np.int64))
    huge = np.array([[0.0, 0.0, 1e12, 1e12]])  # adaptive sampling would take 1e24 points
    with pytest.raises(ShapeError, match="taps"):
        _ours(x, huge, np.array([0], np.int64))
