"""ONNX's string values and the ops on them: StringConcat, StringSplit, StringNormalizer,
RegexFullMatch, Equal on strings, and `ai.onnx.ml`'s LabelEncoder.

Burn's tensors hold numbers, so a string value is a numpy array of Python `str` (object dtype)
that lives on the host, with its true shape (a 0-d string stays 0-d). What these ops compute
from strings that is numeric (split counts, matches, encoded labels) becomes a tensor on the
model's device; numeric labels a LabelEncoder maps to strings are read back to the host.
"""

from __future__ import annotations

import re

import numpy as np
from burn.onnx.errors import OnnxImportError
from burn.onnx.runtime.shape import host_tensor
from burn.tensor import Tensor
from burn.tensor.errors import ShapeError

__all__ = [
    "label_encoder",
    "regex_full_match",
    "string_concat",
    "string_equal",
    "string_normalizer",
    "string_split",
    "strings",
]


def strings(values) -> np.ndarray:
    """A string value of the generated code: `values` (nested lists, or an array) as str."""
    array = np.asarray(values, dtype=object)
    out = np.empty(array.size, dtype=object)
    for i, v in enumerate(array.reshape(-1)):
        out[i] = v.decode() if isinstance(v, bytes) else str(v)
    return out.reshape(array.shape)


def string_concat(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Element-wise `x + y`, broadcast as numpy broadcasts."""
    return strings(np.add(np.asarray(x, dtype=object), np.asarray(y, dtype=object)))


def string_equal(x: np.ndarray, y: np.ndarray, device=None) -> Tensor:
    """Element-wise equality of two string values, broadcast, as a bool tensor."""
    same = np.equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
    return host_tensor(np.asarray(same, dtype=np.bool_), "bool", device)


def regex_full_match(x: np.ndarray, pattern: str, device=None) -> Tensor:
    """Whether each string matches `pattern` in full (Python's `re`, which reads the RE2
    patterns ONNX names the same way for the common syntax)."""
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise OnnxImportError(f"RegexFullMatch: invalid pattern {pattern!r} ({e})") from None
    matched = np.array([regex.fullmatch(s) is not None for s in x.reshape(-1)], dtype=np.bool_)
    return host_tensor(matched.reshape(x.shape), "bool", device)


def string_split(
    x: np.ndarray, delimiter: str | None = None, maxsplit: int | None = None, device=None
):
    """`(parts, counts)`: each string split at `delimiter` (runs of whitespace when it is
    absent or empty) at most `maxsplit` times, the parts padded with "" to the longest
    split, and how many parts each string had (int64)."""
    sep = delimiter or None
    limit = -1 if maxsplit is None else int(maxsplit)
    pieces = [s.split(sep, limit) for s in x.reshape(-1)]
    counts = np.array([len(p) for p in pieces], dtype=np.int64)
    width = int(counts.max(initial=0))
    parts = np.full((len(pieces), width), "", dtype=object)
    for row, piece in zip(parts, pieces, strict=True):
        row[: len(piece)] = piece
    return parts.reshape(x.shape + (width,)), host_tensor(counts.reshape(x.shape), "i64", device)


def string_normalizer(
    x: np.ndarray,
    case_change_action: str = "NONE",
    is_case_sensitive: int = 0,
    locale: str = "",
    stopwords=(),
) -> np.ndarray:
    """The strings of `x` (`[C]` or `[1, C]`) without the elements that are stop words
    (compared ignoring case unless `is_case_sensitive`), in lower or upper case as asked;
    when every element is a stop word, one empty string is left. `locale` is accepted and
    Python's own case mapping used."""
    if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[0] != 1):
        raise ShapeError(f"StringNormalizer: input must be [C] or [1, C], got {list(x.shape)}")
    if case_change_action not in ("NONE", "LOWER", "UPPER"):
        raise OnnxImportError(
            f"StringNormalizer: unknown case_change_action {case_change_action!r}"
        )
    fold = (lambda s: s) if is_case_sensitive else str.lower
    stops = {fold(w) for w in stopwords or ()}
    kept = [s for s in x.reshape(-1) if fold(s) not in stops]
    if case_change_action == "LOWER":
        kept = [s.lower() for s in kept]
    elif case_change_action == "UPPER":
        kept = [s.upper() for s in kept]
    kept = kept or [""]
    return strings(kept).reshape(x.shape[:-1] + (len(kept),))


def label_encoder(x, keys, values, default, kind: str, device=None):
    """Each element of `x` (a string value or a tensor) mapped through `keys` -> `values`,
    `default` where it is no key. `kind` is the values' type: "str" gives a string value,
    else the burn dtype of the tensor returned. Float keys match NaN to NaN."""
    host = x if isinstance(x, np.ndarray) and x.dtype == object else np.asarray(x.to_data().array)
    table = {}
    nan_value = None
    for key, value in zip(keys, values, strict=True):
        if isinstance(key, float) and key != key:
            nan_value = value
        else:
            table[key] = value
    flat = []
    for item in host.reshape(-1).tolist():
        if isinstance(item, float) and item != item:
            flat.append(default if nan_value is None else nan_value)
        else:
            flat.append(table.get(item, default))
    if kind == "str":
        return strings(flat).reshape(host.shape)
    numbers = np.array(flat, dtype=np.float64 if kind.startswith("f") else np.int64)
    if device is None and isinstance(x, Tensor):
        device = x.device()
    return host_tensor(numbers.reshape(host.shape), kind, device)
