"""The end-of-training table: each numeric metric's best and worst epoch, per split."""

from __future__ import annotations

import math
from dataclasses import dataclass

from burn.train.logger import MetricStore, Split


@dataclass(frozen=True)
class MetricSummary:
    split: Split
    name: str
    min: float
    min_epoch: int
    max: float
    max_epoch: int


class LearnerSummary:
    """What `LearnerBuilder.summary()` prints when `fit` ends.

    Built from the metric logs, so it covers the epochs of a resumed run too.
    """

    def __init__(self, model_name: str, epochs: int, metrics: list[MetricSummary]):
        self.model_name = model_name
        self.epochs = epochs
        self.metrics = metrics

    @classmethod
    def from_store(
        cls, store: MetricStore, names: dict[Split, list[str]], epochs: int, model_name: str
    ) -> LearnerSummary:
        found = []
        for split in (Split.Train, Split.Valid):
            for name in names.get(split, []):
                values = [
                    (epoch, store.aggregate(name, epoch, split)) for epoch in range(1, epochs + 1)
                ]
                values = [(e, v) for e, v in values if v is not None and not math.isnan(v)]
                if not values:
                    continue
                lo = min(values, key=lambda ev: ev[1])
                hi = max(values, key=lambda ev: ev[1])
                found.append(MetricSummary(split, name, lo[1], lo[0], hi[1], hi[0]))
        return cls(model_name, epochs, found)

    def __str__(self) -> str:
        header = ("Split", "Metric", "Min.", "Epoch", "Max.", "Epoch")
        rows = [
            (
                m.split.name,
                m.name,
                f"{m.min:.3f}",
                str(m.min_epoch),
                f"{m.max:.3f}",
                str(m.max_epoch),
            )
            for m in self.metrics
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

        def line(cells) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        title = " Learner summary "
        lines = [
            title.center(len(rule), "="),
            f"Model: {self.model_name}",
            f"Epochs: {self.epochs}",
            "",
            line(header),
            rule,
            *(line(r) for r in rows),
        ]
        return "\n".join(lines)
