"""Keeping the model the same on every rank: broadcast it once, check it when asked.

Ranks build their models independently, so their random initialisations differ; rank 0's
parameters are broadcast before training. From then on every rank applies the same averaged
gradients with the same optimizer, so the parameters stay identical; `assert_identical`
verifies that (the strategy's debug mode calls it after every step).
"""

from __future__ import annotations

import hashlib

import numpy as np
from burn.collective.communicator import Communicator
from burn.collective.errors import CollectiveError
from burn.module import Module, ModuleMapper
from burn.tensor import Tensor


class _Broadcast(ModuleMapper):
    def __init__(self, comm: Communicator, root: int):
        self.comm = comm
        self.root = root

    def _share(self, tensor: Tensor) -> Tensor:
        array = np.array(tensor.to_data().as_array(), order="C", copy=True)
        # Bytes travel whatever the dtype (bf16 and f16 have no MPI type of their own).
        self.comm.broadcast(array.reshape(-1).view(np.uint8), self.root)
        return Tensor.from_data(array, tensor.device(), dtype=tensor.dtype)

    def map_float(self, id, tensor: Tensor) -> Tensor:  # noqa: A002 - the mapper's protocol
        return self._share(tensor)

    def map_int(self, id, tensor: Tensor) -> Tensor:  # noqa: A002
        return self._share(tensor)

    def map_bool(self, id, tensor: Tensor) -> Tensor:  # noqa: A002
        return self._share(tensor)


def broadcast_module(model: Module, comm: Communicator, root: int = 0) -> Module:
    """`model` with every parameter's values taken from rank `root` (ids and flags kept)."""
    if comm.size <= 1:
        return model
    check_same_structure(model, comm)
    return model.map(_Broadcast(comm, root))


def _digest(tensor: Tensor) -> int:
    array = np.ascontiguousarray(tensor.to_data().as_array())
    return int.from_bytes(hashlib.blake2b(array.tobytes(), digest_size=8).digest(), "little")


def _structure(model: Module) -> list[str]:
    return [f"{path}:{p.dims()}:{p.dtype.value}" for path, p in model.named_params()]


def check_same_structure(model: Module, comm: Communicator) -> None:
    """Raise `CollectiveError` unless every rank's model has the same parameters (paths, shapes,
    dtypes) in the same order."""
    text = "\n".join(_structure(model)).encode()
    digest = hashlib.blake2b(text, digest_size=8).digest()
    mine = np.frombuffer(digest, np.int64).copy()
    everyone = comm.all_gather(mine)
    differ = [r for r in range(comm.size) if everyone[r, 0] != everyone[0, 0]]
    if differ:
        raise CollectiveError(
            f"the model differs in structure between rank 0 and rank(s) {differ} (rank "
            f"{comm.rank} has {len(_structure(model))} parameters): every rank must build the "
            "same model"
        )


def assert_identical(model: Module, comm: Communicator, where: str = "") -> None:
    """Raise `CollectiveError` naming the first parameter whose values differ between ranks."""
    if comm.size <= 1:
        return
    named = model.named_params()
    mine = np.array([_digest(p.val()) for _, p in named], np.uint64).view(np.int64)
    everyone = comm.all_gather(mine)
    for i, (path, _) in enumerate(named):
        ranks = [r for r in range(comm.size) if everyone[r, i] != everyone[0, i]]
        if ranks:
            at = f" {where}" if where else ""
            raise CollectiveError(
                f"parameter {path!r} differs between rank 0 and rank(s) {ranks}{at}: the ranks "
                "no longer train the same model"
            )
