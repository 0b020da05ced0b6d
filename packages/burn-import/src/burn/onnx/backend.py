"""`burn.onnx.backend`: an `onnx.backend.base.Backend` that runs models through generated code.

```python notest
import burn.onnx.backend as backend
rep = backend.prepare(model, device="CPU")   # NdArray; "GPU" runs on Wgpu
outputs = rep.run([x])
```

`prepare` translates the model (as `ModelGen` does), executes the generated source in a fresh
module namespace, builds `Model` on the chosen backend with the imported weights, and returns a
`BackendRep` whose `run` takes and returns numpy arrays. Translations are cached per model
content within the process.
"""

from __future__ import annotations

import hashlib
import types

import numpy as np
import onnx
from burn.onnx.codegen import burn_dtype
from burn.onnx.graph import DEFAULT_OPSET, held_array, load_graph, stored_dtype
from burn.onnx.passes import run_passes
from burn.onnx.render import Generated, apply_weights, generate
from burn.onnx.runtime.strings import strings
from onnx.backend.base import Backend, BackendRep

_CACHE: dict[str, tuple[Generated, list, list]] = {}
_CACHE_LIMIT = 64


def _burn_backend(device: str):
    if device.upper() in ("GPU", "WGPU"):
        from burn.backend import Wgpu

        return Wgpu
    from burn.backend import NdArray

    return NdArray


def _translate(model: onnx.ModelProto):
    raw = model.SerializeToString()
    key = hashlib.blake2b(raw, digest_size=16).hexdigest()
    hit = _CACHE.get(key)
    if hit is None:
        graph = run_passes(load_graph(model, DEFAULT_OPSET))
        generated = generate(graph)
        inputs = [(i.name, i.rank) for i in graph.inputs]
        outputs = [(o.name, o.rank, stored_dtype(o.elem_type)) for o in graph.outputs]
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        hit = _CACHE[key] = (generated, inputs, outputs)
    return hit


class BurnRep(BackendRep):
    """A prepared model: the generated `Model` on a burn backend, called with numpy arrays."""

    def __init__(self, model, backend, inputs, outputs, source: str):
        self.model = model
        self.backend = backend
        self.inputs = inputs
        self.outputs = outputs
        self.source = source

    def run(self, inputs, **kwargs) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            values = [inputs[name] for name, _ in self.inputs]
        elif isinstance(inputs, (list, tuple)):
            values = list(inputs)
        else:
            values = [inputs]
        device = self.backend.device()
        tensors = [self._tensor(value, device) for value in values[: len(self.inputs)]]
        result = self.model(*tensors)
        if not isinstance(result, tuple):
            result = (result,)
        return tuple(
            self._array(t, rank, dtype)
            for t, (_, rank, dtype) in zip(result, self.outputs, strict=True)
        )

    @staticmethod
    def _tensor(value, device):
        from burn.tensor import Tensor

        if value is None:  # an empty ONNX optional
            return None
        if isinstance(value, list):  # an ONNX sequence
            return [BurnRep._tensor(v, device) for v in value]
        if isinstance(value, onnx.TensorProto):
            value = onnx.numpy_helper.to_array(value)
        array = held_array(np.asarray(value))
        if array.dtype.kind in "OSU":  # strings stay on the host (`burn.onnx.runtime.strings`)
            return strings(array)
        dtype = burn_dtype(array.dtype)
        if dtype is None:
            raise TypeError(f"burn.onnx.backend: inputs of dtype {array.dtype} are not supported")
        if array.ndim == 0:
            array = array.reshape(1)
        return Tensor.from_data(array, device=device, dtype=dtype)

    @staticmethod
    def _array(tensor, rank, dtype):
        if tensor is None:
            return None
        if isinstance(tensor, list):
            return [BurnRep._array(t, None, None) for t in tensor]
        if isinstance(tensor, np.ndarray):  # a string value, already on the host
            return tensor
        array = np.asarray(tensor.to_data().array)
        if rank == 0 and array.size == 1:
            array = array.reshape(())
        if dtype is not None and array.dtype != dtype:
            array = array.astype(dtype)
        return array


class BurnBackend(Backend):
    """ONNX models run by code that burn.onnx generates (NdArray on "CPU", Wgpu on "GPU")."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> BurnRep:
        super().prepare(model, device, **kwargs)
        generated, inputs, outputs = _translate(model)
        namespace = types.ModuleType("burn_onnx_prepared")
        namespace.__file__ = "burn_onnx_prepared.py"
        exec(compile(generated.source, "<burn.onnx generated model>", "exec"), namespace.__dict__)
        backend = _burn_backend(device)
        module = apply_weights(namespace.Model.new(backend.device()), generated.weights)
        return BurnRep(module, backend, inputs, outputs, generated.source)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs, device: str = "CPU", **kwargs
    ) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        raise NotImplementedError("burn.onnx.backend runs whole models (run_model)")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        kind = str(device).upper()
        if kind == "CPU":
            return True
        if kind in ("GPU", "WGPU"):
            try:
                from burn.backend import Wgpu

                Wgpu.device()
            except Exception:
                return False
            return True
        return False


prepare = BurnBackend.prepare
run_model = BurnBackend.run_model
run_node = BurnBackend.run_node
supports_device = BurnBackend.supports_device

__all__ = ["BurnBackend", "BurnRep", "prepare", "run_model", "run_node", "supports_device"]
