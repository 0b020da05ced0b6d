"""TreeEnsemble (`burn.onnx.runtime.tree_ensemble`) on random forests (every comparison mode,
NaN features, the four aggregations, a tree that is one leaf) against two references, each
where it follows the spec; its post transforms against their formulas; its refusals of
malformed attributes.

onnxruntime is the reference for whole forests. onnx's own reference implementation reads a
one-leaf tree's weight at the root's node index instead of at the leaf its branches name (the
spec's encoding), but it is the reference for set membership of non-integer features, which
onnxruntime answers as if the feature were truncated to an integer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn.ndarray import NdArray
from burn.onnx import runtime as rt
from burn.onnx.runtime import trees
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference")

FEATURES, TARGETS = 3, 2


def _forest(seed: int, trees: int = 4, depth: int = 3, one_leaf_tree: bool = True) -> dict:
    """Random full trees of `depth` levels of interior nodes, every mode used, one set per
    BRANCH_MEMBER node; one more tree is a single leaf."""
    rng = np.random.default_rng(seed)
    nodes = {k: [] for k in ("modes", "feature", "split", "true", "false", "tleaf", "fleaf")}
    nodes["nan"] = []
    members, leaf_targets, leaf_weights, roots = [], [], [], []

    def leaf() -> int:
        leaf_targets.append(int(rng.integers(TARGETS)))
        leaf_weights.append(round(float(rng.normal()), 3))
        return len(leaf_targets) - 1

    def grow(level: int) -> int:
        at = len(nodes["modes"])
        mode = int(rng.integers(7))
        for key in nodes:
            nodes[key].append(0)
        nodes["modes"][at] = mode
        # BRANCH_MEMBER nodes read feature 0, kept integer (or NaN) for onnxruntime's sake.
        nodes["feature"][at] = 0 if mode == 6 else int(rng.integers(FEATURES))
        nodes["split"][at] = float(rng.integers(-2, 3)) if mode in (4, 5) else float(rng.normal())
        nodes["nan"][at] = int(rng.integers(2))
        for side, flag in (("true", "tleaf"), ("false", "fleaf")):
            if level + 1 == depth:
                nodes[side][at], nodes[flag][at] = leaf(), 1
            else:
                nodes[side][at], nodes[flag][at] = grow(level + 1), 0
        return at

    for _ in range(trees):
        roots.append(grow(0))
    if one_leaf_tree:  # one node whose branches both name the same leaf
        at = len(nodes["modes"])
        index = leaf()
        for key, val in (("modes", 0), ("feature", 0), ("split", 0.0), ("true", index),
                         ("false", index), ("tleaf", 1), ("fleaf", 1), ("nan", 0)):  # fmt: skip
            nodes[key].append(val)
        roots.append(at)
    for mode in nodes["modes"]:
        if mode == 6:  # members from the small integers the features are drawn from
            members += [float(v) for v in rng.choice([-2, -1, 1, 2], size=2, replace=False)]
            members.append(math.nan)
    return dict(
        nodes_modes=np.asarray(nodes["modes"], np.uint8),
        nodes_featureids=nodes["feature"],
        nodes_splits=np.asarray(nodes["split"], np.float32),
        nodes_truenodeids=nodes["true"],
        nodes_falsenodeids=nodes["false"],
        nodes_trueleafs=nodes["tleaf"],
        nodes_falseleafs=nodes["fleaf"],
        nodes_missing_value_tracks_true=nodes["nan"],
        leaf_targetids=leaf_targets,
        leaf_weights=np.asarray(leaf_weights, np.float32),
        tree_roots=roots,
        n_targets=TARGETS,
        membership_values=np.asarray(members, np.float32) if members else None,
    )


def _features(seed: int, fractional_members: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, size=(40, FEATURES)).astype(np.float32)
    noise = rng.normal(size=x.shape).astype(np.float32)
    pick = rng.random(x.shape) < 0.3  # off the integers: the EQ, NEQ and MEMBER nodes say no
    if not fractional_members:
        pick[:, 0] = False
    x[pick] = noise[pick]
    x[rng.random(x.shape) < 0.1] = np.nan  # missing values, sent by each node's NaN rule
    return x


def _model(x: np.ndarray, attrs: dict):
    kwargs = {}
    for key, val in attrs.items():
        if val is None:
            continue
        if isinstance(val, np.ndarray):
            kwargs[key] = numpy_helper.from_array(val, key)
        else:
            kwargs[key] = val
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **kwargs)
    graph = helper.make_graph(
        [node],
        "forest",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10  # onnxruntime refuses the newest IR versions
    return model


def _onnxruntime(x: np.ndarray, attrs: dict) -> np.ndarray:
    model = _model(x, attrs).SerializeToString()
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


def _ours(x: np.ndarray, attrs: dict, **extra) -> np.ndarray:
    kwargs = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in attrs.items()}
    kwargs.update(extra)
    out = rt.tree_ensemble(Tensor.from_data(x, device=NdArray.device()), **kwargs)
    return out.to_data().array


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3], ids=["average", "sum", "min", "max"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_ensemble_matches_onnxruntime(aggregate, seed):
    attrs = _forest(seed) | {"aggregate_function": aggregate}
    x = _features(seed)
    got = _ours(x, attrs)
    assert got.shape == (40, TARGETS) and got.dtype == np.float32
    np.testing.assert_allclose(got, _onnxruntime(x, attrs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_set_membership_of_any_float_matches_the_onnx_reference(seed):
    attrs = _forest(seed, one_leaf_tree=False)
    x = _features(seed, fractional_members=True)
    want = ReferenceEvaluator(_model(x, attrs)).run(None, {"X": x})[0]
    np.testing.assert_allclose(_ours(x, attrs), want, rtol=1e-5, atol=1e-5)


def test_post_transforms_follow_their_formulas():
    attrs = _forest(3)
    x = _features(3)
    raw = _ours(x, attrs).astype(np.float64)
    softmax = np.exp(raw - raw.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    np.testing.assert_allclose(_ours(x, attrs, post_transform=1), softmax, rtol=1e-6)
    logistic = 1 / (1 + np.exp(-raw))
    np.testing.assert_allclose(_ours(x, attrs, post_transform=2), logistic, rtol=1e-6)
    # PROBIT is the normal quantile: the normal CDF of it gives the scores back.
    probit = trees.post_transform_scores(logistic, 4)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(probit / math.sqrt(2)))
    np.testing.assert_allclose(cdf, logistic, rtol=1e-12, atol=1e-14)
    edges = trees.post_transform_scores(np.array([[0.0, 0.5, 1.0, 1.5]]), 4)
    np.testing.assert_array_equal(edges, [[-np.inf, 0.0, np.inf, np.nan]])


def test_softmax_zero_keeps_zero_scores_at_zero():
    scores = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 3.0]])
    got = trees.post_transform_scores(scores, 3)
    e = np.exp(np.array([1.0, 2.0]) - 2.0)
    np.testing.assert_allclose(got[0], [0.0, *(e / e.sum())])
    np.testing.assert_array_equal(got[1], [0.0, 0.0, 0.0])
    e = np.exp(np.array([-1.0, 3.0]) - 3.0)
    np.testing.assert_allclose(got[2], [e[0] / e.sum(), 0.0, e[1] / e.sum()])


def test_malformed_forests_are_refused_by_name():
    attrs = _forest(4)
    x = _features(4)
    cycle = attrs | {"nodes_truenodeids": [0] + attrs["nodes_truenodeids"][1:]}
    cycle["nodes_trueleafs"] = [0] + attrs["nodes_trueleafs"][1:]
    with pytest.raises(ShapeError, match="cycle"):
        _ours(x, cycle)
    with pytest.raises(OutOfRangeError, match=r"nodes_featureids\[0\]"):
        _ours(x, attrs | {"nodes_featureids": [FEATURES] + attrs["nodes_featureids"][1:]})
    with pytest.raises(OutOfRangeError, match="leaf_targetids"):
        _ours(x, attrs | {"n_targets": 1, "leaf_targetids": [1] * len(attrs["leaf_targetids"])})
    with pytest.raises(ShapeError, match="missing attributes"):
        _ours(x, {k: v for k, v in attrs.items() if k != "tree_roots"})
    with pytest.raises(ShapeError, match="BRANCH_MEMBER"):
        _ours(
            x, attrs | {"membership_values": None, "nodes_modes": [6] * len(attrs["nodes_modes"])}
        )
