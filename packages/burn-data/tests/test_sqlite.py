"""SqliteDataset (both of Burn's layouts) and the atomic SqliteDatasetWriter."""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import multiprocessing
import pickle
import sqlite3
import threading

import msgpack
import numpy as np
import pytest
from burn.data import (
    DataLoaderBuilder,
    DatasetError,
    DatasetIndexError,
    SqliteDataset,
    SqliteDatasetWriter,
    sqlite_splits,
)


@dataclasses.dataclass
class Item:
    label: int
    text: str


def burn_blob_db(path, n=20):
    """A database as Burn's writer makes it: row_id + MessagePack `item` (struct as a map)."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            "create table train "
            "(row_id integer primary key autoincrement not null, item blob not null)"
        )
        for i in range(n):
            blob = msgpack.packb({"label": i, "text": f"t{i}"})
            conn.execute("insert into train (item) values (?)", (blob,))


def column_db(path, n=20):
    """A database as Burn's HuggingFace importer makes it: one column per field."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            "create table test (text text, label integer, extra real, row_id integer primary key)"
        )
        conn.executemany(
            "insert into test (text, label, extra) values (?, ?, ?)",
            [(f"t{i}", i, i / 2) for i in range(n)],
        )


def test_reads_burn_item_blob_layout(tmp_path):
    path = tmp_path / "blob.db"
    burn_blob_db(path)
    ds = SqliteDataset(path, "train")
    assert ds.blob_mode and len(ds) == 20
    assert ds[3] == {"label": 3, "text": "t3"}
    assert ds.get(20) is None and ds.get(-1) is None
    typed = SqliteDataset(path, "train", Item)
    assert typed[19] == Item(19, "t19")


def test_reads_struct_serialised_as_array(tmp_path):
    path = tmp_path / "arr.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table train (row_id integer primary key, item blob)")
        conn.execute("insert into train (item) values (?)", (msgpack.packb([7, "seven"]),))
    assert SqliteDataset(path, "train", Item)[0] == Item(7, "seven")


def test_reads_column_layout_subset_in_any_order(tmp_path):
    path = tmp_path / "cols.db"
    column_db(path)
    ds = SqliteDataset(path, "test")
    assert not ds.blob_mode
    assert ds[0] == {"text": "t0", "label": 0, "extra": 0.0}
    typed = SqliteDataset(path, "test", Item)
    assert typed.columns == ["label", "text"]
    assert typed[5] == Item(5, "t5")
    assert typed.get_many([3, 1, 3]) == [Item(3, "t3"), Item(1, "t1"), Item(3, "t3")]


def test_values_many_gives_the_stored_columns_without_building_items(tmp_path):
    path = tmp_path / "cols.db"
    column_db(path)
    typed = SqliteDataset(path, "test", Item)
    assert typed.values_many([4, 0, 4]) == [(4, "t4"), (0, "t0"), (4, "t4")]
    with pytest.raises(DatasetIndexError, match="out of range"):
        typed.values_many([20])
    burn_blob_db(tmp_path / "blob.db")
    with pytest.raises(DatasetError, match="stored as one blob"):
        SqliteDataset(tmp_path / "blob.db", "train").values_many([0])


def test_clear_errors(tmp_path):
    path = tmp_path / "cols.db"
    column_db(path)
    with pytest.raises(DatasetError, match="no split 'nope'.*'test'"):
        SqliteDataset(path, "nope")
    with pytest.raises(DatasetError, match="no database file"):
        SqliteDataset(tmp_path / "missing.db", "train")

    @dataclasses.dataclass
    class Wide:
        label: int
        pixels: bytes

    with pytest.raises(DatasetError, match=r"lacks column\(s\) \['pixels'\]"):
        SqliteDataset(path, "test", Wide)
    with pytest.raises(DatasetIndexError):
        SqliteDataset(path, "test").get_many([20])


def test_writer_round_trip_both_layouts(tmp_path):
    path = tmp_path / "out.db"
    with SqliteDatasetWriter(path) as writer:
        assert writer.write("train", Item(1, "a")) == 0
        writer.write_many(
            "train", [{"label": 2, "text": "b"}, {"label": 3, "text": "c", "v": np.arange(3)}]
        )
        writer.write_rows(
            "test", ({"label": i, "text": str(i), "pixels": bytes([i] * 4)} for i in range(5))
        )
        assert not path.exists()  # nothing is visible before completion
    assert sqlite_splits(path) == ["test", "train"]
    train = SqliteDataset(path, "train", Item)
    assert [train[i] for i in range(3)] == [Item(1, "a"), Item(2, "b"), Item(3, "c")]
    assert SqliteDataset(path, "train")[2]["v"] == [0, 1, 2]
    test = SqliteDataset(path, "test")
    assert test[4] == {"label": 4, "text": "4", "pixels": bytes([4] * 4)}
    assert not list(tmp_path.glob("*.tmp"))


def test_writer_refuses_to_overwrite_and_checks_names(tmp_path):
    path = tmp_path / "out.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write("train", 1)
    with pytest.raises(DatasetError, match="exists"):
        SqliteDatasetWriter(path)
    with SqliteDatasetWriter(path, overwrite=True) as writer:
        with pytest.raises(DatasetError, match="split names"):
            writer.write("bad name; drop table", 1)
        writer.write("train", 2)
        with pytest.raises(DatasetError, match="MessagePack"):
            writer.write_rows("train", [{"a": 1}])
    assert SqliteDataset(path, "train")[0] == 2


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "out.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write("train", "old")
    with pytest.raises(RuntimeError):
        with SqliteDatasetWriter(path, overwrite=True) as writer:
            writer.write("train", "new")
            raise RuntimeError("crash mid-write")
    assert SqliteDataset(path, "train")[0] == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.db"]


def test_open_readers_survive_a_republish(tmp_path):
    path = tmp_path / "out.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", range(10))
    old = SqliteDataset(path, "train")
    assert old[9] == 9
    with SqliteDatasetWriter(path, overwrite=True) as writer:
        writer.write_many("train", range(100, 105))
    assert old[9] == 9  # the open connection still sees the file it opened
    assert SqliteDataset(path, "train")[0] == 100


def _write_db(path, n):
    with SqliteDatasetWriter(path) as writer:
        writer.write_rows("train", ({"label": i, "text": f"t{i}"} for i in range(n)))


def _read_all(ds):
    return [ds[i].label for i in range(len(ds))]


def test_concurrent_reader_threads(tmp_path):
    path = tmp_path / "c.db"
    _write_db(path, 500)
    ds = SqliteDataset(path, "train", Item)
    errors = []

    def reader(seed):
        try:
            rng = np.random.default_rng(seed)
            for i in rng.integers(0, 500, 300):
                assert ds[int(i)].label == i
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_concurrent_reader_processes(tmp_path):
    path = tmp_path / "c.db"
    _write_db(path, 300)
    ds = SqliteDataset(path, "train", Item)
    ds[0]  # open a connection in this process first: children must not reuse it
    restored = pickle.loads(pickle.dumps(ds))
    assert restored[5] == Item(5, "t5")
    ctx = multiprocessing.get_context("fork")
    with cf.ProcessPoolExecutor(3, mp_context=ctx) as pool:
        results = list(pool.map(_read_all, [ds] * 4))
    assert all(r == list(range(300)) for r in results)


def test_dataloader_over_sqlite_with_workers(tmp_path):
    path = tmp_path / "c.db"
    _write_db(path, 257)
    ds = SqliteDataset(path, "train", Item)
    for kind in ("thread", "process"):
        loader = DataLoaderBuilder(lambda items, device: [i.label for i in items]).batch_size(64)
        loader = loader.shuffle(0).num_workers(2).worker_kind(kind).build(ds)
        labels = [x for b in loader for x in b]
        assert sorted(labels) == list(range(257))
