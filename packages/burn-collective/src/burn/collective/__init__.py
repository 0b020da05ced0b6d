"""burn.collective: collective operations on MPI, and data-parallel training for the Learner.

Run the same program on every rank with `mpiexec -n N python train.py` (or `srun` under Slurm)
and give its `LearnerBuilder` a `DataParallel()` strategy: each rank trains on its share of
every global batch, gradients are averaged across ranks in buckets, and the result is the
training one process would do with the same global batch.

```python
from burn.backend import Autodiff, NdArray
from burn.collective import DataParallel
from burn.train import LearnerBuilder

strategy = DataParallel()  # under plain `python`, a job of one rank
device = strategy.device(Autodiff(NdArray))  # this rank's device
builder = LearnerBuilder("/tmp/run").with_training_strategy(strategy)
```
"""

from burn.collective.buckets import DEFAULT_BUCKET_BYTES, GradientBuckets
from burn.collective.communicator import Communicator, abort_on_error
from burn.collective.device import rank_device
from burn.collective.errors import CollectiveError
from burn.collective.metrics import MetricReducer
from burn.collective.overlap import OverlappedStep
from burn.collective.sharding import Shard, ShardedLoader, narrow_batch, shard_range
from burn.collective.strategy import DataParallel
from burn.collective.sync import assert_identical, broadcast_module, check_same_structure

__all__ = [
    "DEFAULT_BUCKET_BYTES",
    "CollectiveError",
    "Communicator",
    "DataParallel",
    "GradientBuckets",
    "MetricReducer",
    "OverlappedStep",
    "Shard",
    "ShardedLoader",
    "abort_on_error",
    "assert_identical",
    "broadcast_module",
    "check_same_structure",
    "narrow_batch",
    "rank_device",
    "shard_range",
]
