"""The plain renderer: lines of text, for CI logs, pipes and files."""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

from burn.train.renderer.base import MetricsRendererBase, MetricState, TrainingProgress


class CliMetricsRenderer(MetricsRendererBase):
    """Prints a progress line now and then, and one line per split at the end of each epoch.

    A progress line is printed every `every` steps when given, otherwise at most once per
    `interval` seconds. The end-of-epoch lines give each metric's value over the whole epoch:

    ```text
    [train] epoch 1/10 | Loss 0.812 | Accuracy 78.45 %
    ```
    """

    def __init__(
        self, stream: TextIO | None = None, every: int | None = None, interval: float = 10.0
    ):
        self.stream = stream
        self.every = every
        self.interval = float(interval)
        self._last_print = -math.inf
        self._states: dict[str, dict[str, MetricState]] = {"train": {}, "valid": {}}
        self._progress: dict[str, TrainingProgress] = {}

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stdout

    def _print(self, line: str) -> None:
        out = self._out()
        out.write(line + "\n")
        out.flush()

    def update_train(self, state: MetricState) -> None:
        self._states["train"][state.name] = state

    def update_valid(self, state: MetricState) -> None:
        self._states["valid"][state.name] = state

    def _metrics(self, split: str, running: bool) -> str:
        parts = []
        for state in self._states[split].values():
            if state.is_numeric() and running:
                parts.append(running_text(state))
            else:
                parts.append(state.entry.formatted.split(" (epoch ")[0])
        return " | ".join(parts)

    def _render(self, split: str, item: TrainingProgress) -> None:
        self._progress[split] = item
        due = (
            item.iteration % self.every == 0
            if self.every
            else time.monotonic() - self._last_print >= self.interval
        )
        if not due:
            return
        self._last_print = time.monotonic()
        p = item.progress
        share = 100.0 * p.items_processed / p.items_total if p.items_total else 100.0
        line = (
            f"[{split}] epoch {item.epoch}/{item.epoch_total} iteration {item.iteration} "
            f"items {p.items_processed}/{p.items_total} ({share:.0f}%)"
        )
        metrics = self._metrics(split, running=False)
        self._print(f"{line} | {metrics}" if metrics else line)

    def render_train(self, item: TrainingProgress) -> None:
        self._render("train", item)

    def render_valid(self, item: TrainingProgress) -> None:
        self._render("valid", item)

    def end_epoch(self, split: str, epoch: int) -> None:
        item = self._progress.get(split)
        total = item.epoch_total if item is not None else "?"
        metrics = self._metrics(split, running=True)
        self._print(
            f"[{split}] epoch {epoch}/{total} | {metrics}"
            if metrics
            else f"[{split}] epoch {epoch}/{total}"
        )
        self._states[split] = {}

    def message(self, text: str) -> None:
        self._print(text)

    def on_train_end(self, summary: str | None = None) -> None:
        if summary:
            self._print(summary)


def running_text(state: MetricState) -> str:
    """`Name <epoch value>`: the running part of a numeric entry formatted as
    `Name <value> (epoch <running>)`, or the running value itself otherwise."""
    formatted = state.entry.formatted
    marker = " (epoch "
    if marker in formatted and formatted.endswith(")"):
        return f"{state.name} {formatted.rsplit(marker, 1)[1][:-1]}"
    return f"{state.name} {_fmt(state.running)}"


def _fmt(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-3 or magnitude >= 1e5):
        return f"{value:.3e}"
    return f"{value:.3f}" if magnitude < 10 else f"{value:.2f}"
