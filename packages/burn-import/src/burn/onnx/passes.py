"""Graph passes that run before code generation.

In order: constants become arrays (`Constant` nodes and every node whose inputs are all
constants are evaluated once, at import time, by onnx's reference evaluator), `If` nodes with a
constant condition are replaced by the branch they take, nodes that no output depends on are
dropped, and `Gemm` or `MatMul` (+ `Add`) with constant weights become `Linear` layers.
Convolution followed by batch normalization is left as two layers so the model stays trainable.
"""

from __future__ import annotations

import numpy as np
import onnx
from burn.onnx.graph import Graph, Node, ValueInfo, graph_from_proto, held_array

# Ops whose result is not a function of their inputs, or that carry subgraphs: never folded.
_NOT_FOLDED = frozenset(
    {
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
        "Dropout",
        "If",
        "Loop",
        "Scan",
        "SequenceMap",
    }
)
# Folding that would write more than this many elements into the weights is left to run time.
_FOLD_LIMIT = 1 << 22


def run_passes(graph: Graph) -> Graph:
    """Every pass, in order; the graph is changed in place and returned."""
    for _ in range(8):  # inlining a branch can expose more constants
        fold_constants(graph)
        if not inline_constant_ifs(graph):
            break
    remove_dead_nodes(graph)
    fuse_linear(graph)
    remove_dead_nodes(graph)
    return graph


def _evaluate(node: Node, graph: Graph) -> list[np.ndarray] | None:
    from onnx.reference import ReferenceEvaluator

    proto = node.proto or onnx.helper.make_node(
        node.op_type, node.inputs, node.outputs, domain=node.domain or None, **node.attrs
    )
    feeds = {name: graph.constants[name] for name in node.inputs if name}
    try:
        evaluator = ReferenceEvaluator(proto, opsets={"": graph.opset})
        results = evaluator.run(None, feeds)
    except Exception:  # an op the evaluator lacks: it runs in the generated code instead
        return None
    if any(r is None or isinstance(r, (list, tuple)) for r in results):
        return None  # a sequence or an optional: made by the generated code, not a constant
    arrays = [np.asarray(r) if not isinstance(r, np.ndarray) else r for r in results]
    if any(a.dtype == object for a in arrays):
        return None
    return arrays


def fold_constants(graph: Graph) -> None:
    """Evaluate `Constant` nodes and nodes whose inputs are all constants."""
    kept = []
    for node in graph.nodes:
        inputs = [name for name in node.inputs if name]
        foldable = (
            node.domain in ("", "ai.onnx")
            and node.op_type not in _NOT_FOLDED
            and (inputs or node.op_type == "Constant")
            and all(name in graph.constants for name in inputs)
            and sum(graph.constants[n].size for n in inputs) <= _FOLD_LIMIT
        )
        results = _evaluate(node, graph) if foldable else None
        if results is None or any(r.size > _FOLD_LIMIT for r in results):
            kept.append(node)
            continue
        for name, value in zip(node.outputs, results, strict=False):
            if not name:
                continue
            value = held_array(value)  # a narrow type's values, held in a wider type
            graph.constants[name] = value
            old = graph.values.get(name)
            elem = old.elem_type if old is not None and old.elem_type else 0
            if not elem:
                elem = onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
            graph.values[name] = ValueInfo(name, elem, list(value.shape))
    graph.nodes = kept


def inline_constant_ifs(graph: Graph) -> bool:
    """Replace each `If` with a constant condition by its branch; True when one was replaced."""
    changed = False
    nodes: list[Node] = []
    for node in graph.nodes:
        if node.op_type != "If" or node.inputs[0] not in graph.constants:
            nodes.append(node)
            continue
        taken = bool(np.asarray(graph.constants[node.inputs[0]]).reshape(-1)[0])
        branch = node.attr("then_branch" if taken else "else_branch")
        sub = graph_from_proto(branch, graph.source, graph.opset, graph.values)
        graph.constants.update(sub.constants)
        graph.values.update({k: v for k, v in sub.values.items() if k not in graph.values})
        nodes.extend(sub.nodes)
        for inner, outer in zip(sub.outputs, node.outputs, strict=True):
            nodes.append(Node("Identity", f"{node.name}/{outer}", [inner.name], [outer]))
        changed = True
    graph.nodes = nodes
    return changed


def subgraph_inputs(node: Node) -> set[str]:
    """Names a node's subgraphs read from the enclosing scope."""
    found: set[str] = set()
    for value in node.attrs.values():
        if isinstance(value, onnx.GraphProto):
            found |= _outer_names(value)
    return found


def _outer_names(proto: onnx.GraphProto) -> set[str]:
    local = {v.name for v in proto.input} | {i.name for i in proto.initializer}
    used: set[str] = set()
    for node in proto.node:
        used |= {name for name in node.input if name}
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                used |= _outer_names(attr.g)
        local |= set(node.output)
    return used - local


def remove_dead_nodes(graph: Graph) -> None:
    """Drop nodes that no graph output depends on, and constants nobody reads."""
    needed = {v.name for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(out in needed for out in node.outputs):
            kept.append(node)
            needed |= {name for name in node.inputs if name}
            needed |= subgraph_inputs(node)
    graph.nodes = kept[::-1]
    graph.constants = {k: v for k, v in graph.constants.items() if k in needed}


def _linear_node(name, x, out, weight: np.ndarray, bias: np.ndarray | None) -> Node:
    attrs = {"weight": np.ascontiguousarray(weight)}
    if bias is not None:
        attrs["bias"] = np.ascontiguousarray(bias)
    return Node("Linear", name, [x], [out], attrs)


def fuse_linear(graph: Graph) -> None:
    """`Gemm` with a constant right side, and `MatMul` by a constant matrix (with the `Add` of a
    constant vector that follows it), become `Linear` layers: trainable, and named as such."""
    consumers = graph.consumers()
    consts = graph.constants
    replaced: dict[int, Node] = {}
    dropped: set[int] = set()
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    for node in graph.nodes:
        if node.op_type == "Gemm" and len(node.inputs) >= 2 and node.inputs[1] in consts:
            b = consts[node.inputs[1]]
            a_info = graph.info(node.inputs[0])
            if node.attr("transA", 0) or b.ndim != 2 or b.dtype.kind != "f" or a_info.rank != 2:
                continue
            weight = (b.T if node.attr("transB", 0) else b) * np.asarray(
                node.attr("alpha", 1.0), b.dtype
            )
            bias = None
            if len(node.inputs) > 2 and node.inputs[2]:
                if node.inputs[2] not in consts:
                    continue
                c = consts[node.inputs[2]]
                n_out = weight.shape[1]
                if c.size not in (1, n_out) or (c.ndim == 2 and c.shape[0] != 1):
                    continue
                bias = np.broadcast_to(c.reshape(-1), (n_out,)) * np.asarray(
                    node.attr("beta", 1.0), c.dtype
                )
            replaced[index[id(node)]] = _linear_node(
                node.name, node.inputs[0], node.outputs[0], weight, bias
            )
        elif node.op_type == "MatMul" and node.inputs[1] in consts:
            w = consts[node.inputs[1]]
            if w.ndim != 2 or w.dtype.kind != "f" or graph.info(node.inputs[0]).rank in (None, 0):
                continue
            out = node.outputs[0]
            users = consumers.get(out, [])
            bias, target = None, out
            if len(users) == 1 and users[0].op_type == "Add" and out not in _output_names(graph):
                add = users[0]
                other = add.inputs[1] if add.inputs[0] == out else add.inputs[0]
                c = consts.get(other)
                if c is not None and c.ndim == 1 and c.shape[0] == w.shape[1]:
                    bias, target = c, add.outputs[0]
                    dropped.add(index[id(add)])
            replaced[index[id(node)]] = _linear_node(node.name, node.inputs[0], target, w, bias)
    graph.nodes = [replaced.get(i, n) for i, n in enumerate(graph.nodes) if i not in dropped]


def _output_names(graph: Graph) -> set[str]:
    return {v.name for v in graph.outputs}
