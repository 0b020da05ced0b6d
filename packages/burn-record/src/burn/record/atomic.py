"""Atomic file writes: a temporary file beside the target, synced, then renamed over it.

A crash at any point leaves either the old file or the new one, never a torn one. What a crash
cannot do is remove its own temporary file, so each temporary file carries the id of the process
writing it (`.<name>.<pid>.<random>.tmp`) and the next save of the same file removes those whose
process is gone. The written file gets the permissions an ordinary `open(path, "w")` would give
(the existing file's mode, else the umask's default) and a symlink is followed, not replaced.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from burn.record.item import RecordError

#: A temporary file of a writer that is gone for good is removed once it is this old, even if
#: its process id has been reused by another process meanwhile.
STALE_AFTER_S = 24 * 3600.0

_TEMP_NAME = re.compile(r"\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp$")


def atomic_write(path: str | os.PathLike, chunks: Iterable[bytes]) -> Path:
    """Write `chunks` to `path` atomically; returns the path of the file written.

    Raises `RecordError` naming the path when the folder cannot be created or the data cannot
    be written (disk full, permissions); the temporary file is removed on every failure.
    """
    given = Path(os.fspath(path))
    target = _follow_links(given)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecordError(f"cannot create the folder {parent} to write {given}: {e}") from None
    remove_stale_temp_files(target)
    mode = _mode_for(target)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"
        )
    except OSError as e:
        raise RecordError(f"cannot write {given}: {e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise RecordError(f"cannot write {given}: {e}") from None
        raise
    _sync_folder(parent)
    return target


def temp_files_of(target: Path) -> list[Path]:
    """The temporary files that saves of `target` (by any process) have left beside it."""
    prefix = f".{target.name}."
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.name.startswith(prefix) and _TEMP_NAME.fullmatch(e.name[len(prefix) - 1 :])
    ]


def remove_stale_temp_files(target: Path) -> int:
    """Remove temporary files of `target` whose writing process is gone; returns how many."""
    removed = 0
    now = time.time()
    for tmp in temp_files_of(target):
        match = _TEMP_NAME.search(tmp.name)
        pid = int(match.group("pid")) if match else -1
        try:
            age = now - tmp.stat().st_mtime
        except OSError:
            continue
        if pid == os.getpid() or (_alive(pid) and age < STALE_AFTER_S):
            continue
        try:
            tmp.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name != "posix":
        return True  # no cheap check: only the age rule applies
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _follow_links(path: Path) -> Path:
    """The file a symlink (chain) points to, so that saving updates it and keeps the link."""
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def _mode_for(target: Path) -> int | None:
    """The mode an ordinary write would leave: the existing file's, else 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()
    except OSError:
        return None


def _umask() -> int:
    try:  # Linux reports it without changing it (changing it is not thread-safe)
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (not possible on every platform)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
