"""`@config`: serialisable, comparable configuration classes, as Burn's `#[derive(Config)]`.

```python
from burn.config import config

@config
class MlpConfig:
    d_in: int
    d_out: int
    dropout: float = 0.1

cfg = MlpConfig(4, 2).with_dropout(0.2)
assert MlpConfig.from_json(cfg.to_json()) == cfg
```

Fields without a default are the constructor's arguments (positional in declaration order, or by
keyword); defaulted fields are keywords. Values are checked against the annotations when a config
is built and when it is loaded, so a typo in a JSON file is an error that names the field and the
file instead of a surprise later.
"""

from __future__ import annotations

import copy
import enum
import json
import os
import types
import typing
from pathlib import Path
from typing import Any

from burn.record import RecordError, atomic_write
from burn.tensor import BurnError

__all__ = ["Config", "ConfigError", "config", "is_config"]

_MISSING = object()


class ConfigError(BurnError, ValueError):
    """A config that cannot be built, saved or loaded: names the field (and the file)."""


class Config:
    """Marker base of `@config` classes (the decorator adds it); useful for `isinstance`."""

    __config_fields__ = {}  # name -> default, set by @config


def is_config(value) -> bool:
    return isinstance(value, Config) or (isinstance(value, type) and issubclass(value, Config))


# ================================================================================ checking
def _type_name(tp) -> str:
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _convert(tp, value, where: str):
    """`value` checked against (and, from JSON, converted to) the annotation `tp`."""
    if tp is Any or tp is typing.Any or isinstance(tp, (str, typing.ForwardRef)):
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(f"{where}: expected {_type_name(tp)}, got {_describe(value)}")
    if origin is typing.Literal:
        if value in args:
            return value
        raise ConfigError(f"{where}: expected one of {list(args)}, got {_describe(value)}")
    if origin in (list, typing.List) or tp is list:  # noqa: UP006
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {_describe(value)}")
        item = args[0] if args else Any
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple or tp is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a tuple, got {_describe(value)}")
        if not args:
            return tuple(value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(args) != len(value):
            raise ConfigError(f"{where}: expected {len(args)} values, got {len(value)}")
        return tuple(
            _convert(a, v, f"{where}[{i}]")
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a dict, got {_describe(value)}")
        kt, vt = args if args else (Any, Any)
        return {
            _convert(kt, k, f"{where} key"): _convert(vt, v, f"{where}[{k!r}]")
            for k, v in value.items()
        }
    if isinstance(tp, type) and issubclass(tp, Config):
        if isinstance(value, tp):
            return value
        if isinstance(value, dict) or (isinstance(value, str) and getattr(tp, "_unit", False)):
            return tp._from_dict(value, where)  # a str names a unit variant ("Valid")
        raise ConfigError(
            f"{where}: expected {tp.__name__} (or its fields as a dict), got {_describe(value)}"
        )
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        if isinstance(value, tp):
            return value
        for member in tp:
            if value == member.value or value == member.name:
                return member
        names = [m.name for m in tp]
        raise ConfigError(f"{where}: expected one of {tp.__name__} {names}, got {_describe(value)}")
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected bool, got {_describe(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if (
            hasattr(value, "dtype")
            and getattr(value.dtype, "kind", "") in "iu"
            and not isinstance(value, bool)
        ):
            return int(value)
        raise ConfigError(f"{where}: expected int, got {_describe(value)}")
    if tp is float:
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if numeric or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf"):
            try:
                return float(value)
            except OverflowError:
                raise ConfigError(f"{where}: {_describe(value)} is too large for a float") from None
        raise ConfigError(f"{where}: expected float, got {_describe(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected str, got {_describe(value)}")
    if tp is type(None) or tp is None:
        if value is None:
            return None
        raise ConfigError(f"{where}: expected None, got {_describe(value)}")
    if isinstance(tp, type) and not isinstance(value, tp):
        raise ConfigError(f"{where}: expected {tp.__name__}, got {_describe(value)}")
    return value


def _describe(value) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int of thousands of digits, deep nesting
        text = "(too large to show)"
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _to_json_value(value, where: str):
    if isinstance(value, Config):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_to_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): _to_json_value(v, f"{where}[{k!r}]") for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ConfigError(f"{where}: a {type(value).__name__} cannot be saved as JSON")


# ================================================================================ the class
def _fields(cls) -> dict[str, Any]:
    """Field name -> default (or `_MISSING`), in declaration order, bases first."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, annotation in klass.__dict__.get("__annotations__", {}).items():
            text = annotation if isinstance(annotation, str) else ""
            if typing.get_origin(annotation) is typing.ClassVar or text.startswith(
                ("ClassVar", "typing.ClassVar")
            ):
                continue
            if name.startswith("_"):
                continue
            own = klass.__dict__.get("__config_fields__")  # a @config base keeps them here
            default = (
                own.get(name, _MISSING) if own is not None else klass.__dict__.get(name, _MISSING)
            )
            if default is _MISSING and name in found:
                default = found[name]
            found.pop(name, None)
            found[name] = default
    return found


def _hints(cls) -> dict[str, Any]:
    """The resolved annotations (resolved on first use, so forward references work)."""
    hints = cls.__dict__.get("__config_hints__")
    if hints is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # an annotation that cannot be resolved is not checked
            hints = {}
            for klass in reversed(cls.__mro__):
                for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                    if not isinstance(annotation, str):
                        hints[name] = annotation
        cls.__config_hints__ = hints
    return hints


# Values no one can change in place: a default of these types needs no copy, and its checked
# value is the same every time.
_ATOMIC = (type(None), bool, int, float, str)


def _plain_defaults(cls, hints: dict[str, Any]) -> dict[str, Any]:
    """The checked values of `cls`'s defaults that are immutable scalars, worked out once per
    class: a config built in every training step (a loss's) does not copy and check them
    again."""
    plain = cls.__dict__.get("__config_plain_defaults__")
    if plain is None:
        plain = {}
        for name, default in cls.__config_fields__.items():
            if default is _MISSING or type(default) not in _ATOMIC:
                continue
            value = default
            if name in hints:
                value = _convert(hints[name], default, f"{cls.__name__}.{name}")
            if type(value) in _ATOMIC:
                plain[name] = value
        cls.__config_plain_defaults__ = plain
    return plain


def _init(self, *args, **kwargs) -> None:
    cls = type(self)
    fields = cls.__config_fields__
    required = [n for n, d in fields.items() if d is _MISSING]
    if len(args) > len(required):
        optional = [n for n, d in fields.items() if d is not _MISSING]
        raise TypeError(
            f"{cls.__name__}() takes {len(required)} positional arguments {required}, got "
            f"{len(args)}; give defaulted fields {optional} by keyword or with with_<field>()"
        )
    values = dict(zip(required, args, strict=False))
    for name, value in kwargs.items():
        if name not in fields:
            raise TypeError(f"{cls.__name__}() has no field {name!r} (fields: {list(fields)})")
        if name in values:
            raise TypeError(f"{cls.__name__}() got {name!r} both by position and by keyword")
        values[name] = value
    missing = [n for n in required if n not in values]
    if missing:
        raise TypeError(f"{cls.__name__}() is missing required field(s) {missing}")
    hints = _hints(cls)
    defaults = _plain_defaults(cls, hints)
    for name, default in fields.items():
        if name in values:
            value = values[name]
        elif name in defaults:
            object.__setattr__(self, name, defaults[name])
            continue
        else:
            value = copy.deepcopy(default)
        if name in hints:
            value = _convert(hints[name], value, f"{cls.__name__}.{name}")
        object.__setattr__(self, name, value)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _eq(self, other) -> bool:
    if type(self) is not type(other):
        return NotImplemented
    return all(getattr(self, n) == getattr(other, n) for n in type(self).__config_fields__)


def _repr(self) -> str:
    parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__config_fields__)
    return f"{type(self).__name__}({parts})"


def _with(name: str):
    def with_field(self, value):
        return self.replace(**{name: value})

    with_field.__name__ = f"with_{name}"
    with_field.__doc__ = f"A copy with `{name}` set to `value`."
    return with_field


class _ConfigMethods:
    """Methods every `@config` class gets (unless it defines its own)."""

    def replace(self, **changes):
        """A copy with some fields changed (checked like the constructor's)."""
        values = {n: getattr(self, n) for n in type(self).__config_fields__}
        values.update(changes)
        return type(self)(**values)

    def to_dict(self) -> dict:
        """The fields as JSON-ready values (nested configs as dicts, enums as their values)."""
        name = type(self).__name__
        return {
            n: _to_json_value(getattr(self, n), f"{name}.{n}") for n in type(self).__config_fields__
        }

    def to_json(self) -> str:
        """Indented JSON, the text `save` writes."""
        return json.dumps(self.to_dict(), indent=2)

    def save(self, path) -> Path:
        """Write the config as JSON to `path`, atomically; returns the path."""
        path = Path(os.fspath(path))
        try:
            atomic_write(path, [self.to_json().encode("utf8")])
        except RecordError as e:  # the folder cannot be made, the disk is full, ...
            raise ConfigError(f"cannot save config {type(self).__name__}: {e}") from None
        return path

    @classmethod
    def _from_dict(cls, data, where: str):
        if not isinstance(data, dict):
            raise ConfigError(
                f"{where}: expected an object with the fields of {cls.__name__}, "
                f"got {_describe(data)}"
            )
        fields = cls.__config_fields__
        unknown = [k for k in data if k not in fields]
        if unknown:
            raise ConfigError(
                f"{where}: unknown field(s) {unknown} for {cls.__name__} (fields: {list(fields)})"
            )
        missing = [n for n, d in fields.items() if d is _MISSING and n not in data]
        if missing:
            raise ConfigError(f"{where}: missing required field(s) {missing} of {cls.__name__}")
        hints = _hints(cls)
        values = {}
        for name, value in data.items():
            values[name] = (
                _convert(hints[name], value, f"{where}.{name}") if name in hints else value
            )
        try:
            return cls(**values)
        except TypeError as e:
            raise ConfigError(f"{where}: {e}") from None
        except ConfigError as e:  # a check of the class's own (`__post_init__`): add the file
            text = str(e)
            if where.endswith(cls.__name__) and text.startswith(cls.__name__ + "."):
                raise ConfigError(where[: -len(cls.__name__)] + text) from None
            raise ConfigError(f"{where}: {text}") from None

    @classmethod
    def from_dict(cls, data: dict):
        """Build from a dict such as `to_dict` gives, with the same checks as `load`."""
        return cls._from_dict(data, cls.__name__)

    @classmethod
    def from_json(cls, text: str, where: str | None = None):
        """Build from JSON text; errors name `where` (a file) when given."""
        try:
            data = json.loads(text)
        except RecursionError:
            raise ConfigError(f"{where or cls.__name__}: JSON nested too deeply") from None
        except ValueError as e:  # bad JSON, or an integer of thousands of digits
            raise ConfigError(f"{where or cls.__name__}: not valid JSON ({e})") from None
        return cls._from_dict(data, f"{where}: {cls.__name__}" if where else cls.__name__)

    @classmethod
    def load(cls, path):
        """Read a config saved by `save`; unknown, missing and mistyped fields are errors."""
        path = Path(os.fspath(path))
        try:
            text = path.read_text("utf8")
        except FileNotFoundError:
            raise ConfigError(f"config file {path} not found") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read config file {path}: {e}") from None
        return cls.from_json(text, str(path))


def config(cls=None):
    """Turn an annotated class into a config: constructor, `with_<field>`, JSON, equality.

    Methods the class defines itself (such as `init(device)`) are kept; `__post_init__`, when
    defined, runs after the fields are set (to check relations between fields).
    """

    def wrap(cls):
        if not isinstance(cls, type):
            raise TypeError("@config decorates a class")
        fields = _fields(cls)
        namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
        for name in fields:
            namespace.pop(name, None)  # defaults live in __config_fields__, not on the class
        bases = (
            cls.__bases__
            if issubclass(cls, Config)
            else (*[b for b in cls.__bases__ if b is not object], _ConfigMethods, Config)
        )
        new = type(cls.__name__, bases, namespace)
        new.__qualname__ = cls.__qualname__
        new.__config_fields__ = fields
        new.__config_hints__ = None
        new.__config_plain_defaults__ = None
        new.__init__ = _init
        if "__eq__" not in namespace:
            new.__eq__ = _eq
            new.__hash__ = None
        if "__repr__" not in namespace:
            new.__repr__ = _repr
        for name in fields:
            if f"with_{name}" not in namespace:
                setattr(new, f"with_{name}", _with(name))
        return new

    return wrap if cls is None else wrap(cls)
