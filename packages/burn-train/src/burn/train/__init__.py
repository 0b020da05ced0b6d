"""burn.train: the Learner, metrics, the live dashboard, checkpoints, early stopping and the
evaluator; experiment tracking in `burn.train.tracking`, metric pictures in `burn.train.plot`.

A model trains with the Learner when it has two methods: `train_step(batch) -> TrainOutput`
(on an autodiff backend) and `valid_step(batch) -> item` (on `model.valid()`).

```python
from burn.train import ClassificationOutput, LearnerBuilder, TrainOutput
from burn.train.metric import AccuracyMetric, LossMetric
```
"""

from burn.train.checkpoint import (
    CheckpointError,
    CheckpointingAction,
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    FileCheckpointer,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from burn.train.early_stopping import (
    EarlyStoppingStrategy,
    MetricEarlyStoppingStrategy,
    StoppingCondition,
    TrainingInterrupter,
)
from burn.train.evaluator import Evaluator, EvaluatorBuilder, EvaluatorSummary
from burn.train.learner import (
    BatchSplitError,
    Learner,
    LearnerBuilder,
    LearnerSummary,
    MetricUpdate,
    SingleProcess,
    TrainingStrategy,
)
from burn.train.logger import (
    Aggregate,
    Direction,
    FileApplicationLoggerInstaller,
    FileMetricLogger,
    InMemoryMetricLogger,
    MetricLogger,
    MetricStore,
    Split,
)
from burn.train.output import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    TrainOutput,
    TrainStep,
    ValidStep,
)
from burn.train.renderer import (
    CliMetricsRenderer,
    MetricsRenderer,
    MetricState,
    TrainingProgress,
    TuiMetricsRenderer,
    default_renderer,
)

__all__ = [
    "Aggregate",
    "BatchSplitError",
    "CheckpointError",
    "CheckpointingAction",
    "CheckpointingStrategy",
    "ClassificationOutput",
    "CliMetricsRenderer",
    "ComposedCheckpointingStrategy",
    "Direction",
    "EarlyStoppingStrategy",
    "Evaluator",
    "EvaluatorBuilder",
    "EvaluatorSummary",
    "FileApplicationLoggerInstaller",
    "FileCheckpointer",
    "FileMetricLogger",
    "InMemoryMetricLogger",
    "KeepLastNCheckpoints",
    "Learner",
    "LearnerBuilder",
    "LearnerSummary",
    "MetricCheckpointingStrategy",
    "MetricEarlyStoppingStrategy",
    "MetricLogger",
    "MetricState",
    "MetricStore",
    "MetricUpdate",
    "MetricsRenderer",
    "MultiLabelClassificationOutput",
    "RegressionOutput",
    "SingleProcess",
    "Split",
    "StoppingCondition",
    "TrainOutput",
    "TrainStep",
    "TrainingInterrupter",
    "TrainingProgress",
    "TrainingStrategy",
    "TuiMetricsRenderer",
    "ValidStep",
    "default_renderer",
]
