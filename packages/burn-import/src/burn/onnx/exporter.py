"""ONNX export: one forward pass traced on a recording backend, written as a checked graph.

```python notest
from burn.onnx.exporter import export

export(model, Tensor.zeros([1, 1, 28, 28]), "model.onnx")  # opset 17
```

The model runs once on `TracingBackend` (`export_backend`), a decorator of the model's own
backend: every op computes its value on that backend and appends ONNX nodes, so what is
exported is exactly what the forward pass does, for the shapes of the example inputs. The
parameters become initializers named by their paths (`conv1.weight`), nodes are named by the
layer that emitted them, and the file is validated by `onnx.checker` before it is written
(atomically).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import onnx
from burn.module import Module
from burn.onnx.export_backend import Traced, TracingBackend
from burn.onnx.export_graph import ONNX_DTYPES, ExportError, GraphBuilder
from burn.record import atomic_write
from burn.tensor import Tensor
from onnx import helper

__all__ = ["ExportError", "export"]

MIN_OPSET = 16  # ScatterElements with reduction="add"
_EXPORTING = threading.Lock()  # tracing patches module classes' forward: one export at a time


def _ir_version(opset: int) -> int:
    """The oldest IR version that carries `opset` (runtimes refuse IR versions they predate)."""
    return helper.find_min_ir_version_for([helper.make_opsetid("", opset)])


def _as_tuple(example_inputs) -> tuple[Tensor, ...]:
    inputs = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(example_inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise ExportError(f"export: example input {i} is a {type(t).__name__}, not a Tensor")
    return inputs


@contextlib.contextmanager
def _scopes(model: Module, graph: GraphBuilder) -> Iterator[None]:
    """While tracing, each module's forward pushes its path, so nodes and errors name layers."""
    paths: dict[int, str] = {}

    def walk(value, path: str) -> None:
        if isinstance(value, Module):
            paths.setdefault(id(value), path)
            for name, field in value.fields():
                walk(field, f"{path}.{name}" if path else name)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}")
        elif isinstance(value, dict):
            for k, item in value.items():
                walk(item, f"{path}.{k}")

    walk(model, "")
    patched: list[tuple[type, str, object]] = []
    seen: set[tuple[type, str]] = set()
    classes = {type(m) for m in _modules(model)}
    for cls in classes:
        for klass in cls.__mro__:
            for attr in ("forward", "__call__"):
                original = klass.__dict__.get(attr)
                if original is None or (klass, attr) in seen or not callable(original):
                    continue
                seen.add((klass, attr))

                def traced(self, *args, __original=original, **kwargs):
                    path = paths.get(id(self))
                    if path is None:
                        return __original(self, *args, **kwargs)
                    graph.scopes.append((path, type(self).__name__))
                    try:
                        return __original(self, *args, **kwargs)
                    finally:
                        graph.scopes.pop()

                patched.append((klass, attr, original))
                setattr(klass, attr, traced)
    try:
        yield
    finally:
        for klass, attr, original in reversed(patched):
            setattr(klass, attr, original)


def _modules(model: Module) -> list[Module]:
    found: list[Module] = []

    def walk(value) -> None:
        if isinstance(value, Module):
            found.append(value)
            for _, field in value.fields():
                walk(field)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    walk(model)
    return found


def _trace_constants(model: Module, backend, tracer: TracingBackend) -> None:
    """Plain tensors held by the (copied) modules become constants of the graph."""

    def convert(value):
        if isinstance(value, Tensor) and value.backend is backend:
            return Tensor._make(tracer, tracer.constant(value.primitive), value.kind)
        if isinstance(value, list):
            return [convert(v) for v in value]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(convert(v) for v in value)
        return value

    for module in _modules(model):
        for name, value in module.fields():
            module.__dict__[name] = convert(value)


def _outputs(result) -> list[Tensor]:
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (list, tuple)) and all(isinstance(t, Tensor) for t in result):
        return list(result)
    raise ExportError(
        f"export: forward returned a {type(result).__name__}; export takes a model whose "
        "forward returns a Tensor or a tuple of Tensors (wrap it in a module that does)"
    )


def export(
    model: Module,
    example_inputs: Tensor | Sequence[Tensor],
    path,
    opset: int = 17,
    *,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
) -> Path:
    """Trace `model.forward(*example_inputs)` and write it to `path` as an ONNX model.

    A model on an autodiff backend is exported as `model.valid()` (inference: dropout off,
    batch norm on its running statistics). Shapes are those of the example inputs.

    Args:
        model: the module; its `forward` takes tensors and returns a Tensor or a tuple of them.
        example_inputs: one tensor or a sequence of tensors, on the model's backend.
        path: the `.onnx` file to write.
        opset: the ONNX operator set (16 or later; 17 by default).
        input_names, output_names: graph names (default `input`/`output`, numbered when many).

    Returns:
        The path written.

    Raises:
        ExportError: a layer uses an op ONNX cannot express (the message names the layer), or
            the arguments do not fit.
    """
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise ExportError(f"export: opset {opset} is outside {MIN_OPSET}..{newest}")
    if not isinstance(model, Module):
        raise ExportError(f"export: expected a Module, got {type(model).__name__}")
    inputs = _as_tuple(example_inputs)
    params = model.params()
    backend = params[0].val().backend if params else (inputs[0].backend if inputs else None)
    if backend is None:
        raise ExportError("export: the model has no parameters and no example inputs")
    if backend.tracks_gradients():  # an autodiff backend: export inference
        model = model.valid()
        inputs = tuple(t.inner() if t.backend is backend else t for t in inputs)
        backend = backend.inner()
    graph = GraphBuilder(opset)
    tracer = TracingBackend(backend, graph)

    names = _names(input_names, len(inputs), "input")
    graph_inputs = []
    traced_inputs = []
    for name, t in zip(names, inputs, strict=True):
        if t.backend is not backend:
            raise ExportError(
                f"export: input {name!r} is on {t.backend!r}, the model on {backend!r}"
            )
        graph.reserve(name)
        graph_inputs.append(_value_info(name, t))
        traced_inputs.append(Tensor._make(tracer, Traced(t.primitive, name), t.kind))

    by_id: dict = {}
    for param_path, param in model.named_params():
        by_id.setdefault(param.id, param_path)  # a shared parameter keeps its first path

    made: dict = {}

    def to_tracer(pid, tensor: Tensor) -> Tensor:
        name = made.get(pid)  # a parameter shared by two layers is one initializer
        if name is None:
            name = made[pid] = graph.initializer(
                np.asarray(tensor.to_data().as_array()), by_id[pid]
            )
        return Tensor._make(tracer, Traced(tensor.primitive, name), tensor.kind)

    traced_model = model.map(to_tracer)
    _trace_constants(traced_model, backend, tracer)
    with _EXPORTING, _scopes(traced_model, graph):
        result = traced_model.forward(*traced_inputs)
    outputs = _outputs(result)
    out_names = _names(output_names, len(outputs), "output")
    graph_outputs = []
    for name, t in zip(out_names, outputs, strict=True):
        if t.backend is not tracer:
            raise ExportError(f"export: output {name!r} does not come from the traced inputs")
        out = graph.reserve(name)
        ident = graph.unique(f"/{name}/Identity")
        graph.nodes.append(helper.make_node("Identity", [t.primitive.name], [out], name=ident))
        graph_outputs.append(_value_info(name, Tensor._make(backend, t.primitive.value, t.kind)))

    onnx_graph = helper.make_graph(
        graph.nodes,
        type(model).__name__,
        graph_inputs,
        graph_outputs,
        initializer=graph.initializers,
    )
    onnx_model = helper.make_model(
        onnx_graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="burn",
        ir_version=_ir_version(opset),
    )
    try:
        onnx.checker.check_model(onnx_model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise ExportError(f"export: the traced graph does not pass onnx.checker ({e})") from None
    try:
        raw = onnx_model.SerializeToString()
    except ValueError as e:  # protobuf's 2 GB limit
        raise ExportError(f"export: the model does not fit in one ONNX file ({e})") from None
    path = Path(path)
    atomic_write(path, [raw])
    return path


def _names(given: Sequence[str] | None, count: int, stem: str) -> list[str]:
    if given is not None:
        given = list(given)
        if len(given) != count:
            raise ExportError(f"export: {len(given)} {stem} names for {count} {stem}s")
        return given
    return [stem] if count == 1 else [f"{stem}_{i}" for i in range(count)]


def _value_info(name: str, t: Tensor) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, ONNX_DTYPES[t.dtype], t.dims())
