"""InMemDataset and the Dataset protocol."""

from __future__ import annotations

import dataclasses
import json

import pytest
from burn.data import Dataset, DatasetError, DatasetIndexError, InMemDataset, as_dataset
from burn.tensor.errors import BurnError


@dataclasses.dataclass
class Row:
    name: str
    age: int
    score: float
    active: bool = False


def test_get_returns_none_past_the_end():
    ds = InMemDataset([10, 20, 30])
    assert ds.get(0) == 10
    assert ds.get(2) == 30
    assert ds.get(3) is None
    assert ds.get(-1) is None
    assert ds.len() == len(ds) == 3
    assert not ds.is_empty()
    assert InMemDataset([]).is_empty()


def test_python_protocol():
    ds = InMemDataset("abcde")
    assert list(ds) == list("abcde")
    assert ds[1] == "b"
    assert ds[-1] == "e"
    assert list(ds[1:4]) == ["b", "c", "d"]
    assert list(ds[::-2]) == ["e", "c", "a"]
    with pytest.raises(DatasetIndexError, match="index 5 out of range"):
        ds[5]
    with pytest.raises(IndexError):  # still an IndexError for Python idioms
        ds[-6]
    with pytest.raises(DatasetError, match="must be an int"):
        ds["x"]


def test_errors_are_burn_errors():
    assert issubclass(DatasetError, BurnError)


def test_get_many():
    ds = InMemDataset(range(5))
    assert ds.get_many([4, 0, 4]) == [4, 0, 4]
    with pytest.raises(DatasetIndexError):
        ds.get_many([5])


def test_as_dataset_wraps_sequences_and_duck_types():
    class Duck:
        def get(self, i):
            return i * 2 if i < 3 else None

        def len(self):
            return 3

    assert list(as_dataset(Duck())) == [0, 2, 4]
    assert isinstance(as_dataset([1, 2]), Dataset)
    with pytest.raises(DatasetError):
        as_dataset(42)


def test_from_dataset_materialises():
    ds = InMemDataset.from_dataset(as_dataset(range(4)))
    assert ds.items == [0, 1, 2, 3]


def test_from_json_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [
        {"name": "a", "age": 3, "score": 1.5},
        {"name": "b", "age": 4, "score": 2.0, "active": True},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert InMemDataset.from_json_rows(path).items == rows
    typed = InMemDataset.from_json_rows(path, Row)
    assert typed[1] == Row("b", 4, 2.0, True)


def test_from_json_rows_bad_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{oops\n')
    with pytest.raises(DatasetError, match="rows.jsonl:2"):
        InMemDataset.from_json_rows(path)


def test_from_csv_typed_and_untyped(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("name,age,score,active,extra\na,3,1.5,true,x\nb,4,2,0,y\n")
    plain = InMemDataset.from_csv(path)
    assert plain[0] == {"name": "a", "age": "3", "score": "1.5", "active": "true", "extra": "x"}
    typed = InMemDataset.from_csv(path, Row)
    assert typed.items == [Row("a", 3, 1.5, True), Row("b", 4, 2.0, False)]


def test_from_csv_options_and_errors(tmp_path):
    path = tmp_path / "rows.tsv"
    path.write_text("a\t3\t1.5\n")
    ds = InMemDataset.from_csv(
        path, Row, delimiter="\t", has_header=False, fieldnames=["name", "age", "score"]
    )
    assert ds[0] == Row("a", 3, 1.5)
    with pytest.raises(DatasetError, match="needs `fieldnames`"):
        InMemDataset.from_csv(path, has_header=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("name,age,score\na,three,1\n")
    with pytest.raises(DatasetError, match=r"bad.csv:2: field 'age'.*'three' as int"):
        InMemDataset.from_csv(bad, Row)
    missing = tmp_path / "missing.csv"
    missing.write_text("name,age\na,3\n")
    with pytest.raises(DatasetError, match=r"needs field\(s\) \['score'\]"):
        InMemDataset.from_csv(missing, Row)
