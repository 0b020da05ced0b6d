"""Vision datasets: MNIST (offline-capable) and image classification folders."""

from burn.data.vision.image_folder import ImageDatasetItem, ImageFolderDataset
from burn.data.vision.mnist import MnistBatch, MnistBatcher, MnistDataset, MnistItem

__all__ = [
    "ImageDatasetItem",
    "ImageFolderDataset",
    "MnistBatch",
    "MnistBatcher",
    "MnistDataset",
    "MnistItem",
]
