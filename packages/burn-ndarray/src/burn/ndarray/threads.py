"""How many threads numpy's BLAS (OpenBLAS) uses under the NdArray backend.

OpenBLAS starts one thread per core and its threads busy-wait for each other between the pieces
of a matmul. When the machine has more runnable threads than cores (a competing job, DataLoader
process workers, other processes of a data-parallel run), a thread that is not scheduled holds
up all the others. On a shared 2-core machine the guide's training step with two BLAS threads
took four to five times as long as with one, with or without an extra busy process competing
(`benches/RESULTS.md`, "The guide under a competing CPU load"). So, unless the user has
chosen, importing `burn.ndarray` sets BLAS to half the usable cores, at least one: one on a
2-core machine, the rest left for the caller's other work (data loading, other processes).

A choice of the user's wins: with `OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS` or
`MKL_NUM_THREADS` set, nothing is changed; `set_blas_threads(n)` changes it at any time.
"""

from __future__ import annotations

import os

from burn.tensor.errors import UsageError
from threadpoolctl import threadpool_info, threadpool_limits

#: Environment variables through which a user chooses BLAS's thread count themselves.
USER_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_blas_threads() -> int:
    """Half the usable cores, at least one."""
    return max(1, usable_cores() // 2)


def user_chose_threads() -> bool:
    return any(os.environ.get(name, "").strip() for name in USER_THREAD_VARIABLES)


def set_blas_threads(n: int) -> None:
    """Use `n` threads in numpy's BLAS for the rest of the process (all BLAS libraries loaded)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageError(f"set_blas_threads: a thread count >= 1, got {n!r}")
    threadpool_limits(limits=n, user_api="blas")


def blas_threads() -> int | None:
    """The thread count of the first BLAS library numpy loaded (None: no BLAS found)."""
    for library in threadpool_info():
        if library.get("user_api") == "blas":
            return int(library["num_threads"])
    return None


def configure_blas_threads() -> int | None:
    """At import: the default thread count, unless the user chose; returns what was set."""
    if user_chose_threads():
        return None
    n = default_blas_threads()
    set_blas_threads(n)
    return n
