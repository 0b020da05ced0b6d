"""The spy behind `test_contract_spy.py`: which ops a backend overrides, and sample calls.

`overridden(backend)` lists the contract ops whose implementation differs from the contract's
default (the required core always counts). `spied(backend, calls)` is a copy of the backend
whose overridden methods record their name in `calls` before running. `arguments(...)` builds
a valid call for any op from its parameter names (the contract's vocabulary, see
`burn.backend.ops.shared`), with a few module and activation ops spelled out.

Module ops are called with unit kernels (size 1, stride 1, no padding), so every spatial
tensor of a call has the same shape and one builder serves every conv, pool and backward op.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from burn.backend import Backend
from burn.backend.ops import (
    BOOL_OPS,
    FLOAT_OPS,
    INT_OPS,
    ActivationOps,
    ModuleOps,
    PrimitiveOps,
)
from burn.backend.ops.module import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    UnfoldOptions,
)
from burn.tensor import Distribution, DType, TensorData

# Helpers of the core that are not ops: nothing to forward.
NOT_OPS = frozenset({"rng", "seed", "same_device", "index_dtype", "numel"})


def _public(group: type) -> set[str]:
    return {n for n in dir(group) if not n.startswith("_") and callable(getattr(group, n))}


CONTRACT_OPS = frozenset(
    (FLOAT_OPS | INT_OPS | BOOL_OPS | _public(ModuleOps) | _public(ActivationOps))
    | (_public(PrimitiveOps) - NOT_OPS)
)


def overridden(backend: Backend) -> list[str]:
    """The contract ops `backend` implements itself, sorted."""
    cls = type(backend)
    return sorted(n for n in CONTRACT_OPS if getattr(cls, n) is not getattr(Backend, n))


def spied(backend: Backend, calls: set[str]) -> Backend:
    """A copy of `backend` whose overridden ops add their name to `calls` when run."""
    methods: dict[str, Callable[..., Any]] = {}
    for name in overridden(backend):
        original = getattr(type(backend), name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            calls.add(_name)
            return _original(self, *args, **kwargs)

        methods[name] = spy
    cls = type(f"Spied{type(backend).__name__}", (type(backend),), methods)
    copy = object.__new__(cls)
    copy.__dict__.update(getattr(backend, "__dict__", {}))
    return copy


# ====================================================================== sample arguments
class Maker:
    """Builds primitives of the backend under test (decorated), from numpy values."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.device = backend.device()
        caps = backend.capabilities
        self.dtypes = {"float": caps.float_dtype, "int": caps.int_dtype, "bool": DType.BOOL}

    def prim(self, kind: str, values: Any, track: bool = False) -> Any:
        dtype = self.dtypes[kind]
        array = np.asarray(values).astype(dtype.numpy)
        p = getattr(self.backend, f"{kind}_from_data")(TensorData(array), self.device)
        if track and kind == "float":
            p = self.backend.float_set_require_grad(p, True)
        return p


def _unit_cols(make: Maker) -> Any:
    return make.prim("float", np.ones((1, 2, 1, 4, 4)), track=True)


_UNIT = ((1, 1), (1, 1), (1, 1), (0, 0))  # kernel, stride, dilation, padding
_TAPS = (np.arange(4)[None, :], np.ones((1, 4)))  # one tap per output: the identity
_BLOCKS: dict[str, Callable[[Maker], list[Any]]] = {
    "im2col": lambda make: [make.prim("float", np.ones((1, 2, 4, 4)), track=True), *_UNIT, (4, 4)],
    "col2im": lambda make: [_unit_cols(make), *_UNIT, (4, 4)],
    "resample": lambda make: [make.prim("float", np.ones((1, 2, 4)), track=True), 2, *_TAPS],
    "resample_backward": lambda make: [
        make.prim("float", np.ones((1, 2, 4)), track=True),
        2,
        4,
        *_TAPS,
    ],
}


def _attention_values(make: Maker) -> dict[str, Any]:
    """Arguments of layer norm and attention, by parameter name: `[1, 2, 3, 4]` tensors."""
    x = np.linspace(-1.0, 1.0, 24).reshape(1, 2, 3, 4)
    weights = np.full((1, 2, 3, 3), 1.0 / 3.0)
    return {
        "x": make.prim("float", x, track=True),
        "gamma": make.prim("float", [1.0, 0.5, 2.0, 1.5], track=True),
        "beta": make.prim("float", [0.0, 0.1, 0.2, 0.3], track=True),
        "epsilon": 1e-5,
        "output_grad": make.prim("float", np.ones((1, 2, 3, 4))),
        "query": make.prim("float", x, track=True),
        "key": make.prim("float", x[..., ::-1].copy(), track=True),
        "value": make.prim("float", x * 2.0, track=True),
        "mask": make.prim("bool", np.eye(3, dtype=bool)[None, None]),
        "mask_value": -1.0e4,
        "dropout_mask": make.prim("float", np.ones((1, 2, 3, 3))),
        "scale": 0.5,
        "weights": make.prim("float", weights),
        "weights_grad": make.prim("float", np.ones((1, 2, 3, 3))),
        "context_grad": make.prim("float", np.ones((1, 2, 3, 4))),
    }


_ATTENTION_OPS = frozenset({"layer_norm", "layer_norm_backward", "attention", "attention_backward"})

_SPATIAL = re.compile(r"(\d)d")


def _rank_of(op: str) -> int:
    """Spatial dims of a module op (`conv2d` -> 2); interpolate and unfold4d are 2-d."""
    found = _SPATIAL.search(op.replace("unfold4d", "2d"))
    return int(found.group(1)) if found else 2


def _recurrent_arguments(op: str, params: list[str], make: Maker) -> list[Any]:
    """Arguments of an LSTM or GRU op: batch 2, 3 steps, input 2, hidden 2."""
    rng = np.random.default_rng(0)
    width = 8 if op.startswith("lstm") else 6  # the gates side by side

    def normal(*shape: int, track: bool = False) -> Any:
        return make.prim("float", rng.normal(size=shape) * 0.5, track=track)

    values = {
        "x": normal(2, 3, 2, track=True),
        "w_ih": normal(2, width, track=True),
        "w_hh": normal(2, width, track=True),
        "bias": normal(width, track=True),
        "b_ih": normal(width, track=True),
        "b_hh": normal(width, track=True),
        "h0": normal(2, 2, track=True),
        "c0": normal(2, 2, track=True),
        "states": normal(2, 2, 3, 2) if op.startswith("lstm") else normal(2, 3, 2),
        "gates": make.prim("float", rng.uniform(0.1, 0.9, size=(2, 3, 8))),
        "grad": normal(2, 2, 3, 2) if op.startswith("lstm") else normal(2, 3, 2),
        "grad_gates": normal(2, 3, 8),
        "grad_input_gates": normal(2, 3, 6),
        "grad_hidden_gates": normal(2, 3, 6),
        "needed": (True,) * (4 if op.startswith("lstm") else 5),
    }
    return [values[p] for p in params]


def _module_arguments(op: str, params: list[str], make: Maker) -> list[Any] | None:
    """Arguments of a module op with unit kernels; None when `op` is not a module op."""
    if op not in _public(ModuleOps):
        return None
    if op in _BLOCKS:
        return _BLOCKS[op](make)
    if op in _ATTENTION_OPS:
        values = _attention_values(make)
        return [values[p] for p in params]
    if op in ("batch_norm", "batch_norm_backward"):
        values = _attention_values(make)  # x and output_grad [1, 2, 3, 4]: 2 channels
        values["gamma"] = make.prim("float", [1.0, 2.0], track=True)
        values["beta"] = make.prim("float", [0.0, 0.1], track=True)
        return [values[p] for p in params]
    if op.startswith(("lstm", "gru")):
        return _recurrent_arguments(op, params, make)
    if op.startswith("cross_entropy"):
        values = {
            "logits": make.prim("float", [[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], track=True),
            "targets": make.prim("int", [2, 0]),
            "grad": make.prim("float", [1.0]),
        }
        return [values[p] for p in params]
    if op.startswith("linear"):
        values = {
            "x": make.prim("float", np.linspace(-1.0, 1.0, 12).reshape(2, 2, 3), track=True),
            "weight": make.prim("float", np.arange(6.0).reshape(3, 2) / 6.0, track=True),
            "bias": make.prim("float", [0.25, -0.25], track=True),
            "output_grad": make.prim("float", np.ones((2, 2, 2))),
        }
        return [values[p] for p in params]
    if op.startswith("embedding"):
        values = {
            "weights": make.prim("float", np.arange(8.0).reshape(4, 2), track=True),
            "indices": make.prim("int", [1, 3]),
            "output_grad": make.prim("float", np.ones((2, 2))),
        }
        return [values[p] for p in params]
    n = _rank_of(op)
    spatial = (1, 2) + (4,) * n
    ones = (1,) * n
    x = np.linspace(-1.0, 1.0, int(np.prod(spatial))).reshape(spatial)
    transposed = op.startswith("conv_transpose")
    options = (
        ConvTransposeOptions(ones, (0,) * n, (0,) * n, ones, 1)
        if transposed
        else UnfoldOptions(ones, (0,) * n, ones)
        if op.startswith("unfold")
        else InterpolateOptions()
        if op.startswith("interpolate")
        else ConvOptions(ones, (0,) * n, ones, 1)
    )
    # A plain max pool of a tracked input runs the indexed op (its backward needs the indices);
    # Autodiff reaches the backend's own plain max pool when no gradient is needed.
    plain_max_pool = op in ("max_pool1d", "max_pool2d")
    values = {
        "x": make.prim("float", x, track=not plain_max_pool),
        "weight": make.prim("float", np.full((2, 2, *ones), 0.5), track=True),
        "bias": make.prim("float", [0.25, -0.25], track=True),
        "output_grad": make.prim("float", np.ones(spatial)),
        "grad": make.prim("float", np.ones(spatial)),
        "indices": make.prim("int", np.zeros(spatial, dtype=np.int64)),
        "options": options,
        "kernel_size": ones if n > 1 else 1,
        "stride": ones if n > 1 else 1,
        "padding": (0,) * n if n > 1 else 0,
        "dilation": ones if n > 1 else 1,
        "count_include_pad": True,
        "output_size": (4,) * n if n > 1 else 4,
        "prob": 0.5,
    }
    return [values[p] for p in params]


def _core_arguments(op: str, make: Maker) -> list[Any] | None:
    """Arguments of a required-core op; None when `op` is not one."""
    f = make.prim("float", [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], track=True)
    i = make.prim("int", [[0, 1, 0], [1, 0, 1]])
    m = make.prim("bool", [[True, False, True], [False, True, False]])
    device, dtype = make.device, make.dtypes["float"]
    table: dict[str, Callable[[], list[Any]]] = {
        "from_data": lambda: [TensorData(np.ones(3, dtype=np.float32)), device],
        "into_data": lambda: [f],
        "into_data_many": lambda: [[f, make.prim("float", [[2.0]])]],
        "shape": lambda: [f],
        "dtype": lambda: [f],
        "device_of": lambda: [f],
        "to_device": lambda: [f, device],
        "cast": lambda: [f, make.dtypes["int"]],
        "reshape": lambda: [f, (3, 2)],
        "permute": lambda: [f, (1, 0)],
        "expand": lambda: [make.prim("float", [[1.0, 2.0, 3.0]]), (2, 3)],
        "slice": lambda: [f, ((0, 1, 1), (0, 2, 1))],
        "slice_assign": lambda: [f, ((0, 1, 1), (0, 2, 1)), make.prim("float", [[9.0, 9.0]])],
        "gather": lambda: [f, 1, i],
        "scatter_add": lambda: [f, 1, i, f],
        "mask_where": lambda: [f, m, f],
        "unary": lambda: ["exp", f],
        "binary": lambda: ["add", f, f],
        "binary_scalar": lambda: ["mul", f, 2.0],
        "reduce": lambda: ["sum", f, 1],
        "full": lambda: [(2, 3), 1.5, dtype, device],
        "arange": lambda: [0, 4, 1, make.dtypes["int"], device],
        "random": lambda: [(2, 3), Distribution.Default, dtype, device],
        "scalar_like": lambda: [f, 2.0],
    }
    build = table.get(op)
    return None if build is None else build()


def _optimizer_arguments(op: str, make: Maker) -> list[Any] | None:
    """Arguments of an optimizer update (`float_adam_step`, or `float_adam_step_many` of two
    parameters): a second step of a `[2, 3]` parameter with both moments; None when `op` is
    not one."""
    if op not in ("float_adam_step", "float_adam_step_many"):
        return None
    param = make.prim("float", [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    grad = make.prim("float", [[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]])
    moment_1 = make.prim("float", np.full((2, 3), 0.01))
    moment_2 = make.prim("float", np.full((2, 3), 0.001))
    inputs: list[Any] = [param, grad, moment_1, moment_2]
    if op == "float_adam_step_many":
        inputs = [[value, value] for value in inputs]
    return [*inputs, 2, 0.1, 0.9, 0.999, 1e-5, 0.01, True]


_ACTIVATION = {
    "prelu": lambda make, f: [f, make.prim("float", [[0.1, 0.2, 0.3]], track=True)],
    "leaky_relu": lambda make, f: [f, 0.1],
    "hard_sigmoid": lambda make, f: [f, 0.2, 0.5],
}


def arguments(op: str, make: Maker) -> list[Any]:
    """A valid positional argument list for `op` on the backend of `make`."""
    core = _core_arguments(op, make)
    if core is not None:
        return core
    optimizer = _optimizer_arguments(op, make)
    if optimizer is not None:
        return optimizer
    params = [p for p in inspect.signature(getattr(Backend, op)).parameters if p != "self"]
    module = _module_arguments(op, params, make)
    if module is not None:
        return module
    kind = op.split("_", 1)[0] if op.split("_", 1)[0] in ("float", "int", "bool") else "float"
    base = {
        "float": [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]],
        "int": [[1, 2, 3], [4, 5, 6]],
        "bool": [[True, False, True], [False, True, False]],
    }[kind]
    t = make.prim(kind, base, track=True)
    if op in _ACTIVATION:
        return _ACTIVATION[op](make, t)
    scalar_rhs = op.endswith(("_scalar", "_elem"))
    select = op.endswith(("_select", "_select_assign"))
    indices = make.prim("int", [0, 1]) if select else make.prim("int", [[0, 1, 0], [1, 0, 1]])
    value_of = {
        "slice_assign": lambda: make.prim(kind, np.asarray(base)[:1, :2]),
        "select_assign": lambda: make.prim(kind, np.asarray(base)[:, :2], track=True),
        "mask_fill": lambda: 1 if kind != "bool" else True,
    }
    suffix = op.split("_", 1)[1] if "_" in op else op
    shape_arg = (3, 2) if suffix == "reshape" else (2, 3)
    values = {
        "tensor": t,
        "x": t,
        "output": t,
        "grad": make.prim("float", np.ones((2, 3))),
        "lhs": t,
        "rhs": (2 if kind != "bool" else True)
        if scalar_rhs
        else make.prim("int", [[1, 0, 2], [2, 1, 0]])
        if op in ("float_powi", "int_powi")
        else make.prim(kind, np.asarray(base).T, track=True)
        if suffix == "matmul"
        else make.prim(kind, base, track=True),
        "value": value_of.get(suffix, lambda: make.prim(kind, base, track=True))(),
        "indices": indices,
        "mask": make.prim("bool", [[True, False, True], [False, True, False]]),
        "tensors": [t, t],
        "dim": 1,
        "dim1": 0,
        "dim2": 1,
        "axes": (1, 0) if suffix == "permute" else (1,),
        "shape": shape_arg,
        "ranges": ((0, 1, 1), (0, 2, 1)),
        "times": 2,
        "descending": False,
        "min": 0,
        "max": 2,
        "fill_value": 1,
        "device": make.device,
        "dtype": make.dtypes[kind] if kind != "bool" or "into" not in op else None,
        "distribution": Distribution.Default,
        "data": TensorData(np.asarray(base).astype(make.dtypes[kind].numpy)),
        "start": 0,
        "end": 4,
        "step": 1,
        "offset": 0,
        "upper": True,
        "negative_slope": 0.1,
    }
    if op.endswith("into_int") or op.endswith("into_float"):
        values["dtype"] = None
    if suffix == "cast":
        values["dtype"] = make.dtypes[kind]
    return [values[p] for p in params]
