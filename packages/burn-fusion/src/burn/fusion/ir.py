"""The recorded form of elementwise work: `Node`s, and `Segment`s that a fuser compiles.

A node is one elementwise op, a leaf (a concrete primitive of the inner backend) or a matrix
product whose consumers may become its epilogue, with the shape and dtype of its result. Nodes
point at the nodes they read, never at the user's tensor handles, so an intermediate that no
handle keeps alive is only ever an expression inside a kernel, never a buffer.

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
#   matmul  (lhs, rhs, key): the product of two concrete inner primitives, no node inputs; `key`
#           is the fuser's name for what its kernel depends on (shapes, layouts, tiles). A
#           segment holds at most one, and its other nodes are the matmul's epilogue.
KINDS = frozenset(
    {"leaf", "const", "unary", "binary", "scalar", "cast", "where", "expand", "matmul"}
)


class Node:
    """One recorded elementwise op (or a leaf, or a matmul) and the shape and dtype it produces."""

    __slots__ = (
        "kind",
        "arg",
        "inputs",
        "shape",
        "dtype",
        "device",
        "cost",
        "reads",
        "matmuls",
        "leaf_ids",
        "pattern",
    )

    def __init__(
        self, kind: str, arg: Any, inputs: tuple[Node, ...], shape, dtype: DType, device
    ) -> None:
        self.kind = kind
        self.arg = arg
        self.inputs = inputs
        self.shape = shape if shape.__class__ is tuple else tuple(shape)
        self.dtype = dtype
        self.device = device
        self.leaf_ids: frozenset[int] | None = None  # see `leaf_ids`: set when first asked
        # What the node was recorded from when its inputs were all concrete (the op, shapes and
        # dtypes, see `Stream.alone`); None otherwise.
        self.pattern: Hashable | None = None
        # `cost`: an upper bound on the ops this node inlines (shared inputs count twice): the
        # stream flushes before a node grows past its limit. `reads`: an upper bound on the
        # primitives it reads (a kernel can bind only so many). `matmuls`: an upper bound on
        # the matmul nodes it depends on (0: none, the common case, decided without a walk).
        # Plain loops: this runs for every recorded op.
        if kind == "leaf":
            self.cost = 0
            self.reads = 1
            self.matmuls = 0
        elif kind == "matmul":
            self.cost = 1
            self.reads = 2
            self.matmuls = 1
        else:
            cost, reads, matmuls = 1, 0, 0
            for i in inputs:
                cost += i.cost
                reads += i.reads
                matmuls += i.matmuls
            self.cost = cost
            self.reads = reads
            self.matmuls = matmuls

    def become_leaf(self, value: Any) -> None:
        """Turn a matmul node computed on its own into a leaf reading its result: every node
        that reads it then reads the value. Bounds on the nodes above stay upper bounds (a
        leaf reads fewer primitives than the product did)."""
        self.kind = "leaf"
        self.arg = value
        self.inputs = ()
        self.cost = 0
        self.reads = 1
        self.matmuls = 0
        self.leaf_ids = None

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


# Kinds whose whole `arg` shapes the code (and decides support): an op name, or a cast's
# target dtype. A scalar's op is `arg[0]`; other kinds' args are values.
ARG_IS_KEY = frozenset({"unary", "binary", "cast"})


class Segment:
    """The work of one kernel: `outputs` (positions in `nodes`) all of shape `shape`.

    Attributes:
        shape: the output shape every node is evaluated over (smaller nodes broadcast).
        nodes: every node needed, inputs before users; leaves included.
        leaves: the leaf nodes, in the order their primitives are bound.
        outputs: positions in `nodes` of the values to write.
        params: scalars in node order (one per const and scalar node).
        signature: a hashable key of everything the generated code depends on.
        matmul: the position of the segment's matmul node, or None (elementwise only).
    """

    __slots__ = ("shape", "nodes", "leaves", "outputs", "params", "signature", "index", "matmul")

    def __init__(
        self, outputs: list[Node], layout_key: Callable[[Any, tuple[int, ...]], Hashable]
    ) -> None:
        self.shape = outputs[0].shape
        self.nodes: list[Node] = []
        self.leaves: list[Node] = []
        self.params: list[Any] = []
        self.index: dict[int, int] = {}
        self.matmul: int | None = None
        entries = self._walk(outputs, layout_key)
        self.outputs = [self.index[id(o)] for o in outputs]
        self.signature = (self.shape, tuple(self.outputs), *entries)

    def _walk(self, outputs: list[Node], layout_key) -> list[Hashable]:
        """Add the outputs and their inputs (depth first, without recursion) in topological
        order; returns each node's part of the signature, in that order.

        One pass does both: a flush builds a segment per kernel of every traced step (the
        plan lookup needs the signature), so this walk is part of every step's host cost. An
        explicit stack rather than a recursive inner function, which would refer to itself:
        a reference cycle that keeps the segment's nodes, and the buffers their leaves hold,
        alive until the next garbage collection."""
        shape = self.shape
        index = self.index
        nodes = self.nodes
        leaves = self.leaves
        params = self.params
        entries: list[Hashable] = []
        leaf_of: dict[int, int] = {}  # id(primitive) -> position of its first leaf node
        for root in outputs:
            stack = [root]
            while stack:
                node = stack[-1]
                if id(node) in index:
                    stack.pop()
                    continue
                kind = node.kind
                if kind == "leaf":
                    stack.pop()
                    seen = leaf_of.get(id(node.arg))
                    if seen is not None and nodes[seen].shape == node.shape:
                        index[id(node)] = seen
                        continue
                    leaf_of[id(node.arg)] = index[id(node)] = len(nodes)
                    nodes.append(node)
                    leaves.append(node)
                    entries.append(("leaf", node.dtype, node.shape, layout_key(node.arg, shape)))
                    continue
                inputs = node.inputs
                # Inputs not placed yet go on the stack, the first input on top; the node is
                # placed when it is on top again with all of them placed.
                waiting = False
                for i in reversed(inputs):
                    if id(i) not in index:
                        stack.append(i)
                        waiting = True
                if waiting:
                    continue
                stack.pop()
                index[id(node)] = len(nodes)
                nodes.append(node)
                arg = node.arg
                if kind == "scalar":
                    params.append(arg[1])
                    arg_key = arg[0]
                elif kind == "matmul":
                    self.matmul = len(nodes) - 1
                    arg_key = arg[2]
                elif kind in ARG_IS_KEY:
                    arg_key = arg
                else:
                    if kind == "const":
                        params.append(arg)
                    arg_key = None
                if len(inputs) == 1:
                    positions: tuple[int, ...] = (index[id(inputs[0])],)
                elif len(inputs) == 2:
                    positions = (index[id(inputs[0])], index[id(inputs[1])])
                else:
                    positions = tuple([index[id(i)] for i in inputs])
                entries.append((kind, arg_key, positions, node.shape, node.dtype))
        return entries

    def position(self, node: Node) -> int:
        """Where `node` sits in `nodes`."""
        return self.index[id(node)]

    def __repr__(self) -> str:
        ops = [n.op or n.kind for n in self.nodes if n.kind != "leaf"]
        return f"Segment(shape={list(self.shape)}, ops={ops}, outputs={len(self.outputs)})"


def leaf_ids(node: Node) -> frozenset[int]:
    """The ids of the distinct primitives `node` reads, remembered on every node on the way.

    A chain that reads a few tensors again and again (`y = y * x` in a loop) outgrows the
    upper bound on reads long before it binds too many primitives; the stream then counts
    them at every new node, which is one union of the inputs' remembered sets instead of a
    walk of the whole chain (quadratic in its length)."""
    if node.leaf_ids is not None:
        return node.leaf_ids
    stack = [node]
    while stack:
        top = stack[-1]
        if top.leaf_ids is not None:
            stack.pop()
        elif top.kind == "leaf":
            top.leaf_ids = frozenset((id(top.arg),))
            stack.pop()
        elif top.kind == "matmul":
            top.leaf_ids = frozenset((id(top.arg[0]), id(top.arg[1])))
            stack.pop()
        else:
            waiting = [i for i in top.inputs if i.leaf_ids is None]
            if waiting:
                stack.extend(waiting)
            else:
                top.leaf_ids = frozenset().union(*[i.leaf_ids for i in top.inputs])
                stack.pop()
    return node.leaf_ids  # type: ignore[return-value]


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
        elif node.kind == "matmul":
            seen.update((id(node.arg[0]), id(node.arg[1])))
        else:
            stack.extend(node.inputs)
    return len(seen)


def matmul_nodes(nodes: list[Node]) -> list[Node]:
    """The distinct matmul nodes the nodes depend on, in the order a walk meets them."""
    found: list[Node] = []
    visited: set[int] = set()
    stack = [n for n in nodes if n.matmuls]
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if node.kind == "matmul":
            found.append(node)
        else:
            stack.extend([i for i in node.inputs if i.matmuls])
    return found
