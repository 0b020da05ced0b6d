"""`Shape`: the dimensions of a tensor."""

from __future__ import annotations

import math
from collections.abc import Iterable


class Shape:
    """An immutable list of dimensions; compares equal to lists and tuples of the same ints."""

    __slots__ = ("dims",)

    def __init__(self, dims: Iterable[int]):
        if isinstance(dims, Shape):
            dims = dims.dims
        self.dims: tuple[int, ...] = tuple(int(d) for d in dims)

    def num_elements(self) -> int:
        return math.prod(self.dims)

    def num_dims(self) -> int:
        return len(self.dims)

    def __call__(self) -> Shape:
        """The shape itself, so `t.shape()` (Burn's spelling) and `t.shape` (PyTorch's) agree."""
        return self

    def __len__(self) -> int:
        return len(self.dims)

    def __iter__(self):
        return iter(self.dims)

    def __getitem__(self, index):
        return self.dims[index]

    def __eq__(self, other) -> bool:
        if isinstance(other, Shape):
            return self.dims == other.dims
        if isinstance(other, (list, tuple)):
            return list(self.dims) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return f"Shape({list(self.dims)})"
