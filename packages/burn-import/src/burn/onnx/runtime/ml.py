"""`ai.onnx.ml`'s classic preprocessing and linear models, as scikit-learn's ONNX exports use
them: Scaler, Normalizer, Imputer, OneHotEncoder, FeatureVectorizer, CategoryMapper,
LinearRegressor, LinearClassifier and SVMRegressor.

These are inference ops over small feature matrices, computed on the host in float64 with
numpy (as TreeEnsemble is); their outputs go back to the model's device as float32, the type
the spec gives them, or as string values (`burn.onnx.runtime.strings`) for string labels.
"""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.shape import host_tensor
from burn.onnx.runtime.strings import strings
from burn.onnx.runtime.trees import post_transform_scores
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError

__all__ = [
    "category_mapper",
    "feature_vectorizer",
    "imputer",
    "linear_classifier",
    "linear_regressor",
    "normalizer",
    "one_hot_encoder",
    "scaler",
    "svm_regressor",
]

_POST_TRANSFORMS = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}


def _host(x) -> np.ndarray:
    """The values of a tensor, or a string value as it is."""
    return x if isinstance(x, np.ndarray) else np.asarray(x.to_data().array)


def _device(*values):
    return next((v.device() for v in values if isinstance(v, Tensor)), None)


def _features(x, what: str) -> np.ndarray:
    """`x` as a float64 `[N, F]` matrix (a vector is one row)."""
    values = _host(x).astype(np.float64)
    if values.ndim > 2:
        raise ShapeError(f"{what}: input must be [N, F] or [F], got {list(values.shape)}")
    return values.reshape(1, -1) if values.ndim < 2 else values


def _per_feature(values, features: int, what: str, name: str) -> np.ndarray:
    """An attribute of one value for all features, or one per feature."""
    array = np.asarray(values if values is not None else [], np.float64).reshape(-1)
    if array.size not in (1, features):
        raise ShapeError(f"{what}: {name} has {array.size} values for {features} features")
    return array


def scaler(x, offset=None, scale=None) -> Tensor:
    """`(x - offset) * scale`, per feature or for all."""
    values = _host(x).astype(np.float64)
    features = values.shape[-1] if values.ndim else 1
    off = _per_feature(offset if offset is not None else [0.0], features, "Scaler", "offset")
    mul = _per_feature(scale if scale is not None else [1.0], features, "Scaler", "scale")
    return host_tensor((values - off) * mul, "f32", _device(x))


def normalizer(x, norm: str = "MAX") -> Tensor:
    """Each row divided by its maximum (MAX), its sum of absolute values (L1) or its
    Euclidean length (L2); a row whose divisor is 0 comes out as it went in, divided by 1."""
    values = _features(x, "Normalizer")
    if norm == "MAX":
        divisor = values.max(axis=1, keepdims=True)
    elif norm == "L1":
        divisor = np.abs(values).sum(axis=1, keepdims=True)
    elif norm == "L2":
        divisor = np.sqrt((values * values).sum(axis=1, keepdims=True))
    else:
        raise ShapeError(f"Normalizer: norm must be MAX, L1 or L2, got {norm!r}")
    divisor = np.where(divisor == 0, 1.0, divisor)
    out = values / divisor
    return host_tensor(out.reshape(_host(x).shape), "f32", _device(x))


def imputer(
    x,
    imputed_value_floats=None,
    imputed_value_int64s=None,
    replaced_value_float: float = 0.0,
    replaced_value_int64: int = 0,
) -> Tensor:
    """The values equal to the replaced value (NaN matches NaN) set to the imputed value of
    their feature (or the one imputed value for all)."""
    values = _host(x)
    is_float = values.dtype.kind == "f"
    imputed = imputed_value_floats if is_float else imputed_value_int64s
    features = values.shape[-1] if values.ndim else 1
    fill = _per_feature(imputed, features, "Imputer", "the imputed values")
    replaced = float(replaced_value_float) if is_float else int(replaced_value_int64)
    hit = np.isnan(values) if is_float and np.isnan(replaced) else values == replaced
    out = np.where(hit, np.broadcast_to(fill, values.shape), values).astype(values.dtype)
    return Tensor.from_data(out.reshape(out.shape or (1,)), device=_device(x), dtype=x.dtype)


def one_hot_encoder(x, cats_int64s=None, cats_strings=None, zeros: int = 1) -> Tensor:
    """A last dim with one 1.0 at the position of each value among the categories; a value
    that is no category gives zeros (with `zeros`) or is refused."""
    values = _host(x)
    cats = list(cats_strings) if cats_strings is not None else list(cats_int64s or [])
    if values.dtype.kind == "f" and cats_strings is None:
        values = values.astype(np.int64)
    position = {c: i for i, c in enumerate(cats)}
    flat = values.reshape(-1).tolist()
    out = np.zeros((len(flat), len(cats)), np.float32)
    for row, item in enumerate(flat):
        at = position.get(item)
        if at is None and not zeros:
            raise OutOfRangeError(f"OneHotEncoder: {item!r} is not one of the categories")
        if at is not None:
            out[row, at] = 1.0
    return host_tensor(out.reshape(values.shape + (len(cats),)), "f32", _device(x))


def feature_vectorizer(*inputs, inputdimensions=None) -> Tensor:
    """The inputs' features side by side, each cut or padded with zeros to its declared
    width, as float32."""
    widths = list(inputdimensions or [])
    if len(widths) != len(inputs):
        raise ShapeError(
            f"FeatureVectorizer: {len(inputs)} inputs but {len(widths)} input dimensions"
        )
    parts = []
    for value, width in zip(inputs, widths, strict=True):
        block = _features(value, "FeatureVectorizer")[:, :width]
        parts.append(np.pad(block, [(0, 0), (0, width - block.shape[1])]))
    rows = {p.shape[0] for p in parts}
    if len(rows) > 1:
        raise ShapeError(f"FeatureVectorizer: inputs have different row counts {sorted(rows)}")
    return host_tensor(np.concatenate(parts, axis=1), "f32", _device(*inputs))


def category_mapper(
    x,
    cats_int64s=(),
    cats_strings=(),
    default_int64: int = -1,
    default_string: str = "_Unused",
    device=None,
):
    """Strings to their paired int64s, or int64s to their paired strings (by position in
    `cats_strings` and `cats_int64s`); a value with no pair gets the default."""
    if len(cats_int64s) != len(cats_strings):
        raise ShapeError(
            f"CategoryMapper: {len(cats_strings)} strings but {len(cats_int64s)} int64s"
        )
    values = _host(x)
    if values.dtype == object:
        table = dict(zip(cats_strings, cats_int64s, strict=True))
        out = np.array([table.get(s, default_int64) for s in values.reshape(-1)], np.int64)
        return host_tensor(out.reshape(values.shape), "i64", device)
    table = dict(zip(cats_int64s, cats_strings, strict=True))
    return strings([table.get(int(v), default_string) for v in values.reshape(-1)]).reshape(
        values.shape
    )


def _linear(x, coefficients, intercepts, what: str) -> np.ndarray:
    """`x @ W.T + b` for `W [outputs, F]` given flat, in float64."""
    values = _features(x, what)
    weights = np.asarray(coefficients, np.float64)
    features = values.shape[1]
    if features == 0 or weights.size % features:
        raise ShapeError(f"{what}: {weights.size} coefficients do not fit {features} features")
    weights = weights.reshape(-1, features)
    bias = np.asarray(intercepts if intercepts else [0.0] * len(weights), np.float64)
    if bias.size != len(weights):
        raise ShapeError(f"{what}: {bias.size} intercepts for {len(weights)} outputs")
    return values @ weights.T + bias


def linear_regressor(x, coefficients=(), intercepts=None, targets: int = 1, post_transform="NONE"):
    """`[N, targets]`: `x @ W.T + b`, then the post transform."""
    scores = _linear(x, coefficients, intercepts, "LinearRegressor")
    if scores.shape[1] != targets:
        raise ShapeError(f"LinearRegressor: {scores.shape[1]} outputs for {targets} targets")
    out = post_transform_scores(scores, _POST_TRANSFORMS.get(post_transform, -1))
    return host_tensor(out, "f32", _device(x))


def linear_classifier(
    x,
    coefficients=(),
    intercepts=None,
    classlabels_ints=None,
    classlabels_strings=None,
    multi_class: int = 0,
    post_transform="NONE",
):
    """`(labels, scores)`: the class of the highest score and the `[N, classes]` scores.

    With two classes and one row of coefficients (a binary model), the one score `s` decides
    (the second class when `s > 0`) and the scores are `[1 - s, s]`, or `[1 - p, p]` with
    `p` its logistic under LOGISTIC, as onnxruntime gives them. `multi_class` (one-vs-rest or
    multinomial training) changes nothing at inference."""
    labels = list(classlabels_strings or classlabels_ints or [])
    scores = _linear(x, coefficients, intercepts, "LinearClassifier")
    device = _device(x)
    if scores.shape[1] == 1 and len(labels) == 2:
        s = scores[:, 0]
        picked = (s > 0).astype(np.int64)
        if post_transform == "LOGISTIC":
            s = 1.0 / (1.0 + np.exp(-s))
        out = np.stack([1.0 - s, s], axis=1)
    else:
        if scores.shape[1] != len(labels):
            raise ShapeError(
                f"LinearClassifier: {scores.shape[1]} score columns for {len(labels)} classes"
            )
        picked = scores.argmax(axis=1)
        out = post_transform_scores(scores, _POST_TRANSFORMS.get(post_transform, -1))
    chosen = [labels[i] for i in picked]
    label = strings(chosen) if classlabels_strings else host_tensor(chosen, "i64", device)
    return label, host_tensor(out, "f32", device)


def _kernel(values: np.ndarray, vectors: np.ndarray, kind: str, params) -> np.ndarray:
    """`[N, V]` kernel values between the rows and the support vectors."""
    gamma, coef0, degree = (list(params or []) + [0.0, 0.0, 0.0])[:3]
    if kind == "LINEAR":
        return values @ vectors.T
    if kind == "POLY":
        return (gamma * (values @ vectors.T) + coef0) ** degree
    if kind == "SIGMOID":
        return np.tanh(gamma * (values @ vectors.T) + coef0)
    if kind == "RBF":
        squared = (values * values).sum(1)[:, None] - 2 * values @ vectors.T
        return np.exp(-gamma * (squared + (vectors * vectors).sum(1)[None, :]))
    raise ShapeError(
        f"SVMRegressor: kernel_type must be LINEAR, POLY, RBF or SIGMOID, got {kind!r}"
    )


def svm_regressor(
    x,
    coefficients=(),
    kernel_params=None,
    kernel_type: str = "LINEAR",
    n_supports: int = 0,
    one_class: int = 0,
    post_transform: str = "NONE",
    rho=None,
    support_vectors=None,
) -> Tensor:
    """`[N, 1]`: the coefficients times the kernel of each row with each support vector, plus
    `rho` (without support vectors, a linear model: the coefficients times the features). A
    one-class model gives 1 for a positive score and -1 otherwise; PROBIT maps the score."""
    values = _features(x, "SVMRegressor")
    weights = np.asarray(coefficients, np.float64).reshape(-1)
    offset = float(np.asarray(rho if rho is not None else [0.0]).reshape(-1)[0])
    if n_supports > 0:
        vectors = np.asarray(support_vectors, np.float64).reshape(n_supports, -1)
        if vectors.shape[1] != values.shape[1] or weights.size != n_supports:
            raise ShapeError(
                f"SVMRegressor: {n_supports} support vectors of {vectors.shape[1]} features and "
                f"{weights.size} coefficients for {values.shape[1]} features"
            )
        score = _kernel(values, vectors, kernel_type, kernel_params) @ weights + offset
    else:
        if weights.size != values.shape[1]:
            raise ShapeError(
                f"SVMRegressor: {weights.size} coefficients for {values.shape[1]} features"
            )
        score = values @ weights + offset
    if one_class:
        score = np.where(score > 0, 1.0, -1.0)
    elif post_transform == "PROBIT":
        score = post_transform_scores(score[:, None], 4)[:, 0]
    elif post_transform != "NONE":
        raise ShapeError(f"SVMRegressor: post_transform {post_transform!r} is not defined for it")
    return host_tensor(score[:, None], "f32", _device(x))
