"""Metric plots as images: one PNG per numeric metric, training and validation over epochs.

Each picture shows a metric's epoch values (the mean of the epoch's steps weighted by their
items, the numbers of the Learner's summary) for training and validation, with the training
steps drawn faintly behind them (step `i` of `n` in epoch `e` at `e - 1 + i / n`, so an epoch's
steps lead up to its mean). When an evaluator wrote a `test/` split, its value is a dashed
line.

Made at the end of training by `LearnerBuilder.with_metric_plots()`, or afterwards from the
text logs of an artifact folder:

```sh
python -m burn.train.plot ARTIFACT_DIR        # writes ARTIFACT_DIR/plots/<Metric>.png
```

Drawn with matplotlib's object API (no pyplot, so no global state or window);
`pip install "burn-train[plot]"`.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from burn.record import atomic_write
from burn.train.logger import aggregate
from burn.train.metric.base import NumericEntry
from burn.train.tracking.base import TrackingError, require

SPLITS = ("train", "valid", "test")
_EPOCH_DIR = re.compile(r"epoch-(\d+)")
_COLORS = {"train": "#1f77b4", "valid": "#ff7f0e", "test": "#2ca02c"}
_LABELS = {"train": "training", "valid": "validation", "test": "test"}


@dataclass
class MetricCurves:
    """One metric's values: per split, each epoch's entries (`epoch -> [NumericEntry]`)."""

    name: str
    splits: dict[str, dict[int, list[NumericEntry]]] = field(default_factory=dict)

    def add(self, split: str, epoch: int, entries: list[NumericEntry]) -> None:
        if entries:
            self.splits.setdefault(split, {})[epoch] = list(entries)

    def epoch_values(self, split: str) -> list[tuple[int, float]]:
        """`(epoch, value)` of each epoch of `split`, in order."""
        epochs = self.splits.get(split, {})
        return [(epoch, aggregate(epochs[epoch])) for epoch in sorted(epochs)]

    def step_values(self, split: str) -> list[tuple[float, float]]:
        """`(x, value)` of each step, step `i` of `n` of epoch `e` at `e - 1 + i / n`."""
        points = []
        epochs = self.splits.get(split, {})
        for epoch in sorted(epochs):
            entries = epochs[epoch]
            for i, entry in enumerate(entries, start=1):
                points.append((epoch - 1 + i / len(entries), entry.value))
        return points


def _read_log(path: Path) -> list[NumericEntry] | None:
    entries = []
    for line in path.read_text(encoding="utf8").splitlines():
        if not line.strip():
            continue
        try:
            entries.append(NumericEntry.deserialize(line))
        except ValueError:
            return None  # a text metric: nothing to plot
    return entries


def read_artifact_dir(artifact_dir: str | Path) -> dict[str, MetricCurves]:
    """Every numeric metric logged under `train/`, `valid/` and `test/` of an artifact folder,
    keyed by its log file's name without `.log`."""
    root = Path(artifact_dir)
    if not root.is_dir():
        raise TrackingError(f"{root}: no such artifact folder")
    curves: dict[str, MetricCurves] = {}
    for split in SPLITS:
        folder = root / split
        if not folder.is_dir():
            continue
        for epoch_dir in sorted(folder.iterdir()):
            match = _EPOCH_DIR.fullmatch(epoch_dir.name)
            if match is None or not epoch_dir.is_dir():
                continue
            for log in sorted(epoch_dir.glob("*.log")):
                entries = _read_log(log)
                if entries:
                    curve = curves.setdefault(log.stem, MetricCurves(log.stem.replace("_", " ")))
                    curve.add(split, int(match.group(1)), entries)
    return curves


def read_store(store, names: dict, epochs: int) -> dict[str, MetricCurves]:
    """The numeric metrics of a Learner's `MetricStore` (`names`: split -> metric names),
    epochs 1..`epochs`, read through its loggers (the run's memory, then the text logs)."""
    curves: dict[str, MetricCurves] = {}
    for split, metric_names in names.items():
        loggers = store.loggers[split]
        for name in metric_names:
            curve = curves.setdefault(file_stem(name), MetricCurves(name))
            for epoch in range(1, epochs + 1):
                for logger in loggers:
                    entries = logger.read_numeric(name, epoch)
                    if entries:
                        curve.add(split.value, epoch, entries)
                        break
    return curves


def file_stem(name: str) -> str:
    """A metric's picture name: its log file's name without the extension."""
    return name.replace(" ", "_").replace("/", "_")


def render_png(curves: MetricCurves) -> bytes:
    """The PNG of one metric."""
    require("matplotlib", "plot")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(7.0, 4.2), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    steps = curves.step_values("train")
    if len(steps) > 1:
        xs, ys = zip(*steps, strict=True)
        axes.plot(xs, ys, color=_COLORS["train"], alpha=0.3, linewidth=0.8, label="training steps")
    for split in ("train", "valid"):
        values = curves.epoch_values(split)
        values = [(e, v) for e, v in values if not math.isnan(v)]
        if values:
            xs, ys = zip(*values, strict=True)
            axes.plot(
                xs,
                ys,
                color=_COLORS[split],
                marker="o",
                linewidth=2.0,
                label=f"{_LABELS[split]} epoch mean (last: {ys[-1]:.4g})",
            )
    for _, value in curves.epoch_values("test")[-1:]:
        axes.axhline(value, color=_COLORS["test"], linestyle="--", label=f"test ({value:.4g})")
    axes.set_title(curves.name)
    axes.set_xlabel("epoch")
    axes.set_ylabel(curves.name)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize=8)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_plots(curves: dict[str, MetricCurves], directory: str | Path) -> list[Path]:
    """One `<Metric>.png` per metric with at least one value, each written atomically."""
    directory = Path(directory)
    written = []
    for stem, curve in sorted(curves.items()):
        if not curve.splits:
            continue
        path = directory / f"{stem}.png"
        atomic_write(path, [render_png(curve)])
        written.append(path)
    return written


def plot_artifact_dir(artifact_dir: str | Path, output_dir: str | Path | None = None) -> list[Path]:
    """Read an artifact folder's metric logs and write the PNGs (default: `plots/` in it)."""
    curves = read_artifact_dir(artifact_dir)
    target = Path(output_dir) if output_dir is not None else Path(artifact_dir) / "plots"
    return write_plots(curves, target)


__all__ = [
    "MetricCurves",
    "plot_artifact_dir",
    "read_artifact_dir",
    "read_store",
    "render_png",
    "write_plots",
]
