"""`Tensor`: the one user-facing tensor type, the same on every backend.

A tensor wraps a backend primitive and knows its backend and kind (Float, Int, Bool). Its rank
is the length of its shape and is checked by every op, as Burn checks it at compile time.
`Tensor[B, 2]` and `Tensor[B, 1, Int]` pin the backend, rank and kind for creation functions,
like Burn's `Tensor::<B, 2, Int>`.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from burn.tensor import display
from burn.tensor.arithmetic import Arithmetic
from burn.tensor.checks import ELEM_OPS as _ELEM_OPS
from burn.tensor.checks import broadcast_shape as _broadcast
from burn.tensor.checks import is_scalar as _is_scalar
from burn.tensor.creation import Creation
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn.tensor.errors import (
    DeviceError,
    DTypeError,
    KindError,
    OutOfRangeError,
    RankError,
    ShapeError,
)
from burn.tensor.grad_hooks import GradHooks
from burn.tensor.indexing import Indexing
from burn.tensor.interop import Interop
from burn.tensor.kind import Bool, Float, Int, Kind, kind_of_dtype
from burn.tensor.layout import Layout
from burn.tensor.reductions import Reductions
from burn.tensor.shape import Shape

if TYPE_CHECKING:
    from burn.backend.base import Backend

_pinned_cache: dict[tuple[Any, ...], type[Tensor]] = {}


def _backend_of(device: Any) -> Backend:
    """The backend a device belongs to (every `Device` class names it)."""
    try:
        backend: Backend = device.backend
        return backend
    except AttributeError:
        raise DeviceError(f"{device!r} is not a device (use B.device() of a backend)") from None


def _default_backend() -> Backend:
    from burn.backend.registry import default

    return default()


class Tensor(Creation, Layout, Indexing, Arithmetic, Reductions, GradHooks, Interop):
    """A tensor of a backend, a kind (Float by default) and a rank.

    Create one with `Tensor.from_data(values, device)`, `Tensor.zeros(shape, device)`,
    `Tensor.random(shape, Distribution.Default, device)`, `Tensor[B, 1, Int].arange(0, 5)`...
    Every op returns a new tensor; none modifies its input.
    """

    __slots__ = ("primitive", "backend", "kind")
    primitive: Any
    backend: Backend
    kind: type[Kind]

    # Set on the classes made by `Tensor[B, rank, kind]`.
    _backend: Backend | None = None
    _rank: int | None = None
    _kind: type[Kind] | None = None

    def __init__(self, primitive: Any, backend: Backend, kind: type[Kind] = Float) -> None:
        self.primitive = primitive
        self.backend = backend
        self.kind = kind

    def __class_getitem__(cls, params: Any) -> type[Tensor]:
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
    def _new(self, primitive: Any, kind: type[Kind] | None = None) -> Tensor:
        t = object.__new__(Tensor)
        t.primitive = primitive
        t.backend = self.backend
        t.kind = kind or self.kind
        return t

    def _op(self, name: str) -> Any:
        return getattr(self.backend, self.kind.prefix + name)

    def _require(self, op: str, *kinds: type[Kind]) -> None:
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

    def _peer(self, other: object, op: str, kind: type[Kind] | None = None) -> Any:
        """The primitive of `other`, checked to fit `self` for a binary op."""
        if not isinstance(other, Tensor):
            if isinstance(other, np.ndarray):
                raise KindError(
                    f"{op}: expected a Tensor, got a numpy array; convert it with "
                    "Tensor.from_data(array, device)"
                )
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

    def _binary(self, name: str, other: Any, op: str | None = None) -> Tensor:
        """Tensor-or-scalar binary op: `name` with a tensor, `name_scalar`/`_elem` with a scalar."""
        op = op or name
        if not isinstance(other, Tensor) and _is_scalar(other):
            suffix = "_elem" if name in _ELEM_OPS else "_scalar"
            return self._new(self._op(name + suffix)(self.primitive, other))
        rhs = self._peer(other, op)
        shape = self.backend.shape
        _broadcast(op, tuple(shape(self.primitive)), tuple(shape(rhs)))
        out = self._op(name)(self.primitive, rhs)
        return self._new(out, Bool if name in _ELEM_OPS else None)

    def _compare(self, name: str, other: Any) -> Tensor:
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
    def _resolve(cls, device: Any, backend: Backend | None = None) -> tuple[Backend, Any]:
        """The backend and device for a creation function."""
        backend = backend or cls._backend
        if backend is None:
            backend = _backend_of(device) if device is not None else None
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
    def _creation_dtype(cls, backend: Backend, kind: type[Kind], dtype: object) -> DType:
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
    def _make(cls, backend: Backend, primitive: Any, kind: type[Kind]) -> Tensor:
        t = object.__new__(Tensor)
        t.primitive = primitive
        t.backend = backend
        t.kind = kind
        return t

    # ================================================================== metadata and data
    @property
    def shape(self) -> Shape:
        """The dims as a `Shape`; `t.shape()` (Burn) and `t.shape[0]` (PyTorch) both work."""
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

    def device(self) -> Any:
        return self.backend.device_of(self.primitive)

    def to_device(self, device: Any) -> Tensor:
        return self._new(self._op("to_device")(self.primitive, device))

    def to_data(self) -> TensorData:
        data: TensorData = self._op("into_data")(self.primitive)
        return data

    def into_data(self) -> TensorData:
        return self.to_data()

    @staticmethod
    def to_data_many(tensors: Sequence[Tensor]) -> list[TensorData]:
        """The values of several tensors, in order, read with one `into_data_many` per backend:
        on a GPU backend one wait for the device instead of one per tensor."""
        tensors = list(tensors)
        out: list[Any] = [None] * len(tensors)
        groups: dict[int, tuple[Any, list[int]]] = {}
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise KindError(f"to_data_many: expected Tensors, got {type(t).__name__}")
            groups.setdefault(id(t.backend), (t.backend, []))[1].append(i)
        for backend, positions in groups.values():
            datas = backend.into_data_many([tensors[i].primitive for i in positions])
            for i, data in zip(positions, datas, strict=True):
                out[i] = data
        return out

    def into_primitive(self) -> Any:
        return self.primitive

    # Async forms, for code written against Burn's async reads. Backends here finish their work
    # when data is read, so these await nothing but keep the same call shape.
    async def to_data_async(self) -> TensorData:
        return self.to_data()

    async def into_data_async(self) -> TensorData:
        return self.to_data()

    async def into_scalar_async(self) -> Any:
        return self.into_scalar()

    def into_scalar(self) -> Any:
        """The single value of a one-element tensor, as a Python number."""
        if self.num_elements() != 1:
            raise ShapeError(f"into_scalar: needs exactly one element, shape is {self.dims()}")
        return self.to_data().array.reshape(()).item()

    def clone(self) -> Tensor:
        """Cheap: tensors are immutable, so the clone shares the primitive."""
        return self._new(self.primitive)

    def numpy(self) -> np.ndarray:
        return self.to_data().array

    def cast(self, dtype: Any) -> Tensor:
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

    def int(self, dtype: Any = None) -> Tensor:
        """Convert to an Int tensor (floats truncate toward zero)."""
        if self.kind is Int:
            return self if dtype is None else self.cast(dtype)
        if dtype is not None:
            dtype = self._target_dtype("int", Int, dtype)
        return self._new(self._op("into_int")(self.primitive, dtype), Int)

    def float(self, dtype: Any = None) -> Tensor:
        """Convert to a Float tensor."""
        if self.kind is Float:
            return self if dtype is None else self.cast(dtype)
        if dtype is not None:
            dtype = self._target_dtype("float", Float, dtype)
        return self._new(self._op("into_float")(self.primitive, dtype), Float)

    def _target_dtype(self, op: str, kind: type[Kind], dtype: object) -> DType:
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
    def __array__(self, dtype: Any = None, copy: builtins.bool | None = None) -> np.ndarray:
        array = self.to_data().array
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> builtins.float:
        return builtins.float(self.into_scalar())

    def __int__(self) -> builtins.int:
        return builtins.int(self.into_scalar())

    def __bool__(self) -> builtins.bool:
        if self.num_elements() != 1:
            raise ShapeError(
                f"the truth value of a tensor of shape {self.dims()} is ambiguous; "
                "use any() or all()"
            )
        return builtins.bool(self.into_scalar())

    def __len__(self) -> builtins.int:
        return self.dims()[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(self.dims()[0]):
            yield self[i]

    def __repr__(self) -> str:
        return display.render(self)

    __str__ = __repr__
