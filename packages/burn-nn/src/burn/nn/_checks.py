"""Checks of burn-nn's config values: field ranges of its configs, field types of its variants.

A negative size or a dropout probability of 3 would otherwise pass the type check and fail
later, deep in an op, with an error that names neither the config nor the field. The rules are
keyed by field name and apply only to the configs declared in burn-nn's `burn.nn` and
`burn.optim` (through `burn.nn._config.config`), whose names mean the same thing everywhere:
`d_model` is a size wherever it appears. A config built by a user with `burn.config.config` is
not affected.

Variants (`Initializer`, `GradientClippingConfig`, paddings) are small frozen dataclasses, built
by a user or from a JSON payload: their fields are type-checked (and ints given for floats
converted) the way `@config` checks its fields, so `{"Norm": "big"}` fails at load, naming the
variant and the field.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Callable

from burn.config import ConfigError, _convert

_SIZES = (
    "d_input d_output d_model d_ff d_hidden n_heads n_layers n_embedding num_features "
    "num_groups num_channels channels_in channels_out channels kernel_size stride strides "
    "dilation groups output_size num_parameters max_sequence_length max_sequence_size "
    "max_timescale model_size step_size num_iters warmup_steps"
).split()
_COUNTS = "padding padding_out".split()
_PROBABILITIES = "prob dropout momentum smoothing".split()
_BETAS = "beta_1 beta_2".split()
_NON_NEGATIVE = (
    "epsilon weight_decay penalty dampening lr_decay delta min_lr initial_lr init_lr final_lr"
).split()
_POSITIVE = "scale_factor theta gamma".split()


def _show(value) -> str:
    """`repr(value)`, short; an int of thousands of digits has no repr."""
    try:
        text = repr(value)
    except ValueError:
        return "(a number too large to show)"
    return text if len(text) <= 40 else text[:37] + "..."


def _rule(name: str) -> tuple[str, Callable[[float], bool]] | None:
    if name in _SIZES:
        return "an integer >= 1", lambda v: v >= 1
    if name in _COUNTS:
        return "an integer >= 0", lambda v: v >= 0
    if name in _PROBABILITIES:
        return "between 0 and 1", lambda v: 0.0 <= v <= 1.0
    if name in _BETAS:
        return "in [0, 1)", lambda v: 0.0 <= v < 1.0
    if name in _NON_NEGATIVE:
        return ">= 0", lambda v: v >= 0
    if name in _POSITIVE:
        return "> 0", lambda v: v > 0
    return None


def check_ranges(config) -> None:
    """Raise `ConfigError` naming the first field of `config` outside its range."""
    cls = type(config)
    for name in cls.__config_fields__:
        rule = _rule(name)
        if rule is None:
            continue
        words, ok = rule
        value = getattr(config, name)
        values = value if isinstance(value, (list, tuple)) else [value]
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue  # None, or a variant (e.g. a PaddingConfig): typed, not ranged
            if isinstance(v, float) and not math.isfinite(v) or not ok(v):
                where = f"{cls.__name__}.{name}" + (f"[{i}]" if value is values else "")
                raise ConfigError(f"{where}: must be {words}, got {_show(v)}")


def with_range_checks(cls):
    """`cls` with `check_ranges` run after its fields are set (before its own check)."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        check_ranges(self)
        if own is not None:
            own(self)

    cls.__post_init__ = __post_init__
    return cls


def _variant_rule(name: str) -> tuple[str, Callable[[float], bool]] | None:
    if name in ("threshold", "max_norm"):
        return "> 0", lambda v: v > 0
    if name == "std" or re.fullmatch(r"p\d+", name):
        return ">= 0", lambda v: v >= 0
    return None


def check_variant(variant) -> None:
    """Type-check (and convert) the fields of a variant; `ConfigError` names the field."""
    cls = type(variant)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be resolved is not checked
        hints = {}
    for field in dataclasses.fields(variant):
        where = f"{cls.__name__}.{field.name}"
        value = getattr(variant, field.name)
        if field.name in hints:
            value = _convert(hints[field.name], value, where)
            object.__setattr__(variant, field.name, value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{where}: must be finite, got {_show(value)}")
        rule = _variant_rule(field.name)
        if rule is not None and isinstance(value, (int, float)) and not rule[1](value):
            raise ConfigError(f"{where}: must be {rule[0]}, got {_show(value)}")
