"""The Burn-named op groups for each tensor kind: `FloatTensorOps`, `IntTensorOps`,
`BoolTensorOps`.

The `Tensor` API calls these names (`float_add`, `int_sum_dim`, `bool_not`...), so a backend
can override any one of them for speed and a decorator backend can intercept it. Every one has
a default in terms of the required core (`PrimitiveOps`), so a new backend gets them all by
implementing that core. The tables below are the single place that defines them: each entry
`name -> default` becomes `float_name`, `int_name` or `bool_name`.
"""

from __future__ import annotations

import types

# Ops shared by every kind: layout, indexing, equality, data movement.
_BASE = {
    "from_data": lambda self, data, device: self.from_data(data, device),
    "into_data": lambda self, p: self.into_data(p),
    "shape": lambda self, p: self.shape(p),
    "device": lambda self, p: self.device_of(p),
    "to_device": lambda self, p, device: self.to_device(p, device),
    "reshape": lambda self, p, shape: self.reshape(p, tuple(shape)),
    "permute": lambda self, p, axes: self.permute(p, tuple(axes)),
    "swap_dims": lambda self, p, d1, d2: self.permute(p, _swapped(len(self.shape(p)), d1, d2)),
    "expand": lambda self, p, shape: self.expand(p, tuple(shape)),
    "flip": lambda self, p, axes: self.flip(p, tuple(axes)),
    "slice": lambda self, p, ranges: self.slice(p, ranges),
    "slice_assign": lambda self, p, ranges, value: self.slice_assign(p, ranges, value),
    "cat": lambda self, ps, dim: self.cat(ps, dim),
    "gather": lambda self, dim, p, indices: self.gather(p, dim, indices),
    "scatter": lambda self, dim, p, indices, values: self.scatter_add(p, dim, indices, values),
    "select": lambda self, p, dim, indices: self.select(p, dim, indices),
    "select_assign": lambda self, p, dim, indices, values: self.select_add(p, dim, indices, values),
    "mask_where": lambda self, p, mask, value: self.mask_where(p, mask, value),
    "mask_fill": lambda self, p, mask, value: self.mask_where(p, mask, self.scalar_like(p, value)),
    "equal": lambda self, a, b: self.binary("eq", a, b),
    "not_equal": lambda self, a, b: self.binary("ne", a, b),
    "equal_elem": lambda self, a, s: self.binary_scalar("eq", a, s),
    "not_equal_elem": lambda self, a, s: self.binary_scalar("ne", a, s),
    "repeat_dim": lambda self, p, dim, times: self.cat([p] * times, dim),
    "any": lambda self, p: self.any_dim(self.reshape(p, (self.numel(p),)), 0),
    "any_dim": lambda self, p, dim: self.any_dim(p, dim),
    "all": lambda self, p: self.all_dim(self.reshape(p, (self.numel(p),)), 0),
    "all_dim": lambda self, p, dim: self.all_dim(p, dim),
    "cast": lambda self, p, dtype: self.cast(p, dtype),
}

# Ops of Float and Int tensors: arithmetic, comparisons, reductions, sorting.
_NUMERIC = {
    "add": lambda self, a, b: self.binary("add", a, b),
    "add_scalar": lambda self, a, s: self.binary_scalar("add", a, s),
    "sub": lambda self, a, b: self.binary("sub", a, b),
    "sub_scalar": lambda self, a, s: self.binary_scalar("sub", a, s),
    "mul": lambda self, a, b: self.binary("mul", a, b),
    "mul_scalar": lambda self, a, s: self.binary_scalar("mul", a, s),
    "div": lambda self, a, b: self.binary("div", a, b),
    "div_scalar": lambda self, a, s: self.binary_scalar("div", a, s),
    "remainder": lambda self, a, b: self.binary("rem", a, b),
    "remainder_scalar": lambda self, a, s: self.binary_scalar("rem", a, s),
    "powi": lambda self, a, b: self.powi(a, b),
    "powi_scalar": lambda self, a, s: self.binary_scalar("pow", a, s),
    "neg": lambda self, p: self.unary("neg", p),
    "abs": lambda self, p: self.unary("abs", p),
    "sign": lambda self, p: self.unary("sign", p),
    "matmul": lambda self, a, b: self.matmul(a, b),
    "max_pair": lambda self, a, b: self.binary("max", a, b),
    "min_pair": lambda self, a, b: self.binary("min", a, b),
    "greater": lambda self, a, b: self.binary("gt", a, b),
    "greater_elem": lambda self, a, s: self.binary_scalar("gt", a, s),
    "greater_equal": lambda self, a, b: self.binary("ge", a, b),
    "greater_equal_elem": lambda self, a, s: self.binary_scalar("ge", a, s),
    "lower": lambda self, a, b: self.binary("lt", a, b),
    "lower_elem": lambda self, a, s: self.binary_scalar("lt", a, s),
    "lower_equal": lambda self, a, b: self.binary("le", a, b),
    "lower_equal_elem": lambda self, a, s: self.binary_scalar("le", a, s),
    "clamp": lambda self, p, lo, hi: self.clamp(p, lo, hi),
    "clamp_min": lambda self, p, lo: self.clamp(p, lo, None),
    "clamp_max": lambda self, p, hi: self.clamp(p, None, hi),
    "sum": lambda self, p: self.reduce("sum", self.reshape(p, (self.numel(p),)), 0),
    "sum_dim": lambda self, p, dim: self.reduce("sum", p, dim),
    "prod": lambda self, p: self.reduce("prod", self.reshape(p, (self.numel(p),)), 0),
    "prod_dim": lambda self, p, dim: self.reduce("prod", p, dim),
    "mean": lambda self, p: self.mean_dim(self.reshape(p, (self.numel(p),)), 0),
    "mean_dim": lambda self, p, dim: self.mean_dim(p, dim),
    "max": lambda self, p: self.reduce("max", self.reshape(p, (self.numel(p),)), 0),
    "max_dim": lambda self, p, dim: self.reduce("max", p, dim),
    "min": lambda self, p: self.reduce("min", self.reshape(p, (self.numel(p),)), 0),
    "min_dim": lambda self, p, dim: self.reduce("min", p, dim),
    "argmax": lambda self, p, dim: self.reduce("argmax", p, dim),
    "argmin": lambda self, p, dim: self.reduce("argmin", p, dim),
    "max_dim_with_indices": lambda self, p, dim: (
        self.reduce("max", p, dim),
        self.reduce("argmax", p, dim),
    ),
    "min_dim_with_indices": lambda self, p, dim: (
        self.reduce("min", p, dim),
        self.reduce("argmin", p, dim),
    ),
    "sort": lambda self, p, dim, descending: self.sort_with_indices(p, dim, descending)[0],
    "sort_with_indices": lambda self, p, dim, descending: self.sort_with_indices(
        p, dim, descending
    ),
    "argsort": lambda self, p, dim, descending: self.sort_with_indices(p, dim, descending)[1],
    "zeros": lambda self, shape, device, dtype: self.full(shape, 0, dtype, device),
    "ones": lambda self, shape, device, dtype: self.full(shape, 1, dtype, device),
    "full": lambda self, shape, value, device, dtype: self.full(shape, value, dtype, device),
    "random": lambda self, shape, dist, device, dtype: self.random(shape, dist, dtype, device),
}

_FLOAT_ONLY = {
    name: (lambda op: lambda self, p: self.unary(op, p))(name)
    for name in "exp log log1p sqrt sin cos tan tanh erf floor ceil round recip".split()
} | {
    "powf": lambda self, a, b: self.binary("pow", a, b),
    "powf_scalar": lambda self, a, s: self.binary_scalar("pow", a, s),
    "atan2": lambda self, a, b: self.binary("atan2", a, b),
    "is_nan": lambda self, p: self.is_nan(p),
    "into_int": lambda self, p, dtype=None: self.cast(p, dtype or self.capabilities.int_dtype),
}

_INT_ONLY = {
    "arange": lambda self, start, end, step, device, dtype: self.arange(
        start, end, step, dtype, device
    ),
    "into_float": lambda self, p, dtype=None: self.cast(p, dtype or self.capabilities.float_dtype),
}

_BOOL_ONLY = {
    "not": lambda self, p: self.unary("not", p),
    "and": lambda self, a, b: self.binary("and", a, b),
    "or": lambda self, a, b: self.binary("or", a, b),
    "xor": lambda self, a, b: self.binary("xor", a, b),
    "into_int": lambda self, p, dtype=None: self.cast(p, dtype or self.capabilities.int_dtype),
    "into_float": lambda self, p, dtype=None: self.cast(p, dtype or self.capabilities.float_dtype),
    "full": lambda self, shape, value, device, dtype=None: self.full(
        shape, bool(value), _bool(), device
    ),
}


def _swapped(rank: int, d1: int, d2: int) -> tuple[int, ...]:
    axes = list(range(rank))
    axes[d1], axes[d2] = axes[d2], axes[d1]
    return tuple(axes)


def _bool():
    from burn.tensor.dtype import DType

    return DType.BOOL


def _group(name: str, prefix: str, *tables: dict, doc: str) -> type:
    methods = {}
    for table in tables:
        for op, default in table.items():
            method = types.FunctionType(
                default.__code__,
                default.__globals__,
                prefix + op,
                default.__defaults__,
                default.__closure__,
            )
            method.__qualname__ = f"{name}.{prefix}{op}"
            methods[prefix + op] = method
    return type(name, (), {**methods, "__doc__": doc, "__module__": __name__})


FloatTensorOps = _group(
    "FloatTensorOps",
    "float_",
    _BASE,
    _NUMERIC,
    _FLOAT_ONLY,
    doc="Burn's FloatTensorOps: `float_add`, `float_exp`, `float_sum_dim`...",
)
IntTensorOps = _group(
    "IntTensorOps",
    "int_",
    _BASE,
    _NUMERIC,
    _INT_ONLY,
    doc="Burn's IntTensorOps: `int_add`, `int_arange`, `int_argmax`...",
)
BoolTensorOps = _group(
    "BoolTensorOps",
    "bool_",
    _BASE,
    _BOOL_ONLY,
    doc="Burn's BoolTensorOps: `bool_not`, `bool_and`, `bool_into_int`...",
)

FLOAT_OPS = frozenset(f"float_{n}" for t in (_BASE, _NUMERIC, _FLOAT_ONLY) for n in t)
INT_OPS = frozenset(f"int_{n}" for t in (_BASE, _NUMERIC, _INT_ONLY) for n in t)
BOOL_OPS = frozenset(f"bool_{n}" for t in (_BASE, _BOOL_ONLY) for n in t)
