"""The contract's default module ops, run on each backend's own primitives.

Backends override module ops for speed (NdArray overrides all of them), so the module-op
tests mostly exercise those overrides. Here each backend under test is rebuilt with every
method of `ModuleOps` restored to the contract's default (built only from the required core),
and the module-op tests run on it unchanged: on NdArray, the defaults run on numpy arrays.
"""

import inspect

import pytest
from burn.backend.ops.module import ModuleOps
from burn.backend.ops.module_blocks import ModuleBlocks
from burn.backend.ops.recurrent import RecurrentOps
from burn.backend_tests import (
    test_adaptive_avg_pool1d,
    test_adaptive_avg_pool2d,
    test_avg_pool1d,
    test_avg_pool2d,
    test_conv1d,
    test_conv2d,
    test_conv3d,
    test_conv_transpose1d,
    test_conv_transpose2d,
    test_conv_transpose3d,
    test_embedding,
    test_gru,
    test_interpolate,
    test_lstm,
    test_max_pool1d,
    test_max_pool2d,
    test_module_backward,
    test_unfold4d,
)

MODULES = [
    test_adaptive_avg_pool1d,
    test_adaptive_avg_pool2d,
    test_avg_pool1d,
    test_avg_pool2d,
    test_conv1d,
    test_conv2d,
    test_conv3d,
    test_conv_transpose1d,
    test_conv_transpose2d,
    test_conv_transpose3d,
    test_embedding,
    test_gru,
    test_interpolate,
    test_lstm,
    test_max_pool1d,
    test_max_pool2d,
    test_module_backward,
    test_unfold4d,
]


def _with_defaults(backend):
    """`backend` with every `ModuleOps` method (recurrent ones included) restored to the
    contract's default."""
    methods = {
        name: fn
        for group in (ModuleBlocks, RecurrentOps, ModuleOps)
        for name, fn in vars(group).items()
        if inspect.isfunction(fn)
    }
    cls = type(f"{type(backend).__name__}ModuleDefaults", (type(backend),), methods)
    rebuilt = object.__new__(cls)
    rebuilt.__dict__.update(getattr(backend, "__dict__", {}))
    return rebuilt


def _cases():
    """Every module-op test, with its parametrizations, as (id, function, kwargs)."""
    cases = []
    for module in MODULES:
        for name, fn in vars(module).items():
            if not name.startswith("test_") or not inspect.isfunction(fn):
                continue
            grid = [{}]
            for mark in reversed(getattr(fn, "pytestmark", [])):
                if mark.name != "parametrize":
                    continue
                names, rows = mark.args[0], mark.args[1]
                names = (
                    [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
                )
                rows = [row if len(names) > 1 else (row,) for row in rows]
                grid = [{**g, **dict(zip(names, row, strict=True))} for g in grid for row in rows]
            for i, kwargs in enumerate(grid):
                cases.append(pytest.param(fn, kwargs, id=f"{name}-{i}" if len(grid) > 1 else name))
    return cases


@pytest.fixture
def defaults(backend):
    return _with_defaults(backend)


def test_defaults_backend_uses_the_defaults(defaults):
    assert type(defaults).conv2d is ModuleOps.conv2d
    assert type(defaults)._conv is ModuleOps._conv
    assert type(defaults).im2col is ModuleBlocks.im2col
    assert type(defaults).interpolate is ModuleOps.interpolate
    assert type(defaults).lstm_with_gates is RecurrentOps.lstm_with_gates
    assert type(defaults).gru_backward is RecurrentOps.gru_backward


@pytest.mark.parametrize(("case", "kwargs"), _cases())
def test_module_defaults(defaults, rng, case, kwargs):
    params = inspect.signature(case).parameters
    args = {"backend": defaults, "rng": rng, **kwargs}
    case(**{name: args[name] for name in params})
