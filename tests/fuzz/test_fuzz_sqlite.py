"""Fuzzed SQLite dataset files and item blobs: every failure is a burn error naming the file."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import msgpack
import numpy as np
from burn.data import SqliteDataset, SqliteDatasetWriter

from .conftest import BYTE_MUTATORS, check, mutate_tree


@dataclass
class Row:
    image: bytes
    label: int


def _database(path) -> bytes:
    rng = np.random.default_rng(0)
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("blobs", [{"image": rng.bytes(16), "label": i} for i in range(40)])
        writer.write_rows("columns", [{"image": rng.bytes(16), "label": i} for i in range(40)])
    return path.read_bytes()


def test_fuzzed_database_files_give_burn_errors_only(tmp_path, fuzz):
    corpus = [_database(tmp_path / "seed.db")]
    target = tmp_path / "case.db"

    def load(raw: bytes) -> None:
        target.write_bytes(raw)
        for split in ("blobs", "columns"):
            for item_type in (None, Row):
                dataset = SqliteDataset(target, split, item_type)
                dataset.get_many(list(range(min(dataset.len(), 64))))

    # Page-level damage: flips, truncation, big numbers in headers and cells.
    stats = fuzz("sqlite file", corpus, load, BYTE_MUTATORS)
    check(stats)


def test_fuzzed_item_blobs_give_burn_errors_only(tmp_path, fuzz):
    path = tmp_path / "items.db"
    _database(path)
    conn = sqlite3.connect(path)
    blob = conn.execute("select item from blobs where row_id = 1").fetchone()[0]

    def tree(rng, raw: bytes) -> bytes:
        try:
            return msgpack.packb(mutate_tree(rng, msgpack.unpackb(raw)), use_bin_type=True)
        except (OverflowError, TypeError, ValueError):
            return raw[:-1]

    def load(raw: bytes) -> None:
        conn.execute("update blobs set item = ? where row_id = 1", (raw,))
        conn.commit()
        for item_type in (None, Row):
            SqliteDataset(path, "blobs", item_type).get(0)

    stats = fuzz("sqlite item blob", [blob], load, list(BYTE_MUTATORS) + [tree] * 4)
    conn.close()
    check(stats)
