"""SQLite storage in Burn's layout, and an atomic writer for it.

A database holds one table per split (`train`, `test`, ...). Each table has a 1-based
`row_id INTEGER PRIMARY KEY` (item `i` is `row_id = i + 1`) and either one column per item
field, or exactly one `item` BLOB column holding the item as MessagePack. Readers detect which.

Reads use the standard library's `sqlite3` directly (one read-only connection per thread and
per process), because a `get` is one indexed lookup and any layer on top of it shows up in the
throughput; writing goes through sqlite-utils, which creates tables from the data's types.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
from burn.data.dataset import Dataset, I, build_item
from burn.data.errors import DatasetError, DatasetIndexError

_TABLES = "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'"
_LENGTH = "select coalesce(max(row_id), 0) from {}"
# What reading a damaged file raises: sqlite's errors, and text that is not UTF-8.
_READ_ERRORS = (sqlite3.Error, ValueError)
_IDENT_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _default(value):
    """MessagePack fallback for numpy values: arrays become (nested) lists, as serde writes Vecs."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    raise TypeError(f"cannot store a {type(value).__name__} in MessagePack")


def pack_item(item: Any) -> bytes:
    """An item (dict, dataclass, list, numbers, strings, bytes, numpy arrays) as MessagePack."""
    return msgpack.packb(item, default=_default, use_bin_type=True)


def unpack_item(blob: bytes) -> Any:
    return msgpack.unpackb(blob, raw=False, strict_map_key=False)


class SqliteDataset(Dataset[I]):
    """One split of a SQLite database in Burn's layout, read lazily.

    Items are dicts, or `item_type(**fields)` when a dataclass (or any callable taking the fields
    as keywords) is given; with per-field columns only the fields the dataclass declares are read.
    Safe to share between threads, and picklable, so process workers reopen it on their side.
    """

    def __init__(self, db_file: str | os.PathLike, split: str, item_type: Any = None) -> None:
        self.db_file = Path(db_file)
        self.split = split
        self.item_type = item_type
        self._local = threading.local()
        self._pid = os.getpid()
        self._open: list[tuple[weakref.ref, sqlite3.Connection]] = []
        self._open_lock = threading.Lock()
        if not self.db_file.is_file():
            raise DatasetError(f"SqliteDataset: no database file at {self.db_file}")
        try:
            self._inspect(split, item_type)
        except _READ_ERRORS as e:
            raise DatasetError(
                f"SqliteDataset: {self.db_file} is not a readable SQLite database ({e}): "
                "a damaged or partial file? delete it to have it rebuilt"
            ) from None

    def _inspect(self, split: str, item_type: Any) -> None:
        """Find the split's layout (blob or columns) and length; sqlite errors go to the caller."""
        conn = self._conn()
        tables = [r[0] for r in conn.execute(_TABLES)]
        if split not in tables:
            raise DatasetError(
                f"SqliteDataset: {self.db_file} has no split {split!r} (splits: {sorted(tables)})"
            )
        columns = [r[1] for r in conn.execute(f"pragma table_info({_quote(split)})")]
        if "row_id" not in columns:
            raise DatasetError(
                f"SqliteDataset: table {split!r} of {self.db_file} has no row_id column"
            )
        self.blob_mode = sorted(columns) == ["item", "row_id"]
        fields = [c for c in columns if c != "row_id"]
        if not self.blob_mode and dataclasses.is_dataclass(item_type):
            wanted = [f.name for f in dataclasses.fields(item_type)]
            missing = [w for w in wanted if w not in fields and _required(item_type, w)]
            if missing:
                raise DatasetError(
                    f"SqliteDataset: table {split!r} of {self.db_file} lacks column(s) {missing} "
                    f"needed by {item_type.__name__} (columns: {fields})"
                )
            fields = [w for w in wanted if w in fields]
        self.columns = ["item"] if self.blob_mode else fields
        cols = ", ".join(_quote(c) for c in self.columns)
        self._select_one = f"select {cols} from {_quote(split)} where row_id = ?"
        self._select_many = f"select row_id, {cols} from {_quote(split)} where row_id in ({{}})"
        length = conn.execute(f"select coalesce(max(row_id), 0) from {_quote(split)}").fetchone()[0]
        if not isinstance(length, int) or length < 0:
            raise DatasetError(
                f"SqliteDataset: table {split!r} of {self.db_file} has row_id {length!r}, "
                "not a positive integer"
            )
        self._len = length

    # connections: one per thread, reopened after a fork
    def _conn(self) -> sqlite3.Connection:
        if self._pid != os.getpid():
            self._local = threading.local()
            self._open = []
            self._open_lock = threading.Lock()
            self._pid = os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            uri = self.db_file.resolve().as_uri() + "?mode=ro"
            try:
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            except _READ_ERRORS as e:
                raise DatasetError(f"SqliteDataset: cannot open {self.db_file}: {e}") from None
            self._local.conn = conn
            self._track(conn)
        return conn

    def _track(self, conn: sqlite3.Connection) -> None:
        """Close the connections of threads that have ended (each DataLoader epoch starts new
        worker threads; without this their connections stay open until a garbage collection)."""
        with self._open_lock:
            kept = []
            for owner, other in self._open:
                thread = owner()
                if thread is not None and thread.is_alive():
                    kept.append((owner, other))
                else:
                    other.close()
            kept.append((weakref.ref(threading.current_thread()), conn))
            self._open = kept

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_local", "_open", "_open_lock"):
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()
        self._open = []
        self._open_lock = threading.Lock()
        self._pid = os.getpid()

    def _decode(self, values: Sequence[Any], index: int):
        where = f"{self.db_file}:{self.split}[{index}]"
        try:
            if self.blob_mode:
                if not isinstance(values[0], bytes):
                    raise DatasetError(
                        f"{where}: the item column holds {type(values[0]).__name__}, not a blob"
                    )
                row = unpack_item(values[0])
                if self.item_type is not None and not isinstance(row, (Mapping, list, tuple)):
                    raise DatasetError(
                        f"{where}: the stored item cannot be read (a {type(row).__name__}, "
                        f"not the fields of {getattr(self.item_type, '__name__', 'an item')})"
                    )
            else:
                row = dict(zip(self.columns, values, strict=True))
            return build_item(row, self.item_type, where=where)
        except DatasetError:
            raise
        except Exception as e:  # msgpack and item constructors raise many unrelated types
            raise DatasetError(
                f"{where}: the stored item cannot be read ({type(e).__name__}: {_clip(e)})"
            ) from None

    def _query(self, sql: str, params: Sequence[Any], indices: Sequence[int]) -> list:
        try:
            return self._conn().execute(sql, params).fetchall()
        except _READ_ERRORS as e:
            shown = list(indices[:5]) + (["..."] if len(indices) > 5 else [])
            raise DatasetError(
                f"SqliteDataset: reading {self.split} {shown} from {self.db_file} failed ({e}): "
                "a damaged file? delete it to have it rebuilt"
            ) from None

    def len(self) -> int:
        return self._len

    def get(self, index: int) -> I | None:
        if not 0 <= index < self._len:
            return None
        rows = self._query(self._select_one, (index + 1,), [index])
        return self._decode(rows[0], index) if rows else None

    def get_many(self, indices: Sequence[int]) -> list[I]:
        """The items at `indices` in one query per 900 rows (SQLite's parameter limit is 999)."""
        indices = [int(i) for i in indices]
        rows = self._rows_at(indices)
        return [self._decode(values, i) for values, i in zip(rows, indices, strict=True)]

    def values_many(self, indices: Sequence[int]) -> list[tuple]:
        """The stored column values of the rows at `indices` (in `columns` order), without
        building items: for a dataset that decodes a whole batch at once (`MnistDataset`)."""
        if self.blob_mode:
            raise DatasetError(f"{self.db_file}:{self.split}: items are stored as one blob")
        return self._rows_at([int(i) for i in indices])

    def _rows_at(self, indices: list[int]) -> list:
        """The stored values of each row at `indices` (checked, in order)."""
        for i in indices:
            if not 0 <= i < self._len:
                raise DatasetIndexError(
                    f"SqliteDataset({self.split}): index {i} out of range 0..{self._len}"
                )
        found: dict[int, Any] = {}
        unique = sorted(set(indices))
        for start in range(0, len(unique), 900):
            part = unique[start : start + 900]
            query = self._select_many.format(", ".join("?" * len(part)))
            for row in self._query(query, [i + 1 for i in part], part):
                found[row[0] - 1] = row[1:]
        missing = [i for i in indices if i not in found]
        if missing:
            raise DatasetIndexError(
                f"SqliteDataset({self.split}): no row for index {missing[0]} in {self.db_file}"
            )
        return [found[i] for i in indices]

    def __repr__(self) -> str:
        mode = "item blob" if self.blob_mode else f"columns {self.columns}"
        return f"SqliteDataset({self.db_file.name}, split={self.split!r}, len={self._len}, {mode})"


def _required(item_type, name: str) -> bool:
    for f in dataclasses.fields(item_type):
        if f.name == name:
            return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    return False


def _clip(error: BaseException, limit: int = 160) -> str:
    text = str(error)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def sqlite_splits(db_file: str | os.PathLike) -> list[str]:
    """The split (table) names of a database."""
    path = Path(db_file)
    if not path.is_file():
        raise DatasetError(f"sqlite_splits: no database file at {path}")
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            return [r[0] for r in conn.execute(_TABLES + " order by name")]
        finally:
            conn.close()
    except _READ_ERRORS as e:
        raise DatasetError(
            f"sqlite_splits: {path} is not a readable SQLite database ({e})"
        ) from None


class SqliteDatasetWriter:
    """Writes splits into a new database and publishes it atomically.

    Rows go to a temporary file next to the target; `set_completed()` (or leaving a `with` block
    without an exception) flushes it and renames it over the target in one step, so a reader sees
    either the old database or the complete new one, never a half-written file. An unfinished
    writer leaves the target untouched and removes its temporary file.

    `write(split, item)` stores an item in Burn's `item` BLOB layout (MessagePack);
    `write_rows(split, rows)` stores dict rows with one column per field.
    """

    def __init__(self, db_file: str | os.PathLike, overwrite: bool = False) -> None:
        self.db_file = Path(db_file)
        if self.db_file.exists() and not overwrite:
            raise DatasetError(
                f"SqliteDatasetWriter: {self.db_file} exists (pass overwrite=True to replace it)"
            )
        self.db_file.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(self.db_file)
        self.tmp_file = self.db_file.with_name(
            f".{self.db_file.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"
        )
        self._conn = sqlite3.connect(self.tmp_file, check_same_thread=False)
        # Nobody reads the temporary file, so durability per statement buys nothing; the file is
        # synced once before it is published.
        self._conn.execute("pragma journal_mode = off")
        self._conn.execute("pragma synchronous = off")
        self._blob_tables: set[str] = set()
        self._column_tables: set[str] = set()
        self._lock = threading.Lock()
        self.completed = False

    def _check_split(self, split: str) -> None:
        if not split or not set(split) <= _IDENT_OK:
            raise DatasetError(
                f"SqliteDatasetWriter: split names are letters, digits and '_', got {split!r}"
            )
        if self.completed:
            raise DatasetError(f"SqliteDatasetWriter: {self.db_file} is already published")

    def write(self, split: str, item: Any) -> int:
        """Appends `item` to `split` (MessagePack `item` column); returns its index."""
        return self.write_many(split, [item]) - 1

    def write_many(self, split: str, items: Iterable[Any]) -> int:
        """Appends items to `split` in the `item` BLOB layout; returns the split's new length."""
        self._check_split(split)
        with self._lock:
            if split in self._column_tables:
                raise DatasetError(
                    f"SqliteDatasetWriter: split {split!r} already holds per-field columns"
                )
            if split not in self._blob_tables:
                self._conn.execute(
                    f"create table if not exists {_quote(split)} "
                    "(row_id integer primary key autoincrement not null, item blob not null)"
                )
                self._blob_tables.add(split)
            self._conn.executemany(
                f"insert into {_quote(split)} (item) values (?)", ((pack_item(it),) for it in items)
            )
            return self._conn.execute(
                f"select coalesce(max(row_id), 0) from {_quote(split)}"
            ).fetchone()[0]

    def write_rows(
        self,
        split: str,
        rows: Iterable[Mapping[str, Any]],
        *,
        columns: Mapping[str, type] | None = None,
        batch_size: int = 1000,
    ) -> int:
        """Appends dict rows to `split`, one column per key; returns the split's new length.

        Column types (`int`, `float`, `str`, `bytes`) come from `columns` when given, else from
        the first row. Numpy arrays are stored as raw bytes, lists and dicts as MessagePack.
        """
        import sqlite_utils

        self._check_split(split)
        rows = (_plain_row(r) for r in rows)
        with self._lock:
            if split in self._blob_tables:
                raise DatasetError(
                    f"SqliteDatasetWriter: split {split!r} already holds MessagePack items"
                )
            db = sqlite_utils.Database(self._conn)
            table = db.table(split)
            if split not in self._column_tables:
                first = next(rows, None)
                if first is None and columns is None:
                    raise DatasetError(f"SqliteDatasetWriter: no rows for new split {split!r}")
                names = list(columns) if columns is not None else list(first)
                if "row_id" in names:
                    raise DatasetError("SqliteDatasetWriter: rows must not carry their own row_id")
                types = {"row_id": int}
                for name in names:
                    given = columns.get(name) if columns is not None else None
                    types[name] = given or _column_type(first.get(name) if first else None)
                table.create(types, pk="row_id", not_null={"row_id"})
                self._column_tables.add(split)
                if first is not None:
                    table.insert(first)
            table.insert_all(rows, batch_size=batch_size, alter=True)
            return self._conn.execute(_LENGTH.format(_quote(split))).fetchone()[0]

    def set_completed(self) -> Path:
        """Publishes the database at `db_file` atomically; returns its path."""
        if self.completed:
            return self.db_file
        with self._lock:
            self._conn.commit()
            self._conn.close()
            with open(self.tmp_file, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(self.tmp_file, self.db_file)
            _fsync_dir(self.db_file.parent)
            self.completed = True
        return self.db_file

    def abort(self) -> None:
        """Drops everything written; the target file is left as it was."""
        if self.completed:
            return
        try:
            self._conn.close()
        finally:
            self.tmp_file.unlink(missing_ok=True)
            self.completed = True

    def __enter__(self) -> SqliteDatasetWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.set_completed()
        else:
            self.abort()

    def __del__(self) -> None:  # an abandoned writer must not leave its temporary file behind
        try:
            if not self.completed:
                self.abort()
        except Exception:
            pass


def _plain_row(row: Mapping[str, Any] | Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        row = {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
    out = {}
    for k, v in row.items():
        if isinstance(v, np.ndarray):
            v = v.tobytes()
        elif isinstance(v, np.generic):
            v = v.item()
        elif isinstance(v, (list, dict)):
            v = pack_item(v)
        out[k] = v
    return out


def _column_type(value) -> type:
    if isinstance(value, bool):
        return int
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes
    return str


#: A writer's temporary file is removed once it is this old even if its process id is in use
#: (by a process that reused the id after the writer died).
STALE_AFTER_S = 24 * 3600.0


def remove_stale_temp_files(db_file: Path) -> int:
    """Remove temporary files of `db_file` left by writers that died (killed mid-build).

    They are named `.<name>.<pid>.<random>.tmp`; one whose process is gone (or that is older
    than `STALE_AFTER_S`) is removed. Returns how many were removed.
    """
    prefix = f".{db_file.name}."
    removed = 0
    try:
        entries = list(os.scandir(db_file.parent))
    except OSError:
        return 0
    for entry in entries:
        rest = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
        parts = rest.split(".")
        if len(parts) != 3 or parts[2] != "tmp" or not parts[0].isdigit():
            continue
        pid = int(parts[0])
        try:
            age = time.time() - entry.stat().st_mtime
        except OSError:
            continue
        if pid == os.getpid() or (_process_alive(pid) and age < STALE_AFTER_S):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
    return removed


def _process_alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # only the age rule applies
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
