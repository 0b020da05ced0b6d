"""The one place that walks a model's parameters, so optimizers work on any kind of model.

A model is a `burn.module.Module` (its float `Param`s, rebuilt with `map`) or, for code
without modules, a dict of parameter id -> tensor.
"""

from __future__ import annotations

from collections.abc import Iterator

from burn.module import Module, ModuleMapper
from burn.tensor import Float, Tensor


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


class _Replacer(ModuleMapper):
    def __init__(self, new: dict):
        self.new = new

    def map_float(self, id, tensor: Tensor) -> Tensor:  # noqa: A002 - Burn's name
        return self.new.get(id, tensor)


def replace_params(model, new: dict):
    """`model` with each float parameter whose id is in `new` replaced by `new[id]`."""
    if isinstance(model, Module):
        return model.map(_Replacer(new))
    if isinstance(model, dict):
        return {pid: new.get(pid, tensor) for pid, tensor in model.items()}
    raise _kind_error(model)
