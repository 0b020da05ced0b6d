"""The gradient graph: nodes, the backward pass, and the `Gradients` container."""

from __future__ import annotations

import itertools

from burn.tensor.errors import BackendError

_ids = itertools.count(1)


class Node:
    """One recorded op. `backward(grad)` returns one gradient (or None) per parent.

    A leaf node (`parents == ()`) belongs to a tensor marked with `require_grad()`; its
    gradient is kept in the `Gradients` returned by `backward()`. Other nodes are freed after
    the backward pass: their closures, which hold the saved inputs, are dropped.
    """

    __slots__ = ("id", "parents", "backward", "name")

    def __init__(self, parents: tuple, backward, name: str):
        self.id = next(_ids)
        self.parents = parents
        self.backward = backward
        self.name = name

    @property
    def is_leaf(self) -> bool:
        return not self.parents and self.backward is None

    def __repr__(self) -> str:
        return f"Node({self.name}, id={self.id})"


def _freed(grad):
    raise BackendError(
        "backward: this graph was already used by a backward pass and freed; run the forward again"
    )


def leaf() -> Node:
    return Node((), None, "leaf")


class Gradients:
    """Gradients of the leaves, by node id, as primitives of the inner backend.

    Read with `tensor.grad(grads)`, pop with `tensor.grad_remove(grads)`.
    """

    def __init__(self, inner):
        self.inner = inner
        self._grads: dict[int, object] = {}

    def get(self, node_id: int):
        return self._grads.get(node_id)

    def remove(self, node_id: int):
        return self._grads.pop(node_id, None)

    def register(self, node_id: int, grad) -> None:
        self._grads[node_id] = grad

    def __len__(self) -> int:
        return len(self._grads)

    def __contains__(self, node_id: int) -> bool:
        return node_id in self._grads

    def __repr__(self) -> str:
        return f"Gradients({len(self)} tensors)"


def _topological(root: Node) -> list[Node]:
    """Nodes reachable from `root`, each after every node that consumes it."""
    order: list[Node] = []
    seen: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node.id in seen:
            continue
        seen.add(node.id)
        stack.append((node, True))
        for parent in node.parents:
            if parent is not None and parent.id not in seen:
                stack.append((parent, False))
    order.reverse()
    return order


def run_backward(inner, root: Node, seed) -> Gradients:
    """Propagate `seed` (the gradient of the root) to every leaf, then free the graph."""
    if root.parents == () and root.backward is None:
        grads = Gradients(inner)
        grads.register(root.id, seed)
        return grads
    pending: dict[int, object] = {root.id: seed}
    grads = Gradients(inner)
    order = _topological(root)
    for node in order:
        grad = pending.pop(node.id, None)
        if grad is None:
            continue
        if node.is_leaf:
            grads.register(node.id, grad)
            continue
        for parent, pgrad in zip(node.parents, node.backward(grad), strict=True):
            if parent is None or pgrad is None:
                continue
            prev = pending.get(parent.id)
            pending[parent.id] = pgrad if prev is None else inner.float_add(prev, pgrad)
    for node in order:
        if not node.is_leaf:
            node.backward = _freed
            node.parents = ()
    return grads
