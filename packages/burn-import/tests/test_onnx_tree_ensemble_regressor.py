"""The legacy `ai.onnx.ml` TreeEnsembleRegressor (scikit-learn's and LightGBM's exports) against
onnxruntime, on random forests: every aggregate, base values, post transforms, leaves voting
for several targets, one-leaf trees, NaN inputs that follow their node's missing-value rule."""

from __future__ import annotations

import numpy as np
import pytest
from burn.onnx import backend
from burn.tensor.errors import BurnError
from burn_import_reference import same_as_onnxruntime
from onnx import TensorProto, helper

pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (dev group)")

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"]


def _forest(rng, trees: int, depth: int, features: int, targets: int) -> dict:
    """Complete binary trees of `depth` levels with random splits; every leaf votes for one
    or two targets."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes")}
    nodes.update(truenodeids=[], falsenodeids=[], missing_value_tracks_true=[])
    votes = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for tree in range(trees):
        count = 2 ** (depth + 1) - 1 if tree else 1  # the first tree is a single leaf
        for node in range(count):
            is_leaf = 2 * node + 1 >= count
            nodes["treeids"].append(tree)
            nodes["nodeids"].append(node)
            nodes["featureids"].append(int(rng.integers(features)) if not is_leaf else 0)
            nodes["values"].append(float(np.round(rng.standard_normal(), 2)))
            nodes["modes"].append("LEAF" if is_leaf else str(rng.choice(MODES)))
            nodes["truenodeids"].append(0 if is_leaf else 2 * node + 1)
            nodes["falsenodeids"].append(0 if is_leaf else 2 * node + 2)
            nodes["missing_value_tracks_true"].append(int(rng.integers(2)))
            if is_leaf:
                for target in rng.choice(targets, size=min(targets, 2), replace=False):
                    votes["treeids"].append(tree)
                    votes["nodeids"].append(node)
                    votes["ids"].append(int(target))
                    votes["weights"].append(float(np.round(rng.standard_normal(), 3)))
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"target_{k}": v for k, v in votes.items()})
    attrs["n_targets"] = targets
    return attrs


def _model(attrs: dict, features: int, targets: int):
    node = helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, targets])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("targets", [1, 3])
def test_random_forests_match_onnxruntime(aggregate, targets):
    rng = np.random.default_rng(len(aggregate) * 10 + targets)
    attrs = _forest(rng, trees=6, depth=3, features=4, targets=targets)
    attrs["aggregate_function"] = aggregate
    attrs["base_values"] = [0.5, -0.25, 1.0][:targets]
    x = rng.standard_normal((64, 4)).astype(np.float32)
    x[::7, 1] = np.nan  # missing values follow each node's rule
    same_as_onnxruntime(_model(attrs, 4, targets), [x], atol=1e-5)


@pytest.mark.parametrize("post", ["LOGISTIC", "SOFTMAX"])
def test_post_transforms(post):
    rng = np.random.default_rng(3)
    attrs = _forest(rng, trees=4, depth=2, features=3, targets=3)
    attrs["post_transform"] = post
    x = rng.standard_normal((16, 3)).astype(np.float32)
    same_as_onnxruntime(_model(attrs, 3, 3), [x], atol=1e-5)


def test_a_child_that_is_no_node_is_refused():
    rng = np.random.default_rng(5)
    attrs = _forest(rng, trees=2, depth=1, features=2, targets=1)
    attrs["nodes_truenodeids"][1] = 40  # tree 1's root points nowhere
    with pytest.raises(BurnError, match="is no node of tree"):
        backend.prepare(_model(attrs, 2, 1)).run([np.zeros((2, 2), np.float32)])
