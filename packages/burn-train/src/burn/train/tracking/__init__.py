"""Experiment tracking: the Learner's metrics in TensorBoard and MLflow.

```python
import tempfile
from burn.train import LearnerBuilder
from burn.train.tracking import TensorBoardLogger

builder = LearnerBuilder(tempfile.mkdtemp()).with_metric_logger(TensorBoardLogger())
```

`TensorBoardLogger` needs `pip install "burn-train[tensorboard]"` and `MlflowLogger`
`pip install "burn-train[mlflow]"`; both are imported only when used.
"""

from burn.train.tracking.base import ExperimentLogger, Scalar, SplitView, TrackingError

__all__ = [
    "ExperimentLogger",
    "MlflowLogger",
    "Scalar",
    "SplitView",
    "TensorBoardLogger",
    "TrackingError",
]


def __getattr__(name: str):
    # The loggers' modules import nothing heavy at import time, but they are only needed when
    # used: load them on first access.
    if name == "TensorBoardLogger":
        from burn.train.tracking.tensorboard import TensorBoardLogger

        return TensorBoardLogger
    if name == "MlflowLogger":
        from burn.train.tracking.mlflow import MlflowLogger

        return MlflowLogger
    raise AttributeError(f"module 'burn.train.tracking' has no attribute {name!r}")
