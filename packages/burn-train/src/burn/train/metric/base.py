"""The metric contract: `Metric`, `Numeric`, their entries, and `Adaptor`.

A metric sees one item per step (`update(input, metadata)`) and returns a `MetricEntry`: its
name, a line for people and a string for the log file. A numeric metric also has a `value()`
(the last step's) and a `running_value()` (the epoch so far), which the dashboard plots and the
checkpointing and early-stopping strategies compare.

The item a model returns is not what a metric takes: `Adaptor` turns one into the other, so any
metric works with any output that knows how to give it its input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from burn.data import Progress
from burn.tensor import BurnError


class MetricError(BurnError, ValueError):
    """A metric that cannot be computed from what it was given."""


@dataclass(frozen=True)
class MetricMetadata:
    """Where training stands when a metric is updated.

    Attributes:
        progress: items done and total in this epoch's split.
        epoch: the current epoch, from 1.
        epoch_total: the number of epochs planned.
        iteration: the step within the epoch, from 1.
        lr: the learning rate of this step (None during validation).
    """

    progress: Progress
    epoch: int
    epoch_total: int
    iteration: int
    lr: float | None = None

    @classmethod
    def fake(cls) -> MetricMetadata:
        """Metadata for testing a metric outside a Learner."""
        return cls(Progress(1, 1), 1, 1, 1, None)


@dataclass(frozen=True)
class NumericEntry:
    """A numeric value and how many items it stands for (its weight in an epoch's mean).

    Serialised as `value,count` (`value` alone for a count of 1 written by `Value`), as Burn
    writes its metric logs.
    """

    value: float
    count: int = 1

    def serialize(self) -> str:
        return f"{self.value!r},{self.count}"

    @classmethod
    def deserialize(cls, text: str) -> NumericEntry:
        text = text.strip()
        if "," in text:
            value, count = text.split(",", 1)
            return cls(float(value), int(count))
        return cls(float(text), 1)


@dataclass(frozen=True)
class MetricEntry:
    """What one update of a metric produced.

    Attributes:
        name: the metric's name (its log file is `<name>.log`, spaces as underscores).
        formatted: a short text for renderers, e.g. `Loss 0.213 (epoch 0.342)`.
        serialized: the line written to the metric's log.
    """

    name: str
    formatted: str
    serialized: str


@runtime_checkable
class Metric(Protocol):
    """A metric: `name`, `update(input, metadata) -> MetricEntry`, `clear()`.

    `input_type` names the class of input the metric takes; the Learner adapts each step's item
    to it (see `Adaptor`). A metric needing no input (learning rate, CPU use) sets it to None.
    """

    input_type: ClassVar[type | None]

    def name(self) -> str: ...

    def update(self, input: Any, metadata: MetricMetadata) -> MetricEntry: ...  # noqa: A002

    def clear(self) -> None: ...


@runtime_checkable
class Numeric(Protocol):
    """A metric with a number: `value()` of the last update, `running_value()` of the epoch."""

    def value(self) -> float: ...

    def running_value(self) -> float: ...


@dataclass
class FormatOptions:
    """How a numeric metric is shown: its name, decimals and unit."""

    name: str
    precision: int = 2
    unit: str | None = None

    def format(self, value: float) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        text = f"{value:.{self.precision}f}"
        return f"{text} {self.unit}" if self.unit else text


class NumericMetricState:
    """The running mean every numeric metric shares: batch values weighted by batch size.

    `update(value, batch_size, format)` returns the entry: the batch's value and the epoch's
    mean so far, e.g. `Accuracy 92.19 % (epoch 90.02 %)`.
    """

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.sum = 0.0
        self.count = 0
        self.current = math.nan

    def update(self, value: float, batch_size: int, format: FormatOptions) -> MetricEntry:  # noqa: A002
        value = float(value)
        self.current = value
        if batch_size > 0 and not math.isnan(value):
            self.sum += value * batch_size
            self.count += batch_size
        running = format.format(self.running_value())
        text = f"{format.name} {format.format(value)} (epoch {running})"
        return MetricEntry(format.name, text, NumericEntry(value, batch_size).serialize())

    def current_value(self) -> float:
        """The last batch's value (NaN before any update)."""
        return self.current

    def running_value(self) -> float:
        """The epoch's weighted mean so far (NaN before any update)."""
        return self.sum / self.count if self.count else math.nan


class Adaptor:
    """Turns a step's item into the input a metric takes.

    Register a conversion for a pair of classes, for outputs you did not write as well as your
    own: `Adaptor.register(MyOutput, LossInput, lambda out: LossInput(out.loss))`. Or subclass
    and override `adapt(input_type)`. Conversions are found along the item's class hierarchy.
    """

    _table: ClassVar[dict[tuple[type, type], Callable[[Any], Any]]] = {}

    @staticmethod
    def register(output_type: type, input_type: type, fn: Callable[[Any], Any]) -> None:
        Adaptor._table[(output_type, input_type)] = fn

    def adapt(self, input_type: type):
        return adapt(self, input_type)


def adapt(item: Any, input_type: type | None):
    """`item` as an `input_type`, through the registered conversions (None needs no input)."""
    if input_type is None:
        return None
    if isinstance(item, input_type):
        return item
    for klass in type(item).__mro__:
        fn = Adaptor._table.get((klass, input_type))
        if fn is not None:
            return fn(item)
    own = getattr(type(item), "adapt", None)
    if own is not None and own is not Adaptor.adapt:
        return item.adapt(input_type)
    raise MetricError(
        f"{type(item).__name__} cannot be adapted to {input_type.__name__}: register a "
        f"conversion with Adaptor.register({type(item).__name__}, {input_type.__name__}, fn)"
    )


def metric_name(metric) -> str:
    """A metric's name, whether `name` is a method (as the protocol says) or an attribute."""
    name = getattr(metric, "name", None)
    if callable(name):
        return str(name())
    if name is None:
        return type(metric).__name__
    return str(name)


def is_numeric(metric) -> bool:
    return callable(getattr(metric, "value", None))
