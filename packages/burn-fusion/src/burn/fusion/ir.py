"""The recorded form of elementwise work: `Node`s, and `Segment`s that a fuser compiles.

A node is one elementwise op (or a leaf: a concrete primitive of the inner backend) with the
shape and dtype of its result. Nodes point at the nodes they read, never at the user's tensor
handles, so an intermediate that no handle keeps alive is only ever an expression inside a
kernel, never a buffer.

A segment is what one generated kernel computes: a set of output nodes of one shape, every node
they depend on in topological order, and the leaves they read. Its `signature` names the work
(ops, shapes, dtypes, how each leaf is laid out) but not the values (scalars, constants, buffer
offsets and strides), which travel as `params` and leaf primitives; two segments with the same
signature run the same compiled plan.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from burn.tensor import DType

# Node kinds, and what `arg` holds for each:
#   leaf    the inner primitive
#   const   the fill value (a param: the plan does not depend on it)
#   unary   the op name of the contract's UNARY_OPS
#   binary  the op name of BINARY_OPS (inputs broadcast)
#   scalar  (op name, scalar value): binary with a Python scalar on the right
#   cast    the target DType
#   where   None: inputs (p, mask, value), `value` where mask else `p`
#   expand  None: the input broadcast to the node's shape
KINDS = frozenset({"leaf", "const", "unary", "binary", "scalar", "cast", "where", "expand"})


class Node:
    """One recorded elementwise op (or a leaf) and the shape and dtype it produces."""

    __slots__ = ("kind", "arg", "inputs", "shape", "dtype", "device", "cost", "reads")

    def __init__(
        self, kind: str, arg: Any, inputs: tuple[Node, ...], shape, dtype: DType, device
    ) -> None:
        self.kind = kind
        self.arg = arg
        self.inputs = inputs
        self.shape = shape if shape.__class__ is tuple else tuple(shape)
        self.dtype = dtype
        self.device = device
        # `cost`: an upper bound on the ops this node inlines (shared inputs count twice): the
        # stream flushes before a node grows past its limit. `reads`: an upper bound on the
        # primitives it reads (a kernel can bind only so many). Plain loops: this runs for
        # every recorded op.
        if kind == "leaf":
            self.cost = 0
            self.reads = 1
        else:
            cost, reads = 1, 0
            for i in inputs:
                cost += i.cost
                reads += i.reads
            self.cost = cost
            self.reads = reads

    @property
    def op(self) -> str | None:
        """The op name for unary, binary and scalar nodes."""
        if self.kind == "scalar":
            return self.arg[0]
        if self.kind in ("unary", "binary"):
            return self.arg
        return None

    def __repr__(self) -> str:
        return f"Node({self.kind}, {self.op or ''}, shape={list(self.shape)}, {self.dtype.value})"


def _arg_key(node: Node) -> Hashable:
    """The part of a node's argument that changes the generated code (never a value)."""
    if node.kind == "scalar":
        return node.arg[0]
    if node.kind == "cast":
        return node.arg.value
    if node.kind in ("unary", "binary"):
        return node.arg
    return None


class Segment:
    """The work of one kernel: `outputs` (positions in `nodes`) all of shape `shape`.

    Attributes:
        shape: the output shape every node is evaluated over (smaller nodes broadcast).
        nodes: every node needed, inputs before users; leaves included.
        leaves: the leaf nodes, in the order their primitives are bound.
        outputs: positions in `nodes` of the values to write.
        params: scalars in node order (one per const and scalar node).
        signature: a hashable key of everything the generated code depends on.
    """

    __slots__ = ("shape", "nodes", "leaves", "outputs", "params", "signature", "index")

    def __init__(
        self, outputs: list[Node], layout_key: Callable[[Any, tuple[int, ...]], Hashable]
    ) -> None:
        self.shape = outputs[0].shape
        self.nodes: list[Node] = []
        self.leaves: list[Node] = []
        self.params: list[Any] = []
        self.index: dict[int, int] = {}
        leaf_of: dict[int, int] = {}  # id(primitive) -> position of its first leaf node
        for out in outputs:
            self._visit(out, leaf_of)
        self.outputs = [self.index[id(o)] for o in outputs]
        sig: list[Hashable] = [self.shape, tuple(self.outputs)]
        for node in self.nodes:
            if node.kind == "leaf":
                sig.append(("leaf", node.dtype.value, node.shape, layout_key(node.arg, self.shape)))
                continue
            inputs = tuple(self.index[id(i)] for i in node.inputs)
            sig.append((node.kind, _arg_key(node), inputs, node.shape, node.dtype.value))
        self.signature = tuple(sig)

    def _visit(self, root: Node, leaf_of: dict[int, int]) -> None:
        """Add `root` and its inputs (depth first, without recursion) in topological order."""
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in self.index:
                continue
            if node.kind == "leaf":
                seen = leaf_of.get(id(node.arg))
                if seen is not None and self.nodes[seen].shape == node.shape:
                    self.index[id(node)] = seen
                    continue
                leaf_of[id(node.arg)] = len(self.nodes)
                self.index[id(node)] = len(self.nodes)
                self.nodes.append(node)
                self.leaves.append(node)
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((i, False) for i in reversed(node.inputs) if id(i) not in self.index)
                continue
            self.index[id(node)] = len(self.nodes)
            self.nodes.append(node)
            if node.kind == "const":
                self.params.append(node.arg)
            elif node.kind == "scalar":
                self.params.append(node.arg[1])

    def position(self, node: Node) -> int:
        """Where `node` sits in `nodes`."""
        return self.index[id(node)]

    def __repr__(self) -> str:
        ops = [n.op or n.kind for n in self.nodes if n.kind != "leaf"]
        return f"Segment(shape={list(self.shape)}, ops={ops}, outputs={len(self.outputs)})"


def leaf_count(nodes: list[Node]) -> int:
    """How many distinct primitives the nodes read (what a kernel must bind)."""
    seen: set[int] = set()
    stack = list(nodes)
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if node.kind == "leaf":
            seen.add(id(node.arg))
        else:
            stack.extend(node.inputs)
    return len(seen)
