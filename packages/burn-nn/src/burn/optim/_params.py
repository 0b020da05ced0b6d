"""The one place that walks a model's parameters, so optimizers work on any kind of model.

A model is a `burn.module.Module` (its float `Param`s, rebuilt with `map`) or, for code
without modules, a dict of parameter id -> tensor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from burn.module import Module, ModuleMapper
from burn.tensor import Float, Tensor

# fn(id, tensor, require_grad) -> new tensor
ParamFn = Callable[[object, Tensor, bool], Tensor]


def _kind_error(model) -> TypeError:
    return TypeError(f"expected a Module or a dict of id -> Tensor, got {type(model).__name__}")


def iter_params(model) -> Iterator[tuple[object, Tensor, bool]]:
    """(id, tensor, require_grad) of every float parameter of `model`."""
    if isinstance(model, Module):
        for param in model.params():
            tensor = param.val()
            if tensor.kind is Float:
                yield param.id, tensor, param.require_grad
    elif isinstance(model, dict):
        for pid, tensor in model.items():
            yield pid, tensor, tensor.is_require_grad()
    else:
        raise _kind_error(model)


class _FloatMapper(ModuleMapper):
    def __init__(self, fn: ParamFn, flags: dict):
        self.fn = fn
        self.flags = flags

    def map_float(self, id, tensor: Tensor) -> Tensor:  # noqa: A002 - Burn's name
        return self.fn(id, tensor, self.flags.get(id, True))


def map_params(model, fn: ParamFn):
    """`model` with each float parameter replaced by `fn(id, tensor, require_grad)`."""
    if isinstance(model, Module):
        flags = {param.id: param.require_grad for param in model.params()}
        return model.map(_FloatMapper(fn, flags))
    if isinstance(model, dict):
        return {pid: fn(pid, tensor, tensor.is_require_grad()) for pid, tensor in model.items()}
    raise _kind_error(model)
