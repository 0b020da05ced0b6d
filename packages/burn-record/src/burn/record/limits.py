"""Bounds on what a record file may make the loader allocate.

A record file is untrusted input: its declared sizes are checked against the bytes that are
really there, and a compressed file is inflated in a stream that stops as soon as it passes
what the file declares or the absolute limit, so a small "decompression bomb" costs neither the
memory nor the time it asks for.

The absolute limit is `MAX_RECORD_BYTES` (4 GiB), or the environment variable
`BURN_RECORD_MAX_BYTES` (a number of bytes) for larger models.
"""

from __future__ import annotations

import mmap
import os
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from burn.record.item import RecordError, RecordNotFoundError

MAX_RECORD_BYTES = 4 << 30
"""The largest record (uncompressed) a loader accepts unless `BURN_RECORD_MAX_BYTES` says more."""

MAX_DEPTH = 100
"""The deepest nesting of maps and lists accepted in a named record (real models use < 20)."""

MAX_RANK = 32
"""The largest tensor rank accepted in a record (numpy's portable limit)."""

LIMIT_ENV = "BURN_RECORD_MAX_BYTES"

_DEFLATE_MAX_RATIO = 1032  # deflate cannot expand a byte into more than about 1032 bytes
_IN_CHUNK = 1 << 20
_OUT_CHUNK = 4 << 20
_HEAD = 64 << 10


def max_record_bytes() -> int:
    """The absolute limit in force: `$BURN_RECORD_MAX_BYTES` when set, else `MAX_RECORD_BYTES`."""
    text = os.environ.get(LIMIT_ENV, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            raise RecordError(f"{LIMIT_ENV}={text!r} is not a number of bytes") from None
        if value <= 0:
            raise RecordError(f"{LIMIT_ENV}={text!r} must be a positive number of bytes")
        return value
    return MAX_RECORD_BYTES


def read_record_file(path: Path) -> bytes:
    """The bytes of a record file, refused before reading when it is over the limit."""
    try:
        size = path.stat().st_size
        limit = max_record_bytes()
        if size > limit:
            raise RecordError(
                f"{path}: the file is {size} bytes, over the limit of {limit} bytes "
                f"(set {LIMIT_ENV} to load larger records)"
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise RecordNotFoundError(f"record file {path} not found") from None
    except IsADirectoryError:
        raise RecordError(f"{path} is a folder, not a record file") from None
    except OSError as e:
        raise RecordError(f"cannot read record file {path}: {e}") from None


@contextmanager
def mapped_record_file(path: Path) -> Iterator[bytes | mmap.mmap]:
    """The bytes of a record file mapped read-only (no copy), under the checks of a read.

    For decoders that copy what they keep (MessagePack's `bin` values become `bytes`): the map
    is closed on leaving the block, so nothing decoded may still point into it.
    """
    if not path.is_file() or path.stat().st_size == 0:
        yield read_record_file(path)  # its errors: not found, a folder, the limit
        return
    try:
        size = path.stat().st_size
        limit = max_record_bytes()
        if size > limit:
            raise RecordError(
                f"{path}: the file is {size} bytes, over the limit of {limit} bytes "
                f"(set {LIMIT_ENV} to load larger records)"
            )
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise RecordNotFoundError(f"record file {path} not found") from None
    except (OSError, ValueError) as e:  # ValueError: the file shrank to nothing meanwhile
        raise RecordError(f"cannot read record file {path}: {e}") from None
    try:
        yield mapped
    finally:
        mapped.close()


def gunzip_bounded(
    raw: bytes | bytearray | memoryview,
    where: str,
    check_head: Callable[[bytes], str | None] | None = None,
) -> bytearray:
    """The content of one gzip member, inflated in a stream under two bounds.

    A file under 4 GiB / 1032 bytes cannot hold more than 4 GiB, so the size its trailer
    declares (modulo 2**32) is exact: the stream may not pass it. Every file is also held to
    `max_record_bytes()`. `check_head(first_bytes)` returns a reason to stop early when the
    start of the content is not the layout expected (a bomb of zeros is no record).
    """
    raw = memoryview(raw)
    if len(raw) < 18 or raw[0] != 0x1F or raw[1] != 0x8B:
        raise RecordError(f"{where}: not gzip data (too short or no gzip header)")
    limit = max_record_bytes()
    bound = limit
    if len(raw) * _DEFLATE_MAX_RATIO < 1 << 32:
        declared = int.from_bytes(raw[-4:], "little")
        if declared > limit:
            raise RecordError(
                f"{where}: the gzip data declares {declared} bytes, over the limit of {limit} "
                f"bytes (set {LIMIT_ENV} to load larger records)"
            )
        bound = declared
    inflater = zlib.decompressobj(31)
    out = bytearray()
    pos = 0
    pending: bytes | memoryview = b""
    head_checked = check_head is None
    try:
        while not inflater.eof:
            if not pending:
                if pos >= len(raw):
                    break
                pending = raw[pos : pos + _IN_CHUNK]
                pos += len(pending)
            out += inflater.decompress(pending, _OUT_CHUNK)
            pending = inflater.unconsumed_tail
            if len(out) > bound:
                why = (
                    "more than its gzip trailer declares"
                    if bound < limit
                    else f"over the limit of {limit} bytes (set {LIMIT_ENV} for larger records)"
                )
                raise RecordError(f"{where}: the gzip data inflates to {why}: refused")
            if not head_checked and (len(out) >= _HEAD or inflater.eof):
                head_checked = True
                reason = check_head(bytes(out[:_HEAD]))
                if reason is not None:
                    raise RecordError(f"{where}: {reason}")
    except zlib.error as e:
        raise RecordError(f"{where}: corrupt gzip data ({e})") from None
    if not inflater.eof:
        raise RecordError(f"{where}: truncated gzip data (the stream ends early)")
    if inflater.unused_data or pending or pos < len(raw):
        raise RecordError(f"{where}: unexpected bytes after the gzip data: corrupt file")
    return out
