"""Lazy dataset transforms: each one is a view that computes items on access.

None of them copies the items of the dataset it wraps; they hold index tables (numpy arrays,
8 bytes per item) at most. All randomness comes from a seed or a `numpy.random.Generator`, so a
pipeline built with the same seeds yields the same items on any machine and in any worker.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from typing import Generic

import numpy as np
from burn.data.dataset import Dataset, I, O, as_dataset
from burn.data.errors import DatasetError, DatasetIndexError

RngSource = int | np.random.Generator | None


def make_rng(seed: RngSource) -> np.random.Generator:
    """A generator from a seed, an existing generator (used as is), or fresh entropy for `None`."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


class Mapper(Generic[I, O]):
    """An object form of a mapping function (Burn's `Mapper` trait); any callable works too."""

    def map(self, item: I) -> O:  # pragma: no cover - interface
        raise NotImplementedError


class MapperDataset(Dataset[O]):
    """Applies `mapper` to each item when it is read: decoding, augmentation, tokenising."""

    def __init__(
        self, dataset: Dataset[I] | Sequence[I], mapper: Callable[[I], O] | Mapper[I, O]
    ) -> None:
        self.dataset = as_dataset(dataset)
        self.mapper = mapper
        self._fn = (
            mapper.map
            if isinstance(mapper, Mapper) or (hasattr(mapper, "map") and not callable(mapper))
            else mapper
        )

    def get(self, index: int) -> O | None:
        item = self.dataset.get(index)
        return None if item is None else self._fn(item)

    def get_many(self, indices: Sequence[int]) -> list[O]:
        return [self._fn(item) for item in self.dataset.get_many(indices)]

    def len(self) -> int:
        return self.dataset.len()


class _IndexedView(Dataset[I]):
    """A dataset that reads `dataset` through an index table."""

    dataset: Dataset[I]
    indices: np.ndarray

    def get(self, index: int) -> I | None:
        if 0 <= index < len(self.indices):
            return self.dataset.get(int(self.indices[index]))
        return None

    def get_many(self, indices: Sequence[int]) -> list[I]:
        n = len(self.indices)
        for i in indices:
            if not 0 <= i < n:
                raise DatasetIndexError(f"{type(self).__name__}: index {i} out of range 0..{n}")
        return self.dataset.get_many([int(j) for j in self.indices[list(indices)]])

    def len(self) -> int:
        return len(self.indices)


class SelectionDataset(_IndexedView[I]):
    """A chosen list of indices of another dataset, in a chosen order."""

    def __init__(
        self,
        dataset: Dataset[I] | Sequence[I],
        indices: Sequence[int] | np.ndarray,
        *,
        check: bool = True,
    ) -> None:
        self.dataset = as_dataset(dataset)
        self.indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        if check and len(self.indices):
            n = self.dataset.len()
            bad = self.indices[(self.indices < 0) | (self.indices >= n)]
            if len(bad):
                raise DatasetIndexError(
                    f"SelectionDataset: index {int(bad[0])} out of range 0..{n}"
                )

    @classmethod
    def from_indices_checked(cls, dataset, indices) -> SelectionDataset[I]:
        return cls(dataset, indices, check=True)

    @classmethod
    def from_indices_unchecked(cls, dataset, indices) -> SelectionDataset[I]:
        """Skips the range check (for very large index lists known to be valid)."""
        return cls(dataset, indices, check=False)

    @classmethod
    def new_shuffled(cls, dataset, seed: RngSource = None) -> SelectionDataset[I]:
        ds = as_dataset(dataset)
        return cls(ds, make_rng(seed).permutation(ds.len()), check=False)

    def shuffle(self, seed: RngSource = None) -> SelectionDataset[I]:
        """The same selection in a new random order (a new view; this one is unchanged)."""
        return SelectionDataset(self.dataset, make_rng(seed).permutation(self.indices), check=False)

    def slice(self, start: int, end: int) -> SelectionDataset[I]:
        return SelectionDataset(self.dataset, self.indices[start:end], check=False)

    def split(self, num: int) -> list[SelectionDataset[I]]:
        """`num` selections of nearly equal size that together cover this one."""
        return [
            SelectionDataset(self.dataset, part, check=False)
            for part in np.array_split(self.indices, num)
        ]


class ShuffledDataset(_IndexedView[I]):
    """The items of `dataset` in a random order fixed at construction (seeded)."""

    def __init__(self, dataset: Dataset[I] | Sequence[I], seed: RngSource = None) -> None:
        self.dataset = as_dataset(dataset)
        self.indices = make_rng(seed).permutation(self.dataset.len())

    @classmethod
    def with_seed(cls, dataset, seed: int) -> ShuffledDataset[I]:
        return cls(dataset, seed)


class SamplerDataset(_IndexedView[I]):
    """`size` items drawn from `dataset`, with or without replacement.

    Burn draws a fresh random index on every `get`; here the draw is made once, at construction
    (and again on `resample()`), so the same index gives the same item in every worker.
    Without replacement the dataset is walked in shuffled passes, so `size` may exceed its length.
    """

    def __init__(
        self,
        dataset: Dataset[I] | Sequence[I],
        size: int | None = None,
        *,
        ratio: float | None = None,
        replacement: bool = True,
        seed: RngSource = None,
    ) -> None:
        self.dataset = as_dataset(dataset)
        n = self.dataset.len()
        if size is not None and ratio is not None:
            raise DatasetError("SamplerDataset: give `size` or `ratio`, not both")
        if ratio is not None:
            if ratio < 0:
                raise DatasetError(f"SamplerDataset: ratio must be >= 0, got {ratio}")
            size = math.ceil(n * ratio)
        self.size = n if size is None else int(size)
        if self.size < 0:
            raise DatasetError(f"SamplerDataset: size must be >= 0, got {self.size}")
        if self.size > 0 and n == 0:
            raise DatasetError("SamplerDataset: cannot sample from an empty dataset")
        self.replacement = replacement
        self.rng = make_rng(seed)
        self.resample()

    def resample(self) -> None:
        """Draws a new sample (call it between epochs if wanted; the DataLoader does not)."""
        n = self.dataset.len()
        if self.replacement:
            self.indices = (
                self.rng.integers(0, n, size=self.size, dtype=np.int64)
                if n
                else np.zeros(0, np.int64)
            )
        else:
            passes = [self.rng.permutation(n) for _ in range(-(-self.size // n))] if n else []
            self.indices = np.concatenate(passes)[: self.size] if passes else np.zeros(0, np.int64)


class PartialDataset(Dataset[I]):
    """The items `start..end` of `dataset` (a range view; Python slice semantics for bounds)."""

    def __init__(self, dataset: Dataset[I] | Sequence[I], start: int, end: int) -> None:
        self.dataset = as_dataset(dataset)
        n = self.dataset.len()
        self.start, self.end, _ = slice(start, end).indices(n)
        self.end = max(self.end, self.start)

    def get(self, index: int) -> I | None:
        if 0 <= index < self.end - self.start:
            return self.dataset.get(self.start + index)
        return None

    def get_many(self, indices: Sequence[int]) -> list[I]:
        n = self.end - self.start
        for i in indices:
            if not 0 <= i < n:
                raise DatasetIndexError(f"PartialDataset: index {i} out of range 0..{n}")
        return self.dataset.get_many([self.start + i for i in indices])

    def len(self) -> int:
        return self.end - self.start

    @staticmethod
    def split(dataset, num: int) -> list[PartialDataset[I]]:
        """`num` contiguous parts of nearly equal size (the first ones get the remainder)."""
        ds = as_dataset(dataset)
        if num <= 0:
            raise DatasetError(f"PartialDataset.split: num must be > 0, got {num}")
        n = ds.len()
        bounds = [0]
        for k in range(num):
            bounds.append(bounds[-1] + n // num + (1 if k < n % num else 0))
        return [PartialDataset(ds, a, b) for a, b in zip(bounds, bounds[1:], strict=False)]

    @staticmethod
    def split_chunks(dataset, chunk_size: int) -> list[PartialDataset[I]]:
        """Contiguous parts of `chunk_size` items (the last one may be shorter)."""
        ds = as_dataset(dataset)
        if chunk_size <= 0:
            raise DatasetError(
                f"PartialDataset.split_chunks: chunk_size must be > 0, got {chunk_size}"
            )
        return [PartialDataset(ds, a, a + chunk_size) for a in range(0, ds.len(), chunk_size)]

    @staticmethod
    def split_ratios(dataset, ratios: Sequence[float]) -> list[PartialDataset[I]]:
        """Contiguous parts in the given proportions, e.g. `[0.8, 0.1, 0.1]` for train/valid/test.

        Ratios are normalised by their sum; rounding gives the remainder to the last part, so
        every item lands in exactly one part. Shuffle first if the source is ordered.
        """
        ds = as_dataset(dataset)
        if not ratios or any(r < 0 for r in ratios) or sum(ratios) <= 0:
            raise DatasetError(
                f"PartialDataset.split_ratios: ratios must be >= 0, sum > 0; got {list(ratios)}"
            )
        n, total = ds.len(), float(sum(ratios))
        cuts = [0]
        acc = 0.0
        for r in ratios[:-1]:
            acc += r
            cuts.append(round(n * acc / total))
        cuts.append(n)
        return [PartialDataset(ds, a, b) for a, b in zip(cuts, cuts[1:], strict=False)]


def train_valid_test_split(dataset, valid: float = 0.1, test: float = 0.1, seed: RngSource = None):
    """Shuffled (when `seed` is given) train/valid/test views with the given fractions."""
    if valid < 0 or test < 0 or valid + test > 1:
        raise DatasetError(f"train_valid_test_split: bad fractions valid={valid}, test={test}")
    ds = as_dataset(dataset)
    if seed is not None:
        ds = ShuffledDataset(ds, seed)
    train, valid_ds, test_ds = PartialDataset.split_ratios(ds, [1 - valid - test, valid, test])
    return train, valid_ds, test_ds


class ComposedDataset(Dataset[I]):
    """Several datasets one after another, as one."""

    def __init__(self, datasets: Sequence[Dataset[I] | Sequence[I]]) -> None:
        self.datasets = [as_dataset(d) for d in datasets]
        self.offsets = [0]
        for d in self.datasets:
            self.offsets.append(self.offsets[-1] + d.len())

    def get(self, index: int) -> I | None:
        if not 0 <= index < self.offsets[-1]:
            return None
        k = bisect.bisect_right(self.offsets, index) - 1
        return self.datasets[k].get(index - self.offsets[k])

    def len(self) -> int:
        return self.offsets[-1]


class WindowsDataset(Dataset[list[I]]):
    """Overlapping windows of `size` consecutive items: item `i` is `[ds[i], ..., ds[i+size-1]]`.

    The usual shape of time-series and language-model data.
    """

    def __init__(self, dataset: Dataset[I] | Sequence[I], size: int) -> None:
        if size <= 0:
            raise DatasetError(f"WindowsDataset: size must be > 0, got {size}")
        self.dataset = as_dataset(dataset)
        self.size = size

    def get(self, index: int) -> list[I] | None:
        if not 0 <= index < self.len():
            return None
        return self.dataset.get_many(range(index, index + self.size))

    def len(self) -> int:
        return max(self.dataset.len() - self.size + 1, 0)


def windows(dataset, size: int) -> WindowsDataset:
    """The windows of `size` consecutive items of `dataset` (Burn's `Windows` trait)."""
    return WindowsDataset(dataset, size)
