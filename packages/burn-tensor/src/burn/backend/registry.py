"""The backend registry: backends and decorators found through the `burn.backends` entry points.

Names are listed without importing anything; an entry is loaded on first use and cached. A name
that no installed distribution provides raises `BackendNotFoundError` naming what to install.

The entry points are scanned once per process (a scan reads the metadata of every installed
distribution, milliseconds that creating a tensor without a device would otherwise pay on each
call). A program that installs or removes a backend while it runs calls `refresh()` to scan again.
"""

from __future__ import annotations

import os
import threading
import warnings
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from _burn_distributions import install_hint
from burn.tensor.errors import BackendNotFoundError

if TYPE_CHECKING:
    from burn.backend.base import Backend

GROUP = "burn.backends"

# Where the backends this project knows about come from, for the error message.
KNOWN_DISTRIBUTIONS = {
    "NdArray": "burn-ndarray",
    "Wgpu": "burn-wgpu",
    "Autodiff": "burn-autodiff",
}

_lock = threading.Lock()
_loaded: dict[str, object] = {}
_registered: dict[str, object] = {}
_discovered: dict[str, EntryPoint] | None = None
# The entry point value ("module:attr") each loaded object came from, so `refresh` can tell
# whether a loaded backend is still the one installed.
_loaded_from: dict[str, str] = {}


def _scan() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def _entry_points() -> dict[str, EntryPoint]:
    """The `burn.backends` entry points by name, scanned on first use (see `refresh`)."""
    global _discovered
    found = _discovered
    if found is None:
        # Two threads may both scan on first use; they find the same thing, so no lock is held
        # (`get` calls this with `_lock` taken).
        found = _discovered = _scan()
    return found


def refresh() -> list[str]:
    """Scan the installed distributions for backends again, and return `available()`.

    Discovery is cached for the life of the process; call this after installing or removing a
    backend package at run time (in a notebook, say). A backend already loaded keeps its
    object (tensors made on it stay valid) unless its entry point changed or disappeared.
    """
    global _discovered
    found = _scan()
    with _lock:
        _discovered = found
        for name in list(_loaded):
            previous = _loaded_from.get(name)
            if name not in found or previous != found[name].value:
                _loaded.pop(name, None)
                _loaded_from.pop(name, None)
    return available()


def available() -> list[str]:
    """Names of every installed backend and decorator (nothing is imported)."""
    return sorted(set(_entry_points()) | set(_registered))


def _canonical(name: str) -> str:
    names = available()
    if name in names:
        return name
    for candidate in names:
        if candidate.lower() == name.lower():
            return candidate
    for candidate in KNOWN_DISTRIBUTIONS:
        if candidate.lower() == name.lower():
            return candidate
    return name


def get(name: str) -> Any:
    """The backend (or decorator) registered under `name`, case-insensitively.

    Typed `Any`: an entry is either a `Backend` instance or a decorator (a class that wraps one),
    and only the caller knows which name it asked for.
    """
    name = _canonical(name)
    with _lock:
        if name in _registered:
            return _registered[name]
        if name in _loaded:
            return _loaded[name]
        ep = _entry_points().get(name)
        if ep is None:
            dist = KNOWN_DISTRIBUTIONS.get(name)
            hint = install_hint(dist) if dist else "install the package that provides it"
            raise BackendNotFoundError(
                f"backend {name!r} is not installed ({hint}); installed: {available() or 'none'}"
            )
        obj = ep.load()
        _loaded[name] = obj
        _loaded_from[name] = ep.value
        return obj


def register_backend(name: str, backend: object) -> None:
    """Register a backend by name without an entry point (for tests and notebooks)."""
    with _lock:
        _registered[name] = backend


def unregister_backend(name: str) -> None:
    with _lock:
        _registered.pop(name, None)


def backends(strict: bool = True) -> dict[str, Backend]:
    """Every installed backend (decorators excluded), loaded, by name.

    With `strict=False` a backend whose package fails to import is left out with a warning
    instead of raising, so one broken install does not stop programs that never use it.
    """
    from burn.backend.base import Backend

    found: dict[str, Backend] = {}
    for name in available():
        try:
            obj = get(name)
        except Exception as error:
            if strict:
                raise
            warnings.warn(f"backend {name!r} could not be loaded: {error}", stacklevel=2)
            continue
        if isinstance(obj, Backend):
            found[name] = obj
    return found


def default() -> Backend:
    """The backend to use when none is named: `BURN_BACKEND`, else the best one present."""
    wanted = os.environ.get("BURN_BACKEND")
    if wanted:
        named: Backend = get(wanted)
        return named
    candidates = [b for b in backends(strict=False).values() if b.priority() >= 0]
    if not candidates:
        raise BackendNotFoundError(
            f"no default backend is installed ({install_hint('burn-ndarray')}), "
            "or set BURN_BACKEND to an installed one"
        )
    return max(candidates, key=lambda b: b.priority())
