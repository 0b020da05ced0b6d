"""Whatever a backend overrides is what runs, plain or under each decorator.

For every contract op the backend under test implements itself, a spied copy of the backend is
wrapped in the same decorators as the suite run (`--burn-decorate`), the decorated op of the
same name is called, and the spy must have seen the backend's own implementation run. A
decorator that skipped an override (ran its own composition, or a different op) fails here.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import registry
from burn.backend_tests.spy import Maker, arguments, overridden, spied
from burn.tensor import Tensor, TensorData


def _undecorated(backend):
    while backend.inner() is not backend:
        backend = backend.inner()
    return backend


def _decorate(base, request):
    _, decorators = request.node.callspec.params["backend"]
    for name in decorators:
        base = registry.get(name)(base)
    return base


def test_every_override_is_reached(backend, request):
    base = _undecorated(backend)
    calls: set[str] = set()
    decorated = _decorate(spied(base, calls), request)
    make = Maker(decorated)
    missed = []
    for op in overridden(base):
        args = arguments(op, make)
        calls.clear()
        getattr(decorated, op)(*args)
        if op not in calls:
            missed.append(op)
    assert not missed, f"{decorated!r} never ran the backend's own {missed}"


def test_a_planted_float_add_is_what_runs(backend, request):
    """A backend whose `float_add` subtracts gives `a - b` for `a + b`, under every decorator
    (so the value tests of `test_add.py` fail for it)."""
    base = _undecorated(backend)

    def wrong_add(self, lhs, rhs):
        return self.binary("sub", lhs, rhs)

    cls = type(f"WrongAdd{type(base).__name__}", (type(base),), {"float_add": wrong_add})
    planted = object.__new__(cls)
    planted.__dict__.update(getattr(base, "__dict__", {}))
    decorated = _decorate(planted, request)
    device = decorated.device()
    a = Tensor[decorated, 1].from_data(TensorData(np.array([5.0, 7.0], np.float32)), device)
    b = Tensor[decorated, 1].from_data(TensorData(np.array([1.0, 2.0], np.float32)), device)
    assert (a + b).to_data().to_list() == [4.0, 5.0]


@pytest.mark.parametrize("op", ["float_add", "int_gather", "bool_not", "conv2d", "relu"])
def test_contract_ops_document_themselves(backend, op):
    """`help(backend.<op>)` shows a signature and a docstring, plain or decorated."""
    import inspect

    method = getattr(backend, op)
    assert method.__doc__ and method.__doc__.strip()
    assert list(inspect.signature(method).parameters)


_CREATION = (
    "float_from_data",
    "int_from_data",
    "float_zeros",
    "float_ones",
    "float_full",
    "float_random",
    "int_zeros",
    "int_random",
    "int_arange_step",
    "bool_full",
    "bool_tri_mask",
)


def test_tensor_creation_reaches_the_named_ops(backend, request):
    """`Tensor.zeros`, `full`, `random`, `arange`... call the backend's named creation ops."""
    from burn.tensor import Bool, Distribution, Int

    base = _undecorated(backend)
    seen: set[str] = set()

    def recorder(name):
        def method(self, *args, **kwargs):
            seen.add(name)
            return getattr(type(base), name)(self, *args, **kwargs)

        return method

    cls = type("Recording", (type(base),), {n: recorder(n) for n in _CREATION})
    recording = object.__new__(cls)
    recording.__dict__.update(getattr(base, "__dict__", {}))
    b = _decorate(recording, request)
    device = b.device()
    Tensor[b, 1].from_data([1.0], device)
    Tensor[b, 1, Int].from_data([1], device)
    Tensor[b, 2].zeros([2, 2], device)
    Tensor[b, 2].ones([2, 2], device)
    Tensor[b, 2].full([2, 2], 3.5, device)
    Tensor[b, 2].random([2, 2], Distribution.Default, device)
    Tensor[b, 2, Int].zeros([2, 2], device)
    Tensor[b, 2, Int].random([2, 2], Distribution.Uniform(0, 4), device)
    Tensor[b, 1, Int].arange(0, 4, device)
    Tensor[b, 2, Bool].full([2, 2], True, device)
    Tensor[b, 2].tril_mask([2, 2], 0, device)
    assert seen == set(_CREATION)
