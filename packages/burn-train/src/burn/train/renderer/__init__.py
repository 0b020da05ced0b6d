"""Renderers: the live `rich` dashboard on a terminal, plain lines everywhere else."""

from __future__ import annotations

import sys

from burn.train.renderer.base import (
    MetricsRenderer,
    MetricsRendererBase,
    MetricState,
    TrainingProgress,
)
from burn.train.renderer.cli import CliMetricsRenderer
from burn.train.renderer.tui import TuiMetricsRenderer


def default_renderer(stream=None) -> MetricsRendererBase:
    """The dashboard when stdout is an interactive terminal, plain lines otherwise (CI, pipes,
    files, `TERM=dumb`)."""
    out = stream if stream is not None else sys.stdout
    try:
        terminal = out.isatty()
    except (AttributeError, ValueError):
        terminal = False
    import os

    if terminal and os.environ.get("TERM") != "dumb" and not os.environ.get("CI"):
        return TuiMetricsRenderer()
    return CliMetricsRenderer(stream)


__all__ = [
    "CliMetricsRenderer",
    "MetricState",
    "MetricsRenderer",
    "MetricsRendererBase",
    "TrainingProgress",
    "TuiMetricsRenderer",
    "default_renderer",
]
