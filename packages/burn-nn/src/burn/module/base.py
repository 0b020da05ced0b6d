"""`Module`: a container of parameters and submodules, found from its attributes.

A module's public attributes (names not starting with `_`) are its fields, in the order they
were set. A field holding a `Param` is a parameter, one holding a `Module` a submodule, and
lists, tuples and dicts of them are followed. Everything else (numbers, configs, plain tensors,
activation functions) is a constant: rebuilt by the config, recorded as "none" as Burn does.
A module without any parameter below it (dropout, an activation) is itself a constant.

Modules are values: `load_record`, `map`, `to_device`, `no_grad`, `valid` return new modules and
leave the original untouched.
"""

from __future__ import annotations

import copy
import types
import typing
from pathlib import Path

from burn.module.param import Param, ParamId
from burn.record import DeferredRecord, ParamRecord, RecordError, Some, unwrap_some
from burn.tensor import BackendError, Bool, Int, Tensor, TensorData


class ModuleVisitor:
    """Visits parameters: override `visit_float`, `visit_int` and/or `visit_bool`."""

    def visit_float(self, id: ParamId, tensor: Tensor) -> None:  # noqa: A002
        pass

    def visit_int(self, id: ParamId, tensor: Tensor) -> None:  # noqa: A002
        pass

    def visit_bool(self, id: ParamId, tensor: Tensor) -> None:  # noqa: A002
        pass


class ModuleMapper:
    """Maps parameters to new tensors: override `map_float`, `map_int` and/or `map_bool`."""

    def map_float(self, id: ParamId, tensor: Tensor) -> Tensor:  # noqa: A002
        return tensor

    def map_int(self, id: ParamId, tensor: Tensor) -> Tensor:  # noqa: A002
        return tensor

    def map_bool(self, id: ParamId, tensor: Tensor) -> Tensor:  # noqa: A002
        return tensor


def _dispatch(obj, prefix: str, param: Param):
    """Call `obj.<prefix>_<kind>(id, tensor)`, or `obj(id, tensor)` for a plain callable."""
    tensor = param.val()
    kind = "bool" if tensor.kind is Bool else "int" if tensor.kind is Int else "float"
    method = getattr(obj, f"{prefix}_{kind}", None)
    if method is not None:
        return method(param.id, tensor)
    if callable(obj) and not isinstance(obj, (ModuleVisitor, ModuleMapper)):
        return obj(param.id, tensor)
    return None if prefix == "visit" else tensor


# Field values that hold no parameter, told apart by their class at once: most fields of a
# layer are such settings (a stride, a flag), and an optimizer step walks every field twice.
_PLAIN_FIELDS = frozenset({int, float, bool, str, bytes, type(None)})


def _copies_plainly(cls: type) -> bool:
    """Whether `copy.copy` of a `cls` instance is a new instance with the same `__dict__`: no
    copy hook, reduction, state hook, `__new__` arguments or slots of its own anywhere in its
    classes (what `copy.copy` would otherwise honour)."""
    return (
        getattr(cls, "__copy__", None) is None
        and cls.__reduce_ex__ is object.__reduce_ex__
        and cls.__reduce__ is object.__reduce__
        and cls.__getstate__ is object.__getstate__
        and getattr(cls, "__setstate__", None) is None
        and getattr(cls, "__getnewargs_ex__", None) is None
        and getattr(cls, "__getnewargs__", None) is None
        and not any("__slots__" in vars(base) for base in cls.__mro__)
    )


_PLAIN_COPIES: dict[type, bool] = {}


def _shallow_copy(value):
    """`copy.copy(value)`, done directly for the plain classes modules almost always are.

    `copy.copy` takes the generic route (`__reduce_ex__`, `copyreg`) for every object, and an
    optimizer step maps the whole model: the guide's model's `map` took 31 us with it and 21 us
    this way (about 1% of a traced GPU step's host time). The check per class is made once."""
    cls = value.__class__
    plain = _PLAIN_COPIES.get(cls)
    if plain is None:
        plain = _PLAIN_COPIES[cls] = _copies_plainly(cls)
    if not plain:
        return copy.copy(value)
    new = cls.__new__(cls)
    new.__dict__.update(value.__dict__)
    return new


# The walks below are module-level functions, not closures that call themselves: such a
# closure is a reference cycle (function -> cell -> function) holding what it found, so every
# walk (an optimizer step maps the model once) left the model's old parameters, and the device
# buffers their tensors own, to the garbage collector instead of freeing them at once.
def _collect_params(value, path: str | None, found: list) -> None:
    """Append `(path, param)` for every `Param` in `value` (a module, list, tuple or dict).

    With `path` None no dotted paths are built (they stay None): an optimizer step walks the
    model twice (`params`, then `map`) and needs none."""
    if value.__class__ in _PLAIN_FIELDS:
        return
    if isinstance(value, Param):
        found.append((path, value))
    elif isinstance(value, Module):
        for name, field in value.fields():
            inner = None if path is None else f"{path}.{name}" if path else name
            _collect_params(field, inner, found)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _collect_params(item, None if path is None else f"{path}.{i}", found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_params(item, None if path is None else f"{path}.{key}", found)


def _transformed(value, fn):
    """`value` with every `Param` in it replaced by `fn(param)` (modules copied)."""
    if value.__class__ in _PLAIN_FIELDS:
        return value
    if isinstance(value, Param):
        return fn(value)
    if isinstance(value, Module):
        return value._transform(fn)
    if isinstance(value, list):
        return [_transformed(v, fn) for v in value]
    if isinstance(value, tuple):
        items = [_transformed(v, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        return {k: _transformed(v, fn) for k, v in value.items()}
    return value


def _optional_fields(cls) -> frozenset[str]:
    """Fields annotated as optional (`X | None`): bincode tags their values."""
    cached = cls.__dict__.get("_burn_optional_fields")
    if cached is not None:
        return cached
    found = set()
    for klass in reversed(cls.__mro__):
        for name, annotation in klass.__dict__.get("__annotations__", {}).items():
            if isinstance(annotation, str):
                text = annotation.replace(" ", "")
                if (
                    text.endswith("|None")
                    or text.startswith(("None|", "Optional["))
                    or "|None|" in text
                ):
                    found.add(name)
                continue
            origin = typing.get_origin(annotation)
            if origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(
                annotation
            ):
                found.add(name)
    result = frozenset(found)
    try:
        cls._burn_optional_fields = result
    except (AttributeError, TypeError):
        pass
    return result


class Module:
    """Base class of modules: subclass it and set `Param`s and submodules as attributes.

    ```python
    from burn.module import Module, Param
    from burn.tensor import Tensor

    class Linear(Module):
        def __init__(self, weight: Tensor, bias: Tensor | None):
            self.weight = Param(weight)
            self.bias = Param(bias) if bias is not None else None
    ```
    """

    # ------------------------------------------------------------------ discovery
    def fields(self) -> list[tuple[str, object]]:
        """The module's fields (public attributes) in the order they were set."""
        return [(k, v) for k, v in vars(self).items() if not k.startswith("_")]

    def named_params(self) -> list[tuple[str, Param]]:
        """Every parameter with its dotted path (`encoder.layers.0.weight`)."""
        found: list[tuple[str, Param]] = []
        _collect_params(self, "", found)
        return found

    def params(self) -> list[Param]:
        found: list[tuple[None, Param]] = []
        _collect_params(self, None, found)
        return [p for _, p in found]

    def is_constant(self) -> bool:
        """True when no parameter lies below: then the module records as "none", as in Burn."""
        return not self.named_params()

    def num_params(self) -> int:
        """The number of scalar values in all parameters."""
        return sum(p.num_params() for p in self.params())

    def devices(self) -> list:
        """The devices of the parameters, each once, in order of appearance."""
        found = []
        for p in self.params():
            device = p.device()
            if device not in found:
                found.append(device)
        return found

    # ------------------------------------------------------------------ visit / map
    def visit(self, visitor) -> None:
        """Call `visitor.visit_float/int/bool(id, tensor)` (or `visitor(id, tensor)`) per param."""
        for p in self.params():
            _dispatch(visitor, "visit", p)

    def map(self, mapper) -> Module:
        """A new module whose params hold `mapper.map_float/int/bool(id, tensor)` (same ids)."""
        return self._transform(lambda p: p.with_value(_dispatch(mapper, "map", p)))

    def _transform(self, fn) -> Module:
        """A shallow copy with every `Param` replaced by `fn(param)`."""
        new = _shallow_copy(self)
        state = new.__dict__
        for name, field in self.fields():
            state[name] = _transformed(field, fn)
        return new

    # ------------------------------------------------------------------ devices and grads
    def to_device(self, device) -> Module:
        """The module with every parameter on `device` (ids and require-grad kept)."""
        return self._transform(lambda p: p.with_value(p.val().to_device(device)))

    def fork(self, device) -> Module:
        """The module on `device` as fresh leaves, detached from any graph (for another thread)."""
        return self._transform(lambda p: p.with_value(p.val().detach().to_device(device)))

    def no_grad(self) -> Module:
        """The module with every parameter excluded from gradients (a frozen module)."""
        return self._transform(lambda p: p.set_require_grad(False))

    def valid(self) -> Module:
        """The same module on the inner backend of its autodiff backend: no graph, eval mode."""
        params = self.params()
        if not params:
            return self
        backend = params[0].val().backend
        if not backend.tracks_gradients():
            raise BackendError(
                f"valid(): the module is on {backend!r}, which tracks no gradients; valid() "
                "takes a module of an Autodiff backend to its inner backend"
            )
        return self._transform(lambda p: Param(p.val().inner(), p.id, p.require_grad))

    # ------------------------------------------------------------------ records
    def into_record(self) -> dict | None:
        """The module's record: plain data that a recorder of `burn.record` stores."""
        return self._record(with_data=True)

    def record_schema(self) -> dict | None:
        """The record's structure without values (what bincode decoding follows)."""
        return self._record(with_data=False)

    def _record(self, with_data: bool):
        if self.is_constant():
            return None
        optional = _optional_fields(type(self))
        out = {}
        for name, value in self.fields():
            node = _record_of(value, with_data)
            out[name] = Some(node) if name in optional and value is not None else node
        return out

    def load_record(self, record, *, device=None, strict: bool = True) -> Module:
        """A new module holding the values of `record` (converted to each param's dtype).

        The record must have this module's structure and shapes; otherwise a `RecordError`
        names the path, e.g. `encoder.layers.3.weight: expected [512, 2048], got [2048, 512]`.
        With `strict=True` (the default) every entry of the record that the module does not
        consume is an error, listed by path: a field the module lacks, or values where the
        module holds none (a `Linear` without bias given a record with one). With
        `strict=False` those entries are ignored. A `DeferredRecord` (weights of another
        framework, e.g. from `burn.pytorch`) is first resolved against this module, and goes to
        its own device unless `device` is given.
        """
        if isinstance(record, DeferredRecord):
            device = device if device is not None else record.device
            record = record.resolve(self)
        unused: list[str] = []
        loaded = _load(self, record, "", device, unused)
        if strict and unused:
            shown = ", ".join(unused[:20]) + (
                f" and {len(unused) - 20} more" if len(unused) > 20 else ""
            )
            raise RecordError(
                f"the record has {len(unused)} entr{'y' if len(unused) == 1 else 'ies'} the "
                f"module does not use: {shown} (load with strict=False to ignore them)"
            )
        return loaded

    def save_file(self, path, recorder) -> Path:
        """Save the record with `recorder`; the recorder adds its extension. Returns the path."""
        return recorder.record(self.into_record(), path)

    def load_file(self, path, recorder, device=None, *, strict: bool = True) -> Module:
        """A new module with the values saved at `path` by `recorder`, on `device` if given."""
        record = recorder.load(path, self.record_schema())
        try:
            return self.load_record(record, device=device, strict=strict)
        except RecordError as e:
            raise RecordError(f"{recorder.file_path(path)}: {e}") from None

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} {{"]
        for name, value in self.fields():
            text = repr(value) if not isinstance(value, Tensor) else f"Tensor{value.dims()}"
            text = text.replace("\n", "\n  ")
            lines.append(f"  {name}: {text}")
        lines.append(f"  params: {self.num_params()}")
        lines.append("}")
        return "\n".join(lines)


def _record_of(value, with_data: bool):
    if isinstance(value, Param):
        return ParamRecord(value.id.serialize(), value.val().to_data() if with_data else None)
    if isinstance(value, Module):
        return value._record(with_data)
    if isinstance(value, list):
        return [_record_of(v, with_data) for v in value]
    if isinstance(value, tuple):
        return tuple(_record_of(v, with_data) for v in value)
    if isinstance(value, dict):
        return {str(k): _record_of(v, with_data) for k, v in value.items()}
    return None  # absent optional or constant


def _describe(node) -> str:
    if isinstance(node, ParamRecord):
        return "a parameter"
    if isinstance(node, dict):
        return "a module record"
    if isinstance(node, (list, tuple)):
        return f"a sequence of {len(node)}"
    if node is None:
        return "nothing"
    return type(node).__name__


def _load_param(param: Param, node, path: str, device) -> Param:
    if not isinstance(node, ParamRecord) or node.data is None:
        raise RecordError(f"{path}: expected a parameter, the record has {_describe(node)}")
    data: TensorData = node.data
    expected = param.dims()
    if data.shape != expected:
        raise RecordError(f"{path}: expected {expected}, got {data.shape}")
    tensor = param.val()
    target = device if device is not None else tensor.device()
    loaded = Tensor[tensor.backend, len(expected), tensor.kind].from_data(
        data, target, tensor.dtype
    )
    try:
        pid = ParamId.deserialize(node.id)
    except ValueError as e:
        raise RecordError(f"{path}: {e}") from None
    return Param(loaded, pid, param.require_grad)


def _holds_values(node) -> bool:
    """Whether a record node carries any parameter or tensor values."""
    node = unwrap_some(node)
    if isinstance(node, (ParamRecord, TensorData)):
        return True
    if isinstance(node, dict):
        return any(_holds_values(v) for v in node.values())
    if isinstance(node, (list, tuple)):
        return any(_holds_values(v) for v in node)
    return False


def _load(value, node, path: str, device, unused: list[str]):
    node = unwrap_some(node)
    where = path or "record"
    if not _has_params(value):
        if _holds_values(node):
            unused.append(where)
        return value
    if isinstance(value, Param):
        return _load_param(value, node, where, device)
    if isinstance(value, Module):
        if not isinstance(node, dict):
            raise RecordError(
                f"{where}: expected a {type(value).__name__} record, got {_describe(node)}"
            )
        fields = value.fields()
        names = {name for name, _ in fields}
        missing = [name for name, _ in fields if name not in node]
        if missing:
            raise RecordError(
                f"{where}: the record has no {', '.join(repr(m) for m in missing)} "
                f"(it has {sorted(map(str, node))})"
            )
        unused.extend(f"{path}.{k}" if path else str(k) for k in node if k not in names)
        new = _shallow_copy(value)
        for name, field in fields:
            new.__dict__[name] = _load(
                field, node[name], f"{path}.{name}" if path else name, device, unused
            )
        return new
    if isinstance(value, (list, tuple)):
        if not isinstance(node, (list, tuple)):
            raise RecordError(
                f"{where}: expected a sequence of {len(value)}, got {_describe(node)}"
            )
        if len(node) != len(value):
            raise RecordError(f"{where}: expected {len(value)} items, the record has {len(node)}")
        items = [
            _load(v, n, f"{path}.{i}", device, unused)
            for i, (v, n) in enumerate(zip(value, node, strict=True))
        ]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        if not isinstance(node, dict):
            raise RecordError(f"{where}: expected a map of {len(value)}, got {_describe(node)}")
        missing = [k for k in value if str(k) not in node]
        if missing:
            raise RecordError(f"{where}: the record has no {missing}")
        unused.extend(f"{path}.{k}" for k in node if k not in {str(j) for j in value})
        return {k: _load(v, node[str(k)], f"{path}.{k}", device, unused) for k, v in value.items()}
    return value


def _has_params(value) -> bool:
    if isinstance(value, Param):
        return True
    if isinstance(value, Module):
        return not value.is_constant()
    if isinstance(value, (list, tuple)):
        return any(_has_params(v) for v in value)
    if isinstance(value, dict):
        return any(_has_params(v) for v in value.values())
    return False
