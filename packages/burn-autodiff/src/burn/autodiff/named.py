"""The named ops under autodiff: each forwards to the inner backend's op of the same name.

This is how Burn's autodiff decorator is built (`float_add` calls `B::float_add` and records a
backward step): whatever the inner backend overrides is what runs. Three kinds of op:

- Float ops with a rule (`RULES` below): the inner op's result, plus a node whose backward maps
  the output gradient to input gradients with inner-backend ops.
- Ops that cannot carry a gradient (Int and Bool ops, comparisons, `argmax`, creation,
  reading data, the module and activation `*_backward` ops, the optimizer updates such as
  `float_adam_step`): forwarded untracked by `forwarded`, which unwraps the arguments and
  wraps the result.
- Float ops without a rule: not defined here, so the contract's default composition runs on
  the decorator itself and its pieces are differentiated.

Every method copies the contract method's signature and docstring (`functools.wraps`), so
`help(Autodiff(NdArray).float_add)` reads like the contract.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from burn.autodiff import rules
from burn.backend import Backend

AD = Any  # an ADPrimitive (kept loose: the class lives in backend.py)


def _contract(name: str) -> Callable[..., Any]:
    return getattr(Backend, name)


def _wrap_like(name: str):
    return functools.wraps(_contract(name), assigned=("__doc__", "__annotations__"))


# ====================================================================== untracked forwarding
def forwarded(name: str, wrap: Callable[[Any], Any], unwrap: Callable[[Any], Any]):
    """`name` run on the inner backend with unwrapped arguments, its result wrapped untracked."""
    raw = name.endswith("into_data")

    @_wrap_like(name)
    def method(self, *args, **kwargs):
        out = getattr(self._inner, name)(
            *[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()}
        )
        if raw:
            return out
        if isinstance(out, tuple):
            return tuple(_wrapped(o, wrap) for o in out)
        return wrap(out)

    method.__name__ = name
    method.__wrapped__ = _contract(name)  # type: ignore[attr-defined]
    return method


def _wrapped(out, wrap: Callable[[Any], Any]):
    """One part of a tuple result wrapped: None stays None, a list (as the optimizer updates of
    many parameters return) is wrapped element by element."""
    if out is None:
        return None
    if isinstance(out, list):
        return [wrap(o) for o in out]
    return wrap(out)


# ====================================================================== rule builders
def _unary(name: str, op: str):
    rule = rules.UNARY[op]

    def method(self, tensor: AD) -> AD:
        inner = self._inner
        x = tensor.value
        out = getattr(inner, name)(x)
        if tensor.node is None:
            return self._untracked(out)
        return self._track(out, (tensor,), lambda g, t: (rule(inner, x, out, g),), name)

    return method


def _binary(name: str, op: str):
    rule = rules.BINARY[op]

    def method(self, lhs: AD, rhs: AD) -> AD:
        inner = self._inner
        a, b = lhs.value, rhs.value
        out = getattr(inner, name)(a, b)
        if lhs.node is None and rhs.node is None:
            return self._untracked(out)

        def backward(g, tracked):
            ga, gb = rule(inner, a, b, out, g, tracked)
            return (
                rules.unbroadcast(inner, ga, inner.shape(a)) if ga is not None else None,
                rules.unbroadcast(inner, gb, inner.shape(b)) if gb is not None else None,
            )

        return self._track(out, (lhs, rhs), backward, name)

    return method


def _scalar(name: str, op: str):
    rule = rules.BINARY_SCALAR[op]

    def method(self, lhs: AD, rhs: Any) -> AD:
        inner = self._inner
        x = lhs.value
        out = getattr(inner, name)(x, rhs)
        if lhs.node is None:
            return self._untracked(out)
        return self._track(out, (lhs,), lambda g, t: (rule(inner, x, rhs, out, g),), name)

    return method


def _reduce_dim(name: str, op: str):
    rule = rules.REDUCE[op]

    def method(self, tensor: AD, dim: int) -> AD:
        inner = self._inner
        x = tensor.value
        out = getattr(inner, name)(x, dim)
        if tensor.node is None:
            return self._untracked(out)
        return self._track(out, (tensor,), lambda g, t: (rule(inner, x, dim, out, g),), name)

    return method


def _reduce_all(name: str, op: str):
    rule = rules.REDUCE[op]

    def method(self, tensor: AD) -> AD:
        inner = self._inner
        x = tensor.value
        out = getattr(inner, name)(x)
        if tensor.node is None:
            return self._untracked(out)
        shape = inner.shape(x)

        def backward(g, tracked):
            flat = inner.reshape(x, (inner.numel(x),))
            return (inner.reshape(rule(inner, flat, 0, out, g), shape),)

        return self._track(out, (tensor,), backward, name)

    return method


def _with_indices(name: str, dim_at: int = 1):
    """Ops returning (values, Int positions along a dim): the gradient goes to the positions."""

    def method(self, tensor: AD, dim: int, *rest: Any) -> tuple[AD, AD]:
        inner = self._inner
        x = tensor.value
        values, idx = getattr(inner, name)(x, dim, *rest)
        wrapped_idx = self._untracked(idx)
        if tensor.node is None:
            return self._untracked(values), wrapped_idx

        def backward(g, tracked):
            zeros = inner.full(inner.shape(x), 0, inner.dtype(g), inner.device_of(g))
            return (inner.scatter_add(zeros, dim, idx, g),)

        return self._track(values, (tensor,), backward, name), wrapped_idx

    return method


def _layout(name: str, backward_of: Callable[..., Any]):
    """One-input ops whose gradient depends only on the arguments: `backward_of(inner, x,
    g, *args)`."""

    def method(self, tensor: AD, *args: Any) -> AD:
        inner = self._inner
        x = tensor.value
        out = getattr(inner, name)(x, *args)
        if tensor.node is None:
            return self._untracked(out)
        return self._track(out, (tensor,), lambda g, t: (backward_of(inner, x, g, *args),), name)

    return method


def _inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(range(len(axes)), key=lambda i: axes[i]))


def _swap_back(inner, x, g, d1, d2):
    return inner.float_swap_dims(g, d1, d2)


def _repeat_back(inner, x, g, dim, times):
    shape = list(inner.shape(x))
    split = [*shape[:dim], times, shape[dim], *shape[dim + 1 :]]
    return inner.reshape(inner.reduce("sum", inner.reshape(g, tuple(split)), dim), tuple(shape))


LAYOUT = {
    "float_reshape": lambda inner, x, g, shape: inner.reshape(g, inner.shape(x)),
    "float_permute": lambda inner, x, g, axes: inner.permute(g, _inverse(tuple(axes))),
    "float_swap_dims": _swap_back,
    "float_expand": lambda inner, x, g, shape: rules.unbroadcast(inner, g, inner.shape(x)),
    "float_flip": lambda inner, x, g, axes: inner.float_flip(g, axes),
    "float_slice": lambda inner, x, g, ranges: rules.slice_backward(inner, g, x, ranges),
    "float_repeat_dim": _repeat_back,
    "float_cast": lambda inner, x, g, dtype: inner.cast(g, inner.dtype(x)),
}

UNARY = {
    f"float_{n}": n
    for n in "neg abs sign exp log log1p sqrt sin cos tan tanh erf floor ceil round recip".split()
}
BINARY = {
    "float_add": "add",
    "float_sub": "sub",
    "float_mul": "mul",
    "float_div": "div",
    "float_remainder": "rem",
    "float_powf": "pow",
    "float_atan2": "atan2",
    "float_max_pair": "max",
    "float_min_pair": "min",
}
SCALAR = {
    "float_add_scalar": "add",
    "float_sub_scalar": "sub",
    "float_mul_scalar": "mul",
    "float_div_scalar": "div",
    "float_remainder_scalar": "rem",
    "float_powf_scalar": "pow",
    "float_powi_scalar": "pow",
    "float_clamp_min": "max",
    "float_clamp_max": "min",
}
REDUCE_DIM = {
    "float_sum_dim": "sum",
    "float_prod_dim": "prod",
    "float_max_dim": "max",
    "float_min_dim": "min",
}
REDUCE_ALL = {"float_sum": "sum", "float_prod": "prod", "float_max": "max", "float_min": "min"}
WITH_INDICES = (
    "float_max_dim_with_indices",
    "float_min_dim_with_indices",
    "float_sort_with_indices",
)


# Float ops whose results carry no gradient: comparisons, positions, creation, reading data,
# and the optimizer updates (an optimizer runs on the inner backend's tensors).
NOT_DIFFERENTIABLE = frozenset(
    {
        "float_adam_step",
        "float_adam_step_many",
        "float_from_data",
        "float_into_data",
        "float_into_int",
        "float_is_nan",
        "float_zeros",
        "float_ones",
        "float_full",
        "float_random",
        "float_argmax",
        "float_argmin",
        "float_argsort",
        "float_any",
        "float_any_dim",
        "float_all",
        "float_all_dim",
        "float_equal",
        "float_equal_elem",
        "float_not_equal",
        "float_not_equal_elem",
        "float_greater",
        "float_greater_elem",
        "float_greater_equal",
        "float_greater_equal_elem",
        "float_lower",
        "float_lower_elem",
        "float_lower_equal",
        "float_lower_equal_elem",
    }
)


def build() -> dict[str, Callable[..., Any]]:
    """Every generated rule method, keyed by its contract name."""
    methods: dict[str, Callable[..., Any]] = {}
    for table, maker in (
        (UNARY, _unary),
        (BINARY, _binary),
        (SCALAR, _scalar),
        (REDUCE_DIM, _reduce_dim),
        (REDUCE_ALL, _reduce_all),
    ):
        for name, op in table.items():
            methods[name] = maker(name, op)
    for name, backward_of in LAYOUT.items():
        methods[name] = _layout(name, backward_of)
    for name in WITH_INDICES:
        methods[name] = _with_indices(name)
    for name, method in methods.items():
        method.__name__ = name
        method.__doc__ = _contract(name).__doc__
        method.__wrapped__ = _contract(name)  # type: ignore[attr-defined]
    return methods


# ====================================================================== written out
class NamedRules:
    """The rules that do not fit a table: indexing, joining, masks, matmul, means, powi."""

    _inner: Backend

    def float_slice_assign(self, tensor: AD, ranges, value: AD) -> AD:
        inner = self._inner
        region = inner.shape(value.value)

        def backward(g, tracked):
            gp = gv = None
            if tracked[0]:
                zeros = inner.full(region, 0, inner.dtype(g), inner.device_of(g))
                gp = inner.float_slice_assign(g, ranges, zeros)
            if tracked[1]:
                gv = inner.float_slice(g, ranges)
            return gp, gv

        out = inner.float_slice_assign(tensor.value, ranges, value.value)
        return self._track(out, (tensor, value), backward, "float_slice_assign")

    def float_cat(self, tensors: list, dim: int) -> AD:
        inner = self._inner
        sizes = [inner.shape(p.value)[dim] for p in tensors]

        def backward(g, tracked):
            out, start = [], 0
            shape = inner.shape(g)
            for n, need in zip(sizes, tracked, strict=True):
                ranges = tuple(
                    (start, start + n, 1) if d == dim else (0, s, 1) for d, s in enumerate(shape)
                )
                out.append(inner.float_slice(g, ranges) if need else None)
                start += n
            return tuple(out)

        out = inner.float_cat([p.value for p in tensors], dim)
        return self._track(out, tuple(tensors), backward, "float_cat")

    # Reading at indices and adding at indices are each other's adjoint.
    def float_gather(self, dim: int, tensor: AD, indices: AD) -> AD:
        inner = self._inner
        x, idx = tensor.value, indices.value

        def backward(g, tracked):
            zeros = inner.full(inner.shape(x), 0, inner.dtype(g), inner.device_of(g))
            return inner.float_scatter(dim, zeros, idx, g), None

        out = inner.float_gather(dim, x, idx)
        return self._track(out, (tensor, indices), backward, "float_gather")

    def float_scatter(self, dim: int, tensor: AD, indices: AD, value: AD) -> AD:
        inner = self._inner
        idx = indices.value

        def backward(g, tracked):
            gv = inner.float_gather(dim, g, idx) if tracked[2] else None
            return (g if tracked[0] else None), None, gv

        out = inner.float_scatter(dim, tensor.value, idx, value.value)
        return self._track(out, (tensor, indices, value), backward, "float_scatter")

    def float_select(self, tensor: AD, dim: int, indices: AD) -> AD:
        inner = self._inner
        x, idx = tensor.value, indices.value

        def backward(g, tracked):
            zeros = inner.full(inner.shape(x), 0, inner.dtype(g), inner.device_of(g))
            return inner.float_select_assign(zeros, dim, idx, g), None

        out = inner.float_select(x, dim, idx)
        return self._track(out, (tensor, indices), backward, "float_select")

    def float_select_assign(self, tensor: AD, dim: int, indices: AD, value: AD) -> AD:
        inner = self._inner
        idx = indices.value

        def backward(g, tracked):
            gv = inner.float_select(g, dim, idx) if tracked[2] else None
            return (g if tracked[0] else None), None, gv

        out = inner.float_select_assign(tensor.value, dim, idx, value.value)
        return self._track(out, (tensor, indices, value), backward, "float_select_assign")

    def float_mask_where(self, tensor: AD, mask: AD, value: AD) -> AD:
        inner = self._inner
        m = mask.value
        p_shape, v_shape = inner.shape(tensor.value), inner.shape(value.value)

        def backward(g, tracked):
            zeros = inner.scalar_like(g, 0)
            gp = gv = None
            if tracked[0]:
                gp = rules.unbroadcast(inner, inner.float_mask_where(g, m, zeros), p_shape)
            if tracked[2]:
                gv = rules.unbroadcast(inner, inner.float_mask_where(zeros, m, g), v_shape)
            return gp, None, gv

        out = inner.float_mask_where(tensor.value, m, value.value)
        return self._track(out, (tensor, mask, value), backward, "float_mask_where")

    def float_mask_fill(self, tensor: AD, mask: AD, value: Any) -> AD:
        inner = self._inner
        m = mask.value
        shape = inner.shape(tensor.value)

        def backward(g, tracked):
            kept = inner.float_mask_fill(g, m, 0)
            return rules.unbroadcast(inner, kept, shape), None

        out = inner.float_mask_fill(tensor.value, m, value)
        return self._track(out, (tensor, mask), backward, "float_mask_fill")

    def float_to_device(self, tensor: AD, device: Any) -> AD:
        inner = self._inner
        x = tensor.value
        source = inner.device_of(x)
        out = inner.float_to_device(x, self._inner_device(device))
        backward = lambda g, tracked: (inner.float_to_device(g, source),)  # noqa: E731
        return self._track(out, (tensor,), backward, "float_to_device")

    def float_matmul(self, lhs: AD, rhs: AD) -> AD:
        inner = self._inner
        a, b = lhs.value, rhs.value
        out = inner.float_matmul(a, b)
        if lhs.node is None and rhs.node is None:
            return self._untracked(out)

        def backward(g, tracked):
            return rules.matmul_backward(inner, a, b, g, tracked)

        return self._track(out, (lhs, rhs), backward, "float_matmul")

    def float_mean_dim(self, tensor: AD, dim: int) -> AD:
        inner = self._inner
        x = tensor.value
        out = inner.float_mean_dim(x, dim)
        if tensor.node is None:
            return self._untracked(out)
        shape, n = inner.shape(x), inner.shape(x)[dim]

        def backward(g, tracked):
            return (inner.expand(inner.float_div_scalar(g, n), shape),)

        return self._track(out, (tensor,), backward, "float_mean_dim")

    def float_mean(self, tensor: AD) -> AD:
        inner = self._inner
        x = tensor.value
        out = inner.float_mean(x)
        if tensor.node is None:
            return self._untracked(out)
        shape = inner.shape(x)
        n = inner.numel(x)

        def backward(g, tracked):
            ones = inner.reshape(inner.float_div_scalar(g, n), (1,) * len(shape))
            return (inner.expand(ones, shape),)

        return self._track(out, (tensor,), backward, "float_mean")

    def float_clamp(self, tensor: AD, min: Any, max: Any) -> AD:  # noqa: A002
        inner = self._inner
        x = tensor.value
        out = inner.float_clamp(x, min, max)
        if tensor.node is None:
            return self._untracked(out)

        def backward(g, tracked):
            outside = inner.bool_or(
                inner.float_lower_elem(x, min), inner.float_greater_elem(x, max)
            )
            return (inner.float_mask_fill(g, outside, 0),)

        return self._track(out, (tensor,), backward, "float_clamp")

    def float_powi(self, lhs: AD, rhs: AD) -> AD:
        inner = self._inner
        x, e = lhs.value, rhs.value
        out = inner.float_powi(x, e)
        if lhs.node is None:
            return self._untracked(out)

        def backward(g, tracked):
            ef = inner.int_into_float(e, inner.dtype(x))
            local = inner.float_mul(ef, inner.float_powf(x, inner.float_sub_scalar(ef, 1)))
            return rules.unbroadcast(inner, inner.float_mul(g, local), inner.shape(x)), None

        return self._track(out, (lhs, rhs), backward, "float_powi")

    def float_sort(self, tensor: AD, dim: int, descending: bool) -> AD:
        inner = self._inner
        x = tensor.value
        out = inner.float_sort(x, dim, descending)
        if tensor.node is None:
            return self._untracked(out)

        def backward(g, tracked):
            idx = inner.float_argsort(x, dim, descending)
            zeros = inner.full(inner.shape(x), 0, inner.dtype(g), inner.device_of(g))
            return (inner.scatter_add(zeros, dim, idx, g),)

        return self._track(out, (tensor,), backward, "float_sort")


for _name in [n for n in vars(NamedRules) if n.startswith("float_")]:
    _method = vars(NamedRules)[_name]
    _method.__doc__ = _contract(_name).__doc__
    _method.__wrapped__ = _contract(_name)
