"""The plain data a record is made of, and the errors of reading and writing one.

A record is a tree of plain Python values, so that whoever produces it (a module, an optimizer)
and whoever stores it (a recorder) only agree on data:

- `dict[str, node]`: a struct (a module's fields, in declaration order);
- `list[node]`: a sequence of variable length (Rust `Vec`);
- `tuple[node, ...]`: a sequence of fixed length (Rust arrays and tuples);
- `ParamRecord`: a parameter, an id plus its values as `TensorData`;
- `Some(node)`: a present optional field (only bincode tells it apart from the bare node);
- `None`: an absent optional field, or a constant (Burn stores both as "none").
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from burn.tensor import BurnError, TensorData


class RecordError(BurnError, ValueError):
    """A record that cannot be written or read: the message names the file and what differs."""


class RecordNotFoundError(RecordError, FileNotFoundError):
    """The record file does not exist."""


@dataclass(eq=True)
class ParamRecord:
    """One parameter: its stable id (Burn's base32 text form) and its values.

    `data` is None only in a schema, the shape of a record without values that the bincode
    decoder follows (bincode stores no field names).
    """

    id: str
    data: TensorData | None

    def __repr__(self) -> str:
        if self.data is None:
            return f"ParamRecord(id={self.id!r})"
        return (
            f"ParamRecord(id={self.id!r}, shape={self.data.shape}, dtype={self.data.dtype.value})"
        )


class Some:
    """A present value of an optional field (Rust `Option::Some`).

    Named formats store it as the bare value; bincode prefixes it with a tag byte, so a schema
    must say which fields are optional for a Rust program to read the file.
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, Some) and self.value == other.value

    __hash__ = None

    def __repr__(self) -> str:
        return f"Some({self.value!r})"


def unwrap_some(node):
    """The node without its `Some` wrapper."""
    return node.value if isinstance(node, Some) else node


class DeferredRecord(abc.ABC):
    """A record whose final form depends on the module that loads it.

    Weights written by another framework name and lay out parameters by that framework's
    conventions (PyTorch's `Linear` weight is transposed, its norms say `weight` where ours say
    `gamma`); only the loading module knows which convention applies where. `Module.load_record`
    calls `resolve(module)` first and loads the plain record it returns.

    Attributes:
        device: where the loaded tensors go when `load_record` is not given a device.
    """

    device = None

    @abc.abstractmethod
    def resolve(self, module) -> dict | None:
        """The plain record (nested dicts, lists, `ParamRecord`s) for `module`."""
