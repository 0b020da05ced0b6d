"""`Communicator`: the few MPI collectives that data-parallel training needs, on numpy buffers.

A thin layer over an `mpi4py` communicator (the world by default) that keeps MPI's buffer
interface (no pickling on the training path) and adds what every rank must agree on: its rank,
the job's size, its index among the ranks of its own machine, and how a failing rank ends the
whole job instead of leaving the others waiting in a collective.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from typing import Any

import numpy as np
from burn.tensor import DType


def _mpi() -> Any:
    """`mpi4py.MPI`, imported on first use: importing it initialises MPI, which importing
    burn.collective alone should not do."""
    from mpi4py import MPI

    return MPI


class Communicator:
    """The processes of one job: `rank` of `size`, and `local_rank` of `local_size` on this
    machine (the index that picks this rank's GPU).

    ```python
    import numpy as np
    from burn.collective import Communicator

    comm = Communicator.world()
    grads = np.ones(4, np.float32)
    comm.all_reduce_sum(grads)  # in place: the sum over every rank
    assert grads.tolist() == [float(comm.size)] * 4
    ```
    """

    def __init__(self, comm: Any = None):
        MPI = _mpi()
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank: int = self.comm.Get_rank()
        self.size: int = self.comm.Get_size()
        local = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank: int = local.Get_rank()
        self.local_size: int = local.Get_size()
        local.Free()

    @classmethod
    def world(cls) -> Communicator:
        """Every process started by `mpiexec`/`srun` (a job of one when run plainly)."""
        return cls(_mpi().COMM_WORLD)

    # ------------------------------------------------------------------ collectives
    def all_reduce_sum(self, buffer: np.ndarray) -> np.ndarray:
        """Sum `buffer` over every rank, in place (blocking). float16 and bfloat16 buffers are
        summed in float32 and rounded back (MPI has no sum of its own for them)."""
        MPI = _mpi()
        self.comm.Allreduce(MPI.IN_PLACE, *_sum_args(_contiguous(buffer)))
        return buffer

    def start_all_reduce_sum(self, buffer: np.ndarray) -> Any:
        """Start summing `buffer` in place; `request.Wait()` finishes it."""
        MPI = _mpi()
        return self.comm.Iallreduce(MPI.IN_PLACE, *_sum_args(_contiguous(buffer)))

    def broadcast(self, buffer: np.ndarray, root: int = 0) -> np.ndarray:
        """`root`'s `buffer` into every rank's `buffer` (same shape and dtype everywhere)."""
        self.comm.Bcast(_contiguous(buffer), root=root)
        return buffer

    def all_gather(self, buffer: np.ndarray) -> np.ndarray:
        """Every rank's `buffer`, stacked along a new first axis (`[size, *buffer.shape]`)."""
        buffer = np.ascontiguousarray(buffer)
        out = np.empty((self.size, *buffer.shape), buffer.dtype)
        self.comm.Allgather(buffer, out)
        return out

    def any(self, flag: bool) -> bool:
        """True when `flag` is true on any rank."""
        return bool(self.comm.allreduce(int(bool(flag)), op=_mpi().MAX))

    def broadcast_flag(self, flag: bool, root: int = 0) -> bool:
        """`root`'s `flag` on every rank."""
        value = np.array([1 if flag else 0], np.int8)
        self.comm.Bcast(value, root=root)
        return bool(value[0])

    def barrier(self) -> None:
        self.comm.Barrier()

    def abort(self, code: int = 1) -> None:
        """End every process of the job now (MPI_Abort): nothing waits in a collective."""
        self.comm.Abort(code)

    def __repr__(self) -> str:
        return (
            f"Communicator(rank={self.rank}, size={self.size}, local_rank={self.local_rank}, "
            f"local_size={self.local_size})"
        )


def _contiguous(buffer: np.ndarray) -> np.ndarray:
    if not isinstance(buffer, np.ndarray) or not buffer.flags.c_contiguous:
        raise TypeError("collectives work in place on a C-contiguous numpy array")
    return buffer


_HALF_FLOATS = (DType.F16.numpy, DType.BF16.numpy)
# One user-defined MPI sum per 2-byte float dtype (float16, bfloat16), created on first use.
_HALF_SUMS: dict[np.dtype, Any] = {}


def _sum_args(buffer: np.ndarray) -> tuple[Any, Any]:
    """The (buffer, op) of a sum of `buffer`: MPI's own for the types it knows; for 2-byte
    floats, the bits as 16-bit integers with an operation that adds them as floats."""
    MPI = _mpi()
    dtype = buffer.dtype
    if dtype not in _HALF_FLOATS:
        return buffer, MPI.SUM
    op = _HALF_SUMS.get(dtype)
    if op is None:

        def add(source, target, datatype) -> None:
            into = np.frombuffer(target, dtype)
            total = np.frombuffer(source, dtype).astype(np.float32) + into.astype(np.float32)
            into[:] = total.astype(dtype)

        op = _HALF_SUMS[dtype] = MPI.Op.Create(add, commute=True)
    return [buffer.view(np.uint16), MPI.UINT16_T], op


_installed: list[Communicator] = []


def abort_on_error(comm: Communicator) -> None:
    """Make an uncaught exception in any thread of this rank print its traceback and abort the
    whole job, so a rank that fails does not leave the others waiting in a collective.

    A job of one process keeps Python's normal behaviour. Installing twice is harmless. Ctrl-C
    under `mpiexec` reaches every rank as `KeyboardInterrupt`, which takes the same path.
    """
    if comm.size <= 1 or _installed:
        return
    _installed.append(comm)
    previous = sys.excepthook

    def hook(kind, value, tb) -> None:
        _report(comm, kind, value, tb)
        if comm.size > 1:
            # mpiexec forwards a rank's output through a proxy; an abort at once can end the
            # job before the traceback above has been forwarded, leaving nothing to read.
            time.sleep(0.5)
            comm.abort(130 if issubclass(kind, KeyboardInterrupt) else 1)
        previous(kind, value, tb)

    def thread_hook(args) -> None:
        if args.exc_type is SystemExit:
            return
        hook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def _report(comm: Communicator, kind, value, tb) -> None:
    text = "".join(traceback.format_exception(kind, value, tb))
    sys.stderr.write(f"[rank {comm.rank} of {comm.size}] {text}")
    sys.stderr.write(f"[rank {comm.rank} of {comm.size}] aborting the job\n")
    sys.stderr.flush()
