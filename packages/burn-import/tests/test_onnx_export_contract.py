"""The exporter is a decorator on the backend contract: each named op the forward pass calls
is forwarded to the model backend's op of the same name and recorded as its ONNX node."""

from __future__ import annotations

import inspect

import numpy as np
import onnx
import pytest
from burn.backend import Backend, registry
from burn.backend_tests.spy import Maker, arguments, overridden, spied
from burn.module import Module
from burn.ndarray import NdArray
from burn.nn import Gelu, LinearConfig
from burn.onnx.export_backend import TracingBackend
from burn.onnx.export_graph import ExportError, GraphBuilder
from burn.onnx.exporter import export
from burn.tensor import Int, Tensor

ort = pytest.importorskip("onnxruntime")

# Refused by design: a graph cannot depend on the values it computes, nor draw random numbers
# (dropout draws its mask; `burn.nn.Dropout` is the identity outside training, as exported).
REFUSED = {"into_data", "into_data_many", "random", "dropout"}


def _backends() -> list:
    found = [pytest.param(NdArray, id="ndarray")]
    if "Wgpu" in registry.available():
        found.append(pytest.param("Wgpu", id="wgpu"))
    return found


def _resolve(backend) -> Backend:
    if isinstance(backend, str):
        backend = registry.get(backend)
        reason = backend.unavailable_reason()
        if reason is not None:
            pytest.skip(reason)
    return backend


@pytest.mark.parametrize("backend", _backends())
def test_every_override_of_the_model_backend_is_what_runs(backend):
    base = _resolve(backend)
    calls: set[str] = set()
    tracer = TracingBackend(spied(base, calls), GraphBuilder(17))
    make = Maker(tracer)
    missed = []
    for op in overridden(base):
        if op in REFUSED:
            continue
        args = arguments(op, make)
        calls.clear()
        getattr(tracer, op)(*args)
        if op not in calls:
            missed.append(op)
    assert not missed, f"the tracer never ran the backend's own {missed}"


def test_host_reads_and_random_numbers_are_refused():
    tracer = TracingBackend(NdArray, GraphBuilder(17))
    make = Maker(tracer)
    with pytest.raises(ExportError, match="tensor values on the host"):
        tracer.into_data(make.prim("float", [1.0]))
    with pytest.raises(ExportError, match="tensor values on the host"):
        tracer.into_data_many([make.prim("float", [1.0])])
    with pytest.raises(ExportError, match="random numbers"):
        tracer.random(*arguments("random", make))
    with pytest.raises(ExportError, match="random numbers"):
        tracer.dropout(*arguments("dropout", make))


@pytest.mark.parametrize("op", ["float_add", "float_matmul", "int_gather", "conv2d", "relu"])
def test_tracer_ops_document_themselves(op):
    method = getattr(TracingBackend(NdArray, GraphBuilder(17)), op)
    assert method.__doc__ and method.__doc__.strip()
    assert list(inspect.signature(method).parameters)


class NamedOps(Module):
    """Ops that ONNX has one node for, each called through its Burn name."""

    def __init__(self):
        self.fc = LinearConfig(4, 4).init()

    def forward(self, x: Tensor, idx: Tensor) -> tuple[Tensor, ...]:
        y = self.fc(x)  # float_matmul
        joined = Tensor.cat([y, x], 1)  # float_cat
        picked = joined.select(1, idx)  # float_select
        flipped = picked.flip([0, 1])  # float_flip
        mean = flipped.mean_dim(1)  # float_mean_dim
        nan = (y / y).is_nan()  # float_is_nan (0/0 where y is 0: none here)
        sorted_, order = y.sort_with_indices(1)  # no single node: recorded as its composition
        return mean, nan, sorted_, order


def test_named_ops_are_recorded_as_their_onnx_nodes(tmp_path):
    model = NamedOps()
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    idx = np.array([5, 0, 7], dtype=np.int64)
    inputs = [Tensor.from_data(x), Tensor[NdArray, 1, Int].from_data(idx)]
    ours = model.forward(*inputs)
    path = export(model, inputs, tmp_path / "named.onnx")
    kinds = [n.op_type for n in onnx.load(str(path)).graph.node]
    for expected in ("MatMul", "Concat", "Gather", "Slice", "ReduceMean", "IsNaN"):
        assert expected in kinds, f"{expected} missing from {kinds}"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    theirs = session.run(None, {"input_0": x, "input_1": idx.astype(inputs[1].dtype.numpy)})
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(b, a.to_data().as_array(), rtol=1e-5, atol=1e-6)


class GeluOnly(Module):
    def __init__(self):
        self.fc = LinearConfig(4, 4).init()
        self.gelu = Gelu()

    def forward(self, x: Tensor) -> Tensor:
        return self.gelu(self.fc(x))


@pytest.mark.parametrize(("opset", "node"), [(17, "Erf"), (20, "Gelu")])
def test_gelu_is_one_node_from_opset_20(tmp_path, opset, node):
    model = GeluOnly()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    ours = model.forward(Tensor.from_data(x)).to_data().as_array()
    path = export(model, Tensor.from_data(x), tmp_path / "gelu.onnx", opset=opset)
    kinds = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert node in kinds and ("Gelu" in kinds) == (opset >= 20)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"input": x})[0], ours, rtol=1e-5, atol=1e-6)
