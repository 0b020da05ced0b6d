"""TreeEnsemble (`ai.onnx.ml`): an ensemble of decision trees, the op that replaces
TreeEnsembleRegressor and TreeEnsembleClassifier (an ArgMax after it gives the class).

Trees branch on data, so they run on the host, like NonMaxSuppression. The walk is vectorised
over samples instead of looping per sample: every sample of the batch stands at some node of
the current tree, and one step moves each to the child its comparison picks or parks it at a
leaf, so a tree costs one numpy pass per level. A path is never longer than the node count:
a walk that is, was sent round a cycle by the attributes, and is refused.
"""

from __future__ import annotations

import math

import numpy as np
from burn.tensor import Tensor
from burn.tensor.errors import OutOfRangeError, ShapeError

__all__ = ["tree_ensemble", "tree_ensemble_regressor"]

# nodes_modes: how a node compares its feature with its split.
_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, _MEMBER = range(7)
_COMPARE = {
    _LEQ: np.less_equal,
    _LT: np.less,
    _GTE: np.greater_equal,
    _GT: np.greater,
    _EQ: np.equal,
    _NEQ: np.not_equal,
}
_AVERAGE, _SUM, _MIN, _MAX = range(4)
_REQUIRED = (
    "nodes_featureids",
    "nodes_modes",
    "nodes_truenodeids",
    "nodes_falsenodeids",
    "nodes_trueleafs",
    "nodes_falseleafs",
    "leaf_targetids",
    "leaf_weights",
    "tree_roots",
    "n_targets",
)


def _member_sets(modes: np.ndarray, membership_values) -> dict[int, np.ndarray]:
    """The set of each BRANCH_MEMBER node: `membership_values` lists them in node order, each
    set ended by a NaN."""
    members = np.asarray(membership_values if membership_values is not None else [], np.float64)
    ends = np.flatnonzero(np.isnan(members))
    nodes = np.flatnonzero(modes == _MEMBER)
    if len(ends) != len(nodes):
        raise ShapeError(
            f"TreeEnsemble: {len(nodes)} BRANCH_MEMBER node(s) need as many NaN-ended sets in "
            f"membership_values, found {len(ends)}"
        )
    starts = np.concatenate([[0], ends + 1])[: len(ends)].astype(np.int64)
    return {int(n): members[s:e] for n, s, e in zip(nodes, starts, ends, strict=True)}


def _branch(modes, splits, sets, tracks_true, idx, value) -> np.ndarray:
    """Whether each sample, at node `idx` with feature `value`, takes the true branch."""
    taken = np.zeros(len(idx), bool)
    node_modes = modes[idx]
    for mode in np.unique(node_modes):
        at = node_modes == mode
        if mode == _MEMBER:
            for node in np.unique(idx[at]):
                here = at & (idx == node)
                taken[here] = np.isin(value[here], sets[int(node)])
        else:
            with np.errstate(invalid="ignore"):
                taken[at] = _COMPARE[int(mode)](value[at], splits[idx[at]])
    return taken | (tracks_true[idx] & np.isnan(value))


def _leaves(x: np.ndarray, root: int, tables: dict, sets: dict) -> np.ndarray:
    """The leaf each row of `x` reaches in the tree rooted at node `root`."""
    modes, feature = tables["modes"], tables["feature"]
    n = len(x)
    node = np.full(n, root, np.int64)
    leaf = np.full(n, -1, np.int64)
    rows = np.arange(n)
    for _ in range(len(modes) + 1):
        if rows.size == 0:
            return leaf
        idx = node[rows]
        taken = _branch(
            modes, tables["splits"], sets, tables["tracks_true"], idx, x[rows, feature[idx]]
        )
        child = np.where(taken, tables["true_id"][idx], tables["false_id"][idx])
        at_leaf = np.where(taken, tables["true_leaf"][idx], tables["false_leaf"][idx])
        leaf[rows[at_leaf]] = child[at_leaf]
        node[rows[~at_leaf]] = child[~at_leaf]
        rows = rows[~at_leaf]
    raise ShapeError(f"TreeEnsemble: the tree rooted at node {root} has a cycle")


def _erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse error function in float64: Winitzki's approximation, then Newton steps on
    `math.erf` (numpy has no erfinv)."""
    y = np.asarray(y, np.float64)
    out = np.full(y.shape, np.nan)
    inside = np.abs(y) < 1
    out[y == 1], out[y == -1] = np.inf, -np.inf
    v = y[inside]
    a = 0.147
    log = np.log1p(-v * v)
    first = 2 / (math.pi * a) + log / 2
    guess = np.sign(v) * np.sqrt(np.sqrt(first * first - log / a) - first)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(4):
        guess = guess - (erf(guess) - v) / (2 / math.sqrt(math.pi) * np.exp(-guess * guess))
    out[inside] = guess
    return out


def post_transform_scores(scores: np.ndarray, kind: int) -> np.ndarray:
    """`ai.onnx.ml`'s post_transform of `[N, targets]` scores (0 NONE, 1 SOFTMAX, 2 LOGISTIC,
    3 SOFTMAX_ZERO, 4 PROBIT), in float64 on the host."""
    if kind == 0:  # NONE
        return scores
    if kind == 1:  # SOFTMAX over the targets
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if kind == 2:  # LOGISTIC
        return 1.0 / (1.0 + np.exp(-scores))
    if kind == 3:  # SOFTMAX_ZERO: a softmax over the non-zero scores; zeros stay zero
        nonzero = scores != 0
        top = np.where(nonzero, scores, -np.inf).max(axis=1, keepdims=True)
        e = np.where(nonzero, np.exp(scores - np.where(np.isfinite(top), top, 0.0)), 0.0)
        total = e.sum(axis=1, keepdims=True)
        return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    if kind == 4:  # PROBIT
        return math.sqrt(2.0) * _erfinv(2.0 * scores - 1.0)
    raise ShapeError(f"unknown post_transform {kind}")


def tree_ensemble(
    x: Tensor,
    aggregate_function: int = _SUM,
    post_transform: int = 0,
    membership_values=None,
    nodes_hitrates=None,
    nodes_missing_value_tracks_true=None,
    nodes_splits=None,
    **attributes,
) -> Tensor:
    """`[N, n_targets]` scores of the rows of `x` `[N, F]`: per target, the leaf weights the
    trees reach, summed (or averaged, or their minimum or maximum), then `post_transform`.
    `nodes_hitrates`, a hint for faster walks in the spec, changes no result and is unused."""
    missing = [name for name in _REQUIRED if attributes.get(name) is None]
    unknown = sorted(set(attributes) - set(_REQUIRED))
    if missing or unknown:
        raise ShapeError(f"TreeEnsemble: missing attributes {missing}, unknown ones {unknown}")
    modes = np.asarray(attributes["nodes_modes"], np.int64).reshape(-1)
    count = len(modes)
    tables = {
        "modes": modes,
        "feature": np.asarray(attributes["nodes_featureids"], np.int64),
        "splits": np.asarray(nodes_splits if nodes_splits is not None else [0.0] * count),
        "true_id": np.asarray(attributes["nodes_truenodeids"], np.int64),
        "false_id": np.asarray(attributes["nodes_falsenodeids"], np.int64),
        "true_leaf": np.asarray(attributes["nodes_trueleafs"], bool),
        "false_leaf": np.asarray(attributes["nodes_falseleafs"], bool),
        "tracks_true": np.asarray(nodes_missing_value_tracks_true or [0] * count, np.int64).astype(
            bool
        ),
    }
    targets = np.asarray(attributes["leaf_targetids"], np.int64)
    weights = np.asarray(attributes["leaf_weights"], np.float64)
    roots = np.asarray(attributes["tree_roots"], np.int64)
    n_targets = int(attributes["n_targets"])
    data = np.asarray(x.to_data().array)
    values = data.astype(np.float64).reshape(-1, data.shape[-1] if data.ndim else 1)
    _check(tables, targets, weights, roots, n_targets, values.shape[1])
    sets = _member_sets(modes, membership_values)
    rows = np.arange(len(values))
    dtype = data.dtype if data.dtype.kind == "f" else np.dtype(np.float32)
    if aggregate_function in (_SUM, _AVERAGE):
        scores = np.zeros((len(values), n_targets))
    elif aggregate_function in (_MIN, _MAX):
        scores = np.full(
            (len(values), n_targets), np.inf if aggregate_function == _MIN else -np.inf
        )
    else:
        raise ShapeError(f"TreeEnsemble: unknown aggregate_function {aggregate_function}")
    combine = {_MIN: np.minimum.at, _MAX: np.maximum.at}.get(aggregate_function, np.add.at)
    reached = np.zeros(scores.shape, bool)
    for root in roots:
        leaf = _leaves(values, int(root), tables, sets)
        combine(scores, (rows, targets[leaf]), weights[leaf])
        reached[rows, targets[leaf]] = True
    if aggregate_function == _AVERAGE and len(roots):
        scores /= len(roots)
    # A target no tree reached scores 0, as in onnxruntime (onnx's reference leaves the dtype's
    # extreme there under MIN and MAX).
    scores[~reached] = 0.0
    scores = post_transform_scores(scores, int(post_transform))
    return Tensor.from_data(scores.astype(dtype), device=x.device(), dtype=x.dtype)


def _check(tables, targets, weights, roots, n_targets, features) -> None:
    """Every table the same length and every index in range, before any walk reads one."""
    count = len(tables["modes"])
    for name, table in tables.items():
        if len(table) != count:
            raise ShapeError(f"TreeEnsemble: {count} node modes but {len(table)} {name} entries")
    if len(targets) != len(weights):
        raise ShapeError(
            f"TreeEnsemble: {len(targets)} leaf target ids but {len(weights)} leaf weights"
        )
    leaves = len(targets)
    for name, table, limit in (
        ("nodes_featureids", tables["feature"], features),
        ("leaf_targetids", targets, n_targets),
        ("tree_roots", roots, count),
        ("nodes_truenodeids", tables["true_id"], np.where(tables["true_leaf"], leaves, count)),
        ("nodes_falsenodeids", tables["false_id"], np.where(tables["false_leaf"], leaves, count)),
    ):
        bad = (table < 0) | (table >= limit)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise OutOfRangeError(
                f"TreeEnsemble: {name}[{at}] = {int(table[at])} is out of range "
                f"[0, {int(np.broadcast_to(limit, table.shape)[at])})"
            )
    modes = tables["modes"]
    if ((modes < _LEQ) | (modes > _MEMBER)).any():
        raise ShapeError(f"TreeEnsemble: node modes must lie in 0..6, got {sorted(set(modes))}")


# The legacy TreeEnsembleRegressor's node modes, by name, as the walker codes them (a LEAF is
# never compared: the walk stops on reaching one).
_LEGACY_MODES = {
    "BRANCH_LEQ": _LEQ,
    "BRANCH_LT": _LT,
    "BRANCH_GTE": _GTE,
    "BRANCH_GT": _GT,
    "BRANCH_EQ": _EQ,
    "BRANCH_NEQ": _NEQ,
    "LEAF": _LEQ,
}
_AGGREGATES = {"AVERAGE": _AVERAGE, "SUM": _SUM, "MIN": _MIN, "MAX": _MAX}
_POST_NAMES = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}


def _either(attributes: dict, name: str):
    """An attribute or its `_as_tensor` (double) form."""
    value = attributes.get(name)
    return attributes.get(f"{name}_as_tensor") if value is None else value


def tree_ensemble_regressor(x: Tensor, **attributes) -> Tensor:
    """The legacy TreeEnsembleRegressor (scikit-learn's and LightGBM's exports): trees given
    node by node as (tree id, node id) pairs with LEAF nodes, and leaves that may vote for
    several targets. Each tree's leaf is found by the same level-at-a-time walk as
    `tree_ensemble`; the votes are summed (or averaged, or their minimum or maximum taken),
    `base_values` added, then `post_transform`. A target no tree votes for scores its base
    value (0 without one), as in onnxruntime."""
    needed = ["nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_truenodeids"]
    needed += ["nodes_falsenodeids", "nodes_featureids", "target_treeids", "target_nodeids"]
    needed += ["target_ids"]
    missing = [n for n in needed if attributes.get(n) is None]
    if missing or _either(attributes, "target_weights") is None:
        raise ShapeError(
            f"TreeEnsembleRegressor: missing attributes {missing or ['target_weights']}"
        )
    trees = np.asarray(attributes["nodes_treeids"], np.int64)
    ids = np.asarray(attributes["nodes_nodeids"], np.int64)
    position = {(int(t), int(n)): i for i, (t, n) in enumerate(zip(trees, ids, strict=True))}
    names = list(attributes["nodes_modes"])
    unknown = sorted({m for m in names if m not in _LEGACY_MODES})
    if unknown or len(position) != len(names):
        raise ShapeError(
            f"TreeEnsembleRegressor: unknown node modes {unknown}, or (tree, node) ids repeated"
        )
    leaf = np.array([m == "LEAF" for m in names], bool)

    def child(key: str) -> np.ndarray:
        out = []
        for i, (tree, target) in enumerate(zip(trees, attributes[key], strict=True)):
            if leaf[i]:
                out.append(i)
                continue
            found = position.get((int(tree), int(target)))
            if found is None:
                raise OutOfRangeError(
                    f"TreeEnsembleRegressor: {key}[{i}] = {int(target)} is no node of tree {tree}"
                )
            out.append(found)
        return np.asarray(out, np.int64)

    true_id, false_id = child("nodes_truenodeids"), child("nodes_falsenodeids")
    splits = _either(attributes, "nodes_values")
    values = np.asarray(splits if splits is not None else [0.0] * len(names), np.float64)
    tracks = attributes.get("nodes_missing_value_tracks_true") or [0] * len(names)
    tables = {
        "modes": np.array([_LEGACY_MODES[m] for m in names], np.int64),
        "feature": np.asarray(attributes["nodes_featureids"], np.int64),
        "splits": values,
        "true_id": true_id,
        "false_id": false_id,
        "true_leaf": leaf[true_id],
        "false_leaf": leaf[false_id],
        "tracks_true": np.asarray(tracks, np.int64).astype(bool),
    }
    n_targets = int(attributes.get("n_targets", 1))
    data = np.asarray(x.to_data().array)
    rows = data.astype(np.float64).reshape(-1, data.shape[-1] if data.ndim else 1)
    bad = (tables["feature"] < 0) | (tables["feature"] >= rows.shape[1])
    if (bad & ~leaf).any():
        raise OutOfRangeError(
            f"TreeEnsembleRegressor: a feature id is outside [0, {rows.shape[1]})"
        )
    # Every leaf's votes as a dense [node, target] table.
    votes = np.zeros((len(names), n_targets))
    voted = np.zeros((len(names), n_targets), bool)
    weights = _either(attributes, "target_weights")
    for tree, node, target, weight in zip(
        attributes["target_treeids"],
        attributes["target_nodeids"],
        attributes["target_ids"],
        weights,
        strict=True,
    ):
        at = position.get((int(tree), int(node)))
        if at is None or not 0 <= int(target) < n_targets:
            raise OutOfRangeError(
                f"TreeEnsembleRegressor: a vote for tree {tree}, node {node}, target {target} "
                "names no leaf or target"
            )
        votes[at, int(target)] += weight
        voted[at, int(target)] = True
    name = attributes.get("aggregate_function", "SUM")
    aggregate = _AGGREGATES.get(name)
    if aggregate is None:
        raise ShapeError(f"TreeEnsembleRegressor: unknown aggregate_function {name!r}")
    roots = [
        position[(int(t), 0)] for t in dict.fromkeys(trees.tolist()) if (int(t), 0) in position
    ]
    n = len(rows)
    if aggregate in (_SUM, _AVERAGE):
        scores = np.zeros((n, n_targets))
    else:
        scores = np.full((n, n_targets), np.inf if aggregate == _MIN else -np.inf)
    reached = np.zeros((n, n_targets), bool)
    for root in roots:
        at = np.full(n, root) if leaf[root] else _leaves(rows, root, tables, {})
        if aggregate in (_SUM, _AVERAGE):
            scores += votes[at]
        elif aggregate == _MIN:
            scores = np.where(voted[at], np.minimum(scores, votes[at]), scores)
        else:
            scores = np.where(voted[at], np.maximum(scores, votes[at]), scores)
        reached |= voted[at]
    if aggregate == _AVERAGE and roots:
        scores /= len(roots)
    scores[~reached] = 0.0
    base = _either(attributes, "base_values")
    if base is not None and len(base) in (n_targets, 1):
        scores = scores + np.asarray(base, np.float64)
    kind = _POST_NAMES.get(attributes.get("post_transform", "NONE"), -1)
    scores = post_transform_scores(scores, kind)
    return Tensor.from_data(scores.astype(np.float32), device=x.device(), dtype="f32")
