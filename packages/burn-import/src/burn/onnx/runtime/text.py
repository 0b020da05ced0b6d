"""TfIdfVectorizer: counts of (skip-)n-grams from a pool of integer n-grams, on the host (the
output is a histogram of the input's values)."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = ["tfidf_vectorizer"]


def tfidf_vectorizer(
    x: Tensor,
    max_gram_length: int,
    max_skip_count: int,
    min_gram_length: int,
    mode: str,
    ngram_counts,
    ngram_indexes,
    pool_int64s,
    weights=None,
    rank: int | None = None,
) -> Tensor:
    pool: dict[tuple, int] = {}
    starts = list(ngram_counts) + [len(pool_int64s)]
    position = 0
    for level in range(len(ngram_counts)):
        n = level + 1
        values = pool_int64s[starts[level] : starts[level + 1]]
        for i in range(0, len(values), n):
            pool[tuple(values[i : i + n])] = ngram_indexes[position]
            position += 1
    size = max(ngram_indexes) + 1
    rows = np.asarray(x.to_data().array).astype(np.int64)
    rows = rows.reshape(1, -1) if rank == 1 or rows.ndim == 1 else rows
    out = np.zeros((rows.shape[0], size), dtype=np.float64)
    for r, row in enumerate(rows):
        length = len(row)
        for n in range(min_gram_length, max_gram_length + 1):
            skips = range(max_skip_count + 1) if n > 1 else range(1)
            for skip in skips:
                step = skip + 1
                for start in range(length - (n - 1) * step):
                    key = tuple(row[start + k * step] for k in range(n))
                    if key in pool:
                        out[r, pool[key]] += 1
    if mode == "IDF":
        out = np.minimum(out, 1.0)
    if mode in ("IDF", "TFIDF"):
        scale = np.ones(size) if weights is None else np.zeros(size)
        if weights is not None:
            for i, w in zip(ngram_indexes, weights, strict=False):
                scale[i] = w
        out = out * scale
    if rank == 1:
        out = out.reshape(-1)
    device = x.device()
    return Tensor.from_data(out, device=device, dtype=fit("f32", device))
