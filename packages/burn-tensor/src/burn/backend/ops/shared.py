"""The ops every tensor kind shares, written once and installed per kind.

Float, Int and Bool tensors each have `<kind>_reshape`, `<kind>_gather`, `<kind>_cat`... with
the same signature and the same default. Each is written here once as a documented function
with `{kind}` in its docstring; `install` copies it into a kind's ops group under its Burn
name (`float_reshape`, `int_reshape`, `bool_reshape`), so `help(backend.int_gather)` shows the
signature and the docstring of that kind's op. A backend overrides the copy it wants to speed
up; the other kinds keep the default.

Parameter names are the contract's vocabulary, and the conformance suite's spy test builds its
arguments from them: `tensor`, `lhs`, `rhs` and `value` are primitives of the group's kind,
`indices` an Int primitive, `mask` a Bool primitive, `scalar` a Python number, `dim` an int,
`shape` and `axes` tuples, `ranges` `(start, stop, step)` triples.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType

Primitive = Any
"""A backend's tensor value: whatever the backend chooses (numpy array, GPU handle...)."""


def install(group: type, prefix: str, kind: str, templates: Sequence[Callable[..., Any]]) -> None:
    """Copy each template into `group` as `<prefix><name>` with its docstring's `{kind}` filled."""
    for template in templates:
        name = prefix + template.__name__.lstrip("_")
        method = types.FunctionType(
            template.__code__,
            template.__globals__,
            name,
            template.__defaults__,
            template.__closure__,
        )
        method.__doc__ = (template.__doc__ or "").replace("{kind}", kind)
        method.__qualname__ = f"{group.__name__}.{name}"
        method.__module__ = group.__module__
        method.__annotations__ = dict(template.__annotations__)
        method.__kwdefaults__ = template.__kwdefaults__
        setattr(group, name, method)


def swapped_axes(rank: int, dim1: int, dim2: int) -> tuple[int, ...]:
    """The permutation that exchanges `dim1` and `dim2`."""
    axes = list(range(rank))
    axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
    return tuple(axes)


def index_along(backend: Any, like: Primitive, dim: int, index: np.ndarray) -> Primitive:
    """An Int primitive selecting `index` along `dim`, expanded to `like`'s other dims."""
    shape = list(backend.shape(like))
    view = [1] * len(shape)
    view[dim] = len(index)
    idx = backend.from_data(
        TensorData(np.asarray(index, dtype=backend.index_dtype().numpy).reshape(view)),
        backend.device_of(like),
    )
    shape[dim] = len(index)
    return backend.expand(idx, tuple(shape))


# ====================================================================== data and layout
def from_data(self, data: TensorData, device: Any) -> Primitive:
    """A {kind} primitive holding `data` (already in the target dtype) on `device`."""
    return self.from_data(data, device)


def into_data(self, tensor: Primitive) -> TensorData:
    """The values of a {kind} primitive, read back to the host."""
    return self.into_data(tensor)


def to_device(self, tensor: Primitive, device: Any) -> Primitive:
    """The {kind} primitive moved (or copied) to `device`."""
    return self.to_device(tensor, device)


def reshape(self, tensor: Primitive, shape: tuple[int, ...]) -> Primitive:
    """The {kind} primitive with a new shape of the same element count (row-major order)."""
    return self.reshape(tensor, tuple(shape))


def permute(self, tensor: Primitive, axes: tuple[int, ...]) -> Primitive:
    """The {kind} primitive with its dims reordered: result dim i is input dim `axes[i]`."""
    return self.permute(tensor, tuple(axes))


def swap_dims(self, tensor: Primitive, dim1: int, dim2: int) -> Primitive:
    """The {kind} primitive with dims `dim1` and `dim2` exchanged."""
    return self.permute(tensor, swapped_axes(len(self.shape(tensor)), dim1, dim2))


def expand(self, tensor: Primitive, shape: tuple[int, ...]) -> Primitive:
    """The {kind} primitive with its size-1 dims broadcast to `shape` (same rank)."""
    return self.expand(tensor, tuple(shape))


def flip(self, tensor: Primitive, axes: tuple[int, ...]) -> Primitive:
    """The {kind} primitive reversed along each of `axes` (a gather per axis by default)."""
    for axis in axes:
        n = self.shape(tensor)[axis]
        tensor = self.gather(
            tensor, axis, index_along(self, tensor, axis, np.arange(n - 1, -1, -1))
        )
    return tensor


def _slice(self, tensor: Primitive, ranges: tuple[tuple[int, int, int], ...]) -> Primitive:
    """The region of a {kind} primitive: one `(start, stop, step)` per dim, in range, step >= 1."""
    return self.slice(tensor, ranges)


def slice_assign(
    self, tensor: Primitive, ranges: tuple[tuple[int, int, int], ...], value: Primitive
) -> Primitive:
    """A copy of the {kind} primitive whose region `ranges` holds `value` (the region's shape)."""
    return self.slice_assign(tensor, ranges, value)


def cat(self, tensors: list[Primitive], dim: int) -> Primitive:
    """{kind} primitives joined along `dim` (equal elsewhere); one slice_assign each by default."""
    shapes = [self.shape(p) for p in tensors]
    out_shape = list(shapes[0])
    out_shape[dim] = sum(s[dim] for s in shapes)
    out = self.full(out_shape, 0, self.dtype(tensors[0]), self.device_of(tensors[0]))
    offset = 0
    for p, s in zip(tensors, shapes, strict=True):
        ranges = tuple(
            (offset, offset + s[d], 1) if d == dim else (0, s[d], 1) for d in range(len(s))
        )
        out = self.slice_assign(out, ranges, p)
        offset += s[dim]
    return out


def repeat_dim(self, tensor: Primitive, dim: int, times: int) -> Primitive:
    """The {kind} primitive tiled `times` times (>= 1) along `dim`."""
    return getattr(self, _prefix(self, tensor) + "cat")([tensor] * times, dim)


def cast(self, tensor: Primitive, dtype: DType) -> Primitive:
    """The {kind} primitive converted to another `dtype` of the same kind."""
    return self.cast(tensor, dtype)


def _prefix(self, tensor: Primitive) -> str:
    dtype = self.dtype(tensor)
    return "float_" if dtype.is_float else "bool_" if dtype is DType.BOOL else "int_"


# ====================================================================== indexing
def gather(self, dim: int, tensor: Primitive, indices: Primitive) -> Primitive:
    """`out[.., i, ..] = tensor[.., indices[.., i, ..], ..]` along `dim`, of indices' shape.

    {kind} values, Int indices of the same rank. Outside `dim` the indices may be smaller than
    the tensor (a leading part is read), as in Burn and PyTorch.
    """
    return self.gather(tensor, dim, indices)


def scatter(self, dim: int, tensor: Primitive, indices: Primitive, value: Primitive) -> Primitive:
    """A copy of the {kind} primitive with `value` added at `indices` along `dim` (sums)."""
    return self.scatter_add(tensor, dim, indices, value)


def select(self, tensor: Primitive, dim: int, indices: Primitive) -> Primitive:
    """Entries of the {kind} primitive at the 1-D Int `indices` along `dim`."""
    shape = list(self.shape(tensor))
    view = [1] * len(shape)
    view[dim] = self.shape(indices)[0]
    shape[dim] = view[dim]
    return self.gather(tensor, dim, self.expand(self.reshape(indices, tuple(view)), tuple(shape)))


def select_assign(
    self, tensor: Primitive, dim: int, indices: Primitive, value: Primitive
) -> Primitive:
    """A copy of the {kind} primitive with `value` added at the 1-D `indices` along `dim`."""
    shape = list(self.shape(value))
    view = [1] * len(shape)
    view[dim] = shape[dim]
    idx = self.expand(self.reshape(indices, tuple(view)), tuple(shape))
    return self.scatter_add(tensor, dim, idx, value)


def mask_where(self, tensor: Primitive, mask: Primitive, value: Primitive) -> Primitive:
    """Elements of `value` where the Bool `mask` is true, else of the {kind} `tensor`.

    The three broadcast against each other (equal ranks).
    """
    return self.mask_where(tensor, mask, value)


def mask_fill(self, tensor: Primitive, mask: Primitive, value: Any) -> Primitive:
    """The {kind} `tensor` with the scalar `value` where the Bool `mask` is true."""
    return self.mask_where(tensor, mask, self.scalar_like(tensor, value))


# ====================================================================== equality, any, all
def equal(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: where the {kind} operands are equal (broadcasting)."""
    return self.binary("eq", lhs, rhs)


def not_equal(self, lhs: Primitive, rhs: Primitive) -> Primitive:
    """Bool primitive: where the {kind} operands differ (broadcasting)."""
    return self.binary("ne", lhs, rhs)


def equal_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: where the {kind} `lhs` equals the scalar `rhs`."""
    return self.binary_scalar("eq", lhs, rhs)


def not_equal_elem(self, lhs: Primitive, rhs: Any) -> Primitive:
    """Bool primitive: where the {kind} `lhs` differs from the scalar `rhs`."""
    return self.binary_scalar("ne", lhs, rhs)


def any_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Bool primitive, `dim` kept with size 1: is any element along `dim` non-zero ({kind})?"""
    nonzero = self.binary_scalar("ne", tensor, 0)
    counts = self.reduce("sum", self.cast(nonzero, self.index_dtype()), dim)
    return self.binary_scalar("gt", counts, 0)


def all_dim(self, tensor: Primitive, dim: int) -> Primitive:
    """Bool primitive, `dim` kept with size 1: are all elements along `dim` non-zero ({kind})?"""
    nonzero = self.binary_scalar("ne", tensor, 0)
    n = self.shape(tensor)[dim]
    counts = self.reduce("sum", self.cast(nonzero, self.index_dtype()), dim)
    return self.binary_scalar("eq", counts, n)


def _any(self, tensor: Primitive) -> Primitive:
    """One-element Bool primitive: is any element of the {kind} primitive non-zero?"""
    flat = self.reshape(tensor, (self.numel(tensor),))
    return getattr(self, _prefix(self, tensor) + "any_dim")(flat, 0)


def _all(self, tensor: Primitive) -> Primitive:
    """One-element Bool primitive: is every element of the {kind} primitive non-zero?"""
    flat = self.reshape(tensor, (self.numel(tensor),))
    return getattr(self, _prefix(self, tensor) + "all_dim")(flat, 0)


SHARED = (
    from_data,
    into_data,
    to_device,
    reshape,
    permute,
    swap_dims,
    expand,
    flip,
    _slice,
    slice_assign,
    cat,
    repeat_dim,
    cast,
    gather,
    scatter,
    select,
    select_assign,
    mask_where,
    mask_fill,
    equal,
    not_equal,
    equal_elem,
    not_equal_elem,
    any_dim,
    all_dim,
    _any,
    _all,
)
