"""Image classification datasets from folders (`root/<class>/<image>`), decoded by Pillow."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from burn.data.dataset import Dataset
from burn.data.errors import DatasetError

#: The extensions Pillow reads that a classification folder usually holds.
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")


@dataclasses.dataclass
class ImageDatasetItem:
    """A decoded image (`[height, width, channels]` uint8), its class and its file."""

    image: np.ndarray
    image_width: int
    image_height: int
    label: int
    class_name: str
    image_path: str


class ImageFolderDataset(Dataset[ImageDatasetItem]):
    """Images listed once at construction and decoded on access.

    Class names are the sorted sub-folder names; an image's label is its class's position in
    `classes`. Images are converted to RGB unless `mode` says otherwise (e.g. `"L"`).
    """

    def __init__(
        self,
        items: Sequence[tuple[str | os.PathLike, str]],
        classes: Sequence[str],
        mode: str = "RGB",
    ) -> None:
        self.classes = list(classes)
        index = {name: i for i, name in enumerate(self.classes)}
        unknown = sorted({label for _, label in items if label not in index})
        if unknown:
            raise DatasetError(
                f"ImageFolderDataset: labels {unknown} are not among the classes {self.classes}"
            )
        self.items = [(str(path), index[label]) for path, label in items]
        self.mode = mode

    @classmethod
    def new_classification(cls, root: str | os.PathLike, mode: str = "RGB") -> ImageFolderDataset:
        return cls.new_classification_with(root, IMAGE_EXTENSIONS, mode)

    @classmethod
    def new_classification_with(
        cls, root: str | os.PathLike, extensions: Iterable[str], mode: str = "RGB"
    ) -> ImageFolderDataset:
        """Every file under `root/<class>/` (any depth) whose extension is in `extensions`."""
        root = Path(root)
        if not root.is_dir():
            raise DatasetError(f"ImageFolderDataset: {root} is not a folder")
        wanted = {e.lower() if e.startswith(".") else "." + e.lower() for e in extensions}
        classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        items = [
            (path, name)
            for name in classes
            for path in sorted((root / name).rglob("*"))
            if path.is_file() and path.suffix.lower() in wanted
        ]
        if not items:
            raise DatasetError(
                f"ImageFolderDataset: no images with extensions {sorted(wanted)} under {root}"
            )
        return cls(items, classes, mode)

    @classmethod
    def new_classification_with_items(
        cls,
        items: Sequence[tuple[str | os.PathLike, str]],
        classes: Sequence[str],
        mode: str = "RGB",
    ) -> ImageFolderDataset:
        """An explicit list of `(path, class name)` pairs."""
        return cls(items, classes, mode)

    def get(self, index: int) -> ImageDatasetItem | None:
        if not 0 <= index < len(self.items):
            return None
        from PIL import Image, UnidentifiedImageError

        path, label = self.items[index]
        try:
            with Image.open(path) as img:
                pixels = np.asarray(img.convert(self.mode), dtype=np.uint8)
        except (OSError, UnidentifiedImageError) as e:
            raise DatasetError(f"ImageFolderDataset: cannot decode {path}: {e}") from None
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        height, width = pixels.shape[:2]
        return ImageDatasetItem(pixels, width, height, label, self.classes[label], path)

    def len(self) -> int:
        return len(self.items)
