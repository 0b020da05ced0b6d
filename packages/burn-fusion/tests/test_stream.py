"""The stream and the decorator, checked with a small numpy fuser on NdArray.

`NumpyFuser` implements the `FusionBackend` contract by evaluating a segment's nodes with
numpy, so these tests see exactly what `Fusion(B)` hands a fuser: which nodes are recorded,
when the stream flushes, which values are outputs, and when plans are compiled.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import registry
from burn.backend.ops import COMPARISON_OPS
from burn.fusion import Fusion, FusionBackend, register_fusion_backend
from burn.fusion.backend import FusedBackend, FusionTensor
from burn.fusion.stream import MAX_COST
from burn.ndarray.backend import NdArrayBackend
from burn.tensor import Int, Tensor
from burn.tensor import activation as act
from burn.tensor.errors import BackendError

UNARY = {"neg": np.negative, "exp": np.exp, "abs": np.abs, "recip": np.reciprocal}
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
}


def pending(t: Tensor) -> bool:
    """Whether a tensor of a Fusion backend holds a recorded value not computed yet."""
    return t.backend.is_pending(t.primitive)


class CountingNdArray(NdArrayBackend):
    """A backend of its own name, so the fuser registered here serves only these tests."""

    name = "counting-ndarray"


class NumpyFuser:
    """Evaluates segments with numpy; records what it was asked."""

    def __init__(self):
        self.compiled: list = []
        self.executed: list = []

    def implementations(self):
        return {op: getattr(NdArrayBackend, op) for op in ("unary", "binary", "binary_scalar")}

    def supports(self, node) -> bool:
        return node.op in UNARY or node.op in BINARY

    def max_inputs(self, device) -> int:
        return 4

    def layout_key(self, primitive, shape):
        return primitive.shape == shape

    def compile(self, segment):
        self.compiled.append(segment.signature)
        return segment.signature

    def execute(self, plan, segment):
        assert plan == segment.signature
        self.executed.append(segment)
        env, params = {}, iter(segment.params)
        for k, node in enumerate(segment.nodes):
            ins = [env[segment.position(i)] for i in node.inputs]
            if node.kind == "leaf":
                env[k] = node.arg
            elif node.kind == "unary":
                env[k] = UNARY[node.arg](ins[0])
            elif node.kind == "binary":
                env[k] = BINARY[node.arg](ins[0], ins[1])
            else:  # scalar
                env[k] = BINARY[node.arg[0]](ins[0], next(params))
            if node.op in COMPARISON_OPS:
                env[k] = np.asarray(env[k], bool)
            elif node.kind != "leaf":
                env[k] = np.asarray(env[k], node.dtype.numpy)
        return [np.broadcast_to(env[k], segment.shape).copy() for k in segment.outputs]


def fused_with(fuser):
    """`(Fusion of a CountingNdArray, fuser)` with `fuser` registered until the test ends."""
    register_fusion_backend(CountingNdArray.name, fuser)
    try:
        yield Fusion(CountingNdArray()), fuser
    finally:
        register_fusion_backend(CountingNdArray.name, None)


@pytest.fixture
def setup():
    yield from fused_with(NumpyFuser())


def tensor(backend, values):
    return Tensor[backend, 1].from_data(np.asarray(values, np.float32), backend.device())


def test_the_fuser_satisfies_the_contract():
    assert isinstance(NumpyFuser(), FusionBackend)


def test_without_a_fuser_every_op_is_eager():
    backend = Fusion(registry.get("NdArray"))
    assert not backend.fuses
    y = tensor(backend, [1.0, 2.0]) * 2.0 + 1.0
    assert not pending(y)
    np.testing.assert_allclose(np.asarray(y.to_data().array), [3.0, 5.0])


def test_computed_values_are_the_inner_backends_own_primitives(setup):
    backend, fuser = setup
    x = tensor(backend, [1.0, -2.0, 3.0])
    assert type(x.primitive) is np.ndarray  # made at once: no handle around it
    assert backend.wrap(x.primitive) is x.primitive
    moved = x.reshape([3, 1])  # forwarded, and passed through as it is
    assert type(moved.primitive) is np.ndarray and not pending(moved)
    y = (moved * 2.0).abs()  # recorded: a handle, pending until the stream runs
    assert type(y.primitive) is FusionTensor and pending(y)
    parts = [y.primitive, x.reshape([3, 1]).primitive]
    joined = backend.float_cat(parts, 0)  # a list holding a handle: computed first
    assert type(joined) is np.ndarray and not backend.is_pending(y.primitive)
    np.testing.assert_allclose(joined.ravel(), [2.0, 4.0, 6.0, 1.0, -2.0, 3.0])
    assert len(fuser.executed) == 1


def test_a_lone_pattern_over_computed_values_runs_as_the_inner_op(setup):
    backend, fuser = setup
    x = tensor(backend, [1.0, -2.0])
    first = x * 3.0
    np.testing.assert_allclose(np.asarray(first.to_data().array), [3.0, -6.0])  # ran alone
    again = tensor(backend, [4.0, 5.0]) * 3.0  # the same pattern: not recorded
    assert type(again.primitive) is np.ndarray and backend.stats.unrecorded == 1
    np.testing.assert_allclose(np.asarray(again.to_data().array), [12.0, 15.0])
    assert not fuser.executed


def test_ops_are_recorded_until_a_read(setup):
    backend, fuser = setup
    y = (tensor(backend, [1.0, -2.0]) * 2.0).abs() + 1.0
    assert pending(y) and not fuser.executed
    np.testing.assert_allclose(np.asarray(y.to_data().array), [3.0, 5.0])
    assert len(fuser.executed) == 1 and not pending(y)


def test_dead_intermediates_are_inlined_and_live_ones_written(setup):
    backend, fuser = setup
    x = tensor(backend, [1.0, 2.0])
    kept = x * 3.0
    out = (kept + 1.0).exp().neg()
    backend.flush()
    (segment,) = fuser.executed
    assert len(segment.outputs) == 2  # kept and out; the sums and exp are expressions only
    np.testing.assert_allclose(np.asarray(out.to_data().array), -np.exp([4.0, 7.0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(kept.to_data().array), [3.0, 6.0])


def test_plans_are_keyed_by_signature_not_values(setup):
    backend, fuser = setup
    for scale in (1.0, 2.0, 3.0):
        (tensor(backend, [1.0, 2.0]) * scale).exp().to_data()
    (tensor(backend, [1.0, 2.0, 3.0]) * 1.0).exp().to_data()
    assert len(fuser.compiled) == 2
    assert backend.stats.compiles == 2 and backend.stats.replays == 2


def test_an_unsupported_op_runs_eagerly_on_pending_inputs(setup):
    backend, fuser = setup
    y = (tensor(backend, [4.0, 9.0]) * -1.0).abs()
    root = y.sqrt()  # sqrt is not supported by this fuser: the stream flushes first
    assert not pending(root) and len(fuser.executed) == 1
    np.testing.assert_allclose(np.asarray(root.to_data().array), [2.0, 3.0])


def test_a_long_chain_flushes_at_the_size_limit(setup):
    backend, fuser = setup
    y = tensor(backend, [0.0])
    for _ in range(MAX_COST + 5):
        y = y + 1.0
    assert fuser.executed, "the chain was cut before growing past the limit"
    assert all(node.cost <= MAX_COST for s in fuser.executed for node in s.nodes)
    np.testing.assert_allclose(np.asarray(y.to_data().array), [MAX_COST + 5.0])


def test_kernels_bind_at_most_max_inputs(setup):
    backend, fuser = setup
    parts = [tensor(backend, [float(i)]) for i in range(9)]
    total = parts[0] * 1.0
    for p in parts[1:]:
        total = total + p
    np.testing.assert_allclose(np.asarray(total.to_data().array), [36.0])
    assert all(len(s.leaves) + len(s.outputs) <= 4 for s in fuser.executed)


def test_activations_compose_from_recorded_ops(setup):
    backend, fuser = setup
    x = tensor(backend, [-1.0, 0.5, 2.0])
    y = act.relu(x * 2.0)
    assert pending(y)
    np.testing.assert_allclose(np.asarray(y.to_data().array), [0.0, 1.0, 4.0])


def test_fusion_of_an_autodiff_backend_is_refused():
    with pytest.raises(BackendError, match="Autodiff\\(Fusion"):
        Fusion(registry.get("Autodiff")(registry.get("NdArray")))


def test_a_failed_flush_leaves_its_values_pending(setup):
    backend, fuser = setup
    y = (tensor(backend, [1.0, 2.0]) * -2.0).abs()
    execute = fuser.execute

    def broken(plan, segment):
        raise RuntimeError("device lost")

    fuser.execute = broken
    with pytest.raises(RuntimeError, match="device lost"):
        y.to_data()
    assert pending(y)
    fuser.execute = execute
    np.testing.assert_allclose(np.asarray(y.to_data().array), [2.0, 4.0])


def test_support_is_asked_once_per_op_dtype_and_rank(setup):
    backend, fuser = setup
    asked = []
    supports = fuser.supports
    fuser.supports = lambda node: asked.append(node.kind) or supports(node)
    for scale in (1.0, 2.0, 3.0):
        (tensor(backend, [1.0, 2.0]) * scale).to_data()
    assert len(asked) == 1  # the same op on the same dtype and rank: remembered
    (tensor(backend, [1.0, 2.0, 3.0]) * 2.0).to_data()
    assert len(asked) == 1  # another size of the same rank: remembered too
    Tensor[backend, 2].from_data(np.ones((2, 2), np.float32), backend.device()) * 2.0
    assert len(asked) == 2  # another rank: asked
    Tensor[backend, 1, Int].from_data(np.array([1, 2]), backend.device()) * 2
    assert len(asked) == 3  # another dtype: asked
    tensor(backend, [1.0]) + 2.0
    assert len(asked) == 4  # another op: asked


def test_plans_miss_on_another_dtype(setup):
    backend, fuser = setup
    (tensor(backend, [1.0, 2.0]) * 2.0).neg().to_data()
    (Tensor[backend, 1, Int].from_data(np.array([1, 2]), backend.device()) * 2).neg().to_data()
    (tensor(backend, [3.0, 4.0]) * 5.0).neg().to_data()
    assert backend.stats.compiles == 2 and backend.stats.replays == 1


def test_a_chain_rereading_its_inputs_counts_them_without_walking_it_again(setup):
    backend, fuser = setup
    x, y = tensor(backend, [2.0]).primitive, tensor(backend, [1.0]).primitive
    for _ in range(20):
        y = backend.binary("mul", y, x)  # reads x once more: past this fuser's bound of 4
    node = y.node
    assert node is not None and node.reads > 4 and not fuser.executed  # one kernel, still
    chain = []
    while node.kind != "leaf":
        chain.append(node)
        node = node.inputs[0]
    # Every node asked about remembers the primitives it reads (the last one is asked only
    # when a further node is recorded over it).
    assert all(n.leaf_ids is not None and len(n.leaf_ids) == 2 for n in chain[1:])
    assert chain[0].leaf_ids is None
    np.testing.assert_allclose(np.asarray(backend.into_data(y).array), [2.0**20])
    assert len(fuser.executed) == 1
    # A chain over more distinct primitives than a kernel binds is cut: the count misses.
    parts = [tensor(backend, [float(i)]).primitive for i in range(6)]
    total = parts[0]
    for p in parts[1:]:
        total = backend.binary("add", total, p)
    np.testing.assert_allclose(np.asarray(backend.into_data(total).array), [15.0])
    # The product, then the sum cut in three; a piece of one op runs as the backend's own.
    assert len(fuser.executed) == 3 and backend.stats.eager_ops == 1
    assert all(len(s.leaves) + len(s.outputs) <= 4 for s in fuser.executed)


def test_recording_and_flushing_leave_no_reference_cycles(setup):
    # Values held only by a cycle are freed by the cycle collector, not at once: a backend's
    # buffers would go back to its pool late, and every collection would cost the step.
    import gc

    backend, fuser = setup
    x = tensor(backend, [1.0, -2.0, 3.0])
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            y = ((x * 2.0).abs() + 1.0).exp()
            kept = y * 3.0
            backend.flush()
            assert not pending(kept)
            del y, kept
        assert gc.collect() == 0
    finally:
        gc.enable()


class EpilogueFuser(NumpyFuser):
    """A fuser that also runs matmuls with their consumers as the epilogue (numpy again)."""

    def __init__(self):
        super().__init__()
        self.products: list = []  # each epilogue segment's matmul node

    def implementations(self):
        return {**super().implementations(), "float_matmul": NdArrayBackend.float_matmul}

    def max_inputs(self, device) -> int:
        return 6

    def matmul_operands(self, lhs, rhs):
        return lhs, rhs, (lhs.shape, rhs.shape)

    def compile_matmul(self, segment):
        return self.compile(segment)

    def execute_matmul(self, plan, segment):
        product = segment.nodes[segment.matmul]
        self.products.append(product)
        lhs, rhs, _ = product.arg
        # The product stands in the segment as a leaf would: evaluate it, then the rest.
        saved = product.kind, product.arg
        product.kind, product.arg = "leaf", np.matmul(lhs, rhs).reshape(product.shape)
        try:
            return self.execute(plan, segment)
        finally:
            product.kind, product.arg = saved


@pytest.fixture
def epilogues(monkeypatch):
    """A fuser with epilogues, recording products of every size (these tests are about what
    happens to a recorded product; the size limit has its own tests below)."""
    monkeypatch.setattr(FusedBackend, "min_recorded_matmul", 0)
    yield from fused_with(EpilogueFuser())


@pytest.fixture
def sized_epilogues(monkeypatch):
    """The epilogue fuser with a limit of 6 elements: a `[2, 3]` product is recorded, a
    `[1, 3]` one runs at once."""
    monkeypatch.setattr(FusedBackend, "min_recorded_matmul", 6)
    yield from fused_with(EpilogueFuser())


def test_a_product_below_the_size_limit_runs_at_once_and_one_at_it_is_recorded(
    sized_epilogues,
):
    backend, fuser = sized_epilogues
    w = np.array([[0.5, 1.0, -1.0], [2.0, -0.5, 0.25]], np.float32)
    small = matrix(backend, [[1.0, -2.0]]).matmul(matrix(backend, w))
    assert not pending(small) and backend.stats.eager_matmuls == 0
    large = matrix(backend, [[1.0, -2.0], [3.0, 0.5]]).matmul(matrix(backend, w))
    assert pending(large)
    out = plus(large, matrix(backend, [[0.1, -0.2, 0.3]]))
    np.testing.assert_allclose(
        read(out), np.array([[1.0, -2.0], [3.0, 0.5]]) @ w + [0.1, -0.2, 0.3]
    )
    np.testing.assert_allclose(read(small), np.array([[1.0, -2.0]]) @ w)
    assert backend.stats.matmul_epilogues == 1 and len(fuser.executed) == 1


def test_fuse_all_records_every_product_until_it_exits(sized_epilogues):
    backend, _ = sized_epilogues
    w = matrix(backend, [[0.5, 1.0, -1.0], [2.0, -0.5, 0.25]])
    with backend.fuse_all() as same:
        assert same is backend and backend.min_recorded_matmul == 0
        with backend.fuse_all():  # nested, as two captures of one backend's steps would be
            assert backend.min_recorded_matmul == 0
        assert pending(matrix(backend, [[1.0, -2.0]]).matmul(w))
    assert backend.min_recorded_matmul == 6
    assert not pending(matrix(backend, [[1.0, -2.0]]).matmul(w))


def matrix(backend, values):
    return Tensor[backend, 2].from_data(np.asarray(values, np.float32), backend.device())


def read(t) -> np.ndarray:
    return np.asarray(t.to_data().array)


def plus(a, b):
    """`a + b` through the core op (NdArray's own `float_add` would run eagerly)."""
    return Tensor(a.backend.binary("add", a.primitive, b.primitive), a.backend)


def test_a_matmul_waits_for_its_consumers_and_runs_them_as_its_epilogue(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    w = np.array([[0.5, 1.0, -1.0], [2.0, -0.5, 0.25]], np.float32)
    bias = np.array([[0.1, -0.2, 0.3]], np.float32)
    product = matrix(backend, x).matmul(matrix(backend, w))
    assert pending(product) and not fuser.executed
    out = plus(product, matrix(backend, bias)).abs() * 2.0
    got = read(out)
    ((segment, *_),) = [fuser.executed]
    assert len(fuser.executed) == 1 and segment.matmul is not None
    # The product is still read by `product`: the kernel writes it as well as `out`.
    assert len(segment.outputs) == 2
    np.testing.assert_allclose(got, np.abs(x @ w + bias) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(read(product), x @ w, rtol=1e-6)
    assert backend.stats.matmul_epilogues == 1 and backend.stats.eager_matmuls == 0


def test_a_matmul_nothing_else_reads_runs_on_the_backend(epilogues):
    backend, fuser = epilogues
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    product = matrix(backend, x).matmul(matrix(backend, x.T))
    np.testing.assert_allclose(read(product), x @ x.T)
    assert not fuser.executed and backend.stats.eager_matmuls == 1


def test_a_matmul_read_at_another_shape_runs_on_its_own_first(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    column = matrix(backend, x).matmul(matrix(backend, [[1.0], [-1.0]]))  # [2, 1]
    spread = plus(column, matrix(backend, np.zeros((2, 3), np.float32)))  # broadcast to [2, 3]
    del column
    np.testing.assert_allclose(read(spread), np.broadcast_to(x @ [[1.0], [-1.0]], (2, 3)))
    assert backend.stats.eager_matmuls == 1 and not fuser.products


def test_a_matmul_read_by_two_groups_runs_once_on_its_own(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    column = matrix(backend, x).matmul(matrix(backend, [[1.0], [-1.0]]))  # [2, 1]
    doubled = (column * 2.0).abs()  # read at [2, 1]
    spread = plus(column, matrix(backend, np.ones((2, 3), np.float32))).neg()  # and at [2, 3]
    del column
    want = x @ [[1.0], [-1.0]]
    np.testing.assert_allclose(read(doubled), np.abs(want * 2.0))
    np.testing.assert_allclose(read(spread), np.broadcast_to(-(want + 1.0), (2, 3)))
    assert backend.stats.eager_matmuls == 1 and backend.stats.matmul_epilogues == 0
    assert len(fuser.executed) == 2  # one kernel per shape, both reading the computed product


def test_two_matmuls_of_one_shape_make_one_epilogue_and_one_eager_product(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    y = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    total = plus(
        matrix(backend, x).matmul(matrix(backend, y)), matrix(backend, y).matmul(matrix(backend, x))
    )
    np.testing.assert_allclose(read(total), x @ y + y @ x)
    assert backend.stats.matmul_epilogues == 1 and backend.stats.eager_matmuls == 1


def test_epilogues_split_over_kernels_compute_the_product_once(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    product = matrix(backend, x).matmul(matrix(backend, x))
    parts = [matrix(backend, np.full((2, 2), float(i), np.float32)) for i in range(4)]
    # Four outputs, each reading the product and a tensor of its own: more than one kernel
    # of this fuser's six bindings.
    outs = [plus(product, p) for p in parts]
    del product
    got = [read(o) for o in outs]
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, x @ x + i)
    assert backend.stats.eager_matmuls == 1 and backend.stats.matmul_epilogues == 0
    assert all(len(s.leaves) + len(s.outputs) <= 6 for s in fuser.executed)


def test_epilogue_plans_are_cached_by_signature(epilogues):
    backend, fuser = epilogues
    for scale in (1.0, 2.0, 3.0):
        x = np.full((2, 2), scale, np.float32)
        read(matrix(backend, x).matmul(matrix(backend, x)) * scale)
    assert backend.stats.compiles == 1 and backend.stats.replays == 2


def test_a_product_nothing_reads_yet_waits_for_its_readers(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    product = matrix(backend, x).matmul(matrix(backend, x))  # a weight gradient, say
    other = matrix(backend, x) * 2.0
    np.testing.assert_allclose(read(other), x * 2.0)  # a flush for another value
    assert pending(product) and backend.stats.eager_matmuls == 0
    update = plus(product, matrix(backend, x)) * 0.5  # its reader comes later: the epilogue
    del product
    np.testing.assert_allclose(read(update), (x @ x + x) * 0.5)
    assert backend.stats.matmul_epilogues == 1 and backend.stats.eager_matmuls == 0


def test_a_product_waits_only_for_flushes_of_other_values(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    asked = matrix(backend, x).matmul(matrix(backend, x))
    np.testing.assert_allclose(read(asked), x @ x)  # the flush is for it: it runs
    wide = np.ones((2, 3), np.float32)  # another pattern (a product of [2, 2] ran alone)
    kept = matrix(backend, x).matmul(matrix(backend, wide))
    backend.flush()  # a flush of everything computes it too
    assert not pending(kept)
    assert backend.stats.eager_matmuls == 2 and not fuser.products


def test_a_reshaped_product_still_takes_an_epilogue(epilogues):
    backend, fuser = epilogues
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.ones((3, 4), np.float32)
    flat = matrix(backend, x).matmul(matrix(backend, w)).reshape([8])  # still recorded
    assert flat.primitive.node.kind == "matmul"
    out = plus(flat, tensor(backend, np.arange(8, dtype=np.float32))) * 2.0
    np.testing.assert_allclose(read(out), ((x @ w).reshape(8) + np.arange(8)) * 2.0)
    assert backend.stats.matmul_epilogues == 1 and backend.stats.eager_matmuls == 0


def test_a_reshaped_product_computed_on_its_own_has_its_new_shape(epilogues):
    backend, fuser = epilogues
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    product = matrix(backend, x).matmul(matrix(backend, x.T))
    column = product.reshape([4, 1])
    np.testing.assert_allclose(read(column), (x @ x.T).reshape(4, 1))
    np.testing.assert_allclose(read(product), x @ x.T)  # the product at its own shape, too
    assert backend.stats.eager_matmuls == 2


def test_a_lone_op_runs_as_the_backends_own_and_its_pattern_is_not_recorded_again(setup):
    backend, fuser = setup
    x = tensor(backend, [1.0, -2.0])
    first = x * 3.0
    assert pending(first)
    np.testing.assert_allclose(read(first), [3.0, -6.0])
    # One op over concrete inputs: the inner backend's op, no kernel planned.
    assert not fuser.executed and backend.stats.eager_ops == 1
    again = tensor(backend, [4.0, 5.0]) * 0.5  # same op, shapes and dtypes: not recorded
    assert not pending(again) and backend.stats.unrecorded == 1
    np.testing.assert_allclose(read(again), [2.0, 2.5])
    longer = tensor(backend, [1.0, 2.0, 3.0]) * 3.0  # another shape: recorded
    assert pending(longer)
    chained = x.abs() * 3.0  # over a pending input the op is recorded, to fuse
    assert pending(chained) and chained.primitive.node.kind == "scalar"
    np.testing.assert_allclose(read(chained), [3.0, 6.0])


def test_a_pattern_that_fused_once_is_always_recorded(setup):
    backend, fuser = setup
    x = tensor(backend, [1.0, -2.0])
    np.testing.assert_allclose(read((x * 3.0).abs()), [3.0, 6.0])  # `x * 3.0` fused
    np.testing.assert_allclose(read(x * 3.0), [3.0, -6.0])  # then alone
    assert backend.stats.eager_ops == 1
    later = x * 3.0
    assert pending(later) and backend.stats.unrecorded == 0
    np.testing.assert_allclose(read(later), [3.0, -6.0])


def test_a_product_computed_alone_is_not_recorded_again_and_an_epilogue_is(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(read(matrix(backend, x).matmul(matrix(backend, x))), x @ x)
    again = matrix(backend, x).matmul(matrix(backend, x.T))
    assert not pending(again) and backend.stats.unrecorded == 1
    np.testing.assert_allclose(read(again), x @ x.T)
    w = np.ones((2, 3), np.float32)
    for _ in range(2):  # a product that took an epilogue stays recorded
        product = matrix(backend, x).matmul(matrix(backend, w))
        assert pending(product)
        np.testing.assert_allclose(read((product * 2.0).abs()), np.abs(x @ w * 2.0))
        del product
    assert backend.stats.matmul_epilogues == 2


def test_an_eager_op_of_many_pending_values_flushes_once(epilogues):
    backend, fuser = epilogues
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    grads = [matrix(backend, x).matmul(matrix(backend, x * k)).primitive for k in (1, 2, 3)]
    assert all(backend.is_pending(g) for g in grads)
    flushes = backend.stats.flushes
    values = backend.float_cat(grads, 0)  # forwarded: every product is computed by one flush
    assert backend.stats.flushes == flushes + 1
    want = np.concatenate([x @ (x * k) for k in (1, 2, 3)])
    np.testing.assert_allclose(np.asarray(backend.into_data(values).array), want)
