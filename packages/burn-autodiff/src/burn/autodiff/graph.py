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


def run_backward(inner, root: Node, seed, hook=None) -> Gradients:
    """Propagate `seed` (the gradient of the root) to every leaf, then free the graph.

    With a `hook`, `hook(leaf_id, grad)` is called as soon as a leaf's gradient is final:
    when the last node consuming the leaf has been differentiated (see `_run_hooked`).
    """
    grads = Gradients(inner)
    if root.parents == () and root.backward is None:
        grads.register(root.id, seed)
        if hook is not None:
            hook(root.id, seed)
        return grads
    order = _topological(root)
    if hook is None:
        _run(inner, order, root, seed, grads)
    else:
        _run_hooked(inner, order, root, seed, grads, hook)
    for node in order:
        if not node.is_leaf:
            node.backward = _freed
            node.parents = ()
    return grads


def _accumulate(inner, pending: dict, parent: Node, pgrad) -> None:
    prev = pending.get(parent.id)
    pending[parent.id] = pgrad if prev is None else inner.float_add(prev, pgrad)


def _run(inner, order: list[Node], root: Node, seed, grads: Gradients) -> None:
    pending: dict[int, object] = {root.id: seed}
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


def _run_hooked(inner, order: list[Node], root: Node, seed, grads: Gradients, hook) -> None:
    """`_run`, finishing each leaf when its count of unprocessed consumers reaches zero.

    The topological order may place a leaf long after its last consumer (a depth-first order
    puts the first leaves it meets last), so leaves are taken out of it and finished as soon
    as they can be. The nodes in between run in the same order as `_run`, so the gradients
    are the same, summed in the same order.
    """
    consumers: dict[int, int] = {}
    for node in order:
        for parent in node.parents:
            if parent is not None and parent.is_leaf:
                consumers[parent.id] = consumers.get(parent.id, 0) + 1
    pending: dict[int, object] = {root.id: seed}
    for node in order:
        if node.is_leaf:
            continue
        grad = pending.pop(node.id, None)
        pgrads = (None,) * len(node.parents) if grad is None else node.backward(grad)
        for parent, pgrad in zip(node.parents, pgrads, strict=True):
            if parent is None:
                continue
            if pgrad is not None:
                _accumulate(inner, pending, parent, pgrad)
            if parent.is_leaf:
                left = consumers[parent.id] - 1
                consumers[parent.id] = left
                if left == 0:
                    final = pending.pop(parent.id, None)
                    if final is not None:
                        grads.register(parent.id, final)
                        hook(parent.id, final)
