"""Keep freed array memory in the process, so a training loop does not page-fault every step.

A training step allocates and frees the same large arrays every step (activations, their
gradients, dropout masks). glibc's malloc hands memory at the top of its heap back to the
operating system as soon as a few megabytes are free, so the next step's arrays come back as
fresh pages and every first write to each page is a page fault: on the Transformer encoder of
`benches/bench_nn.py` that was about a third of the step.

`keep_freed_memory()` (run when `burn.ndarray` is imported) sets glibc's trim threshold to
256 MB, so up to that much freed memory stays mapped for reuse, and pins the mmap threshold at
32 MB (the most glibc's own adaptation would reach; setting either turns that adaptation off).
It changes nothing when the C library is not glibc, when the process already tunes malloc
through `MALLOC_*` environment variables, or when `BURN_NDARRAY_HEAP=system` is set.
"""

from __future__ import annotations

import ctypes
import os
import platform

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_TRIM_THRESHOLD = 256 << 20
_MMAP_THRESHOLD = 32 << 20
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")


def keep_freed_memory() -> bool:
    """Tune glibc's malloc as described above; True when the settings were applied."""
    if os.environ.get("BURN_NDARRAY_HEAP") == "system":
        return False
    if any(name in os.environ for name in _USER_SETTINGS):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )
