"""A pickle reader that builds data only: PyTorch's tensors as lazy references, nothing else.

Python's `pickle` runs whatever callable a file names (`os.system`, `builtins.eval`...). This
unpickler resolves a global only when its dotted name is on a short allowlist, and each allowed
name maps to a function written here, never to the module the file names: `torch` is never
imported, and every other global is refused with `UnsafePickleError` naming it, before anything
from the file has been called.

Storages arrive through `persistent_load` as `("storage", <type>, key, location, numel, ...)`;
the caller supplies a function that maps them to `Storage`s, checking the declared size against
the bytes really in the file before anything is allocated. Before unpickling, `scan` reads the
opcodes without running them and refuses the ones that could make the unpickler itself allocate
without bound or resolve a global behind the allowlist's back.
"""

from __future__ import annotations

import collections
import io
import math
import pickle
import pickletools
import reprlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from burn.record import RecordError
from burn.tensor import DType


class PyTorchFileError(RecordError):
    """A `.pt` file that is truncated, corrupt, or holds something other than weights."""


class UnsafePickleError(PyTorchFileError):
    """The pickle names a global outside the allowlist: it is refused, nothing from it runs."""


@dataclass(frozen=True)
class StorageType:
    """Stands for `torch.FloatStorage` and its siblings: only the element type matters."""

    name: str
    dtype: DType


_STORAGE_TYPES = {
    "FloatStorage": DType.F32,
    "DoubleStorage": DType.F64,
    "HalfStorage": DType.F16,
    "BFloat16Storage": DType.BF16,
    "LongStorage": DType.I64,
    "IntStorage": DType.I32,
    "ShortStorage": DType.I16,
    "CharStorage": DType.I8,
    "ByteStorage": DType.U8,
    "BoolStorage": DType.BOOL,
}


class Storage:
    """One storage of the file: its element type, length, and where its bytes come from.

    Several tensors may view the same storage (shared storages, `t` and `t.t()` saved
    together). A tensor that is one contiguous run of elements reads just that run; others
    gather from the whole storage, read once and cached.

    Args:
        read: `read(first, count)` returns `count` elements from element `first` as a new
            array (the caller has checked that they lie inside the storage).
    """

    __slots__ = ("key", "dtype", "numel", "read", "_array")

    def __init__(self, key: str, dtype: DType, numel: int, read: Callable[[int, int], np.ndarray]):
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.read = read
        self._array: np.ndarray | None = None

    def array(self) -> np.ndarray:
        """The storage's elements as a 1-D array."""
        if self._array is None:
            self._array = self.read(0, self.numel)
        return self._array


class TensorRef:
    """A tensor of the file, not yet read: storage, offset, size and stride, as PyTorch keeps.

    `load()` gathers the elements the size and stride select (non-contiguous views and views
    into a shared storage included) into a new contiguous array.
    """

    __slots__ = ("storage", "offset", "shape", "stride", "requires_grad")

    def __init__(self, storage: Storage, offset: int, shape, stride, requires_grad: bool = False):
        self.storage = storage
        self.offset = offset
        self.shape = tuple(shape)
        self.stride = tuple(stride)
        self.requires_grad = requires_grad

    @property
    def dtype(self) -> DType:
        return self.storage.dtype

    def load(self) -> np.ndarray:
        """The tensor's elements as a new C-contiguous array of its shape."""
        if 0 in self.shape:
            return np.zeros(self.shape, dtype=self.dtype.numpy)
        count = math.prod(self.shape)
        if self.stride == _contiguous_strides(self.shape):  # the common case: one run
            if self.storage._array is None:
                return self.storage.read(self.offset, count).reshape(self.shape)
            return self.storage._array[self.offset : self.offset + count].reshape(self.shape).copy()
        base = self.storage.array()
        item = base.itemsize
        view = np.lib.stride_tricks.as_strided(
            base[self.offset :],
            shape=self.shape,
            strides=tuple(s * item for s in self.stride),
            writeable=False,
        )
        return np.array(view, copy=True, order="C")

    def __repr__(self) -> str:
        return f"TensorRef(shape={list(self.shape)}, dtype={self.dtype.value})"


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _check_geometry(storage, offset, size, stride, where: str) -> None:
    """Refuse sizes and strides that would read outside the storage (checked before reading)."""
    if not isinstance(storage, Storage):
        raise PyTorchFileError(f"{where}: a tensor is rebuilt from {type(storage).__name__}")
    ok = (
        isinstance(size, (tuple, list))
        and isinstance(stride, (tuple, list))
        and len(size) == len(stride)
        and len(size) <= 64
        and all(type(d) is int and d >= 0 for d in size)
        and all(type(s) is int and s >= 0 for s in stride)
        and type(offset) is int
        and offset >= 0
    )
    if not ok:
        raise PyTorchFileError(
            f"{where}: malformed tensor geometry (offset {reprlib.repr(offset)}, size "
            f"{reprlib.repr(size)}, stride {reprlib.repr(stride)})"
        )
    if math.prod(size) == 0:
        return
    last = offset + sum((d - 1) * s for d, s in zip(size, stride, strict=True))
    if last >= storage.numel:
        raise PyTorchFileError(
            f"{where}: a tensor of size {list(size)} (stride {list(stride)}, offset {offset}) "
            f"reads element {last} of storage {storage.key!r}, which holds {storage.numel}"
        )


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickles PyTorch checkpoints with an allowlist of globals (see the module docstring).

    Args:
        file: the pickle's bytes as a binary file.
        storages: maps a persistent id `(key, StorageType, numel)` to a `Storage`, checking
            that the file holds that many bytes.
        where: the file (and member) named in errors.
    """

    def __init__(self, file, storages: Callable[[str, StorageType, int], Storage], where: str):
        super().__init__(file, encoding="utf-8")
        self._storages = storages
        self._where = where

        def rebuild_tensor(storage, offset, size, stride, *_ignored):
            _check_geometry(storage, offset, size, stride, where)
            return TensorRef(storage, offset, size, stride)

        def rebuild_parameter(data, requires_grad=True, *_ignored):
            if not isinstance(data, TensorRef):
                raise PyTorchFileError(f"{where}: a parameter wraps {type(data).__name__}")
            data.requires_grad = bool(requires_grad)
            return data

        self._allowed: dict[tuple[str, str], object] = {
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("torch._utils", "_rebuild_tensor"): rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): rebuild_parameter,
        }
        for name, dtype in _STORAGE_TYPES.items():
            self._allowed[("torch", name)] = StorageType(name, dtype)

    def find_class(self, module: str, name: str):
        found = self._allowed.get((module, name))
        if found is None:
            raise UnsafePickleError(
                f"{self._where}: the pickle asks for the global `{module}.{name}`, which is not "
                "on the allowlist of weight files (tensors, storages, OrderedDict); it was "
                "refused and nothing from the file was run"
            )
        return found

    def persistent_load(self, pid):
        ok = (
            isinstance(pid, tuple)
            and len(pid) >= 5
            and pid[0] == "storage"
            and isinstance(pid[1], StorageType)
            and isinstance(pid[2], str)
            and type(pid[4]) is int
            and pid[4] >= 0
        )
        if not ok:
            raise PyTorchFileError(f"{self._where}: unknown persistent id {reprlib.repr(pid)}")
        return self._storages(pid[2], pid[1], pid[4])


_MEMO_PUTS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})
# Extension codes resolve through copyreg's registry and a process-wide cache that can answer
# without asking `find_class`; `torch.save` never writes them.
_REFUSED = frozenset({"EXT1", "EXT2", "EXT4"})


def scan(file, where: str) -> None:
    """Read one pickle's opcodes without running them, and put the file back where it was.

    Python's unpickler sizes its memo by the largest index a PUT names: a 5-byte pickle could
    make it allocate gigabytes. Picklers number memo entries in order, so an index beyond the
    opcodes seen so far only comes from a crafted file, and is refused here, as are extension
    codes (EXT1/2/4), which name globals without going through `find_class` when cached.
    """
    start = file.tell()
    try:
        for count, (opcode, arg, _) in enumerate(pickletools.genops(file)):
            if opcode.name in _MEMO_PUTS and not (isinstance(arg, int) and 0 <= arg <= count):
                raise PyTorchFileError(f"{where}: memo index {arg} at opcode {count}: not a pickle")
            if opcode.name in _REFUSED:
                raise UnsafePickleError(
                    f"{where}: the pickle names a global by extension code {arg} ({opcode.name}), "
                    "which weight files never use; it was refused and nothing from the file was run"
                )
            if opcode.name == "STOP":
                break
    except PyTorchFileError:
        raise
    except Exception as e:  # truncated or unknown opcodes
        raise PyTorchFileError(
            f"{where}: not a readable pickle ({type(e).__name__}: {e})"
        ) from None
    file.seek(start)


def restricted_load(raw, storages: Callable[[str, StorageType, int], Storage], where: str):
    """Unpickle one object from bytes or a binary file; any failure is a `PyTorchFileError`."""
    file = io.BytesIO(raw) if isinstance(raw, (bytes, bytearray)) else raw
    scan(file, where)
    try:
        return RestrictedUnpickler(file, storages, where).load()
    except PyTorchFileError:
        raise
    except RecursionError:
        raise PyTorchFileError(f"{where}: the pickle nests too deeply") from None
    except Exception as e:  # corrupt pickles fail in many ways (EOFError, KeyError, ...)
        raise PyTorchFileError(
            f"{where}: not a readable pickle ({type(e).__name__}: {e})"
        ) from None
