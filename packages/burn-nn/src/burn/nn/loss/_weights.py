"""Class weights in the dtype and on the backend of the scores they multiply."""

from __future__ import annotations

import numpy as np
from burn.tensor import Tensor


def weights_for(weights: Tensor, values: list[float] | None, scores: Tensor) -> Tensor:
    """`weights` as a tensor beside `scores`.

    The config's float values are kept, so f64 scores get f64 weights (0.7 stays 0.7) instead
    of an f32 tensor widened; a loss built for one backend also serves another (validation).
    """
    if weights.backend is scores.backend and weights.dtype == scores.dtype:
        return weights
    # a list of floats would be read as f32 first; float64 keeps every digit for the cast
    source = np.asarray(values, np.float64) if values is not None else weights.to_data()
    return Tensor[scores.backend].from_data(source, scores.device(), dtype=scores.dtype)
