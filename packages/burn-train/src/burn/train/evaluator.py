"""The evaluator: a trained model's metrics over a dataset, logged like a Learner's epoch.

```python
import tempfile
from burn.train.evaluator import EvaluatorBuilder
from burn.train.metric import AccuracyMetric, LossMetric

builder = (
    EvaluatorBuilder(tempfile.mkdtemp())
    .metric_numeric(AccuracyMetric())
    .metric_numeric(LossMetric())
)
# summary = builder.build(model).eval(test_loader)   # writes test/epoch-1/<Metric>.log
# print(summary)
```

The model's `valid_step(batch)` gives each batch's item, as in validation: a model on an
autodiff backend is taken to its inner backend first (`model.valid()`), so no graph is built
and dropout is off. The entries go to `<artifact_dir>/<name>/epoch-1/<Metric>.log` (the
Learner's layout, one epoch), so `python -m burn.train.plot` draws the test value beside the
training curves, and the summary is each metric's mean weighted by the items of its steps: the
number the Learner's summary gives for a validation epoch over the same data.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

from burn.data import Progress
from burn.train.learner.learner import RegisteredMetric
from burn.train.logger import FileMetricLogger, InMemoryMetricLogger, aggregate
from burn.train.metric.base import MetricError, MetricMetadata, adapt, is_numeric, metric_name
from burn.train.renderer.base import MetricState, TrainingProgress

log = logging.getLogger("burn.train")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class EvaluatorSummary:
    """An evaluation's numbers: the model, the split's name, items seen, and each numeric
    metric's value (`values[name]`)."""

    model_name: str
    name: str
    items: int
    values: dict[str, float]

    def __str__(self) -> str:
        header = ("Split", "Metric", "Value")
        rows = [(self.name, metric, f"{value:.3f}") for metric, value in self.values.items()]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def line(cells) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join(
            [
                " Evaluation summary ".center(len(rule), "="),
                f"Model: {self.model_name}",
                f"Items: {self.items}",
                "",
                line(header),
                rule,
                *(line(r) for r in rows),
            ]
        )


class EvaluatorBuilder:
    """Configures an `Evaluator`: its metrics, artifact folder and an optional renderer."""

    def __init__(self, artifact_dir: str | Path):
        self.artifact_dir = Path(artifact_dir)
        self._metrics: list[RegisteredMetric] = []
        self._renderer = None

    def _add(self, metric, numeric: bool) -> EvaluatorBuilder:
        if not callable(getattr(metric, "update", None)) or not callable(
            getattr(metric, "clear", None)
        ):
            raise TypeError(
                f"{type(metric).__name__} is not a metric: it needs update(input, metadata) and "
                "clear()"
            )
        if numeric and not is_numeric(metric):
            raise TypeError(f"{metric_name(metric)} has no value(): register it with metric")
        if any(r.metric is metric for r in self._metrics):
            raise ValueError(f"the same {metric_name(metric)} instance is registered twice")
        self._metrics.append(RegisteredMetric(metric, numeric))
        return self

    def metric(self, metric) -> EvaluatorBuilder:
        """A metric logged as text (not in the summary)."""
        return self._add(metric, False)

    def metric_numeric(self, metric) -> EvaluatorBuilder:
        """A numeric metric: logged and in the summary."""
        return self._add(metric, True)

    def renderer(self, renderer) -> EvaluatorBuilder:
        """Show progress with `renderer` (its `update_valid`/`render_valid`); none by default."""
        self._renderer = renderer
        return self

    def build(self, model) -> Evaluator:
        if not callable(getattr(model, "valid_step", None)):
            raise TypeError(f"{type(model).__name__} has no valid_step(batch) method")
        if not self._metrics:
            raise ValueError("EvaluatorBuilder: register at least one metric")
        return Evaluator(self.artifact_dir, _inference_model(model), self._metrics, self._renderer)


def _inference_model(model):
    """`model.valid()` for a module of an autodiff backend, the model itself otherwise."""
    params = model.params() if callable(getattr(model, "params", None)) else []
    if params:
        backend = params[0].val().backend
        if backend.inner() is not backend:
            return model.valid()
    return model


class Evaluator:
    """Runs a model's `valid_step` over a loader with metrics; built by `EvaluatorBuilder`."""

    def __init__(self, artifact_dir: Path, model, metrics: list[RegisteredMetric], renderer):
        self.artifact_dir = artifact_dir
        self.model = model
        self.metrics = metrics
        self.renderer = renderer

    def eval(self, loader, name: str = "test") -> EvaluatorSummary:
        """Evaluate over `loader`; logs go to `<artifact_dir>/<name>/epoch-1/`."""
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"Evaluator.eval: the split name {name!r} must be a plain folder name "
                "(letters, digits, '_', '-', '.')"
            )
        files = FileMetricLogger(self.artifact_dir / name)
        memory = InMemoryMetricLogger()
        for registered in self.metrics:
            registered.metric.clear()
        iterator = loader.iter() if hasattr(loader, "iter") else iter(loader)
        total_batches = len(loader) if hasattr(loader, "__len__") else 0
        iteration = 0
        try:
            for batch in iterator:
                iteration += 1
                item = self.model.valid_step(batch)
                get = getattr(iterator, "progress", None)
                progress = get() if get else Progress(iteration, max(total_batches, iteration))
                metadata = MetricMetadata(progress, 1, 1, iteration, None)
                self._update(item, metadata, files, memory)
                if self.renderer is not None:
                    self.renderer.render_valid(TrainingProgress(progress, 1, 1, iteration))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            files.flush()
        values = {}
        items = 0
        for registered in self.metrics:
            if not registered.numeric:
                continue
            entries = memory.read_numeric(registered.name, 1) or []
            values[registered.name] = aggregate(entries) if entries else math.nan
            items = max(items, sum(e.count for e in entries))
        summary = EvaluatorSummary(_model_name(self.model), name, items, values)
        log.info("evaluation on %s:\n%s", name, summary)
        return summary

    def _update(self, item, metadata, files, memory) -> None:
        adapted: dict = {}
        for registered in self.metrics:
            metric = registered.metric
            input_type = getattr(metric, "input_type", None)
            if input_type not in adapted:
                try:
                    adapted[input_type] = adapt(item, input_type)
                except MetricError as error:
                    raise MetricError(f"Evaluator, {registered.name}: {error}") from None
            entry = metric.update(adapted[input_type], metadata)
            files.log(entry, 1)
            memory.log(entry, 1)
            if self.renderer is not None:
                state = (
                    MetricState(entry, metric.value(), metric.running_value())
                    if registered.numeric
                    else MetricState(entry)
                )
                self.renderer.update_valid(state)


def _model_name(model) -> str:
    if hasattr(model, "num_params"):
        return f"{type(model).__name__} ({model.num_params()} parameters)"
    return type(model).__name__
