"""The two file formats `torch.save` writes, read without torch.

- The zip archive (PyTorch 1.6 and later): `<name>/data.pkl` holds the object, each storage is
  the member `<name>/data/<key>`, stored uncompressed; `<name>/byteorder` says `little` or
  `big` (absent in old files: little).
- The legacy format (`_use_new_zipfile_serialization=False`): five pickles in a row (a magic
  number, the protocol version 1001, a dict of system info, the object, the sorted list of
  storage keys), then each storage as an 8-byte little-endian element count and its bytes.

Files are memory-mapped, so tensors are read from the page cache, and every declared size is
checked against the bytes the file really holds before anything is allocated.
"""

from __future__ import annotations

import mmap
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np
from burn.pytorch.unpickler import (
    PyTorchFileError,
    Storage,
    StorageType,
    UnsafePickleError,
    restricted_load,
    scan,
)
from burn.record import RecordError, RecordNotFoundError
from burn.tensor import DType

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001


def range_reader(
    path: Path,
    start: int,
    element: DType,
    big_endian: bool = False,
    error: type[RecordError] = PyTorchFileError,
):
    """`read(first, count)`: elements of `element` type stored from byte `start` of `path`.

    Reading with `readinto` into a new array copies once, straight from the page cache, and
    allocates only what the caller asked for (callers check counts against the file first).
    """
    dtype = element.numpy

    def read(first: int, count: int) -> np.ndarray:
        out = np.empty(count, dtype)
        raw = out.view(np.uint8)
        try:
            with open(path, "rb") as f:
                f.seek(start + first * dtype.itemsize)
                got = f.readinto(raw)
        except OSError as e:
            raise error(f"{path}: cannot be read ({e.strerror})") from None
        if got != raw.nbytes:
            raise error(f"{path}: the file changed while it was read")
        if big_endian and dtype.itemsize > 1:
            return out.view(dtype.newbyteorder(">")).astype(dtype)
        return out

    return read


class MappedStream:
    """A read-only file over a memory map whose reads never ask for more than the file holds.

    `io.BytesIO(data)` would copy the whole file, and a real file's `read(n)` allocates `n`
    bytes before reading; pickles and zip directories declare lengths, so both would let a
    damaged file decide how much memory a load takes.
    """

    def __init__(self, data):
        self._data = data
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        end = len(self._data) if n is None or n < 0 else min(self._pos + n, len(self._data))
        chunk = self._data[self._pos : end]
        self._pos = max(self._pos, end)
        return chunk

    def readinto(self, buffer) -> int:
        chunk = self.read(len(memoryview(buffer).cast("B")))
        memoryview(buffer).cast("B")[: len(chunk)] = chunk
        return len(chunk)

    def readline(self, limit: int = -1) -> bytes:
        end = self._data.find(b"\n", self._pos)
        end = len(self._data) if end < 0 else end + 1
        if limit is not None and limit >= 0:
            end = min(end, self._pos + limit)
        return self.read(end - self._pos)

    def peek(self, n: int = 1) -> bytes:
        return self._data[self._pos : self._pos + max(n, 1)]

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: len(self._data)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True


def read_file(path) -> object:
    """The object `torch.save` stored in `path`, with tensors as `TensorRef`s."""
    path = Path(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; the map outlives it
    except FileNotFoundError:
        raise RecordNotFoundError(f"{path}: no such file") from None
    except OSError as e:
        raise PyTorchFileError(f"{path}: cannot be read ({e.strerror})") from None
    with handle:
        size = path.stat().st_size
        if size == 0:
            raise PyTorchFileError(f"{path}: the file is empty")
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if data[:4] == b"PK\x03\x04":
        return _read_zip(data, path)
    if data[:2] == b"\x80\x02":
        return _read_legacy(data, path)
    raise PyTorchFileError(
        f"{path}: not a PyTorch file (neither the zip archive of torch.save nor its legacy "
        "pickle format)"
    )


def _read_zip(data: mmap.mmap, path: Path) -> object:
    try:
        archive = zipfile.ZipFile(MappedStream(data))
        infos = {info.filename: info for info in archive.infolist()}
    except Exception as e:  # BadZipFile, struct and header errors of a damaged archive
        raise PyTorchFileError(f"{path}: a damaged zip archive ({e})") from None
    pickles = [name for name in infos if name.endswith("data.pkl") and name.count("/") == 1]
    if len(pickles) != 1:
        raise PyTorchFileError(
            f"{path}: a zip archive without exactly one '<name>/data.pkl' (is it a PyTorch file?)"
        )
    prefix = pickles[0][: -len("data.pkl")]
    big_endian = False
    if prefix + "byteorder" in infos:
        order = _member(archive, infos[prefix + "byteorder"], path, limit=16)
        if order not in (b"little", b"big"):
            raise PyTorchFileError(f"{path}: unknown byte order {order[:16]!r}")
        big_endian = order == b"big"
    storages: dict[str, Storage] = {}

    def storage(key: str, kind: StorageType, numel: int) -> Storage:
        found = storages.get(key)
        if found is not None:
            if found.dtype != kind.dtype:
                raise PyTorchFileError(f"{path}: storage {key!r} is read with two element types")
            return found
        info = infos.get(f"{prefix}data/{key}")
        if info is None:
            raise PyTorchFileError(f"{path}: the archive has no storage '{prefix}data/{key}'")
        nbytes = numel * kind.dtype.size()
        if info.compress_type != zipfile.ZIP_STORED:
            raise PyTorchFileError(f"{path}: storage {key!r} is compressed (torch.save never is)")
        if info.file_size < nbytes:
            raise PyTorchFileError(
                f"{path}: storage {key!r} declares {numel} elements ({nbytes} bytes), the "
                f"archive holds {info.file_size} bytes"
            )
        start = _data_offset(data, info, path)
        if start + nbytes > len(data):
            raise PyTorchFileError(f"{path}: storage {key!r} runs past the end of the file")
        found = Storage(key, kind.dtype, numel, range_reader(path, start, kind.dtype, big_endian))
        storages[key] = found
        return found

    raw = _member(archive, infos[pickles[0]], path, limit=len(data))
    return restricted_load(raw, storage, f"{path}: {pickles[0]}")


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limit: int) -> bytes:
    if info.file_size > limit:
        raise PyTorchFileError(f"{path}: member {info.filename!r} declares {info.file_size} bytes")
    try:
        return archive.read(info)
    except Exception as e:  # zlib, CRC and header errors of a damaged archive
        raise PyTorchFileError(f"{path}: member {info.filename!r} is damaged ({e})") from None


def _data_offset(data: mmap.mmap, info: zipfile.ZipInfo, path: Path) -> int:
    """Where a stored member's bytes start: after its local header, name and extra field."""
    head = info.header_offset
    header = data[head : head + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise PyTorchFileError(f"{path}: damaged local header of {info.filename!r}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return head + 30 + name_len + extra_len


def _read_legacy(data: mmap.mmap, path: Path) -> object:
    stream = MappedStream(data)
    where = f"{path} (legacy format)"
    header = []
    for what in ("magic number", "protocol version", "system info"):
        try:
            header.append(_plain_pickle(stream, where))
        except UnsafePickleError:
            raise
        except Exception as e:
            raise PyTorchFileError(
                f"{where}: cannot read the {what} ({type(e).__name__})"
            ) from None
    magic, protocol, info = header
    if magic != LEGACY_MAGIC:
        raise PyTorchFileError(f"{where}: wrong magic number (not a PyTorch file)")
    if protocol != LEGACY_PROTOCOL:
        raise PyTorchFileError(f"{where}: unsupported protocol version {protocol!r}")
    big_endian = isinstance(info, dict) and info.get("little_endian") is False
    declared: dict[str, tuple[StorageType, int]] = {}
    storages: dict[str, Storage] = {}

    def storage(key: str, kind: StorageType, numel: int) -> Storage:
        found = storages.get(key)
        if found is None:
            declared[key] = (kind, numel)
            found = storages[key] = Storage(key, kind.dtype, numel, _unread(key, where))
        elif found.dtype != kind.dtype:
            raise PyTorchFileError(f"{where}: storage {key!r} is read with two element types")
        return found

    obj = restricted_load(stream, storage, where)
    keys = restricted_load(stream, lambda *a: _no_storage(where), where)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise PyTorchFileError(f"{where}: the list of storage keys is malformed")
    position = stream.tell()
    for key in keys:
        if key not in declared:
            raise PyTorchFileError(f"{where}: storage {key!r} is listed but never used")
        kind, numel = declared[key]
        if position + 8 > len(data):
            raise PyTorchFileError(f"{where}: the file ends before storage {key!r}")
        (count,) = struct.unpack("<q", data[position : position + 8])
        position += 8
        nbytes = count * kind.dtype.size()
        if count != numel or position + nbytes > len(data):
            raise PyTorchFileError(
                f"{where}: storage {key!r} declares {count} elements; the pickle said {numel} "
                f"and {len(data) - position} bytes are left"
            )
        storages[key].read = range_reader(path, position, kind.dtype, big_endian)
        position += nbytes
    return obj


def _plain_pickle(stream: MappedStream, where: str):
    """A header pickle: plain values only (no global is ever resolved)."""
    scan(stream, where)

    class _Plain(pickle.Unpickler):
        def find_class(self, module, name):
            raise UnsafePickleError(
                f"{where}: the header asks for the global `{module}.{name}`; headers hold plain "
                "values only, so it was refused and nothing from the file was run"
            )

        def persistent_load(self, pid):
            raise PyTorchFileError(f"{where}: a header refers to a storage")

    return _Plain(stream).load()


def _unread(key: str, where: str):
    def fail(first: int, count: int):
        raise PyTorchFileError(f"{where}: storage {key!r} is used but its bytes are missing")

    return fail


def _no_storage(where: str):
    raise PyTorchFileError(f"{where}: the list of storage keys refers to a storage")
