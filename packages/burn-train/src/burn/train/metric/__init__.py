"""Metrics: the `Metric`/`Numeric` contract, `Adaptor`, and the built-in metrics.

```python
from burn.train.metric import AccuracyMetric, LossMetric, MetricMetadata
from burn.train.metric.inputs import LossInput
from burn.tensor import Tensor

loss = LossMetric()
entry = loss.update(LossInput(Tensor.from_data([0.25])), MetricMetadata.fake())
assert entry.formatted.startswith("Loss 0.250")
```
"""

from burn.train.metric.base import (
    Adaptor,
    FormatOptions,
    Metric,
    MetricEntry,
    MetricError,
    MetricMetadata,
    Numeric,
    NumericEntry,
    NumericMetricState,
    adapt,
    is_numeric,
    metric_name,
)
from burn.train.metric.classification import (
    AccuracyMetric,
    AurocMetric,
    ClassReduction,
    DecisionRule,
    FBetaScoreMetric,
    HammingScore,
    LossMetric,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)
from burn.train.metric.inputs import (
    AccuracyInput,
    AurocInput,
    ConfusionStatsInput,
    HammingScoreInput,
    LossInput,
    TopKAccuracyInput,
)
from burn.train.metric.system import (
    CpuMemory,
    CpuTemperature,
    CpuUse,
    CudaMetric,
    IterationSpeedMetric,
    LearningRateMetric,
)

__all__ = [
    "AccuracyInput",
    "AccuracyMetric",
    "Adaptor",
    "AurocInput",
    "AurocMetric",
    "ClassReduction",
    "ConfusionStatsInput",
    "CpuMemory",
    "CpuTemperature",
    "CpuUse",
    "CudaMetric",
    "DecisionRule",
    "FBetaScoreMetric",
    "FormatOptions",
    "HammingScore",
    "HammingScoreInput",
    "IterationSpeedMetric",
    "LearningRateMetric",
    "LossInput",
    "LossMetric",
    "Metric",
    "MetricEntry",
    "MetricError",
    "MetricMetadata",
    "Numeric",
    "NumericEntry",
    "NumericMetricState",
    "PrecisionMetric",
    "RecallMetric",
    "TopKAccuracyInput",
    "TopKAccuracyMetric",
    "adapt",
    "is_numeric",
    "metric_name",
]
