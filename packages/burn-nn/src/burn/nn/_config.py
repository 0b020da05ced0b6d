"""The `config` decorator the layers, losses and optimizers are declared with.

`burn.config.config` is the real one (JSON save/load, nested configs); until it is importable
this falls back to a dataclass with the same constructor and `with_<field>()` copies, so the
declarations do not change when it lands.
"""

from __future__ import annotations

import dataclasses

try:  # pragma: no cover - depends on which packages are installed
    from burn.config import config as _config
except ImportError:  # pragma: no cover
    _config = None


def _fallback(cls):
    cls = dataclasses.dataclass(cls)
    for field in dataclasses.fields(cls):
        name = f"with_{field.name}"
        if name in cls.__dict__:
            continue

        def setter(self, value, _name=field.name):
            return dataclasses.replace(self, **{_name: value})

        setter.__name__ = name
        setter.__doc__ = f"A copy with `{field.name}` changed."
        setattr(cls, name, setter)
    return cls


def config(cls):
    """Declare a config class: annotated fields, defaults, `with_<field>()` copies; the ranges
    of its numeric fields are checked when it is built (see `_checks`)."""
    from burn.nn._checks import with_range_checks

    return with_range_checks((_config or _fallback)(cls))


try:  # pragma: no cover
    from burn.config import Config as _ConfigBase
    from burn.config import ConfigError as _ConfigError
    from burn.config import _describe
except ImportError:  # pragma: no cover
    _ConfigBase = object
    _ConfigError = ValueError


class Variants(_ConfigBase):
    """Base of an enum-like config whose variants carry data (Burn's `#[derive(Config)] enum`).

    A variant is saved as `{"VariantName": payload}`: its fields as an object, or its single
    value for a one-field variant marked `_newtype = True`, as serde writes Rust enums. The base
    class lists its variants in `_variants` so nested configs load back to the right class.
    """

    _variants: dict[str, type] = {}
    _newtype = False

    def __post_init__(self) -> None:
        from burn.nn._checks import check_variant

        check_variant(self)

    def _fields(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def to_dict(self) -> dict:
        fields = self._fields()
        if self._newtype:
            (value,) = fields.values()
            return {type(self).__name__: value}
        return {type(self).__name__: fields}

    @classmethod
    def _from_dict(cls, data, where: str):
        if not isinstance(data, dict) or len(data) != 1:
            names = sorted(cls._variants)
            raise _ConfigError(
                f"{where}: expected one of {names} as {{name: value}}, got {_describe(data)}"
            )
        ((name, payload),) = data.items()
        variant = cls._variants.get(name)
        if variant is None or not issubclass(variant, cls):
            raise _ConfigError(
                f"{where}: unknown variant {name!r} (expected one of {sorted(cls._variants)})"
            )
        try:
            if variant._newtype:
                return variant(payload)
            if not isinstance(payload, dict):
                raise _ConfigError(f"expected an object of fields, got {_describe(payload)}")
            return variant(**payload)
        except (TypeError, _ConfigError) as e:
            raise _ConfigError(f"{where}.{name}: {e}") from None

    @classmethod
    def from_dict(cls, data: dict):
        return cls._from_dict(data, cls.__name__)
