"""Where downloaded and converted datasets are kept."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Overrides the folder of dataset caches (MNIST's SQLite file, HuggingFace imports).
CACHE_ENV = "BURN_DATASET_DIR"


def user_cache_dir() -> Path:
    """The platform's per-user cache folder (XDG, Library/Caches, LOCALAPPDATA)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def dataset_cache_dir(override: str | os.PathLike | None = None) -> Path:
    """`override`, else `$BURN_DATASET_DIR`, else `<user cache dir>/burn-dataset` (as in Burn)."""
    if override is not None:
        return Path(override)
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return user_cache_dir() / "burn-dataset"
