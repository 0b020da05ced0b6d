"""Datasets for burn: random-access storage, lazy transforms and the DataLoader.

`import burn.data` stays light (numpy and the standard library): the vision datasets, which
need Pillow or an extra package, are imported on first use.
"""

from burn.data.cache import dataset_cache_dir
from burn.data.dataloader import (
    Batcher,
    DataLoader,
    DataLoaderBuilder,
    DataLoaderIterator,
    Progress,
    split_dataloader,
)
from burn.data.dataset import Dataset, InMemDataset, as_dataset
from burn.data.errors import (
    DataLoaderTimeoutError,
    DatasetError,
    DatasetIndexError,
    WorkerError,
)
from burn.data.sqlite import SqliteDataset, SqliteDatasetWriter, sqlite_splits
from burn.data.transform import (
    ComposedDataset,
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

_LAZY = {
    "MnistDataset": "burn.data.vision.mnist",
    "MnistItem": "burn.data.vision.mnist",
    "MnistBatch": "burn.data.vision.mnist",
    "MnistBatcher": "burn.data.vision.mnist",
    "ImageFolderDataset": "burn.data.vision.image_folder",
    "ImageDatasetItem": "burn.data.vision.image_folder",
}

__all__ = [
    "Batcher",
    "ComposedDataset",
    "DataLoader",
    "DataLoaderBuilder",
    "DataLoaderIterator",
    "DataLoaderTimeoutError",
    "Dataset",
    "DatasetError",
    "DatasetIndexError",
    "InMemDataset",
    "Mapper",
    "MapperDataset",
    "PartialDataset",
    "Progress",
    "SamplerDataset",
    "SelectionDataset",
    "ShuffledDataset",
    "SqliteDataset",
    "SqliteDatasetWriter",
    "WindowsDataset",
    "WorkerError",
    "as_dataset",
    "dataset_cache_dir",
    "split_dataloader",
    "sqlite_splits",
    "train_valid_test_split",
    "windows",
    *_LAZY,
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'burn.data' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
