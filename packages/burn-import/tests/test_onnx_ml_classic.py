"""`ai.onnx.ml`'s classic preprocessing and linear models against onnxruntime: the ops a
scikit-learn pipeline exports to (scaling, normalizing, imputing, one-hot encoding, feature
concatenation, category mapping, linear regression and classification)."""

from __future__ import annotations

import numpy as np
import pytest
from burn.onnx import backend
from burn.tensor.errors import BurnError
from burn_import_reference import same_as_onnxruntime
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")

F32, I64, STRING = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
ML = {"domain": "ai.onnx.ml"}


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "ml", inputs, outputs)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


X = np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [3.0, 4.0, -12.0]], np.float32)


def test_a_scikit_learn_style_pipeline():
    """Impute NaNs, scale, normalize, then a three-class linear model with string labels."""
    nodes = [
        helper.make_node(
            "Imputer",
            ["x"],
            ["filled"],
            imputed_value_floats=[0.5, 1.5, -1.0],
            replaced_value_float=float("nan"),
            **ML,
        ),
        helper.make_node(
            "Scaler", ["filled"], ["scaled"], offset=[0.1, 0.2, 0.3], scale=[2.0, 0.5, 1.0], **ML
        ),
        helper.make_node("Normalizer", ["scaled"], ["unit"], norm="L2", **ML),
        helper.make_node(
            "LinearClassifier",
            ["unit"],
            ["label", "scores"],
            coefficients=[0.5, -1.0, 2.0, 1.0, 1.0, -1.0, -2.0, 0.25, 0.0],
            intercepts=[0.1, -0.2, 0.3],
            classlabels_strings=["cat", "dog", "eel"],
            post_transform="SOFTMAX",
            **ML,
        ),
    ]
    model = _model(
        nodes,
        [_info("x", F32, [None, 3])],
        [_info("label", STRING, [None]), _info("scores", F32, [None, 3])],
    )
    x = X.copy()
    x[0, 1] = np.nan
    same_as_onnxruntime(model, [x])


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm):
    model = _model(
        [helper.make_node("Normalizer", ["x"], ["y"], norm=norm, **ML)],
        [_info("x", F32, [3, 3])],
        [_info("y", F32, [3, 3])],
    )
    same_as_onnxruntime(model, [X])


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("rows", [1, 2])
def test_linear_classifier_binary_and_post_transforms(post, rows):
    coefficients = [0.5, -1.0, 0.25, -0.5, 1.0, -0.25][: 3 * rows]
    node = helper.make_node(
        "LinearClassifier",
        ["x"],
        ["label", "scores"],
        coefficients=coefficients,
        intercepts=[0.25, -0.25][:rows],
        classlabels_ints=[4, 9],
        post_transform=post,
        **ML,
    )
    model = _model(
        [node], [_info("x", F32, [3, 3])], [_info("label", I64, [3]), _info("scores", F32, [3, 2])]
    )
    same_as_onnxruntime(model, [X])


def test_linear_regressor_with_two_targets():
    node = helper.make_node(
        "LinearRegressor",
        ["x"],
        ["y"],
        coefficients=[1.0, 2.0, 3.0, -1.0, 0.5, 0.0],
        intercepts=[0.5, -0.5],
        targets=2,
        **ML,
    )
    model = _model([node], [_info("x", F32, [3, 3])], [_info("y", F32, [3, 2])])
    same_as_onnxruntime(model, [X])


def test_one_hot_feature_vectorizer_and_category_mapper():
    nodes = [
        helper.make_node(
            "CategoryMapper",
            ["colour"],
            ["code"],
            cats_strings=["red", "blue"],
            cats_int64s=[3, 7],
            default_int64=0,
            **ML,
        ),
        helper.make_node("OneHotEncoder", ["code"], ["hot"], cats_int64s=[0, 3, 7], zeros=1, **ML),
        helper.make_node("Squeeze", ["hot", "one"], ["flat"]),
        helper.make_node(
            "FeatureVectorizer", ["flat", "x"], ["features"], inputdimensions=[3, 2], **ML
        ),
        helper.make_node(
            "CategoryMapper",
            ["code"],
            ["name"],
            cats_strings=["red", "blue"],
            cats_int64s=[3, 7],
            default_string="?",
            **ML,
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "ml",
        [_info("colour", STRING, [3, 1]), _info("x", F32, [3, 3])],
        [_info("features", F32, [3, 5]), _info("name", STRING, [3, 1])],
        [helper.make_tensor("one", I64, [1], [1])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    colour = np.array([["blue"], ["green"], ["red"]], dtype=object)
    same_as_onnxruntime(model, [colour, X])


def test_scaler_refuses_attributes_that_do_not_fit_the_features():
    model = _model(
        [helper.make_node("Scaler", ["x"], ["y"], scale=[1.0, 2.0], **ML)],
        [_info("x", F32, [3, 3])],
        [_info("y", F32, [3, 3])],
    )
    with pytest.raises(BurnError, match="scale has 2 values for 3 features"):
        backend.prepare(model).run([X])


@pytest.mark.parametrize(
    ("kernel", "params"),
    [
        ("LINEAR", [0.1, 0.0, 1.0]),
        ("POLY", [0.5, 1.0, 3.0]),
        ("RBF", [0.3, 0.0, 0.0]),
        ("SIGMOID", [0.2, -0.1, 0.0]),
    ],
)
def test_svm_regressor_kernels(kernel, params):
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((4, 3)).round(2)
    attrs = {
        "coefficients": rng.standard_normal(4).round(2).tolist(),
        "kernel_type": kernel,
        "n_supports": 4,
        "rho": [0.25],
        "support_vectors": vectors.reshape(-1).tolist(),
    }
    attrs["kernel_params"] = params
    node = helper.make_node("SVMRegressor", ["x"], ["y"], **attrs, **ML)
    model = _model([node], [_info("x", F32, [3, 3])], [_info("y", F32, [3, 1])])
    same_as_onnxruntime(model, [X], atol=1e-4)


@pytest.mark.parametrize("one_class", [0, 1])
def test_linear_svm_regressor(one_class):
    node = helper.make_node(
        "SVMRegressor",
        ["x"],
        ["y"],
        coefficients=[0.5, -1.0, 0.25],
        rho=[0.1],
        one_class=one_class,
        kernel_type="LINEAR",
        kernel_params=[0.1, 0.0, 1.0],
        **ML,
    )
    model = _model([node], [_info("x", F32, [3, 3])], [_info("y", F32, [3, 1])])
    same_as_onnxruntime(model, [X])
