"""The lazy transforms."""

from __future__ import annotations

import numpy as np
import pytest
from burn.data import (
    ComposedDataset,
    DatasetError,
    DatasetIndexError,
    InMemDataset,
    Mapper,
    MapperDataset,
    PartialDataset,
    SamplerDataset,
    SelectionDataset,
    ShuffledDataset,
    WindowsDataset,
    train_valid_test_split,
    windows,
)


class Counting(InMemDataset):
    """Counts reads, to prove transforms are lazy."""

    def __init__(self, items):
        super().__init__(items)
        self.reads = 0

    def get(self, index):
        self.reads += 1
        return super().get(index)


def test_mapper_is_lazy_and_accepts_both_forms():
    base = Counting(range(5))
    ds = MapperDataset(base, lambda x: x * 10)
    assert base.reads == 0
    assert ds[2] == 20
    assert base.reads == 1
    assert ds.get(5) is None
    assert ds.get_many([0, 4]) == [0, 40]

    class AddOne(Mapper):
        def map(self, item):
            return item + 1

    assert list(MapperDataset([1, 2], AddOne())) == [2, 3]


def test_partial_dataset_and_splits():
    ds = InMemDataset(range(10))
    part = PartialDataset(ds, 2, 5)
    assert list(part) == [2, 3, 4]
    assert part.get(3) is None
    assert list(PartialDataset(ds, 8, 100)) == [8, 9]
    assert list(PartialDataset(ds, 5, 2)) == []
    assert [list(p) for p in PartialDataset.split(ds, 3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert [len(p) for p in PartialDataset.split_chunks(ds, 4)] == [4, 4, 2]
    parts = PartialDataset.split_ratios(ds, [0.8, 0.1, 0.1])
    assert [list(p) for p in parts] == [list(range(8)), [8], [9]]
    with pytest.raises(DatasetError):
        PartialDataset.split(ds, 0)
    with pytest.raises(DatasetError):
        PartialDataset.split_ratios(ds, [-1, 2])


def test_train_valid_test_split_covers_everything_once():
    ds = InMemDataset(range(100))
    train, valid, test = train_valid_test_split(ds, valid=0.2, test=0.1, seed=3)
    assert (len(train), len(valid), len(test)) == (70, 20, 10)
    assert sorted([*train, *valid, *test]) == list(range(100))
    again = train_valid_test_split(ds, valid=0.2, test=0.1, seed=3)[0]
    assert list(again) == list(train)
    with pytest.raises(DatasetError):
        train_valid_test_split(ds, valid=0.7, test=0.7)


def test_shuffled_is_a_seeded_permutation():
    ds = InMemDataset(range(50))
    a = ShuffledDataset(ds, 7)
    assert sorted(a) == list(range(50))
    assert list(a) != list(range(50))
    assert list(ShuffledDataset.with_seed(ds, 7)) == list(a)
    assert list(ShuffledDataset(ds, 8)) != list(a)
    assert a.get(50) is None


def test_sampler_with_and_without_replacement():
    ds = InMemDataset(range(10))
    with_repl = SamplerDataset(ds, 1000, seed=1)
    values = list(with_repl)
    assert len(values) == 1000 and set(values) == set(range(10))
    assert list(SamplerDataset(ds, 1000, seed=1)) == values  # seeded

    without = SamplerDataset(ds, 25, replacement=False, seed=2)
    values = list(without)
    assert len(values) == 25
    # each full pass sees every item exactly once
    assert sorted(values[:10]) == list(range(10)) and sorted(values[10:20]) == list(range(10))
    assert len(SamplerDataset(ds, ratio=0.5, seed=0)) == 5
    assert len(SamplerDataset(ds)) == 10
    with pytest.raises(DatasetError):
        SamplerDataset(ds, 3, ratio=0.5)
    with pytest.raises(DatasetError):
        SamplerDataset(InMemDataset([]), 3)


def test_sampler_resample_draws_again():
    ds = SamplerDataset(InMemDataset(range(1000)), 20, seed=4)
    first = list(ds)
    ds.resample()
    assert list(ds) != first


def test_composed_concatenates():
    ds = ComposedDataset([InMemDataset([1, 2]), InMemDataset([]), [3, 4, 5]])
    assert len(ds) == 5
    assert list(ds) == [1, 2, 3, 4, 5]
    assert ds.get(5) is None and ds.get(-1) is None


def test_windows():
    ds = InMemDataset(range(5))
    w = WindowsDataset(ds, 3)
    assert len(w) == 3
    assert list(w) == [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    assert w.get(3) is None
    assert len(windows(ds, 6)) == 0
    with pytest.raises(DatasetError):
        WindowsDataset(ds, 0)


def test_selection():
    ds = InMemDataset("abcdef")
    sel = SelectionDataset.from_indices_checked(ds, [5, 0, 2])
    assert list(sel) == ["f", "a", "c"]
    with pytest.raises(DatasetIndexError):
        SelectionDataset.from_indices_checked(ds, [6])
    assert len(SelectionDataset.from_indices_unchecked(ds, [6])) == 1
    shuffled = SelectionDataset.new_shuffled(ds, seed=3)
    assert sorted(shuffled) == list("abcdef")
    assert sorted(shuffled.shuffle(5)) == list("abcdef")
    assert list(sel.slice(1, 3)) == ["a", "c"]
    assert [list(p) for p in SelectionDataset(ds, range(6)).split(2)] == [list("abc"), list("def")]
    assert sel.get_many([2, 0]) == ["c", "f"]


def test_transforms_stack_without_copying():
    base = Counting(np.arange(100).tolist())
    pipeline = MapperDataset(
        PartialDataset(ShuffledDataset(ComposedDataset([base, base]), seed=0), 0, 50), lambda x: -x
    )
    assert base.reads == 0
    assert len(pipeline) == 50
    assert all(-99 <= v <= 0 for v in pipeline)
    assert base.reads == 50
