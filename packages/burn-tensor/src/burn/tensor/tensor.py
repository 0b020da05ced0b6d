"""`Tensor`: the one user-facing tensor type, the same on every backend.

A tensor wraps a backend primitive and knows its backend and kind (Float, Int, Bool). Its rank
is the length of its shape and is checked by every op, as Burn checks it at compile time.
`Tensor[B, 2]` and `Tensor[B, 1, Int]` pin the backend, rank and kind for creation functions,
like Burn's `Tensor::<B, 2, Int>`.
"""

from __future__ import annotations

import builtins
import contextlib
import math
from collections.abc import Iterable, Sequence

import numpy as np
from burn.tensor import display
from burn.tensor.data import TensorData
from burn.tensor.distribution import Distribution
from burn.tensor.dtype import DType
from burn.tensor.errors import (
    AllocationError,
    BackendError,
    DeviceError,
    DTypeError,
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
)
from burn.tensor.kind import Bool, Float, Int, Kind, kind_of_dtype
from burn.tensor.shape import Shape

_pinned_cache: dict = {}


def _default_backend():
    from burn.backend.registry import default

    return default()


def _is_scalar(value) -> bool:
    return isinstance(value, (int, float, bool, np.number, np.bool_))


def _broadcast(op: str, a: tuple, b: tuple) -> tuple:
    """The broadcast shape of two equal-rank shapes, or a ShapeError naming `op`."""
    if len(a) != len(b):
        raise RankError(f"{op}: ranks differ, {list(a)} vs {list(b)} (reshape or unsqueeze first)")
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"{op}: shapes {list(a)} and {list(b)} do not broadcast")
    return tuple(out)


class Tensor:
    """A tensor of a backend, a kind (Float by default) and a rank.

    Create one with `Tensor.from_data(values, device)`, `Tensor.zeros(shape, device)`,
    `Tensor.random(shape, Distribution.Default, device)`, `Tensor[B, 1, Int].arange(0, 5)`...
    Every op returns a new tensor; none modifies its input.
    """

    __slots__ = ("primitive", "backend", "kind")

    # Set on the classes made by `Tensor[B, rank, kind]`.
    _backend = None
    _rank: int | None = None
    _kind: type[Kind] | None = None

    def __init__(self, primitive, backend, kind: type[Kind] = Float):
        self.primitive = primitive
        self.backend = backend
        self.kind = kind

    def __class_getitem__(cls, params):
        if not isinstance(params, tuple):
            params = (params,)
        key = (cls, *params)
        pinned = _pinned_cache.get(key)
        if pinned is None:
            backend, rank, kind = (list(params) + [None, None, None])[:3]
            if isinstance(backend, int):  # Tensor[2] / Tensor[2, Int]: default backend
                backend, rank, kind = None, backend, rank
            kind = kind or Float
            if not (isinstance(kind, type) and issubclass(kind, Kind)):
                raise KindError(f"Tensor[...]: {kind!r} is not Float, Int or Bool")
            name = f"Tensor[{backend!r}, {rank}, {kind.name}]"
            pinned = type(
                name, (cls,), {"__slots__": (), "_backend": backend, "_rank": rank, "_kind": kind}
            )
            _pinned_cache[key] = pinned
        return pinned

    # ================================================================== internals
    def _new(self, primitive, kind=None) -> Tensor:
        t = object.__new__(Tensor)
        t.primitive = primitive
        t.backend = self.backend
        t.kind = kind or self.kind
        return t

    def _op(self, name: str):
        return getattr(self.backend, self.kind.prefix + name)

    def _require(self, op: str, *kinds) -> None:
        if self.kind not in kinds:
            names = " or ".join(k.name for k in kinds)
            raise KindError(f"{op}: needs a {names} tensor, got {self.kind.name} {self.dims()}")

    def _numeric(self, op: str) -> None:
        if self.kind is Bool:
            raise KindError(f"{op}: needs a Float or Int tensor, got Bool {self.dims()}")

    def _dim(self, dim: int, op: str, rank: int | None = None) -> int:
        rank = self.rank() if rank is None else rank
        if not isinstance(dim, (int, np.integer)) or not -rank <= dim < rank:
            raise OutOfRangeError(
                f"{op}: dim {dim} is out of range for a rank {rank} tensor {self.dims()}"
            )
        return int(dim) % rank

    def _peer(self, other, op: str, kind=None):
        """The primitive of `other`, checked to fit `self` for a binary op."""
        if not isinstance(other, Tensor):
            raise KindError(f"{op}: expected a Tensor, got {type(other).__name__}")
        if other.backend is not self.backend:
            raise DeviceError(
                f"{op}: tensors of different backends ({self.backend!r} and {other.backend!r})"
            )
        if other.kind is not (kind or self.kind):
            raise KindError(
                f"{op}: expected a {(kind or self.kind).name} tensor, got {other.kind.name}"
            )
        if not self.backend.same_device(self.primitive, other.primitive):
            raise DeviceError(
                f"{op}: tensors on different devices ({self.device()} and {other.device()})"
            )
        return other.primitive

    def _binary(self, name: str, other, op: str | None = None) -> Tensor:
        """Tensor-or-scalar binary op: `name` with a tensor, `name_scalar`/`_elem` with a scalar."""
        op = op or name
        if _is_scalar(other):
            suffix = "_elem" if name in _ELEM_OPS else "_scalar"
            return self._new(self._op(name + suffix)(self.primitive, other))
        rhs = self._peer(other, op)
        _broadcast(op, self.shape_tuple(), other.shape_tuple())
        out = self._op(name)(self.primitive, rhs)
        return self._new(out, Bool if name in _ELEM_OPS else None)

    def _compare(self, name: str, other) -> Tensor:
        if name not in ("equal", "not_equal"):
            self._numeric(name)
        if _is_scalar(other):
            return self._new(self._op(name + "_elem")(self.primitive, other), Bool)
        rhs = self._peer(other, name)
        _broadcast(name, self.shape_tuple(), other.shape_tuple())
        return self._new(self._op(name)(self.primitive, rhs), Bool)

    def _float_unary(self, name: str) -> Tensor:
        self._require(name, Float)
        return self._new(getattr(self.backend, "float_" + name)(self.primitive))

    @classmethod
    def _resolve(cls, device, backend=None):
        """The backend and device for a creation function."""
        backend = backend or cls._backend
        if backend is None:
            backend = getattr(device, "backend", None) if device is not None else None
            if backend is None:
                backend = _default_backend()
        if device is None:
            device = backend.device()
        return backend, device

    @classmethod
    def _check_rank(cls, rank: int, op: str) -> None:
        if cls._rank is not None and rank != cls._rank:
            raise RankError(f"{op}: {cls.__name__} has rank {cls._rank}, got a rank {rank} shape")

    @classmethod
    def _creation_dtype(cls, backend, kind, dtype) -> DType:
        if dtype is None:
            if kind is Float:
                return backend.capabilities.float_dtype
            if kind is Int:
                return backend.capabilities.int_dtype
            return DType.BOOL
        dtype = DType.parse(dtype)
        if kind_of_dtype(dtype) is not kind:
            raise DTypeError(f"a {kind.name} tensor cannot hold {dtype.value}")
        if not backend.capabilities.supports(dtype):
            raise DTypeError(f"backend {backend!r} does not support {dtype.value}")
        return dtype

    @classmethod
    def _make(cls, backend, primitive, kind) -> Tensor:
        t = object.__new__(Tensor)
        t.primitive = primitive
        t.backend = backend
        t.kind = kind
        return t

    # ================================================================== creation
    @classmethod
    def from_data(cls, data, device=None, dtype=None) -> Tensor:
        """A tensor holding `data` (nested lists, numpy array, `TensorData`) on `device`.

        The kind is the pinned one (`Tensor[B, 2, Int]`), else inferred from the values; the
        dtype is `dtype`, else the backend's default for the kind (f32 for floats, as in Burn).
        """
        if isinstance(data, Tensor):
            data = data.to_data()
        if not isinstance(data, TensorData):
            # Straight to the requested dtype: Python floats would otherwise pass through f32.
            data = TensorData(data) if dtype is None else TensorData(data, dtype=dtype)
        backend, device = cls._resolve(device)
        kind = cls._kind or kind_of_dtype(data.dtype)
        cls._check_rank(data.rank(), "from_data")
        if data.rank() == 0:
            raise RankError("from_data: a tensor needs at least one dimension (got a scalar)")
        target = cls._creation_dtype(backend, kind, dtype)
        if data.dtype is not target:
            data = data.convert(target)
        create = getattr(backend, kind.prefix + "from_data")
        return cls._make(backend, create(data, device), kind)

    @classmethod
    def from_floats(cls, values, device=None) -> Tensor:
        return Tensor[cls._backend, cls._rank, Float].from_data(values, device)

    @classmethod
    def from_ints(cls, values, device=None) -> Tensor:
        return Tensor[cls._backend, cls._rank, Int].from_data(values, device)

    @classmethod
    def from_bool(cls, values, device=None) -> Tensor:
        return Tensor[cls._backend, cls._rank, Bool].from_data(values, device)

    @classmethod
    def _filled(cls, op, shape, value, device, dtype) -> Tensor:
        shape = tuple(Shape(shape))
        if any(d < 0 for d in shape):
            raise ShapeError(f"{op}: negative dimension in {list(shape)}")
        cls._check_rank(len(shape), op)
        backend, device = cls._resolve(device)
        kind = cls._kind or Float
        dtype = cls._creation_dtype(backend, kind, dtype)
        with _allocating(op, shape, dtype):
            primitive = _filled(backend, kind, op, shape, value, device, dtype)
        return cls._make(backend, primitive, kind)

    @classmethod
    def empty(cls, shape, device=None, dtype=None) -> Tensor:
        return cls._filled("empty", shape, 0, device, dtype)

    @classmethod
    def zeros(cls, shape, device=None, dtype=None) -> Tensor:
        return cls._filled("zeros", shape, 0, device, dtype)

    @classmethod
    def ones(cls, shape, device=None, dtype=None) -> Tensor:
        return cls._filled("ones", shape, 1, device, dtype)

    @classmethod
    def full(cls, shape, value, device=None, dtype=None) -> Tensor:
        return cls._filled("full", shape, value, device, dtype)

    @classmethod
    def random(
        cls, shape, distribution: Distribution = Distribution.Default, device=None, dtype=None
    ) -> Tensor:
        """Random values from `distribution` (Float, or Int with integer-valued draws)."""
        shape = tuple(Shape(shape))
        cls._check_rank(len(shape), "random")
        backend, device = cls._resolve(device)
        kind = cls._kind or Float
        if kind is Bool:
            raise KindError("random: Bool tensors are drawn as Float and compared (use Bernoulli)")
        dtype = cls._creation_dtype(backend, kind, dtype)
        create = backend.float_random if kind is Float else backend.int_random
        with _allocating("random", shape, dtype):
            primitive = create(shape, distribution, device, dtype)
        return cls._make(backend, primitive, kind)

    @classmethod
    def arange(cls, start, end=None, device=None, dtype=None) -> Tensor:
        """Int tensor [start, end); `arange(range(0, 5), device)` also works."""
        if isinstance(start, range):
            start, end, step, device = start.start, start.stop, start.step, end
        else:
            step = 1
        return cls.arange_step(start, end, step, device, dtype)

    @classmethod
    def arange_step(cls, start: int, end: int, step: int, device=None, dtype=None) -> Tensor:
        if step == 0:
            raise ShapeError("arange_step: step must not be 0")
        cls._check_rank(1, "arange")
        if cls._kind not in (None, Int):
            raise KindError(f"arange: builds Int tensors, not {cls._kind.name}")
        backend, device = cls._resolve(device)
        dtype = cls._creation_dtype(backend, Int, dtype)
        return cls._make(backend, backend.int_arange_step(start, end, step, device, dtype), Int)

    @classmethod
    def eye(cls, size: int, device=None, dtype=None) -> Tensor:
        """The identity matrix of `size` (Float unless pinned to Int)."""
        cls._check_rank(2, "eye")
        if size < 0:
            raise ShapeError(f"eye: size must be >= 0, got {size}")
        kind = cls._kind or Float
        values = np.eye(size, dtype=np.int64 if kind is Int else np.float32)
        return Tensor[cls._backend, 2, kind].from_data(values, device, dtype)

    @classmethod
    def tril_mask(cls, shape, offset: int = 0, device=None) -> Tensor:
        """Bool mask that is True above the `offset` diagonal (the part `tril` zeroes)."""
        return cls._tri_mask(shape, offset, False, device)

    @classmethod
    def triu_mask(cls, shape, offset: int = 0, device=None) -> Tensor:
        """Bool mask that is True below the `offset` diagonal (the part `triu` zeroes)."""
        return cls._tri_mask(shape, offset, True, device)

    @classmethod
    def diag_mask(cls, shape, offset: int = 0, device=None) -> Tensor:
        """Bool mask that is False on the `offset` diagonal and True elsewhere."""
        upper = cls._tri_mask(shape, offset, True, device)
        lower = cls._tri_mask(shape, offset, False, device)
        return upper.bool_or(lower)

    @classmethod
    def _tri_mask(cls, shape, offset, upper, device) -> Tensor:
        shape = tuple(Shape(shape))
        if len(shape) < 2:
            raise RankError(f"tri/diag mask: needs at least 2 dims, got {list(shape)}")
        cls._check_rank(len(shape), "mask")
        backend, device = cls._resolve(device)
        return cls._make(backend, backend.bool_tri_mask(shape, offset, upper, device), Bool)

    @staticmethod
    def cat(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Concatenate along an existing `dim`; other dims must match."""
        if not tensors:
            raise ShapeError("cat: needs at least one tensor")
        first = tensors[0]
        dim = first._dim(dim, "cat")
        ref = first.shape_tuple()
        prims = [first.primitive]
        for t in tensors[1:]:
            prims.append(first._peer(t, "cat"))
            s = t.shape_tuple()
            if len(s) != len(ref) or any(
                a != b for i, (a, b) in enumerate(zip(s, ref, strict=True)) if i != dim
            ):
                shapes = [x.dims() for x in tensors]
                raise ShapeError(f"cat: shapes {shapes} differ outside dim {dim}")
        return first._new(first._op("cat")(prims, dim))

    @staticmethod
    def stack(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Join along a new `dim` (all shapes equal)."""
        if not tensors:
            raise ShapeError("stack: needs at least one tensor")
        rank = tensors[0].rank() + 1
        dim = tensors[0]._dim(dim, "stack", rank)
        shapes = {t.shape_tuple() for t in tensors}
        if len(shapes) > 1:
            raise ShapeError(f"stack: shapes differ: {[t.dims() for t in tensors]}")
        return Tensor.cat([t.unsqueeze_dim(dim) for t in tensors], dim)

    # ================================================================== metadata and data
    def shape(self) -> Shape:
        return Shape(self.backend.shape(self.primitive))

    def shape_tuple(self) -> tuple[int, ...]:
        return tuple(self.backend.shape(self.primitive))

    def dims(self) -> list[int]:
        return list(self.backend.shape(self.primitive))

    def rank(self) -> int:
        return len(self.backend.shape(self.primitive))

    def num_elements(self) -> int:
        return math.prod(self.backend.shape(self.primitive))

    @property
    def dtype(self) -> DType:
        return self.backend.dtype(self.primitive)

    def device(self):
        return self.backend.device_of(self.primitive)

    def to_device(self, device) -> Tensor:
        return self._new(self._op("to_device")(self.primitive, device))

    def to_data(self) -> TensorData:
        return self._op("into_data")(self.primitive)

    def into_data(self) -> TensorData:
        return self.to_data()

    def into_primitive(self):
        return self.primitive

    # Async forms, for code written against Burn's async reads. Backends here finish their work
    # when data is read, so these await nothing but keep the same call shape.
    async def to_data_async(self) -> TensorData:
        return self.to_data()

    async def into_data_async(self) -> TensorData:
        return self.to_data()

    async def into_scalar_async(self):
        return self.into_scalar()

    def into_scalar(self):
        """The single value of a one-element tensor, as a Python number."""
        if self.num_elements() != 1:
            raise ShapeError(f"into_scalar: needs exactly one element, shape is {self.dims()}")
        return self.to_data().array.reshape(()).item()

    def clone(self) -> Tensor:
        """Cheap: tensors are immutable, so the clone shares the primitive."""
        return self._new(self.primitive)

    def numpy(self) -> np.ndarray:
        return self.to_data().array

    def cast(self, dtype) -> Tensor:
        """The same values as another dtype of the same kind."""
        dtype = DType.parse(dtype)
        if kind_of_dtype(dtype) is not self.kind:
            raise DTypeError(
                f"cast: a {self.kind.name} tensor cannot become {dtype.value}; "
                "use int()/float()/bool()"
            )
        if not self.backend.capabilities.supports(dtype):
            raise DTypeError(f"cast: backend {self.backend!r} does not support {dtype.value}")
        return self._new(self._op("cast")(self.primitive, dtype))

    def int(self, dtype=None) -> Tensor:
        """Convert to an Int tensor (floats truncate toward zero)."""
        if self.kind is Int:
            return self if dtype is None else self.cast(dtype)
        if dtype is not None:
            dtype = self._target_dtype("int", Int, dtype)
        return self._new(self._op("into_int")(self.primitive, dtype), Int)

    def float(self, dtype=None) -> Tensor:
        """Convert to a Float tensor."""
        if self.kind is Float:
            return self if dtype is None else self.cast(dtype)
        if dtype is not None:
            dtype = self._target_dtype("float", Float, dtype)
        return self._new(self._op("into_float")(self.primitive, dtype), Float)

    def _target_dtype(self, op: str, kind, dtype) -> DType:
        """`dtype` parsed and checked to belong to `kind` and to the backend."""
        dtype = DType.parse(dtype)
        if kind_of_dtype(dtype) is not kind:
            raise DTypeError(f"{op}: {dtype.value} is not a {kind.name} dtype")
        if not self.backend.capabilities.supports(dtype):
            raise DTypeError(f"{op}: backend {self.backend!r} does not support {dtype.value}")
        return dtype

    def bool(self) -> Tensor:
        """Non-zero elements become True."""
        if self.kind is Bool:
            return self
        return self.not_equal_elem(0)

    # Python protocol ---------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        array = self.to_data().array
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        return builtins.float(self.into_scalar())

    def __int__(self) -> int:
        return builtins.int(self.into_scalar())

    def __bool__(self) -> bool:
        if self.num_elements() != 1:
            raise ShapeError(
                f"the truth value of a tensor of shape {self.dims()} is ambiguous; "
                "use any() or all()"
            )
        return builtins.bool(self.into_scalar())

    def __len__(self) -> int:
        return self.dims()[0]

    def __iter__(self):
        for i in range(self.dims()[0]):
            yield self[i]

    def __repr__(self) -> str:
        return display.render(self)

    __str__ = __repr__

    # ================================================================== layout
    def reshape(self, shape) -> Tensor:
        """New shape, same elements; -1 infers one dim and 0 keeps the input's dim (Burn)."""
        dims = self.dims()
        shape = list(shape.dims if isinstance(shape, Shape) else shape)
        for i, s in enumerate(shape):
            if not isinstance(s, (int, np.integer)):
                raise ShapeError(f"reshape: dims must be integers, got {shape}")
            if s == 0 and i < len(dims):
                shape[i] = dims[i]
        n = math.prod(dims)
        if shape.count(-1) > 1:
            raise ShapeError(f"reshape: at most one -1 in {shape}")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or n % known:
                raise ShapeError(f"reshape: cannot reshape {dims} into {shape}")
            shape[shape.index(-1)] = n // known
        if math.prod(shape) != n or any(s < 0 for s in shape):
            raise ShapeError(f"reshape: cannot reshape {dims} ({n} elements) into {shape}")
        return self._new(self._op("reshape")(self.primitive, tuple(shape)))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims start_dim..=end_dim into one."""
        dims = self.dims()
        start, end = self._dim(start_dim, "flatten"), self._dim(end_dim, "flatten")
        if start > end:
            raise ShapeError(f"flatten: start_dim {start_dim} is after end_dim {end_dim}")
        merged = math.prod(dims[start : end + 1])
        return self.reshape(dims[:start] + [merged] + dims[end + 1 :])

    def permute(self, axes) -> Tensor:
        rank = self.rank()
        axes = [self._dim(a, "permute") for a in axes]
        if sorted(axes) != list(range(rank)):
            raise ShapeError(f"permute: {list(axes)} is not a permutation of {rank} dims")
        return self._new(self._op("permute")(self.primitive, tuple(axes)))

    def swap_dims(self, dim1: int, dim2: int) -> Tensor:
        d1, d2 = self._dim(dim1, "swap_dims"), self._dim(dim2, "swap_dims")
        return self._new(self._op("swap_dims")(self.primitive, d1, d2))

    def transpose(self) -> Tensor:
        """Swap the last two dims."""
        if self.rank() < 2:
            return self
        return self.swap_dims(-2, -1)

    def t(self) -> Tensor:
        return self.transpose()

    @property
    def T(self) -> Tensor:  # noqa: N802 - numpy's name
        return self.transpose()

    def movedim(self, src, dst) -> Tensor:
        src = [src] if isinstance(src, int) else list(src)
        dst = [dst] if isinstance(dst, int) else list(dst)
        if len(src) != len(dst):
            raise ShapeError(f"movedim: {len(src)} sources but {len(dst)} destinations")
        rank = self.rank()
        src = [self._dim(d, "movedim") for d in src]
        dst = [self._dim(d, "movedim") for d in dst]
        order = [d for d in range(rank) if d not in src]
        axes = [None] * rank
        for s, d in zip(src, dst, strict=True):
            axes[d] = s
        rest = iter(order)
        axes = [a if a is not None else next(rest) for a in axes]
        return self.permute(axes)

    def expand(self, shape) -> Tensor:
        """Broadcast size-1 dims (and add leading dims) to `shape`; -1 keeps a dim."""
        shape = list(Shape(shape)) if not isinstance(shape, list) else list(shape)
        dims = self.dims()
        if len(shape) < len(dims):
            raise RankError(f"expand: cannot expand {dims} to fewer dims {shape}")
        t = self
        if len(shape) > len(dims):
            t = self.reshape([1] * (len(shape) - len(dims)) + dims)
            dims = t.dims()
        target = [d if s == -1 else s for s, d in zip(shape, dims, strict=True)]
        for s, d in zip(target, dims, strict=True):
            if d != s and d != 1:
                raise ShapeError(f"expand: cannot expand {self.dims()} to {shape}")
        return t._new(t._op("expand")(t.primitive, tuple(target)))

    def squeeze(self, dim: int | None = None) -> Tensor:
        """Remove `dim` (which must have size 1), or every size-1 dim when `dim` is None."""
        dims = self.dims()
        if dim is None:
            return self.reshape([d for d in dims if d != 1] or [1])
        dim = self._dim(dim, "squeeze")
        if dims[dim] != 1:
            raise ShapeError(f"squeeze: dim {dim} of {dims} has size {dims[dim]}, not 1")
        return self.reshape(dims[:dim] + dims[dim + 1 :])

    def squeeze_dims(self, dims: Iterable[int]) -> Tensor:
        shape = self.dims()
        drop = {self._dim(d, "squeeze_dims") for d in dims}
        for d in drop:
            if shape[d] != 1:
                raise ShapeError(f"squeeze_dims: dim {d} of {shape} has size {shape[d]}, not 1")
        return self.reshape([s for i, s in enumerate(shape) if i not in drop])

    def unsqueeze(self, rank: int | None = None) -> Tensor:
        """Add leading size-1 dims up to `rank` (default: one more dim), like Burn's unsqueeze."""
        dims = self.dims()
        rank = len(dims) + 1 if rank is None else rank
        if rank < len(dims):
            raise RankError(f"unsqueeze: cannot go from rank {len(dims)} to {rank}")
        return self.reshape([1] * (rank - len(dims)) + dims)

    def unsqueeze_dim(self, dim: int) -> Tensor:
        """Insert a size-1 dim at `dim` (0..=rank)."""
        dims = self.dims()
        dim = self._dim(dim, "unsqueeze_dim", len(dims) + 1)
        return self.reshape(dims[:dim] + [1] + dims[dim:])

    def unsqueeze_dims(self, dims: Iterable[int]) -> Tensor:
        shape = self.dims()
        dims = list(dims)
        rank = len(shape) + len(dims)
        positions = {self._dim(d, "unsqueeze_dims", rank) for d in dims}
        if len(positions) != len(dims):
            raise ShapeError(f"unsqueeze_dims: repeated dims in {dims}")
        rest = iter(shape)
        return self.reshape([1 if i in positions else next(rest) for i in range(rank)])

    def flip(self, axes) -> Tensor:
        axes = tuple(sorted({self._dim(a, "flip") for a in axes}))
        if not axes:
            return self
        return self._new(self._op("flip")(self.primitive, axes))

    def repeat_dim(self, dim: int, times: int) -> Tensor:
        """Tile the tensor `times` times along `dim`."""
        dim = self._dim(dim, "repeat_dim")
        if times < 0:
            raise ShapeError(f"repeat_dim: times must be >= 0, got {times}")
        if times == 1:
            return self
        if times == 0:
            dims = self.dims()
            dims[dim] = 0
            return Tensor.empty_like_shape(self, dims)
        return self._new(self._op("repeat_dim")(self.primitive, dim, times))

    def repeat(self, sizes) -> Tensor:
        """Tile along every dim: `sizes[i]` copies along dim i (Burn's `repeat(&[..])`)."""
        sizes = list(sizes)
        if len(sizes) != self.rank():
            raise RankError(f"repeat: {len(sizes)} sizes for a rank {self.rank()} tensor")
        t = self
        for d, n in enumerate(sizes):
            t = t.repeat_dim(d, n)
        return t

    @staticmethod
    def empty_like_shape(t: Tensor, dims) -> Tensor:
        return t._new(_filled(t.backend, t.kind, "empty", tuple(dims), 0, t.device(), t.dtype))

    # -- slicing ---------------------------------------------------------------------------
    def _ranges(self, ranges, op: str):
        """Normalize Burn-style ranges (one per leading dim) to (start, stop, step) triples."""
        dims = self.dims()
        ranges = list(ranges)
        if len(ranges) > len(dims):
            raise RankError(f"{op}: {len(ranges)} ranges for a rank {len(dims)} tensor {dims}")
        out = []
        for d, size in enumerate(dims):
            r = ranges[d] if d < len(ranges) else None
            if r is None:
                out.append((0, size, 1))
                continue
            if isinstance(r, range):
                r = builtins.slice(r.start, r.stop, r.step)
            elif isinstance(r, (tuple, list)):
                r = builtins.slice(*r)
            elif isinstance(r, (int, np.integer)):
                i = int(r)
                if not -size <= i < size:
                    raise OutOfRangeError(
                        f"{op}: index {i} is out of range for dim {d} of size {size}"
                    )
                i %= size
                r = builtins.slice(i, i + 1)
            start, stop, step = r.start, r.stop, r.step
            step = 1 if step is None else step
            if step <= 0:
                raise ShapeError(f"{op}: step must be positive for dim {d}, got {step} (use flip)")
            for bound in (start, stop):
                if bound is not None and not -size - 1 < bound <= size and op != "__getitem__":
                    raise OutOfRangeError(
                        f"{op}: range {start}..{stop} is out of bounds for dim {d} of size {size}"
                    )
            start, stop, step = builtins.slice(start, stop, step).indices(size)
            if start > stop:
                raise OutOfRangeError(
                    f"{op}: range {start}..{stop} of dim {d} is reversed (start > end); "
                    "use flip to reverse"
                )
            out.append((start, stop, step))
        return tuple(out)

    def slice(self, ranges) -> Tensor:
        """Sub-tensor from one range per leading dim (`range`, `(start, end)`, slice, int).

        The rank is kept (as in Burn); `t[...]` offers numpy-style indexing that drops dims.
        """
        return self._new(self._op("slice")(self.primitive, self._ranges(ranges, "slice")))

    def slice_assign(self, ranges, values: Tensor) -> Tensor:
        """A copy whose sliced region is replaced by `values` (of the region's shape)."""
        ranges = self._ranges(ranges, "slice_assign")
        region = tuple(len(range(*r)) for r in ranges)
        value = self._peer(values, "slice_assign")
        if tuple(values.dims()) != region:
            raise ShapeError(
                f"slice_assign: values of shape {values.dims()} "
                f"for a region of shape {list(region)}"
            )
        return self._new(self._op("slice_assign")(self.primitive, ranges, value))

    def slice_fill(self, ranges, value) -> Tensor:
        ranges = self._ranges(ranges, "slice_fill")
        region = [len(range(*r)) for r in ranges]
        return self.slice_assign(
            ranges, self.full_like(value).slice([builtins.slice(0, n) for n in region])
        )

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        dim = self._dim(dim, "narrow")
        size = self.dims()[dim]
        if start < 0 or length < 0 or start + length > size:
            raise OutOfRangeError(
                f"narrow: {start}..{start + length} is out of bounds for dim {dim} of size {size}"
            )
        ranges = [None] * self.rank()
        ranges[dim] = (start, start + length)
        return self.slice(ranges)

    def chunk(self, chunks: int, dim: int) -> list[Tensor]:
        """Split into `chunks` pieces along `dim` (the last may be smaller), like torch.chunk."""
        dim = self._dim(dim, "chunk")
        if chunks <= 0:
            raise ShapeError(f"chunk: chunks must be positive, got {chunks}")
        size = self.dims()[dim]
        step = -(-size // chunks) if size else 1
        return self.split(step, dim)

    def split(self, split_size: int, dim: int = 0) -> list[Tensor]:
        dim = self._dim(dim, "split")
        if split_size <= 0:
            raise ShapeError(f"split: split_size must be positive, got {split_size}")
        size = self.dims()[dim]
        sizes = [min(split_size, size - s) for s in range(0, size, split_size)] or [0]
        return self.split_with_sizes(sizes, dim)

    def split_with_sizes(self, sizes, dim: int = 0) -> list[Tensor]:
        dim = self._dim(dim, "split_with_sizes")
        if sum(sizes) != self.dims()[dim]:
            raise ShapeError(
                f"split_with_sizes: sizes {list(sizes)} do not add up to {self.dims()[dim]}"
            )
        out, start = [], 0
        for n in sizes:
            out.append(self.narrow(dim, start, n))
            start += n
        return out

    def iter_dim(self, dim: int):
        """Iterate over `dim`, yielding slices that keep it with size 1 (Burn's iter_dim)."""
        dim = self._dim(dim, "iter_dim")
        for i in range(self.dims()[dim]):
            yield self.narrow(dim, i, 1)

    def __getitem__(self, index) -> Tensor:
        if not isinstance(index, tuple):
            index = (index,)
        if any(isinstance(i, Tensor) for i in index):
            raise KindError("t[...]: indexing with tensors is not supported; use select or gather")
        if index.count(Ellipsis) > 1:
            raise ShapeError("t[...]: at most one Ellipsis")
        dims = self.dims()
        explicit = [i for i in index if i is not None and i is not Ellipsis]
        if len(explicit) > len(dims):
            raise RankError(f"t[...]: {len(explicit)} indices for a rank {len(dims)} tensor {dims}")
        if Ellipsis in index:
            at = index.index(Ellipsis)
            fill = (builtins.slice(None),) * (len(dims) - len(explicit))
            index = index[:at] + fill + index[at + 1 :]
        ranges, flips, out_shape, d = [], [], [], 0
        for i in index:
            if i is None:
                out_shape.append(1)
                continue
            size = dims[d]
            if isinstance(i, (int, np.integer)):
                if not -size <= i < size:
                    raise OutOfRangeError(
                        f"t[...]: index {i} is out of range for dim {d} of size {size}"
                    )
                ranges.append(int(i) % size)
            elif isinstance(i, builtins.slice):
                start, stop, step = i.indices(size)
                if step < 0:
                    n = len(range(start, stop, step))
                    last = start + (n - 1) * step if n else 0
                    ranges.append(builtins.slice(last, start + 1 if n else 0, -step))
                    flips.append(d)
                else:
                    ranges.append(builtins.slice(start, max(start, stop), step))
                out_shape.append(len(range(start, stop, step)))
            else:
                raise KindError(f"t[...]: unsupported index {i!r}")
            d += 1
        out_shape.extend(dims[d:])
        t = self.slice(ranges)
        if flips:
            t = t.flip(flips)
        if not out_shape:
            out_shape = [1]
        return t.reshape(out_shape) if out_shape != t.dims() else t

    def pad(self, pads, value=0) -> Tensor:
        """Pad the last dims: `pads` is (left, right, top, bottom) for the last two (Burn),
        or any even-length sequence of (before, after) pairs from the last dim backwards."""
        pads = list(pads)
        if len(pads) % 2 or len(pads) // 2 > self.rank():
            raise ShapeError(f"pad: {len(pads)} pads for a rank {self.rank()} tensor")
        if any(p < 0 for p in pads):
            raise ShapeError(f"pad: negative padding {pads}")
        dims = self.dims()
        out = list(dims)
        ranges = [(0, d) for d in dims]
        for k in range(len(pads) // 2):
            d = len(dims) - 1 - k
            before, after = pads[2 * k], pads[2 * k + 1]
            out[d] = dims[d] + before + after
            ranges[d] = (before, before + dims[d])
        base = self._new(
            _filled(self.backend, self.kind, "full", tuple(out), value, self.device(), self.dtype)
        )
        return base.slice_assign(ranges, self)

    # ================================================================== indexing
    def _indices(self, indices, op: str):
        if not isinstance(indices, Tensor) or indices.kind is not Int:
            raise KindError(f"{op}: indices must be an Int tensor")
        return self._peer(indices, op, Int)

    def gather(self, dim: int, indices: Tensor) -> Tensor:
        """out[.., i, ..] = self[.., indices[.., i, ..], ..] along `dim` (same rank)."""
        dim = self._dim(dim, "gather")
        idx = self._indices(indices, "gather")
        if indices.rank() != self.rank():
            raise RankError(f"gather: indices rank {indices.rank()} != tensor rank {self.rank()}")
        for d, (a, b) in enumerate(zip(indices.dims(), self.dims(), strict=True)):
            if d != dim and a > b:
                raise ShapeError(
                    f"gather: indices {indices.dims()} larger than tensor {self.dims()} at dim {d}"
                )
        self._check_index_range(indices, self.dims()[dim], "gather")
        return self._new(self._op("gather")(dim, self.primitive, idx))

    def scatter(self, dim: int, indices: Tensor, values: Tensor) -> Tensor:
        """Add `values` into a copy at `indices` along `dim` (Burn's scatter sums)."""
        dim = self._dim(dim, "scatter")
        idx = self._indices(indices, "scatter")
        vals = self._peer(values, "scatter")
        if indices.dims() != values.dims():
            raise ShapeError(f"scatter: indices {indices.dims()} and values {values.dims()} differ")
        if indices.rank() != self.rank():
            raise RankError(f"scatter: indices rank {indices.rank()} != tensor rank {self.rank()}")
        self._check_index_range(indices, self.dims()[dim], "scatter")
        return self._new(self._op("scatter")(dim, self.primitive, idx, vals))

    def select(self, dim: int, indices: Tensor) -> Tensor:
        """Entries at the 1-D Int `indices` along `dim`."""
        dim = self._dim(dim, "select")
        idx = self._indices(indices, "select")
        if indices.rank() != 1:
            raise RankError(f"select: indices must be 1-D, got {indices.dims()}")
        self._check_index_range(indices, self.dims()[dim], "select")
        return self._new(self._op("select")(self.primitive, dim, idx))

    def select_assign(self, dim: int, indices: Tensor, values: Tensor) -> Tensor:
        """Add `values` into a copy at the 1-D `indices` along `dim` (sums, as in Burn)."""
        dim = self._dim(dim, "select_assign")
        idx = self._indices(indices, "select_assign")
        vals = self._peer(values, "select_assign")
        expected = self.dims()
        expected[dim] = indices.dims()[0] if indices.rank() == 1 else -1
        if indices.rank() != 1 or values.dims() != expected:
            raise ShapeError(
                f"select_assign: values {values.dims()} do not match tensor {self.dims()} "
                f"with {indices.dims()} indices along dim {dim}"
            )
        self._check_index_range(indices, self.dims()[dim], "select_assign")
        return self._new(self._op("select_assign")(self.primitive, dim, idx, vals))

    def _check_index_range(self, indices: Tensor, size: int, op: str) -> None:
        """Index bounds are checked where the backend keeps data on the host."""
        if indices.num_elements() == 0 or not self.backend.host_memory:
            return
        data = indices.to_data().array
        lo, hi = data.min(), data.max()
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise OutOfRangeError(f"{op}: index {bad} is out of range for a dim of size {size}")

    def mask_where(self, mask: Tensor, value: Tensor) -> Tensor:
        """Elements of `value` where `mask` is True, else of `self` (shapes broadcast)."""
        m = self._peer(mask, "mask_where", Bool)
        v = self._peer(value, "mask_where")
        shape = _broadcast("mask_where", self.shape_tuple(), mask.shape_tuple())
        _broadcast("mask_where", shape, value.shape_tuple())
        return self._new(self._op("mask_where")(self.primitive, m, v))

    def mask_fill(self, mask: Tensor, value) -> Tensor:
        """`value` where `mask` is True, else `self`."""
        m = self._peer(mask, "mask_fill", Bool)
        _broadcast("mask_fill", self.shape_tuple(), mask.shape_tuple())
        out = self._op("mask_fill")(self.primitive, m, value)
        if mask.shape_tuple() != self.shape_tuple():
            out = self._op("expand")(
                out, _broadcast("mask_fill", self.shape_tuple(), mask.shape_tuple())
            )
        return self._new(out)

    # ================================================================== comparisons
    def equal(self, other) -> Tensor:
        return self._compare("equal", other)

    def not_equal(self, other) -> Tensor:
        return self._compare("not_equal", other)

    def equal_elem(self, value) -> Tensor:
        return self._compare("equal", value)

    def not_equal_elem(self, value) -> Tensor:
        return self._compare("not_equal", value)

    def greater(self, other) -> Tensor:
        return self._compare("greater", other)

    def greater_elem(self, value) -> Tensor:
        return self._compare("greater", value)

    def greater_equal(self, other) -> Tensor:
        return self._compare("greater_equal", other)

    def greater_equal_elem(self, value) -> Tensor:
        return self._compare("greater_equal", value)

    def lower(self, other) -> Tensor:
        return self._compare("lower", other)

    def lower_elem(self, value) -> Tensor:
        return self._compare("lower", value)

    def lower_equal(self, other) -> Tensor:
        return self._compare("lower_equal", other)

    def lower_equal_elem(self, value) -> Tensor:
        return self._compare("lower_equal", value)

    __lt__ = lower
    __le__ = lower_equal
    __gt__ = greater
    __ge__ = greater_equal

    def all_close(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> builtins.bool:
        """True when every element satisfies |a - b| <= atol + rtol * |b|."""
        return builtins.bool(self.is_close(other, rtol, atol).all().into_scalar())

    def is_close(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> Tensor:
        self._numeric("is_close")
        diff = (self - other).abs()
        bound = other.abs() * rtol + atol
        return diff.lower_equal(bound)

    def contains_nan(self) -> builtins.bool:
        return builtins.bool(self.is_nan().any().into_scalar())

    def is_nan(self) -> Tensor:
        if self.kind is not Float:
            return self.not_equal(self)
        return self._new(self.backend.float_is_nan(self.primitive), Bool)

    # ================================================================== arithmetic
    def add(self, other) -> Tensor:
        self._numeric("add")
        return self._binary("add", other)

    def add_scalar(self, value) -> Tensor:
        return self.add(value)

    def sub(self, other) -> Tensor:
        self._numeric("sub")
        return self._binary("sub", other)

    def sub_scalar(self, value) -> Tensor:
        return self.sub(value)

    def mul(self, other) -> Tensor:
        self._numeric("mul")
        return self._binary("mul", other)

    def mul_scalar(self, value) -> Tensor:
        return self.mul(value)

    def div(self, other) -> Tensor:
        """Division; Int division truncates toward zero (as in Burn)."""
        self._numeric("div")
        return self._binary("div", other)

    def div_scalar(self, value) -> Tensor:
        return self.div(value)

    def remainder(self, other) -> Tensor:
        """Remainder with the sign of the divisor (like PyTorch's `remainder`)."""
        self._numeric("remainder")
        return self._binary("remainder", other)

    def remainder_scalar(self, value) -> Tensor:
        return self.remainder(value)

    def neg(self) -> Tensor:
        self._numeric("neg")
        return self._new(self._op("neg")(self.primitive))

    def abs(self) -> Tensor:
        self._numeric("abs")
        return self._new(self._op("abs")(self.primitive))

    def sign(self) -> Tensor:
        self._numeric("sign")
        return self._new(self._op("sign")(self.primitive))

    def powf(self, other) -> Tensor:
        """Elementwise power with a Float exponent tensor or a scalar."""
        if self.kind is Int:
            return self.float().powf(other).int(self.dtype)
        self._require("powf", Float)
        return self._binary("powf", other)

    def powf_scalar(self, value) -> Tensor:
        return self.powf(value)

    def powi(self, other) -> Tensor:
        """Elementwise power with an Int exponent tensor or an integer."""
        self._numeric("powi")
        if _is_scalar(other):
            return self._new(self._op("powi_scalar")(self.primitive, other))
        if not isinstance(other, Tensor) or other.kind is not Int:
            raise KindError("powi: the exponent must be an Int tensor or an integer")
        rhs = self._peer(other, "powi", Int)
        _broadcast("powi", self.shape_tuple(), other.shape_tuple())
        return self._new(self._op("powi")(self.primitive, rhs))

    def powi_scalar(self, value) -> Tensor:
        return self.powi(value)

    def square(self) -> Tensor:
        return self.mul(self)

    def __add__(self, other):
        return self.add(other)

    def __radd__(self, other):
        return self.add(other)

    def __sub__(self, other):
        return self.sub(other)

    def __rsub__(self, other):
        return self.neg().add(other)

    def __mul__(self, other):
        return self.mul(other)

    def __rmul__(self, other):
        return self.mul(other)

    def __truediv__(self, other):
        return self.div(other)

    def __rtruediv__(self, other):
        if not _is_scalar(other):
            return NotImplemented
        return self.full_like(other).div(self)

    def __floordiv__(self, other):
        """Floor division, as Python's `//` (`div` of Int tensors truncates toward zero)."""
        if self.kind is Int:
            # `remainder` has the divisor's sign, so `self - remainder` is an exact multiple of
            # `other` and its truncating division is the floor quotient.
            return self.sub(self.remainder(other)).div(other)
        return self.div(other).floor()

    def __mod__(self, other):
        return self.remainder(other)

    def __pow__(self, other):
        if self.kind is Int and (
            isinstance(other, int) or (isinstance(other, Tensor) and other.kind is Int)
        ):
            return self.powi(other)
        return self.powf(other)

    def __rpow__(self, other):
        if not _is_scalar(other):
            return NotImplemented
        return self.full_like(other).powf(self)

    def __neg__(self):
        return self.neg()

    def __abs__(self):
        return self.abs()

    def __matmul__(self, other):
        return self.matmul(other)

    def __invert__(self):
        return self.bool_not()

    def __and__(self, other):
        return self.bool_and(other)

    def __or__(self, other):
        return self.bool_or(other)

    def __xor__(self, other):
        return self.bool_xor(other)

    __hash__ = object.__hash__

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product over the last two dims; leading (batch) dims broadcast."""
        self._numeric("matmul")
        rhs = self._peer(other, "matmul")
        a, b = self.dims(), other.dims()
        if len(a) < 2 or len(a) != len(b):
            raise RankError(f"matmul: needs two tensors of equal rank >= 2, got {a} and {b}")
        if a[-1] != b[-2]:
            raise ShapeError(f"matmul: inner dims differ, {a} @ {b}")
        _broadcast("matmul", tuple(a[:-2]), tuple(b[:-2]))
        return self._new(self._op("matmul")(self.primitive, rhs))

    def dot(self, other: Tensor) -> Tensor:
        """Inner product of two 1-D tensors, as a one-element tensor."""
        if self.rank() != 1 or other.rank() != 1:
            raise RankError(f"dot: needs two 1-D tensors, got {self.dims()} and {other.dims()}")
        return (self * other).sum()

    # -- float math --------------------------------------------------------------------------
    def exp(self) -> Tensor:
        return self._float_unary("exp")

    def log(self) -> Tensor:
        return self._float_unary("log")

    def log1p(self) -> Tensor:
        return self._float_unary("log1p")

    def sqrt(self) -> Tensor:
        return self._float_unary("sqrt")

    def sin(self) -> Tensor:
        return self._float_unary("sin")

    def cos(self) -> Tensor:
        return self._float_unary("cos")

    def tan(self) -> Tensor:
        return self._float_unary("tan")

    def tanh(self) -> Tensor:
        return self._float_unary("tanh")

    def erf(self) -> Tensor:
        return self._float_unary("erf")

    def floor(self) -> Tensor:
        return self._float_unary("floor")

    def ceil(self) -> Tensor:
        return self._float_unary("ceil")

    def round(self) -> Tensor:
        """Round half to even, as Burn does."""
        return self._float_unary("round")

    def recip(self) -> Tensor:
        return self._float_unary("recip")

    def atan2(self, other: Tensor) -> Tensor:
        self._require("atan2", Float)
        return self._binary("atan2", other)

    # -- clamping and pairs ----------------------------------------------------------------
    def clamp(self, min, max) -> Tensor:  # noqa: A002 - Burn's names
        self._numeric("clamp")
        if min > max:
            raise ShapeError(f"clamp: min {min} is greater than max {max}")
        return self._new(self._op("clamp")(self.primitive, min, max))

    def clamp_min(self, min) -> Tensor:  # noqa: A002
        self._numeric("clamp_min")
        return self._new(self._op("clamp_min")(self.primitive, min))

    def clamp_max(self, max) -> Tensor:  # noqa: A002
        self._numeric("clamp_max")
        return self._new(self._op("clamp_max")(self.primitive, max))

    def max_pair(self, other: Tensor) -> Tensor:
        self._numeric("max_pair")
        return self._binary("max_pair", other)

    def min_pair(self, other: Tensor) -> Tensor:
        self._numeric("min_pair")
        return self._binary("min_pair", other)

    # ================================================================== reductions
    def _reduce_all(self, name: str) -> Tensor:
        self._numeric(name)
        if self.num_elements() == 0 and name in ("max", "min"):
            raise ShapeError(f"{name}: the tensor is empty {self.dims()}")
        return self._new(self._op(name)(self.primitive))

    def _reduce_dim(self, name: str, dim: int, kind=None) -> Tensor:
        self._numeric(name)
        dim = self._dim(dim, name)
        if self.dims()[dim] == 0 and name not in ("sum_dim", "prod_dim"):
            raise ShapeError(f"{name}: dim {dim} of {self.dims()} is empty")
        return self._new(self._op(name)(self.primitive, dim), kind)

    def sum(self) -> Tensor:
        """Sum of all elements, as a one-element 1-D tensor."""
        return self._reduce_all("sum")

    def sum_dim(self, dim: int) -> Tensor:
        """Sum along `dim`, keeping it with size 1."""
        return self._reduce_dim("sum_dim", dim)

    def sum_dims(self, dims: Iterable[int]) -> Tensor:
        t = self
        for d in dims:
            t = t.sum_dim(d)
        return t

    def prod(self) -> Tensor:
        return self._reduce_all("prod")

    def prod_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("prod_dim", dim)

    def mean(self) -> Tensor:
        if self.num_elements() == 0:
            raise ShapeError("mean: the tensor is empty")
        return self._reduce_all("mean")

    def mean_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("mean_dim", dim)

    def mean_dims(self, dims: Iterable[int]) -> Tensor:
        t = self
        for d in dims:
            t = t.mean_dim(d)
        return t

    def max(self) -> Tensor:
        return self._reduce_all("max")

    def min(self) -> Tensor:
        return self._reduce_all("min")

    def max_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("max_dim", dim)

    def min_dim(self, dim: int) -> Tensor:
        return self._reduce_dim("min_dim", dim)

    def max_dims(self, dims: Iterable[int]) -> Tensor:
        t = self
        for d in dims:
            t = t.max_dim(d)
        return t

    def min_dims(self, dims: Iterable[int]) -> Tensor:
        t = self
        for d in dims:
            t = t.min_dim(d)
        return t

    def argmax(self, dim: int) -> Tensor:
        """Index of the first maximum along `dim` (kept with size 1), as an Int tensor."""
        return self._reduce_dim("argmax", dim, Int)

    def argmin(self, dim: int) -> Tensor:
        return self._reduce_dim("argmin", dim, Int)

    def max_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        self._reduce_dim("max_dim", dim)  # validation
        values, idx = self._op("max_dim_with_indices")(self.primitive, self._dim(dim, "max_dim"))
        return self._new(values), self._new(idx, Int)

    def min_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        self._reduce_dim("min_dim", dim)
        values, idx = self._op("min_dim_with_indices")(self.primitive, self._dim(dim, "min_dim"))
        return self._new(values), self._new(idx, Int)

    def max_abs(self) -> Tensor:
        return self.abs().max()

    def var(self, dim: int) -> Tensor:
        """Unbiased variance along `dim` (kept), as Burn's `var`."""
        return self._var(dim, 1)[0]

    def var_bias(self, dim: int) -> Tensor:
        """Biased (population) variance along `dim`."""
        return self._var(dim, 0)[0]

    def var_mean(self, dim: int) -> tuple[Tensor, Tensor]:
        return self._var(dim, 1)

    def var_mean_bias(self, dim: int) -> tuple[Tensor, Tensor]:
        return self._var(dim, 0)

    def _var(self, dim: int, correction: int) -> tuple[Tensor, Tensor]:
        self._require("var", Float)
        dim = self._dim(dim, "var")
        n = self.dims()[dim]
        mean = self.mean_dim(dim)
        centered = self - mean
        var = (centered * centered).sum_dim(dim).div(builtins.float(n - correction))
        return var, mean

    def cov(self, dim: int, correction_factor: int = 1) -> Tensor:
        """Covariance between the entries of the other last dim, with observations along `dim`.

        For a `[variables, observations]` matrix, `cov(1)` is the `[variables, variables]`
        covariance matrix (`correction_factor=1`: unbiased, like `numpy.cov`).
        """
        self._require("cov", Float)
        if self.rank() < 2:
            raise RankError(f"cov: needs at least 2 dims, got {self.dims()}")
        dim = self._dim(dim, "cov")
        x = self.movedim(dim, -1)
        n = x.dims()[-1]
        centered = x - x.mean_dim(-1)
        return centered.matmul(centered.transpose()).div(builtins.float(n - correction_factor))

    # -- bool reductions -------------------------------------------------------------------
    def any(self) -> Tensor:
        """One-element Bool tensor: is any element non-zero / True?"""
        return self._new(self.bool()._op("any")(self.bool().primitive), Bool)

    def all(self) -> Tensor:
        return self._new(self.bool()._op("all")(self.bool().primitive), Bool)

    def any_dim(self, dim: int) -> Tensor:
        b = self.bool()
        return self._new(b._op("any_dim")(b.primitive, self._dim(dim, "any_dim")), Bool)

    def all_dim(self, dim: int) -> Tensor:
        b = self.bool()
        return self._new(b._op("all_dim")(b.primitive, self._dim(dim, "all_dim")), Bool)

    # ================================================================== sorting
    def sort(self, dim: int) -> Tensor:
        """Stable ascending sort along `dim`."""
        return self.sort_with_indices(dim)[0]

    def sort_descending(self, dim: int) -> Tensor:
        return self.sort_descending_with_indices(dim)[0]

    def sort_with_indices(
        self, dim: int, descending: builtins.bool = False
    ) -> tuple[Tensor, Tensor]:
        self._numeric("sort")
        dim = self._dim(dim, "sort")
        values, idx = self._op("sort_with_indices")(self.primitive, dim, descending)
        return self._new(values), self._new(idx, Int)

    def sort_descending_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        return self.sort_with_indices(dim, True)

    def argsort(self, dim: int) -> Tensor:
        return self.sort_with_indices(dim)[1]

    def argsort_descending(self, dim: int) -> Tensor:
        return self.sort_with_indices(dim, True)[1]

    def topk(self, k: int, dim: int) -> Tensor:
        """The `k` largest values along `dim`, largest first."""
        return self.topk_with_indices(k, dim)[0]

    def topk_with_indices(self, k: int, dim: int) -> tuple[Tensor, Tensor]:
        dim = self._dim(dim, "topk")
        if not 0 <= k <= self.dims()[dim]:
            raise OutOfRangeError(f"topk: k={k} for dim {dim} of size {self.dims()[dim]}")
        values, idx = self.sort_descending_with_indices(dim)
        return values.narrow(dim, 0, k), idx.narrow(dim, 0, k)

    # ================================================================== structure
    def one_hot(self, num_classes: int) -> Tensor:
        """Add a last dim of size `num_classes` with 1 at each element's class, 0 elsewhere."""
        return self.one_hot_fill(num_classes, 1, 0, -1)

    def one_hot_fill(self, num_classes: int, on_value=1, off_value=0, axis: int = -1) -> Tensor:
        self._numeric("one_hot")
        idx = self if self.kind is Int else self.int()
        if idx.num_elements() and (
            idx.min().into_scalar() < 0 or idx.max().into_scalar() >= num_classes
        ):
            raise OutOfRangeError(f"one_hot: class indices must be in 0..{num_classes}")
        rank = self.rank() + 1
        axis = self._dim(axis, "one_hot", rank)
        classes = Tensor[self.backend, 1, Int].arange(0, num_classes, self.device())
        view = [1] * rank
        view[axis] = num_classes
        hot = idx.unsqueeze_dim(axis).equal(classes.reshape(view))
        shape = hot.dims()
        on = self._new(
            _filled(
                self.backend, self.kind, "full", tuple(shape), on_value, self.device(), self.dtype
            )
        )
        return on.mask_fill(hot.bool_not(), off_value)

    def tril(self, diagonal: int = 0) -> Tensor:
        """Keep the lower triangle (j - i <= diagonal) of the last two dims, zero elsewhere."""
        mask = Tensor[self.backend]._tri_mask(self.dims(), diagonal, False, self.device())
        return self.mask_fill(mask, 0 if self.kind is not Bool else False)

    def triu(self, diagonal: int = 0) -> Tensor:
        """Keep the upper triangle (j - i >= diagonal) of the last two dims."""
        mask = Tensor[self.backend]._tri_mask(self.dims(), diagonal, True, self.device())
        return self.mask_fill(mask, 0 if self.kind is not Bool else False)

    # ================================================================== likes
    def zeros_like(self) -> Tensor:
        return self.full_like(0)

    def ones_like(self) -> Tensor:
        return self.full_like(1)

    def full_like(self, value) -> Tensor:
        return self._new(
            _filled(
                self.backend,
                self.kind,
                "full",
                self.shape_tuple(),
                value,
                self.device(),
                self.dtype,
            )
        )

    def empty_like(self) -> Tensor:
        return self.zeros_like()

    def random_like(self, distribution: Distribution = Distribution.Default) -> Tensor:
        self._require("random_like", Float)
        return self._new(
            self.backend.float_random(self.shape_tuple(), distribution, self.device(), self.dtype)
        )

    # ================================================================== bool ops
    def bool_not(self) -> Tensor:
        self._require("bool_not", Bool)
        return self._new(self.backend.bool_not(self.primitive))

    def _bool_binary(self, name: str, other: Tensor) -> Tensor:
        self._require(name, Bool)
        rhs = self._peer(other, name)
        _broadcast(name, self.shape_tuple(), other.shape_tuple())
        return self._new(getattr(self.backend, name)(self.primitive, rhs))

    def bool_and(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_and", other)

    def bool_or(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_or", other)

    def bool_xor(self, other: Tensor) -> Tensor:
        return self._bool_binary("bool_xor", other)

    def argwhere(self) -> Tensor:
        """Int tensor [n, rank] of the coordinates of True (non-zero) elements."""
        coords = np.argwhere(self.to_data().array)
        return Tensor[self.backend, 2, Int].from_data(
            coords.reshape(-1, self.rank()), self.device()
        )

    def nonzero(self) -> list[Tensor]:
        """One 1-D Int tensor of coordinates per dim, for the True (non-zero) elements."""
        found = np.nonzero(self.to_data().array)
        return [Tensor[self.backend, 1, Int].from_data(c, self.device()) for c in found]

    async def argwhere_async(self) -> Tensor:
        return self.argwhere()

    async def nonzero_async(self) -> list[Tensor]:
        return self.nonzero()

    @classmethod
    def cartesian_grid(cls, shape, device=None) -> Tensor:
        """Int tensor `[*shape, len(shape)]` holding each position's coordinates."""
        shape = tuple(Shape(shape))
        if not shape:
            raise RankError("cartesian_grid: needs at least one dimension")
        cls._check_rank(len(shape) + 1, "cartesian_grid")
        backend, device = cls._resolve(device)
        rank = len(shape)
        axes = []
        for d, n in enumerate(shape):
            view = [1] * rank
            view[d] = n
            axis = Tensor[backend, 1, Int].arange(0, n, device).reshape(view).expand(list(shape))
            axes.append(axis)
        return Tensor.stack(axes, rank)

    # ================================================================== autodiff hooks
    # On a backend without autodiff these exist and do nothing, as in Burn.
    def require_grad(self) -> Tensor:
        return self.set_require_grad(True)

    def set_require_grad(self, flag: builtins.bool) -> Tensor:
        if self.kind is not Float:
            return self
        return self._new(self.backend.float_set_require_grad(self.primitive, flag))

    def is_require_grad(self) -> builtins.bool:
        return self.kind is Float and self.backend.float_is_require_grad(self.primitive)

    def detach(self) -> Tensor:
        if self.kind is not Float:
            return self
        return self._new(self.backend.float_detach(self.primitive))

    def backward(self):
        """Gradients of this (one-element) tensor; needs an autodiff backend."""
        return self.backend.backward(self)

    def grad(self, grads) -> Tensor | None:
        """This tensor's gradient in `grads`, on the inner backend (None when it has none)."""
        found = self.backend.grad(self.primitive, grads) if self.kind is Float else None
        return None if found is None else Tensor._make(self.backend.inner(), found, Float)

    def grad_remove(self, grads) -> Tensor | None:
        """Pop this tensor's gradient from `grads` (so it is not applied twice)."""
        found = self.backend.grad_remove(self.primitive, grads) if self.kind is Float else None
        return None if found is None else Tensor._make(self.backend.inner(), found, Float)

    def grad_replace(self, grads, grad: Tensor) -> None:
        """Replace this tensor's gradient in `grads` by `grad` (a tensor of the inner backend)."""
        self.backend.grad_replace(self.primitive, grads, grad.primitive)

    def inner(self) -> Tensor:
        """The same values on the inner backend of a decorator (itself otherwise)."""
        backend = self.backend
        if backend.inner() is backend:
            return self
        return Tensor._make(backend.inner(), self._op("inner")(self.primitive), self.kind)

    @classmethod
    def from_inner(cls, tensor: Tensor, backend=None) -> Tensor:
        """Wrap a tensor of the inner backend for the decorator `backend` (or the pinned one)."""
        backend = backend or cls._backend
        if backend is None:
            raise BackendError(
                "from_inner: name the decorator backend, e.g. Tensor[B, 2].from_inner(t)"
            )
        if backend.inner() is backend:
            return tensor
        if tensor.backend is not backend.inner():
            raise DeviceError(
                f"from_inner: tensor is on {tensor.backend!r}, expected {backend.inner()!r}"
            )
        wrap = getattr(backend, tensor.kind.prefix + "from_inner")
        return Tensor._make(backend, wrap(tensor.primitive), tensor.kind)


@contextlib.contextmanager
def _allocating(op: str, shape, dtype):
    """Turn the host's or a device's out-of-memory into an `AllocationError` naming the op."""
    try:
        yield
    except MemoryError as e:
        if isinstance(e, AllocationError):
            raise
        raise AllocationError(
            f"{op}: cannot allocate a {dtype.value} tensor of shape {list(shape)} ({e})"
        ) from None
    except OverflowError as e:
        raise AllocationError(
            f"{op}: a {dtype.value} tensor of shape {list(shape)} is too large ({e})"
        ) from None
    except ValueError as e:
        if "too big" not in str(e) and "maximum" not in str(e):
            raise
        raise AllocationError(
            f"{op}: a {dtype.value} tensor of shape {list(shape)} is too large ({e})"
        ) from None


def _filled(backend, kind, op: str, shape, value, device, dtype):
    """A primitive of `shape` filled with `value` through the kind's named creation op."""
    if kind is Bool:
        return backend.bool_full(shape, value, device)
    prefix = "float_" if kind is Float else "int_"
    if op in ("zeros", "empty") or (op == "full" and value == 0 and type(value) is int):
        return getattr(backend, prefix + "zeros")(shape, device, dtype)
    if op == "ones":
        return getattr(backend, prefix + "ones")(shape, device, dtype)
    return getattr(backend, prefix + "full")(shape, value, device, dtype)


# Binary op names whose scalar form is `<name>_elem` and whose result is Bool.
_ELEM_OPS = frozenset({"equal", "not_equal", "greater", "greater_equal", "lower", "lower_equal"})
