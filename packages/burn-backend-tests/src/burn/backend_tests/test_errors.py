"""Bad input raises the burn error for its cause, naming the op, never a bare numpy error."""

import numpy as np
import pytest
from burn.backend_tests.helpers import other_backend, tensor
from burn.tensor import (
    AllocationError,
    Bool,
    DeviceError,
    DType,
    DTypeError,
    Int,
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
    Tensor,
    activation,
)


@pytest.fixture
def f2(backend):
    return tensor(backend, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


# ---------------------------------------------------------------- rank
@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("add", lambda a, b1: a.add(b1)),
        ("matmul", lambda a, b1: b1.matmul(b1)),
        ("matmul", lambda a, b1: a.matmul(b1)),
        ("gather", lambda a, b1: a.gather(0, b1.int())),
        ("select", lambda a, b1: a.select(0, a.int())),
        ("repeat", lambda a, b1: a.repeat([2])),
        ("dot", lambda a, b1: a.dot(a)),
        ("unsqueeze", lambda a, b1: a.unsqueeze(1)),
        ("t[...]", lambda a, b1: a[0, 0, 0]),
        ("slice", lambda a, b1: a.slice([(0, 1), (0, 1), (0, 1)])),
        ("expand", lambda a, b1: a.expand([3])),
    ],
)
def test_wrong_rank(backend, f2, op, call):
    b1 = tensor(backend, [1.0, 2.0, 3.0])
    with pytest.raises(RankError, match=op.replace("[", r"\[").replace("]", r"\]")):
        call(f2, b1)


def test_pinned_rank(backend, device):
    with pytest.raises(RankError, match="from_data"):
        Tensor[backend, 3].from_data([[1.0]], device)


# ---------------------------------------------------------------- shape
@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("add", lambda a, t: a + t(np.ones((3, 2)))),
        ("mul", lambda a, t: a * t(np.ones((2, 2)))),
        ("greater", lambda a, t: a.greater(t(np.ones((4, 3))))),
        ("matmul", lambda a, t: a @ t(np.ones((2, 3)))),
        ("reshape", lambda a, t: a.reshape([4, 2])),
        ("reshape", lambda a, t: a.reshape([-1, -1])),
        ("reshape", lambda a, t: a.reshape([-1, 4])),
        ("cat", lambda a, t: Tensor.cat([a, t(np.ones((2, 4)))], 0)),
        ("cat", lambda a, t: Tensor.cat([], 0)),
        ("stack", lambda a, t: Tensor.stack([a, t(np.ones((3, 2)))], 0)),
        ("slice_assign", lambda a, t: a.slice_assign([(0, 1)], t(np.ones((1, 2))))),
        ("expand", lambda a, t: a.expand([2, 4])),
        ("squeeze", lambda a, t: a.squeeze(0)),
        ("flatten", lambda a, t: a.flatten(1, 0)),
        ("permute", lambda a, t: a.permute([0, 0])),
        ("mask_where", lambda a, t: a.mask_where(t(np.ones((3, 3), bool)), a)),
        ("mask_fill", lambda a, t: a.mask_fill(t(np.ones((2, 2), bool)), 0.0)),
        ("scatter", lambda a, t: a.scatter(0, t(np.zeros((2, 2), np.int64)), a)),
        ("select_assign", lambda a, t: a.select_assign(0, t(np.array([0])), a)),
        ("split_with_sizes", lambda a, t: a.split_with_sizes([1, 1], 1)),
        ("chunk", lambda a, t: a.chunk(0, 0)),
        ("arange_step", lambda a, t: Tensor[a.backend, 1, Int].arange_step(0, 5, 0)),
        ("pad", lambda a, t: a.pad((1, 2, 3))),
        ("clamp", lambda a, t: a.clamp(1.0, 0.0)),
        ("max", lambda a, t: t(np.zeros((0, 2))).max()),
        ("mean", lambda a, t: t(np.zeros((0, 2))).mean()),
        ("argmax", lambda a, t: t(np.zeros((0, 2))).argmax(0)),
        ("into_scalar", lambda a, t: a.into_scalar()),
        ("ambiguous", lambda a, t: bool(a)),
        ("prelu", lambda a, t: activation.prelu(a, t(np.ones(2)))),
        ("reshape", lambda a, t: a.reshape([2.0, 3])),
        ("eye", lambda a, t: Tensor[a.backend, 2].eye(-1)),
        ("TensorData", lambda a, t: Tensor[a.backend, 2].from_data([[1.0], [1.0, 2.0]])),
        ("unsqueeze_dims", lambda a, t: a.unsqueeze_dims([0, 0])),
        ("split", lambda a, t: a.split(0, 0)),
    ],
)
def test_incompatible_shapes(backend, f2, op, call):
    with pytest.raises(ShapeError, match=op):
        call(f2, lambda v: tensor(backend, v))


# ---------------------------------------------------------------- kind
@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("exp", lambda f, i, b: i.exp()),
        ("log", lambda f, i, b: b.log()),
        ("add", lambda f, i, b: f.add(i)),
        ("add", lambda f, i, b: b.add(b)),
        ("matmul", lambda f, i, b: f.matmul(i)),
        ("sum", lambda f, i, b: b.sum()),
        ("greater", lambda f, i, b: b.greater(b)),
        ("bool_not", lambda f, i, b: f.bool_not()),
        ("bool_and", lambda f, i, b: b.bool_and(f)),
        ("mask_fill", lambda f, i, b: f.mask_fill(i, 0.0)),
        ("mask_where", lambda f, i, b: f.mask_where(b, i.float().int())),
        ("gather", lambda f, i, b: f.gather(0, f)),
        ("select", lambda f, i, b: f.select(0, b.reshape([-1]))),
        ("powi", lambda f, i, b: f.powi(f)),
        ("var", lambda f, i, b: i.var(0)),
        ("atan2", lambda f, i, b: i.atan2(i)),
        ("random", lambda f, i, b: Tensor[f.backend, 1, Bool].random([2])),
        ("arange", lambda f, i, b: Tensor[f.backend, 1].arange(0, 3)),
        ("sort", lambda f, i, b: b.sort(0)),
        ("t[...]", lambda f, i, b: f[i]),
        ("softmax", lambda f, i, b: activation.softmax(i, 0)),
        ("add", lambda f, i, b: f.add("x")),
    ],
)
def test_wrong_kind(backend, op, call):
    f = tensor(backend, [[1.0, 2.0], [3.0, 4.0]])
    i = tensor(backend, [[0, 1], [1, 0]])
    b = tensor(backend, [[True, False], [False, True]])
    with pytest.raises(KindError, match=op.replace("[", r"\[").replace("]", r"\]")):
        call(f, i, b)


# ---------------------------------------------------------------- dtype
def test_wrong_dtype(backend, device):
    int_dtype = backend.capabilities.int_dtype
    float_dtype = backend.capabilities.float_dtype
    with pytest.raises(DTypeError, match="Float"):
        Tensor[backend, 1].zeros([2], device, int_dtype)
    with pytest.raises(DTypeError, match="Int"):
        Tensor[backend, 1, Int].from_data([1, 2], device, float_dtype)
    with pytest.raises(DTypeError, match="cast"):
        tensor(backend, [1.0]).cast(int_dtype)
    with pytest.raises(DTypeError, match="cast"):
        tensor(backend, [1]).cast(DType.BOOL)
    with pytest.raises(DTypeError):
        Tensor[backend, 1].from_data(np.array(["a", "b"]), device)
    with pytest.raises(DTypeError, match="float"):
        tensor(backend, [1]).float(int_dtype)
    with pytest.raises(DTypeError, match="int"):
        tensor(backend, [1.0]).int(float_dtype)
    with pytest.raises(DTypeError, match="int"):
        tensor(backend, [True]).int(DType.BOOL)


def test_unsupported_dtype(backend, device):
    missing = [d for d in DType if not backend.capabilities.supports(d)]
    if not missing:
        pytest.skip(f"{backend!r} supports every dtype")
    dtype = missing[0]
    kind = Bool if dtype.is_bool else Int if dtype.is_int else None
    cls = Tensor[backend, 1, kind] if kind else Tensor[backend, 1]
    with pytest.raises(DTypeError, match=dtype.value):
        cls.zeros([2], device, dtype)


# ---------------------------------------------------------------- out of range
@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("sum_dim", lambda a, t: a.sum_dim(2)),
        ("mean_dim", lambda a, t: a.mean_dim(-3)),
        ("argmax", lambda a, t: a.argmax(5)),
        ("swap_dims", lambda a, t: a.swap_dims(0, 2)),
        ("permute", lambda a, t: a.permute([0, 2])),
        ("flip", lambda a, t: a.flip([3])),
        ("cat", lambda a, t: Tensor.cat([a, a], 2)),
        ("stack", lambda a, t: Tensor.stack([a, a], 4)),
        ("unsqueeze_dim", lambda a, t: a.unsqueeze_dim(4)),
        ("squeeze", lambda a, t: a.squeeze(2)),
        ("narrow", lambda a, t: a.narrow(1, 2, 2)),
        ("narrow", lambda a, t: a.narrow(0, -1, 1)),
        ("slice", lambda a, t: a.slice([(0, 5)])),
        ("slice", lambda a, t: a.slice([3])),
        ("t[...]", lambda a, t: a[2]),
        ("t[...]", lambda a, t: a[:, -4]),
        ("topk", lambda a, t: a.topk(4, 1)),
        ("one_hot", lambda a, t: t([0, 3]).one_hot(3)),
        ("one_hot", lambda a, t: t([-1, 0]).one_hot(3)),
        ("sort", lambda a, t: a.sort(2)),
        ("repeat_dim", lambda a, t: a.repeat_dim(2, 2)),
        ("softmax", lambda a, t: activation.softmax(a, 2)),
        ("var", lambda a, t: a.var(2)),
    ],
)
def test_out_of_range(backend, f2, op, call):
    with pytest.raises(OutOfRangeError, match=op.replace("[", r"\[").replace("]", r"\]")):
        call(f2, lambda v: tensor(backend, v))


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("gather", lambda a, t: a.gather(1, t([[0, 3], [1, 1]]))),
        ("gather", lambda a, t: a.gather(0, t([[-1, 0, 0]]))),
        ("scatter", lambda a, t: a.scatter(0, t([[0, 2, 0]]), a.narrow(0, 0, 1))),
        ("select", lambda a, t: a.select(1, t([0, 3]))),
        ("select_assign", lambda a, t: a.select_assign(0, t([2]), a.narrow(0, 0, 1))),
    ],
)
def test_index_out_of_range(backend, f2, op, call):
    if not getattr(backend, "host_memory", False):
        pytest.skip("index values are checked only where the backend keeps data on the host")
    with pytest.raises(OutOfRangeError, match=op):
        call(f2, lambda v: tensor(backend, v))


# ---------------------------------------------------------------- mixed backends
def test_mixed_backends(backend, device):
    try:
        other = other_backend(backend)
    except TypeError:
        pytest.skip(f"cannot make a second instance of {type(backend).__name__}")
    a = tensor(backend, [1.0, 2.0])
    b = tensor(other, [1.0, 2.0])
    for op, call in [
        ("add", lambda: a + b),
        ("matmul", lambda: a.reshape([1, 2]) @ b.reshape([2, 1])),
        ("cat", lambda: Tensor.cat([a, b], 0)),
        ("mask_where", lambda: a.mask_where(b.bool(), a)),
        ("gather", lambda: a.gather(0, b.int())),
        ("equal", lambda: a.equal(b)),
        ("slice_assign", lambda: a.slice_assign([(0, 2)], b)),
    ]:
        with pytest.raises(DeviceError, match=op):
            call()


def test_errors_are_not_bare_numpy_errors(backend, f2):
    """Every error above derives from BurnError, and also from the matching builtin."""
    from burn.tensor import BurnError

    with pytest.raises(BurnError):
        f2.reshape([7])
    with pytest.raises(ValueError):
        f2.reshape([7])
    with pytest.raises(IndexError):
        f2.sum_dim(9)
    with pytest.raises(TypeError):
        f2.bool_not()


def test_allocation_too_large_is_a_burn_error(backend):
    """An allocation that cannot fit names the op and the shape (not a bare MemoryError)."""
    with pytest.raises(AllocationError, match=r"zeros: .*\[1099511627776, 1073741824\]"):
        Tensor.zeros([2**40, 2**30], backend.device())
    with pytest.raises(AllocationError, match="random"):
        Tensor.random([2**40, 2**30], device=backend.device())


def test_reversed_slice_range_is_an_error(backend):
    """Burn panics on a range whose start is after its end; Python indexing stays empty."""
    t = tensor(backend, [1.0, 2.0, 3.0])
    with pytest.raises(OutOfRangeError, match="reversed"):
        t.slice([(2, 1)])
    with pytest.raises(OutOfRangeError, match="reversed"):
        t.slice_assign([(2, 1)], tensor(backend, [0.0]).narrow(0, 0, 0))
    assert t[2:1].dims() == [0]
