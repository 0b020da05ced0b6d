"""`DataParallel`: the Learner's training strategy for a job of MPI processes.

Launched as `mpiexec -n N python train.py` (or `srun` under Slurm), every rank builds the same
Learner with `with_training_strategy(DataParallel())`. Then, in each rank:

- the model starts as rank 0's (broadcast when `fit` starts);
- each global batch of the loaders is cut into one share per rank (`ShardedLoader`), so the job
  sees the batches one process would;
- after each step's backward pass the gradients are averaged over the ranks in buckets
  (`GradientBuckets`), weighted by items, and every rank applies the same optimizer step (the
  reduction follows the backward pass: the autodiff backend hands gradients over when backward
  ends, so there is nothing to overlap it with but the packing of the next bucket);
  gradient accumulation, clipping, the learning-rate schedule and the optimizer state work as
  in one process because they see the same averaged gradients;
- each step's metric entries are combined over the ranks (`MetricReducer`);
- rank 0 alone renders, writes the metric logs and the experiment log, and saves checkpoints;
  a stop asked for on any rank (`q` in the dashboard) stops all, and rank 0 decides early
  stopping;
- an uncaught exception on any rank prints its traceback and aborts the job (`abort_on_error`).
"""

from __future__ import annotations

from typing import Any

from burn.collective.buckets import DEFAULT_BUCKET_BYTES, GradientBuckets
from burn.collective.communicator import Communicator
from burn.collective.communicator import abort_on_error as install_abort_on_error
from burn.collective.device import rank_device
from burn.collective.errors import CollectiveError
from burn.collective.metrics import MetricReducer
from burn.collective.sharding import Shard, ShardedLoader
from burn.collective.sync import assert_identical, broadcast_module
from burn.train.learner.strategy import MetricUpdate


class DataParallel:
    """Data-parallel training over the ranks of an MPI job.

    Args:
        comm: the ranks to train with (default: every process of the job).
        bucket_size_mb: how many megabytes of gradients one all-reduce carries (default 25).
        overlap: start each bucket's all-reduce without blocking during the backward pass, as
            soon as its gradients are final (can pay with an MPI that progresses in the
            background and cores to spare; see `GradientBuckets`).
        wire_dtype: the format gradients travel in: "float32" (default; exact), or "bfloat16"
            / "float16" (half the bytes, rounded: see `GradientBuckets`).
        debug: check after every optimizer step that all ranks hold identical parameters
            (one hash per parameter gathered from every rank), raising `CollectiveError` if not.
        abort_on_error: make an uncaught exception on any rank abort the whole job (default).

    ```python
    from burn.collective import DataParallel

    strategy = DataParallel(bucket_size_mb=8, debug=True)
    print(strategy.rank, strategy.size, strategy.is_main())  # 0 1 True without mpiexec
    ```
    """

    def __init__(
        self,
        comm: Communicator | None = None,
        *,
        bucket_size_mb: float = DEFAULT_BUCKET_BYTES / 2**20,
        overlap: bool = False,
        wire_dtype: str = "float32",
        debug: bool = False,
        abort_on_error: bool = True,
    ):
        if not bucket_size_mb > 0:
            raise CollectiveError(
                f"DataParallel: bucket_size_mb must be positive, got {bucket_size_mb!r}"
            )
        self.comm = comm if comm is not None else Communicator.world()
        self.buckets = GradientBuckets(
            self.comm, max(1, int(bucket_size_mb * 2**20)), overlap, wire_dtype
        )
        self.debug = bool(debug)
        self.reducer = MetricReducer(self.comm)
        self._metrics: dict = {}
        self._items = 0
        self._steps = 0
        if abort_on_error:
            install_abort_on_error(self.comm)

    # ------------------------------------------------------------------ who is who
    @property
    def rank(self) -> int:
        return self.comm.rank

    @property
    def size(self) -> int:
        return self.comm.size

    def is_main(self) -> bool:
        """Rank 0 renders, logs and saves."""
        return self.comm.rank == 0

    def device(self, backend: Any) -> Any:
        """This rank's device of `backend` (GPU `local_rank` on a GPU backend)."""
        return rank_device(backend, self.comm)

    # ------------------------------------------------------------------ the Learner's hooks
    def prepare(self, learner: Any, train_loader: Any, valid_loader: Any) -> tuple[Any, Any]:
        self._metrics = learner.metrics
        learner.model = broadcast_module(learner.model, self.comm)
        if self.debug:
            assert_identical(learner.model, self.comm, "after the initial broadcast")
        train = ShardedLoader(train_loader, self.rank, self.size)
        valid = None if valid_loader is None else ShardedLoader(valid_loader, self.rank, self.size)
        return train, valid

    def train_step(self, learner: Any, batch: Any) -> tuple[Any, list]:
        shard = _as_shard(batch)
        grads, items = None, []
        # Several devices in one rank sum their gradients after their backward passes, so
        # there is no single backward pass to overlap with.
        if self.buckets.overlap and len(getattr(learner.b, "_devices", ())) <= 1:
            step = self.buckets.overlapped(
                learner.model, shard.items if shard.batch is not None else 0
            )
            with step:
                if shard.batch is not None:
                    grads, items = learner.local_train_step(shard.batch)
            averaged = step.finish(grads)
        else:
            if shard.batch is not None:
                grads, items = learner.local_train_step(shard.batch)
            averaged = self.buckets.all_reduce(learner.model, grads, shard.items)
        self._items = shard.items
        if self.debug:
            assert_identical(learner.model, self.comm, f"before step {self._steps + 1}")
        self._steps += 1
        return averaged, items

    def valid_step(self, model: Any, batch: Any) -> list:
        shard = _as_shard(batch)
        self._items = shard.items
        return [] if shard.batch is None else [model.valid_step(shard.batch)]

    def reduce_metrics(
        self, split: Any, updates: list[MetricUpdate], metadata: Any
    ) -> list[MetricUpdate]:
        registered = self._metrics.get(split, [])
        return self.reducer.reduce(split, registered, updates, self._items, metadata)

    def any_process(self, flag: bool) -> bool:
        return self.comm.any(flag)

    def main_decides(self, flag: bool) -> bool:
        return self.comm.broadcast_flag(flag, root=0)

    def finish(self, learner: Any) -> None:
        if self.debug:
            assert_identical(learner.model, self.comm, "when training ended")

    def __repr__(self) -> str:
        return (
            f"DataParallel(rank={self.rank}, size={self.size}, "
            f"bucket_bytes={self.buckets.bucket_bytes}, debug={self.debug})"
        )


def _as_shard(batch: Any) -> Shard:
    if isinstance(batch, Shard):
        return batch
    # A loader the strategy did not wrap (a custom loop): the batch is this rank's share.
    from burn.train.learner.split import batch_size

    return Shard(batch, batch_size(batch) or 1, 0)
