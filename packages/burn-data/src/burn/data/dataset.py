"""The `Dataset` protocol and the in-memory storage.

A dataset is a random-access collection: `get(index)` in constant time and `len()`. There is
no streaming API: every transform and the DataLoader rely on knowing the size and reaching any
item directly, which is what makes shuffling, splitting and parallel loading cheap.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from burn.data.errors import DatasetError, DatasetIndexError

I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741


class Dataset(ABC, Generic[I]):
    """A random-access collection of items.

    Subclasses implement `get` (returning `None` past the end, like Burn's `Option`) and `len`;
    the Python protocol (`ds[i]`, `len(ds)`, `for item in ds`) comes for free.
    """

    @abstractmethod
    def get(self, index: int) -> I | None:
        """The item at `index`, or `None` when `index` is outside `0..len()`."""

    @abstractmethod
    def len(self) -> int:
        """How many items the dataset holds."""

    def is_empty(self) -> bool:
        return self.len() == 0

    def iter(self) -> Iterator[I]:
        """The items in index order."""
        for index in range(self.len()):
            item = self.get(index)
            if item is None:
                return
            yield item

    def get_many(self, indices: Sequence[int]) -> list[I]:
        """The items at `indices`; storages override it to fetch in one round trip."""
        out = []
        for index in indices:
            item = self.get(index)
            if item is None:
                raise DatasetIndexError(
                    f"{type(self).__name__}: index {index} out of range 0..{self.len()}"
                )
            out.append(item)
        return out

    def __len__(self) -> int:
        return self.len()

    def __iter__(self) -> Iterator[I]:
        return self.iter()

    def __getitem__(self, index):
        if isinstance(index, slice):
            from burn.data.transform import SelectionDataset

            return SelectionDataset(self, range(*index.indices(self.len())))
        n = self.len()
        if not isinstance(index, int):
            try:
                index = int(index.__index__())
            except AttributeError:
                raise DatasetError(
                    f"{type(self).__name__}: index must be an int, got {type(index).__name__}"
                ) from None
        position = index + n if index < 0 else index
        item = self.get(position) if 0 <= position < n else None
        if item is None:
            raise DatasetIndexError(
                f"{type(self).__name__}: index {index} out of range for {n} items"
            )
        return item

    def __repr__(self) -> str:
        return f"{type(self).__name__}(len={self.len()})"


def as_dataset(source: Dataset[I] | Sequence[I]) -> Dataset[I]:
    """`source` itself when it is a dataset, else a sequence wrapped in an `InMemDataset`."""
    if isinstance(source, Dataset):
        return source
    if hasattr(source, "get") and hasattr(source, "len"):
        return _Adapter(source)
    if isinstance(source, Sequence):
        return InMemDataset(source)
    raise DatasetError(f"expected a Dataset or a sequence, got {type(source).__name__}")


class _Adapter(Dataset[I]):
    """Gives the Python protocol to a duck-typed object with `get` and `len`."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def get(self, index: int) -> I | None:
        return self.inner.get(index)

    def len(self) -> int:
        return self.inner.len()


class InMemDataset(Dataset[I]):
    """Items held in a Python list; the storage for small data and tests."""

    def __init__(self, items: Iterable[I]) -> None:
        self.items: list[I] = list(items)

    def get(self, index: int) -> I | None:
        if 0 <= index < len(self.items):
            return self.items[index]
        return None

    def len(self) -> int:
        return len(self.items)

    def get_many(self, indices: Sequence[int]) -> list[I]:
        n = len(self.items)
        for i in indices:
            if not 0 <= i < n:
                raise DatasetIndexError(f"InMemDataset: index {i} out of range 0..{n}")
        return [self.items[i] for i in indices]

    @classmethod
    def from_dataset(cls, dataset: Dataset[I] | Sequence[I]) -> InMemDataset[I]:
        """A copy of every item of `dataset` in memory (to make a slow source fast)."""
        return cls(as_dataset(dataset).iter())

    @classmethod
    def from_json_rows(
        cls, path: str | os.PathLike, item_type: Callable[..., I] | None = None
    ) -> InMemDataset:
        """One item per JSON Lines row: `item_type(**row)`, or the dict itself."""
        items = []
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DatasetError(
                        f"{os.fspath(path)}:{number}: not valid JSON ({e.msg})"
                    ) from None
                items.append(build_item(row, item_type, where=f"{os.fspath(path)}:{number}"))
        return cls(items)

    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike,
        item_type: Callable[..., I] | None = None,
        *,
        delimiter: str = ",",
        has_header: bool = True,
        fieldnames: Sequence[str] | None = None,
    ) -> InMemDataset:
        """One item per CSV row; a dataclass `item_type` gets values of its field types."""
        items = []
        with open(path, encoding="utf-8", newline="") as f:
            names = list(fieldnames) if fieldnames is not None else None
            if names is None and not has_header:
                raise DatasetError(f"{os.fspath(path)}: a CSV without header needs `fieldnames`")
            reader = csv.DictReader(f, fieldnames=names, delimiter=delimiter)
            if names is not None and has_header:
                next(reader, None)
            for number, row in enumerate(reader, 2 if has_header else 1):
                items.append(
                    build_item(row, item_type, where=f"{os.fspath(path)}:{number}", convert=True)
                )
        return cls(items)


# ---------------------------------------------------------------------- item construction
def _field_types(item_type) -> dict[str, Any] | None:
    if not dataclasses.is_dataclass(item_type):
        return None
    try:
        hints = typing.get_type_hints(item_type)
    except Exception:  # unresolvable annotations: take the raw ones
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(item_type)}


def _convert(value, kind, where: str, name: str):
    """A CSV string turned into `kind` (int, float, bool, str, or Optional of those)."""
    origin = typing.get_origin(kind)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if value in (None, ""):
            return None
        kind = args[0] if len(args) == 1 else str
    if not isinstance(value, str) or kind in (str, Any):
        return value
    try:
        if kind is bool:
            lowered = value.strip().lower()
            if lowered in ("1", "true", "yes"):
                return True
            if lowered in ("0", "false", "no", ""):
                return False
            raise ValueError(value)
        if kind in (int, float):
            return kind(value)
    except ValueError:
        raise DatasetError(
            f"{where}: field {name!r}: cannot read {value!r} as {kind.__name__}"
        ) from None
    return value


def build_item(
    row: Mapping[str, Any] | Sequence[Any], item_type, *, where: str = "", convert: bool = False
):
    """`row` (a mapping of field names, or values in field order) as an `item_type`.

    With no `item_type` the row is returned as a dict. With a dataclass only its declared fields
    are read, so a storage may hold more columns than the item needs (as Burn allows).
    """
    if item_type is None:
        return dict(row) if isinstance(row, Mapping) else row
    fields = _field_types(item_type)
    if fields is not None:
        if not isinstance(row, Mapping):
            row = dict(zip(fields, row, strict=False))
        missing = [name for name in fields if name not in row and _required(item_type, name)]
        if missing:
            raise DatasetError(
                f"{where}: {item_type.__name__} needs field(s) {missing}, found {sorted(row)}"
            )
        values = {}
        for name, kind in fields.items():
            if name in row:
                values[name] = _convert(row[name], kind, where, name) if convert else row[name]
        return item_type(**values)
    if isinstance(row, Mapping):
        return item_type(**row)
    return item_type(*row)


def _required(item_type, name: str) -> bool:
    for f in dataclasses.fields(item_type):
        if f.name == name:
            return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    return False
