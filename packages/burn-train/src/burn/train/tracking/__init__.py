"""Experiment tracking: the Learner's metrics in TensorBoard and MLflow.

```python
import tempfile
from burn.train import LearnerBuilder
from burn.train.tracking import TensorBoardLogger

builder = LearnerBuilder(tempfile.mkdtemp()).with_metric_logger(TensorBoardLogger())
```

`TensorBoardLogger` needs `pip install "burn-train[tensorboard]"` and `MlflowLogger`
`pip install "burn-train[mlflow]"`; those packages are imported when a logger is made, so
`burn.train` itself never needs them.
"""

from burn.train.tracking.base import ExperimentLogger, Scalar, SplitView, TrackingError
from burn.train.tracking.mlflow import MlflowLogger
from burn.train.tracking.tensorboard import TensorBoardLogger

__all__ = [
    "ExperimentLogger",
    "MlflowLogger",
    "Scalar",
    "SplitView",
    "TensorBoardLogger",
    "TrackingError",
]
