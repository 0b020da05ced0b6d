"""`HuggingfaceDatasetLoader`: a HuggingFace dataset, every split written to one SQLite file.

Burn runs a Python script in a virtual environment it creates; here `datasets` runs in-process.
Each split becomes a table with a 1-based `row_id` and one column per (flattened) feature. Image
and audio columns are stored undecoded, as the file bytes plus the original path
(`image_bytes`/`image_path`, `audio_bytes`/`audio_path`), so reading an item never pays for
decoding that the user may not want. A database that exists is used as is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from burn.data import DatasetError, SqliteDataset, SqliteDatasetWriter, sqlite_splits
from burn.data.cache import dataset_cache_dir
from burn.huggingface.hub import HubUnreachableError, hub_endpoint, hub_reachable, offline_requested

#: Local files read with a `datasets` builder of the same name.
_FILE_BUILDERS = {
    ".parquet": "parquet",
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".arrow": "arrow",
    ".txt": "text",
}
_BATCH = 1000


def sanitize(name: str) -> str:
    """`name` with everything but letters, digits, `-` and `_` removed (Burn's file naming)."""
    return re.sub(r"[^A-Za-z0-9_-]", "", name)


@dataclasses.dataclass(frozen=True)
class HuggingfaceDatasetLoader:
    """Loads a HuggingFace dataset (hub name, local data files, or a `save_to_disk` folder).

    ```python notest
    loader = HuggingfaceDatasetLoader("ylecun/mnist").with_base_dir("data")
    train = loader.dataset("train")  # a SqliteDataset
    ```

    Each `with_*` returns a changed copy. The first `dataset()` or `db_file()` call imports
    every split into `<base_dir>/<name>[-<subset>].db`; later calls re-use that file.
    """

    name: str
    subset: str | None = None
    base_dir: Path | None = None
    token: str | None = None
    cache_dir: Path | None = None
    data_dir: str | None = None
    trust_remote_code: bool = False
    data_files: Mapping[str, Any] | None = None
    hub_timeout: float = 3.0

    def with_subset(self, subset: str) -> HuggingfaceDatasetLoader:
        return dataclasses.replace(self, subset=subset)

    def with_base_dir(self, base_dir: str | os.PathLike) -> HuggingfaceDatasetLoader:
        """Where the SQLite file goes (default: the `burn-dataset` folder of the user cache)."""
        return dataclasses.replace(self, base_dir=Path(base_dir))

    def with_huggingface_token(self, token: str) -> HuggingfaceDatasetLoader:
        return dataclasses.replace(self, token=token)

    def with_huggingface_cache_dir(self, cache_dir: str | os.PathLike) -> HuggingfaceDatasetLoader:
        """The `datasets` download/Arrow cache (default: its own)."""
        return dataclasses.replace(self, cache_dir=Path(cache_dir))

    def with_huggingface_data_dir(self, data_dir: str) -> HuggingfaceDatasetLoader:
        """The `data_dir` of `load_dataset`: a sub-folder of the dataset repository."""
        return dataclasses.replace(self, data_dir=data_dir)

    def with_trust_remote_code(self, trust: bool) -> HuggingfaceDatasetLoader:
        """Allows dataset scripts, for `datasets` versions that still run them."""
        return dataclasses.replace(self, trust_remote_code=trust)

    def with_data_files(self, data_files: Mapping[str, Any]) -> HuggingfaceDatasetLoader:
        """Local files per split, e.g. `{"train": "train.csv", "test": "test.csv"}`."""
        return dataclasses.replace(self, data_files=dict(data_files))

    # ------------------------------------------------------------------ results
    def db_file(self) -> Path:
        """The SQLite file of this dataset, imported first if it does not exist yet."""
        path = self.db_path()
        if not path.is_file():
            self._import(path)
        return path

    def db_path(self) -> Path:
        """Where the SQLite file is (or will be), without importing anything."""
        base = dataset_cache_dir(self.base_dir)
        local = self._local_path()
        if local is not None or self.data_files is not None:
            key = (
                str(local.resolve()) if local is not None else repr(sorted(self.data_files.items()))
            )
            stem = sanitize(local.stem if local is not None else self.name) or "local"
            name = f"{stem}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        else:
            name = sanitize(self.name)
        if self.subset:
            name += "-" + sanitize(self.subset)
        return base / f"{name}.db"

    def dataset(self, split: str, item_type: Any = None) -> SqliteDataset:
        """The `split` table, read as dicts or as `item_type` (e.g. a dataclass of some columns)."""
        return SqliteDataset(self.db_file(), split, item_type)

    def splits(self) -> list[str]:
        return sqlite_splits(self.db_file())

    # ------------------------------------------------------------------ import
    def _local_path(self) -> Path | None:
        """The source as a local path, when `name` is one rather than a hub name.

        Decided from the name alone where possible (absolute, `./`, `~`, a data-file suffix),
        so the database path does not change when the source files are later removed.
        """
        path = Path(self.name).expanduser()
        looks_local = (
            path.is_absolute()
            or self.name.startswith((".", "~"))
            or path.suffix.lower() in _FILE_BUILDERS
        )
        return path.resolve() if looks_local or path.exists() else None

    def _load(self):
        """The `datasets` object (a DatasetDict, or a Dataset for a single split)."""
        import datasets

        local = self._local_path()
        if local is not None and local.is_dir() and _is_saved_to_disk(local):
            return datasets.load_from_disk(str(local))
        kwargs: dict[str, Any] = {}
        if self.cache_dir is not None:
            kwargs["cache_dir"] = str(self.cache_dir)
        if self.data_dir is not None:
            kwargs["data_dir"] = self.data_dir
        if self.token is not None:
            kwargs["token"] = self.token
        if self.trust_remote_code:
            if "trust_remote_code" in inspect.signature(datasets.load_dataset).parameters:
                kwargs["trust_remote_code"] = True
            else:
                warnings.warn(
                    f"datasets {datasets.__version__} runs no dataset scripts; "
                    "with_trust_remote_code has no effect",
                    stacklevel=3,
                )
        if self.data_files is not None:
            builder = _builder_for(self.name, self.data_files)
            return datasets.load_dataset(
                builder, name=self.subset, data_files=dict(self.data_files), **kwargs
            )
        if local is not None:
            if local.is_file():
                builder = _builder_for(str(local), None)
                return datasets.load_dataset(builder, data_files={"train": str(local)}, **kwargs)
            return datasets.load_dataset(str(local), name=self.subset, **kwargs)
        return self._load_from_hub(datasets, kwargs)

    def _load_from_hub(self, datasets, kwargs):
        reachable = hub_reachable(self.hub_timeout)
        why = (
            "HF_HUB_OFFLINE is set" if offline_requested() else f"{hub_endpoint()} does not answer"
        )
        try:
            if reachable:
                return datasets.load_dataset(self.name, name=self.subset, **kwargs)
            # Unreachable: only the local HuggingFace cache can help, so make `datasets` look
            # there without a round of network retries.
            with _offline(datasets):
                return datasets.load_dataset(self.name, name=self.subset, **kwargs)
        except DatasetError:
            raise
        except Exception as e:
            if not reachable:
                raise HubUnreachableError(
                    f"HuggingfaceDatasetLoader({self.name!r}): the HuggingFace hub is unreachable "
                    f"({why}) and the dataset is not in the local HuggingFace cache. Connect to "
                    "the network once, or give local files (parquet/csv/json) or a save_to_disk "
                    "folder in place of the hub name."
                ) from e
            raise DatasetError(
                f"HuggingfaceDatasetLoader({self.name!r}): loading failed: {e}"
            ) from e

    def _import(self, path: Path) -> None:
        import datasets

        loaded = self._load()
        if isinstance(loaded, datasets.Dataset):
            loaded = datasets.DatasetDict({"train": loaded})
        if not isinstance(loaded, datasets.DatasetDict):
            raise DatasetError(
                f"HuggingfaceDatasetLoader({self.name!r}): "
                f"got {type(loaded).__name__}, not a dataset"
            )
        with SqliteDatasetWriter(path, overwrite=True) as writer:
            for split, ds in loaded.items():
                table = sanitize(str(split)).replace("-", "_")
                ds, columns = _storable(ds)
                writer.write_rows(table, _rows(ds), columns=columns, batch_size=_BATCH)


def _is_saved_to_disk(path: Path) -> bool:
    return (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()


def _builder_for(name: str, data_files: Mapping[str, Any] | None) -> str:
    if data_files is None:
        files = [name]
    else:
        files = []
        for value in data_files.values():
            files.extend([value] if isinstance(value, (str, os.PathLike)) else value)
    suffixes = {Path(str(f)).suffix.lower() for f in files}
    builders = {_FILE_BUILDERS.get(s) for s in suffixes}
    if len(builders) != 1 or None in builders:
        raise DatasetError(
            f"HuggingfaceDatasetLoader: cannot tell the format of {sorted(map(str, files))}; "
            "use .parquet, .csv, .json(l), .arrow or .txt"
        )
    return builders.pop()


def _storable(ds):
    """`ds` with media columns undecoded and structs flattened, plus SQLite column types."""
    from datasets import Audio, ClassLabel, Image, Value

    for name, feature in ds.features.items():
        if isinstance(feature, Image):
            ds = ds.cast_column(name, Image(decode=False))
        elif isinstance(feature, Audio):
            ds = ds.cast_column(name, Audio(decode=False))
    ds = ds.flatten()
    renames = {c: c.replace(".", "_") for c in ds.column_names if "." in c}
    if renames:
        ds = ds.rename_columns(renames)
    columns: dict[str, type] = {}
    for name, feature in ds.features.items():
        if isinstance(feature, ClassLabel):
            columns[name] = int
        elif isinstance(feature, Value):
            dtype = feature.dtype
            if "binary" in dtype:
                columns[name] = bytes
            elif dtype.startswith(("int", "uint")) or dtype == "bool":
                columns[name] = int
            elif dtype.startswith("float"):
                columns[name] = float
            else:
                columns[name] = str
        else:  # lists, arrays, nested features: MessagePack
            columns[name] = bytes
    return ds, columns


def _rows(ds) -> Iterator[dict]:
    for batch in ds.with_format(None).iter(batch_size=_BATCH):
        names = list(batch)
        for values in zip(*(batch[n] for n in names), strict=True):
            yield dict(zip(names, values, strict=True))


class _offline:
    """Switches `datasets` and `huggingface_hub` to offline mode for one call."""

    def __init__(self, datasets) -> None:
        import huggingface_hub.constants as hub_constants

        self.targets = [(datasets.config, "HF_HUB_OFFLINE"), (hub_constants, "HF_HUB_OFFLINE")]
        self.saved: list = []

    def __enter__(self):
        for module, attr in self.targets:
            if hasattr(module, attr):
                self.saved.append((module, attr, getattr(module, attr)))
                setattr(module, attr, True)
        return self

    def __exit__(self, *exc):
        for module, attr, value in self.saved:
            setattr(module, attr, value)
