"""What the layers, losses and optimizers declare their configs with.

`config` is `burn.config.config` plus the range checks of `_checks`, so every declaration
names one place;
`Variants` is the base of the enum-like configs whose variants carry data.
"""

from __future__ import annotations

import dataclasses

from burn.config import Config, ConfigError, _describe
from burn.config import config as _config

__all__ = ["Variants", "config"]


def config(cls):
    """Declare a config class: annotated fields, defaults, `with_<field>()` copies; the ranges
    of its numeric fields are checked when it is built (see `_checks`)."""
    from burn.nn._checks import with_range_checks

    return with_range_checks(_config(cls))


class Variants(Config):
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
            raise ConfigError(
                f"{where}: expected one of {names} as {{name: value}}, got {_describe(data)}"
            )
        ((name, payload),) = data.items()
        variant = cls._variants.get(name)
        if variant is None or not issubclass(variant, cls):
            raise ConfigError(
                f"{where}: unknown variant {name!r} (expected one of {sorted(cls._variants)})"
            )
        try:
            if variant._newtype:
                return variant(payload)
            if not isinstance(payload, dict):
                raise ConfigError(f"expected an object of fields, got {_describe(payload)}")
            return variant(**payload)
        except (TypeError, ConfigError) as e:
            raise ConfigError(f"{where}.{name}: {e}") from None

    @classmethod
    def from_dict(cls, data: dict):
        return cls._from_dict(data, cls.__name__)
