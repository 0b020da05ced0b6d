"""Metric entries of one step, combined over every rank.

Each rank updates its own metrics with its own items, which gives one numeric entry per metric:
a value and the number of items it stands for (`NumericEntry`). The ranks sum `value * count`
and `count` in one small all-reduce per step, and every rank logs the combined entry, so an
epoch's accuracy counts every rank's items and the strategies that read the logs (checkpoints,
early stopping) see the same numbers everywhere.

An entry counted once per step (a loss averaged over the batch counts 1) is combined with each
rank's items as weights instead, which is the value one process computes over the whole batch.
Metrics that are not numeric are shown as the main rank's own.
"""

from __future__ import annotations

import math

import numpy as np
from burn.collective.communicator import Communicator
from burn.train.learner.strategy import MetricUpdate
from burn.train.metric.base import FormatOptions, MetricEntry, MetricMetadata, NumericEntry


class _Running:
    """The epoch's weighted mean of the combined values of one metric."""

    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def add(self, value: float, count: int) -> float:
        if count > 0 and not math.isnan(value):
            self.sum += value * count
            self.count += count
        return self.sum / self.count if self.count else math.nan


class MetricReducer:
    """Combines a step's metric updates over the ranks of `comm` (see the module docstring)."""

    def __init__(self, comm: Communicator):
        self.comm = comm
        self.running: dict[tuple, _Running] = {}
        self.epoch: dict[object, tuple[int, int]] = {}

    def reduce(
        self, split, registered: list, updates: list[MetricUpdate], items: int, meta: MetricMetadata
    ) -> list[MetricUpdate]:
        """The combined updates of `registered` (the split's metrics in order), given this
        rank's `updates` for `items` items."""
        last = self.epoch.get(split)
        if last is None or last[0] != meta.epoch or meta.iteration <= last[1]:
            for key in [k for k in self.running if k[0] == split]:
                del self.running[key]
        self.epoch[split] = (meta.epoch, meta.iteration)
        numeric = [r for r in registered if r.numeric]
        # per metric: sum(value*count), sum(count), number of entries, sum(value*items)
        sums = np.zeros(4 * len(numeric) + 1, np.float64)
        sums[-1] = items
        position = {id(r): i for i, r in enumerate(numeric)}
        for update in updates:
            i = position.get(id(update.registered))
            if i is None:
                continue
            try:
                entry = NumericEntry.deserialize(update.entry.serialized)
            except ValueError:
                continue
            if entry.count <= 0 or math.isnan(entry.value):
                continue
            sums[4 * i] += entry.value * entry.count
            sums[4 * i + 1] += entry.count
            sums[4 * i + 2] += 1
            sums[4 * i + 3] += entry.value * items
        self.comm.all_reduce_sum(sums)
        total_items = sums[-1]
        combined = []
        for i, r in enumerate(numeric):
            value_sum, count, entries, by_items = sums[4 * i : 4 * i + 4]
            if count <= 0:
                continue
            if count == entries and total_items > 0:  # each entry counted once: a step's mean
                value, count = by_items / total_items, 1
            else:
                value = value_sum / count
            running = self.running.setdefault((split, id(r)), _Running()).add(value, int(count))
            value = float(value)
            combined.append(MetricUpdate(r, _entry(r, value, int(count), running), value, running))
        texts = [u for u in updates if not u.registered.numeric]
        return combined + texts


def _entry(registered, value: float, count: int, running: float) -> MetricEntry:
    metric = registered.metric
    options = FormatOptions(
        registered.name, getattr(metric, "precision", 2), getattr(metric, "unit", None)
    )
    text = f"{registered.name} {options.format(value)} (epoch {options.format(running)})"
    return MetricEntry(registered.name, text, NumericEntry(float(value), count).serialize())
