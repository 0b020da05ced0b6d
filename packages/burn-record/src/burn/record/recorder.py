"""Recorders: a file format (or an in-memory one) plus a precision setting.

The names and the on-disk layouts are Burn's (v0.14 to v0.21): `NamedMpkFileRecorder` writes what
`burn::record::NamedMpkFileRecorder` writes, and so on. Files are written atomically, so an
interrupted save leaves the previous file as it was.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import msgpack
from burn.record import formats
from burn.record.atomic import atomic_write  # noqa: F401  (re-exported)
from burn.record.item import RecordError, RecordNotFoundError
from burn.record.limits import gunzip_bounded, mapped_record_file, read_record_file
from burn.record.settings import (
    FullPrecisionSettings,
    HalfPrecisionSettings,
    PrecisionSettings,
    settings_class,
)

FORMAT_VERSION = "0.16.0"
"""The Burn version written in a record's metadata: the layout the files follow."""

_GZIP_LEVEL = 6  # flate2's default, as Burn uses


def sniff(raw: bytes) -> str:
    """A guess at what layout `raw` holds, for error messages."""
    head = bytes(raw[:64])
    if head[:2] == b"\x1f\x8b":
        return "gzip-compressed"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "JSON"
    if head[:1] in (b"\x82", b"\x81", b"\x83") and b"metadata" in head[:16]:
        return "named MessagePack"
    if head[:1] and head[0] < 32 and (b"f32" in head or b"f64" in head or b"half::" in head):
        return "bincode"
    return "unrecognised"


_SUGGEST = {
    "gzip-compressed": (
        "a *Gz* recorder (NamedMpkGzFileRecorder, BinGzFileRecorder, JsonGzFileRecorder)"
    ),
    "JSON": "PrettyJsonFileRecorder or JsonGzFileRecorder",
    "named MessagePack": "NamedMpkFileRecorder / NamedMpkBytesRecorder",
    "bincode": "BinFileRecorder / BinBytesRecorder",
}


class Recorder:
    """Base of every recorder: a layout (`named_mpk`, `bin`, `json`), compression, settings.

    Args:
        settings: a `PrecisionSettings` class or instance (the recorder's default otherwise).
        burn_version: the Burn version written in the metadata; for bincode it also picks the
            numbering of dtypes, which changed in Burn 0.16 and 0.17.
    """

    layout = "named_mpk"
    compressed = False
    family = "NamedMpkFileRecorder"
    module_path = "burn_core::record::file"
    default_settings: type[PrecisionSettings] = FullPrecisionSettings

    def __init__(self, settings=None, *, burn_version: str = FORMAT_VERSION):
        self.settings = settings_class(settings if settings is not None else self.default_settings)
        formats.check_version(burn_version, type(self).__name__)
        self.burn_version = burn_version

    # ------------------------------------------------------------------ metadata
    def format_name(self) -> str:
        settings = f"burn_core::record::settings::{self.settings.name()}"
        return f"{self.module_path}::{self.family}<{settings}>"

    def metadata(self) -> dict:
        return {
            "float": self.settings.rust_float,
            "int": self.settings.rust_int,
            "format": self.format_name(),
            "version": self.burn_version,
            "settings": self.settings.name(),
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings.name()})"

    def __eq__(self, other) -> bool:
        return (
            type(self) is type(other)
            and self.settings is other.settings
            and self.burn_version == other.burn_version
        )

    def __hash__(self) -> int:
        return hash((type(self), self.settings, self.burn_version))

    # ------------------------------------------------------------------ encoding
    def encode(self, record) -> list:
        """The bytes (as chunks) of `record` in this recorder's layout and precision."""
        meta = self.metadata()
        if self.layout == "named_mpk":
            # `_b` is the PhantomData of Burn's BurnRecord: rmp_serde writes this unit struct as
            # an empty array, serde_json as null.
            tree = {"metadata": meta, "item": formats.to_named(record, self.settings), "_b": []}
            chunks = formats.encode_named_mpk(tree)
        elif self.layout == "json":
            item = formats.to_named(record, self.settings, json_bytes=True)
            tree = {"metadata": meta, "item": item, "_b": None}
            indent = 2 if self.pretty else None
            separators = None if self.pretty else (",", ":")
            chunks = [json.dumps(tree, indent=indent, separators=separators).encode("utf8")]
        else:
            variants = formats.variants_for(self.burn_version)
            chunks = formats.encode_bincode(meta, record, self.settings, variants)
        if self.compressed:
            compressor = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 31)
            chunks = [compressor.compress(c) for c in chunks] + [compressor.flush()]
        return chunks

    pretty = False

    def decode(self, raw: bytes, schema=None, where: str = "record"):
        """The record held by `raw`; `schema` is needed by bincode (it stores no names)."""
        if self.compressed:
            if raw[:2] != b"\x1f\x8b":
                raise RecordError(self._wrong_layout(raw, where, "gzip-compressed"))
            raw = gunzip_bounded(raw, where, self._implausible_head)
        if self.layout == "bin":
            return self._decode_bin(raw, schema, where)
        tree = self._decode_named(raw, where)
        if not (isinstance(tree, dict) and "metadata" in tree and "item" in tree):
            raise RecordError(self._wrong_layout(raw, where, self._layout_words()))
        meta = tree["metadata"]
        self._check_metadata(meta, where)
        return formats.from_named(tree["item"], f"{where}: item")

    def load_metadata(self, raw: bytes, where: str = "record") -> dict:
        """Only the metadata of an encoded record (to see who wrote it)."""
        if self.compressed:
            raw = gunzip_bounded(raw, where, self._implausible_head)
        if self.layout == "bin":
            return formats.decode_bincode_metadata(formats._Reader(raw, where))
        tree = self._decode_named(raw, where)
        if not isinstance(tree, dict) or "metadata" not in tree:
            raise RecordError(self._wrong_layout(raw, where, self._layout_words()))
        return tree["metadata"]

    def _implausible_head(self, head: bytes) -> str | None:
        """Why the first inflated bytes cannot start a record of this layout (None if they can).

        Checked before the rest is inflated, so that a compressed file of other content (a
        bomb of zeros, say) is refused at its first kilobytes.
        """
        if not head:
            return "the compressed data is empty"
        if self.layout == "named_mpk":
            ok = 0x80 <= head[0] <= 0x8F or head[0] in (0xDE, 0xDF)
        elif self.layout == "json":
            ok = head.lstrip()[:1] in (b"{", b"")
        else:  # bincode starts with the float setting's name, a short string
            ok = 0 < head[0] < 64
        if ok:
            return None
        return f"the compressed data does not start like a {self._layout_words()} record"

    def _layout_words(self) -> str:
        return {"named_mpk": "named MessagePack", "json": "JSON", "bin": "bincode"}[self.layout]

    def _wrong_layout(self, raw: bytes, where: str, wanted: str, detail: str = "") -> str:
        found = sniff(raw)
        msg = f"{where}: not a {wanted} record ({type(self).__name__} reads {wanted})"
        if found != "unrecognised" and found != wanted:
            msg += f"; the data looks {found}: use {_SUGGEST[found]}"
        elif found == "unrecognised":
            msg += "; the data is no record layout burn knows (random or corrupt bytes?)"
        if detail:
            msg += f" [{detail}]"
        return msg

    def _decode_named(self, raw: bytes, where: str):
        if self.layout == "json":
            try:
                return json.loads(raw)
            except RecursionError:
                raise RecordError(f"{where}: JSON nested too deeply to be a record") from None
            except ValueError as e:  # bad JSON, bad UTF-8, integers of thousands of digits
                raise RecordError(self._wrong_layout(raw, where, "JSON", str(e)[:200])) from None
        try:
            return msgpack.unpackb(raw, raw=False)
        except Exception as e:  # msgpack raises several unrelated types for bad input
            wanted = "named MessagePack"
            if sniff(raw) == wanted:
                raise RecordError(
                    f"{where}: truncated or corrupt MessagePack data ({type(e).__name__}: {e})"
                ) from None
            raise RecordError(
                self._wrong_layout(raw, where, wanted, f"{type(e).__name__}: {e}")
            ) from None

    def _check_metadata(self, meta, where: str) -> None:
        keys = ("float", "int", "format", "version", "settings")
        if not isinstance(meta, dict) or any(not isinstance(meta.get(k), str) for k in keys):
            raise RecordError(f"{where}: the record's metadata is missing or malformed: {meta!r}")
        if "burn" not in meta["format"]:
            raise RecordError(
                f"{where}: metadata names format {meta['format']!r}, not a Burn recorder"
            )
        formats.check_version(meta["version"], where)

    def _decode_bin(self, raw: bytes, schema, where: str):
        reader = formats._Reader(raw, where)
        try:
            meta = formats.decode_bincode_metadata(reader)
        except RecordError as e:
            raise RecordError(self._wrong_layout(raw, where, "bincode", str(e))) from None
        if "burn" not in meta["format"]:
            raise RecordError(
                self._wrong_layout(raw, where, "bincode", f"format {meta['format']!r}")
            )
        self._check_metadata(meta, where)
        if schema is None:
            raise RecordError(
                f"{where}: bincode records store no field names; load them through a module "
                "(module.load_file) or pass the module's schema (module.record_schema())"
            )
        try:
            return formats.decode_bincode_item(
                reader, schema, formats.variants_for(meta["version"])
            )
        except RecordError as e:
            ours = self.metadata()
            diffs = [
                f"{k}: file {meta[k]!r}, recorder {ours[k]!r}"
                for k in ("float", "int", "format", "version")
                if meta[k] != ours[k]
            ]
            if diffs:
                raise RecordError(f"{e}\nmetadata differs: " + "; ".join(diffs)) from None
            raise


class FileRecorder(Recorder):
    """A recorder that saves to and loads from files, with an extension of its own."""

    extension = "mpk"

    def file_path(self, path) -> Path:
        """`path` with this recorder's extension (added unless already there)."""
        path = Path(os.fspath(path))
        suffix = "." + self.extension
        return path if path.name.endswith(suffix) else path.with_name(path.name + suffix)

    def record(self, record, path) -> Path:
        """Save `record` to `path` (+ extension) atomically; returns the path written."""
        target = self.file_path(path)
        atomic_write(target, self.encode(record))
        return target

    def load(self, path, schema=None):
        """The record saved at `path` (+ extension)."""
        target = self.file_path(path)
        try:
            if self.layout == "named_mpk" and not self.compressed:
                with mapped_record_file(target) as mapped:  # decoding copies what it keeps
                    return self.decode(mapped, schema, str(target))
            raw = read_record_file(target)
        except RecordNotFoundError:
            hint = ""
            given = Path(os.fspath(path))
            if given != target and given.is_file():
                hint = f" ({given} exists: was it saved by another recorder?)"
            raise RecordNotFoundError(f"record file {target} not found{hint}") from None
        return self.decode(raw, schema, str(target))


class BytesRecorder(Recorder):
    """A recorder to and from `bytes` (to embed weights in a program or send them)."""

    module_path = "burn_core::record::memory"

    def record(self, record, _args=None) -> bytes:
        return b"".join(self.encode(record))

    def load(self, data: bytes, schema=None):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise RecordError(
                f"{type(self).__name__}.load expects bytes, got {type(data).__name__}"
            )
        return self.decode(bytes(data), schema, f"{type(self).__name__} bytes")


# ================================================================================ recorders
class NamedMpkFileRecorder(FileRecorder):
    """Named MessagePack (`.mpk`): field names kept, the default and most portable format."""


class NamedMpkGzFileRecorder(FileRecorder):
    """Named MessagePack, gzip-compressed (`.mpk.gz`)."""

    family = "NamedMpkGzFileRecorder"
    extension = "mpk.gz"
    compressed = True


class BinFileRecorder(FileRecorder):
    """bincode (`.bin`): compact, no field names, read back through the module's structure."""

    family = "BinFileRecorder"
    layout = "bin"
    extension = "bin"


class BinGzFileRecorder(BinFileRecorder):
    """bincode, gzip-compressed (`.bin.gz`)."""

    family = "BinGzFileRecorder"
    extension = "bin.gz"
    compressed = True


class PrettyJsonFileRecorder(FileRecorder):
    """Indented JSON (`.json`): for reading a record by eye; large."""

    family = "PrettyJsonFileRecorder"
    layout = "json"
    extension = "json"
    pretty = True


class JsonGzFileRecorder(FileRecorder):
    """Compact JSON, gzip-compressed (`.json.gz`)."""

    family = "JsonGzFileRecorder"
    layout = "json"
    extension = "json.gz"
    compressed = True


class BinBytesRecorder(BytesRecorder):
    """bincode in memory: the smallest bytes, to embed weights in a program."""

    family = "BinBytesRecorder"
    layout = "bin"


class NamedMpkBytesRecorder(BytesRecorder):
    """Named MessagePack in memory."""

    family = "NamedMpkBytesRecorder"


# Burn's aliases. Each is the recorder it names, with its precision as the default.
class DefaultRecorder(NamedMpkFileRecorder):
    """`NamedMpkFileRecorder` with full precision."""

    family = "NamedMpkFileRecorder"


class CompactRecorder(NamedMpkFileRecorder):
    """`NamedMpkFileRecorder` with half precision: half the size."""

    family = "NamedMpkFileRecorder"
    default_settings = HalfPrecisionSettings


class SensitiveCompactRecorder(BinGzFileRecorder):
    """`BinGzFileRecorder` with half precision: the smallest files."""

    family = "BinGzFileRecorder"
    default_settings = HalfPrecisionSettings


DefaultFileRecorder = NamedMpkFileRecorder
