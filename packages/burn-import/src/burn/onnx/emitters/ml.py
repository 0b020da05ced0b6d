"""`ai.onnx.ml`'s classic preprocessing and linear models (scikit-learn's exports), onto
`burn.onnx.runtime.ml`: every attribute is passed on by name."""

from __future__ import annotations

from burn.onnx.codegen import Context, emitter
from burn.onnx.emitters.common import attr_args, call
from burn.onnx.graph import Node

_ONE_OUTPUT = {
    "ai.onnx.ml:Scaler": "rt.scaler",
    "ai.onnx.ml:Normalizer": "rt.normalizer",
    "ai.onnx.ml:Imputer": "rt.imputer",
    "ai.onnx.ml:OneHotEncoder": "rt.one_hot_encoder",
    "ai.onnx.ml:LinearRegressor": "rt.linear_regressor",
    "ai.onnx.ml:SVMRegressor": "rt.svm_regressor",
}


@emitter(*_ONE_OUTPUT)
def one_output(node: Node, ctx: Context) -> None:
    call(ctx, node, _ONE_OUTPUT[node.qualified_op], [ctx.x(node.inputs[0])], attr_args(node))


@emitter("ai.onnx.ml:FeatureVectorizer")
def feature_vectorizer(node: Node, ctx: Context) -> None:
    inputs = [ctx.x(n) for n in node.inputs if n]
    call(ctx, node, "rt.feature_vectorizer", inputs, attr_args(node))


@emitter("ai.onnx.ml:CategoryMapper")
def category_mapper(node: Node, ctx: Context) -> None:
    ctx.uses_device = True  # strings in, int64s out: the tensor goes to the model's device
    attrs = attr_args(node)
    extra = f"{attrs}, device=device" if attrs else "device=device"
    call(ctx, node, "rt.category_mapper", [ctx.x(node.inputs[0])], extra)


@emitter("ai.onnx.ml:LinearClassifier")
def linear_classifier(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.linear_classifier", [ctx.x(node.inputs[0])], attr_args(node), outputs=2)


@emitter("ai.onnx.ml:TreeEnsembleRegressor")
def tree_ensemble_regressor(node: Node, ctx: Context) -> None:
    call(ctx, node, "rt.tree_ensemble_regressor", [ctx.x(node.inputs[0])], attr_args(node))
