"""Encoders and decoders of the three layouts Burn's recorders write.

Every layout stores `{metadata: {float, int, format, version, settings}, item}`:

- named MessagePack: maps with field names, tensors as `{bytes: bin, shape: [...], dtype: "F32"}`,
  parameters as `{id, param}`, options and constants as nil or the bare value;
- JSON: the same tree, with the tensor bytes as an array of numbers (serde's form of bytes);
- bincode (`bincode::config::standard()`): no names, little-endian variable-length integers,
  fields in declaration order. It is not self-describing, so decoding follows a schema.

Only plain data is decoded: nothing in a file can name a Python object to build.
"""

from __future__ import annotations

import struct

import msgpack
import numpy as np
from burn.record.item import ParamRecord, RecordError, Some
from burn.record.limits import MAX_DEPTH, MAX_RANK
from burn.tensor import DType, TensorData

# Burn's DType variant names (serde's unit-variant form) for the dtypes burn models.
_BURN_NAMES = {
    DType.F64: "F64",
    DType.F32: "F32",
    DType.F16: "F16",
    DType.BF16: "BF16",
    DType.I64: "I64",
    DType.I32: "I32",
    DType.I16: "I16",
    DType.I8: "I8",
    DType.U8: "U8",
    DType.BOOL: "Bool",
}
_FROM_BURN_NAMES = {name: dtype for dtype, name in _BURN_NAMES.items()}

# Bincode stores an enum variant by position, and Burn inserted variants over time:
# v0.16 added U16 before U8, v0.17 added Flex32 after F32.
_VARIANTS_V14 = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U8", "Bool"]
_VARIANTS_V16 = [
    "F64",
    "F32",
    "F16",
    "BF16",
    "I64",
    "I32",
    "I16",
    "I8",
    "U64",
    "U32",
    "U16",
    "U8",
    "Bool",
]
_VARIANTS_V17 = [
    "F64",
    "F32",
    "Flex32",
    "F16",
    "BF16",
    "I64",
    "I32",
    "I16",
    "I8",
    "U64",
    "U32",
    "U16",
    "U8",
    "Bool",
]

SUPPORTED_VERSIONS = ((0, 14), (0, 21))
"""The oldest and newest Burn minor versions whose record layout this package reads."""


def parse_version(text: str) -> tuple[int, int] | None:
    parts = str(text).split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


def check_version(version: str, where: str) -> None:
    """Refuse records of Burn versions whose layout differs from the one implemented here."""
    parsed = parse_version(version)
    low, high = SUPPORTED_VERSIONS
    if parsed is None or not low <= parsed <= high:
        raise RecordError(
            f"{where}: record version {version!r} is not supported (supported: Burn "
            f"{low[0]}.{low[1]} to {high[0]}.{high[1]}; records of Burn before 0.14 used another "
            "tensor layout: load and save them once with Burn 0.14's `record-backward-compat`)"
        )


def variants_for(version: str) -> list[str]:
    parsed = parse_version(version) or (0, 16)
    if parsed < (0, 16):
        return _VARIANTS_V14
    if parsed < (0, 17):
        return _VARIANTS_V16
    return _VARIANTS_V17


def dtype_from_burn(name, where: str) -> DType:
    if isinstance(name, dict) and len(name) == 1:  # newer Burn: Bool(store), a newtype variant
        name = next(iter(name))
    dtype = _FROM_BURN_NAMES.get(name) if isinstance(name, str) else None
    if dtype is None:
        raise RecordError(
            f"{where}: tensor dtype {_clip(name, 60)} is not supported by burn for Python"
        )
    return dtype


def tensor_from_parts(raw, shape, dtype: DType, where: str) -> TensorData:
    """A TensorData from little-endian bytes, checked against the shape (never trusted)."""
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise RecordError(f"{where}: malformed tensor shape {_clip(shape)}")
    if len(shape) > MAX_RANK:
        raise RecordError(
            f"{where}: tensor of rank {len(shape)}, more than the {MAX_RANK} burn supports"
        )
    count = 1
    for d in shape:
        count *= d
    expected = count * dtype.size()
    if len(raw) != expected:
        raise RecordError(
            f"{where}: tensor of shape {_clip(list(shape))} and dtype {dtype.value} needs "
            f"{expected} bytes, the record holds {len(raw)} (truncated or corrupt)"
        )
    if any(d >= 1 << 62 for d in shape):  # an empty tensor may still name absurd dims
        raise RecordError(f"{where}: tensor dimension too large in shape {_clip(list(shape))}")
    array = np.frombuffer(raw, dtype=dtype.numpy.newbyteorder("<")).reshape(tuple(shape))
    if array.dtype != dtype.numpy:
        array = array.astype(dtype.numpy)
    return TensorData(array)


def _clip(value, limit: int = 120) -> str:
    """`repr(value)`, shortened: a hostile file must not make an error message huge."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ============================================================================ named trees
def to_named(node, settings, *, json_bytes: bool = False):
    """The serde-shaped tree of a record node (what rmp_serde and serde_json write)."""
    if isinstance(node, ParamRecord):
        return {"id": node.id, "param": to_named(node.data, settings, json_bytes=json_bytes)}
    if isinstance(node, TensorData):
        data = settings.apply(node)
        return {
            "bytes": list(data.bytes) if json_bytes else tensor_view(data),
            "shape": data.shape,
            "dtype": _BURN_NAMES[data.dtype],
        }
    if isinstance(node, Some):
        return to_named(node.value, settings, json_bytes=json_bytes)
    if isinstance(node, dict):
        return {str(k): to_named(v, settings, json_bytes=json_bytes) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [to_named(v, settings, json_bytes=json_bytes) for v in node]
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise RecordError(f"cannot record a value of type {type(node).__name__}: {node!r}")


def tensor_view(data: TensorData) -> memoryview:
    """The little-endian element bytes of `data` as a view: no copy when already little-endian."""
    array = data.array
    array = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False))
    return memoryview(array.reshape(-1).view(np.uint8))


# Tensor payloads at least this large are written from their own memory, not copied first.
_STREAM_FROM = 64 << 10  # never below 1 << 16: the header written is bin 32


def encode_named_mpk(tree) -> list:
    """The MessagePack bytes of a named tree, as chunks that share the tensors' memory.

    The bytes are what `msgpack.packb(tree, use_bin_type=True)` writes (Burn's rmp_serde reads
    them); a large tensor's payload is its own `memoryview`, so a save writes the weights
    straight from the arrays instead of joining a second copy of them in memory.
    """
    packer = msgpack.Packer(use_bin_type=True, autoreset=False)
    chunks: list = []

    def walk(node) -> None:
        if isinstance(node, dict):
            packer.pack_map_header(len(node))
            for key, value in node.items():
                packer.pack(key)
                walk(value)
        elif isinstance(node, (list, tuple)):
            packer.pack_array_header(len(node))
            for value in node:
                walk(value)
        elif isinstance(node, memoryview) and node.nbytes >= _STREAM_FROM:
            if node.nbytes >= 1 << 32:
                raise RecordError(
                    f"a tensor of {node.nbytes} bytes is over MessagePack's 4 GiB limit for one "
                    "value: save it with BinFileRecorder or split it"
                )
            chunks.append(packer.bytes() + b"\xc6" + node.nbytes.to_bytes(4, "big"))  # bin 32
            packer.reset()
            chunks.append(node)
        else:
            packer.pack(node)

    walk(tree)
    chunks.append(packer.bytes())
    return chunks


def _is_tensor(node) -> bool:
    return isinstance(node, dict) and set(node) == {"bytes", "shape", "dtype"}


def from_named(node, where: str = "item", depth: int = 0):
    """A record node from a decoded named tree (MessagePack or JSON).

    The tree is untrusted: map keys must be text and nesting is bounded by `MAX_DEPTH`.
    """
    if depth > MAX_DEPTH:
        raise RecordError(f"{where}: nested more than {MAX_DEPTH} levels deep: not a record")
    if isinstance(node, dict):
        for key in node:
            if not isinstance(key, str):
                raise RecordError(f"{where}: map key {_clip(key, 60)} is not text: corrupt record")
        if _is_tensor(node):
            raw = node["bytes"]
            if isinstance(raw, list):  # JSON: bytes as numbers
                try:
                    raw = bytes(raw)
                except (TypeError, ValueError):
                    raise RecordError(f"{where}.bytes: not a list of bytes") from None
            if not isinstance(raw, (bytes, bytearray)):
                raise RecordError(f"{where}.bytes: expected bytes, got {type(raw).__name__}")
            dtype = dtype_from_burn(node["dtype"], f"{where}.dtype")
            return tensor_from_parts(raw, node["shape"], dtype, where)
        if set(node) == {"id", "param"} and isinstance(node["id"], str):
            data = from_named(node["param"], f"{where}.param", depth + 1)
            if isinstance(data, TensorData):
                return ParamRecord(node["id"], data)
            if isinstance(node["param"], dict) and "value" in node["param"]:
                raise RecordError(
                    f"{where}: tensor stored in the layout of Burn before 0.14 "
                    "({value, shape}); supported: Burn 0.14 to 0.21"
                )
        return {k: from_named(v, f"{where}.{k}", depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [from_named(v, f"{where}.{i}", depth + 1) for i, v in enumerate(node)]
    if node is None or isinstance(node, (bool, int, float, str, bytes)):
        return node
    raise RecordError(f"{where}: a value of type {type(node).__name__} is not record data")


# ============================================================================ bincode
def _varint(value: int) -> bytes:
    if value < 0:
        raise RecordError(f"bincode: negative length or unsigned value {value}")
    if value < 251:
        return bytes((value,))
    if value < 1 << 16:
        return b"\xfb" + struct.pack("<H", value)
    if value < 1 << 32:
        return b"\xfc" + struct.pack("<I", value)
    return b"\xfd" + struct.pack("<Q", value)


def _zigzag(value: int) -> int:
    return value * 2 if value >= 0 else -value * 2 - 1


def _bin_str(text: str) -> bytes:
    raw = text.encode("utf8")
    return _varint(len(raw)) + raw


def encode_bincode(metadata: dict, item, settings, variants: list[str]) -> list:
    """The bincode chunks of a record: metadata strings, then the item (large tensors unjoined)."""
    out: list = [_bin_str(metadata[k]) for k in ("float", "int", "format", "version", "settings")]

    def write(node) -> None:
        if isinstance(node, ParamRecord):
            out.append(_bin_str(node.id))
            write(node.data)
        elif isinstance(node, TensorData):
            data = settings.apply(node)
            raw = tensor_view(data)  # written from the array, not copied
            out.append(_varint(raw.nbytes))
            out.append(raw)
            out.append(_varint(len(data.shape)) + b"".join(_varint(d) for d in data.shape))
            out.append(_varint(variants.index(_BURN_NAMES[data.dtype])))
        elif isinstance(node, Some):
            out.append(b"\x01")
            write(node.value)
        elif node is None:
            out.append(b"\x00")
        elif isinstance(node, dict):
            for value in node.values():
                write(value)
        elif isinstance(node, list):
            out.append(_varint(len(node)))
            for value in node:
                write(value)
        elif isinstance(node, tuple):
            for value in node:
                write(value)
        elif isinstance(node, bool):
            out.append(b"\x01" if node else b"\x00")
        elif isinstance(node, int):
            out.append(_varint(_zigzag(node)))
        elif isinstance(node, float):
            out.append(struct.pack("<d", node))
        elif isinstance(node, str):
            out.append(_bin_str(node))
        else:
            raise RecordError(f"cannot record a value of type {type(node).__name__}: {node!r}")

    write(item)
    return out


class _Reader:
    __slots__ = ("buf", "pos", "where")

    def __init__(self, buf: bytes, where: str):
        self.buf = memoryview(buf)
        self.pos = 0
        self.where = where

    def take(self, n: int, path: str) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise RecordError(
                f"{self.where}: the data ends at byte {len(self.buf)} while reading {path} "
                f"(needs {n} bytes at {self.pos}): truncated file, or the record of another module"
            )
        chunk = self.buf[self.pos : end]
        self.pos = end
        return chunk

    def byte(self, path: str) -> int:
        return self.take(1, path)[0]

    def varint(self, path: str) -> int:
        first = self.byte(path)
        if first < 251:
            return first
        size = {251: 2, 252: 4, 253: 8}.get(first)
        if size is None:
            raise RecordError(f"{self.where}: invalid integer tag {first} at {path}: corrupt data")
        return int.from_bytes(self.take(size, path), "little")

    def string(self, path: str) -> str:
        n = self.varint(path)
        try:
            return bytes(self.take(n, path)).decode("utf8")
        except UnicodeDecodeError:
            raise RecordError(f"{self.where}: invalid text at {path}: corrupt data") from None


def decode_bincode_metadata(reader: _Reader) -> dict:
    keys = ("float", "int", "format", "version", "settings")
    meta = {}
    for key in keys:
        n = reader.varint(f"metadata.{key}")
        if n > 4096:
            raise RecordError(
                f"{reader.where}: metadata.{key} would be {n} bytes long: not a bincode record"
            )
        try:
            meta[key] = bytes(reader.take(n, f"metadata.{key}")).decode("utf8")
        except UnicodeDecodeError:
            raise RecordError(
                f"{reader.where}: metadata.{key} is not text: not a bincode record"
            ) from None
    return meta


def decode_bincode_item(reader: _Reader, schema, variants: list[str]):
    """Decode the item following `schema` (a record tree whose params may lack data)."""

    def read(node, path: str):
        if isinstance(node, ParamRecord):
            pid = reader.string(f"{path}.id")
            return ParamRecord(pid, read_tensor(path))
        if isinstance(node, TensorData):
            return read_tensor(path)
        if isinstance(node, Some):
            return Some(read(node.value, path)) if read_option(path) else None
        if node is None:
            if read_option(path):
                raise RecordError(
                    f"{reader.where}: {path} holds a value where the module has none "
                    "(the record belongs to another module)"
                )
            return None
        if isinstance(node, dict):
            return {k: read(v, f"{path}.{k}") for k, v in node.items()}
        if isinstance(node, list):
            n = reader.varint(path)
            if not node and n:
                raise RecordError(f"{reader.where}: {path} holds {n} items, the module has none")
            if n > len(reader.buf):
                raise RecordError(f"{reader.where}: {path} claims {n} items: corrupt data")
            return [read(node[min(i, len(node) - 1)], f"{path}.{i}") for i in range(n)]
        if isinstance(node, tuple):
            return tuple(read(v, f"{path}.{i}") for i, v in enumerate(node))
        if isinstance(node, bool):
            return bool(reader.byte(path))
        if isinstance(node, int):
            z = reader.varint(path)
            return z >> 1 if z % 2 == 0 else -((z + 1) >> 1)
        if isinstance(node, float):
            return struct.unpack("<d", reader.take(8, path))[0]
        if isinstance(node, str):
            return reader.string(path)
        raise RecordError(f"schema node of type {type(node).__name__} at {path}")

    def read_option(path: str) -> bool:
        tag = reader.byte(path)
        if tag > 1:
            raise RecordError(f"{reader.where}: invalid option tag {tag} at {path}: corrupt data")
        return tag == 1

    def read_tensor(path: str) -> TensorData:
        n = reader.varint(f"{path}.bytes")
        raw = reader.take(n, f"{path}.bytes")
        rank = reader.varint(f"{path}.shape")
        if rank > MAX_RANK:
            raise RecordError(f"{reader.where}: {path} has rank {rank}: corrupt data")
        shape = [reader.varint(f"{path}.shape") for _ in range(rank)]
        index = reader.varint(f"{path}.dtype")
        if index >= len(variants):
            raise RecordError(f"{reader.where}: {path} has dtype tag {index}: corrupt data")
        dtype = dtype_from_burn(variants[index], f"{reader.where}: {path}")
        return tensor_from_parts(raw, shape, dtype, f"{reader.where}: {path}")

    item = read(schema, "item")
    if reader.pos != len(reader.buf):
        raise RecordError(
            f"{reader.where}: {len(reader.buf) - reader.pos} bytes left after the item: the record "
            "belongs to a module of another structure"
        )
    return item
