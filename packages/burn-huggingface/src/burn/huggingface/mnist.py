"""MNIST from the hub (`ylecun/mnist`) for burn-data's MnistDataset, offered by entry point."""

from __future__ import annotations

from collections.abc import Iterator

from burn.data.vision.mnist import mnist_rows_from_png
from burn.huggingface.loader import HuggingfaceDatasetLoader

HUB_NAME = "ylecun/mnist"


def mnist_rows(split: str) -> Iterator[dict]:
    """Raw-byte MNIST rows of `split`; raises `HubUnreachableError` at once when offline.

    What the rows need is imported first (`datasets` by the loader, Pillow to decode the
    images), so a missing package is an `ImportError` now, before any row is written, and the
    MNIST "auto" source moves on to the next source.
    """
    import PIL.Image  # noqa: F401

    dataset = HuggingfaceDatasetLoader(HUB_NAME).dataset(split)
    return mnist_rows_from_png(dataset)
