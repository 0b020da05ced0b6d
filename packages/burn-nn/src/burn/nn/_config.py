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
    """Declare a config class: annotated fields, defaults, `with_<field>()` copies."""
    return (_config or _fallback)(cls)
