"""The live dashboard: a `rich` display redrawn a few times a second while training runs.

It shows the status (split, epoch, step, elapsed time), a progress bar with an ETA for the
training and the validation part of the epoch, every metric's latest text, and one plot per
numeric metric with the training curve and the validation curve against epochs. Pressing `q`
stops training cleanly: the step in flight finishes, `fit` returns the model, the terminal is
given back as it was.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time

import numpy as np
from burn.train.renderer.base import MetricsRendererBase, MetricState, TrainingProgress
from burn.train.renderer.cli import running_text

_TRAIN_STYLE = "cyan"
_VALID_STYLE = "magenta"
_MAX_POINTS = 4000  # per series; older points are merged pairwise beyond this


class _Series:
    """Points (x = fractional epoch, y) of one curve, thinned to a bounded size."""

    def __init__(self):
        self.xs: list[float] = []
        self.ys: list[float] = []

    def add(self, x: float, y: float) -> None:
        if y is None or math.isnan(y) or math.isinf(y):
            return
        self.xs.append(x)
        self.ys.append(y)
        if len(self.xs) > _MAX_POINTS:
            self.xs = [(a + b) / 2 for a, b in zip(self.xs[0::2], self.xs[1::2], strict=False)]
            self.ys = [(a + b) / 2 for a, b in zip(self.ys[0::2], self.ys[1::2], strict=False)]


_BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


def braille_plot(series: list[tuple[_Series, str]], width: int, height: int):
    """A `rich.text.Text` chart of several series in braille dots (2x4 dots per character)."""
    from rich.text import Text

    present = [s for s, _ in series if s.xs]
    if not present:
        return Text("waiting for values...", style="dim")
    x_lo = min(min(s.xs) for s in present)
    x_hi = max(max(s.xs) for s in present)
    y_lo = min(min(s.ys) for s in present)
    y_hi = max(max(s.ys) for s in present)
    if x_hi == x_lo:
        x_hi = x_lo + 1.0
    if y_hi == y_lo:
        y_lo, y_hi = y_lo - 0.5, y_hi + 0.5
    label_width = max(len(_short(y_hi)), len(_short(y_lo)))
    plot_width = max(width - label_width - 1, 4)
    dots_w, dots_h = plot_width * 2, height * 4
    cells: list[list[int]] = [[0] * plot_width for _ in range(height)]
    owner: list[list[str | None]] = [[None] * plot_width for _ in range(height)]
    for s, style in series:
        if not s.xs:
            continue
        xs = np.asarray(s.xs)
        ys = np.asarray(s.ys)
        dx = np.minimum(((xs - x_lo) / (x_hi - x_lo) * (dots_w - 1) + 0.5).astype(int), dots_w - 1)
        dy = np.minimum(((y_hi - ys) / (y_hi - y_lo) * (dots_h - 1) + 0.5).astype(int), dots_h - 1)
        dots = np.unique(dy * dots_w + dx)  # each dot once: a frame costs the plot's size
        for row_dot, col_dot in zip(*np.divmod(dots, dots_w), strict=True):
            row, col = row_dot // 4, col_dot // 2
            cells[row][col] |= _BRAILLE_BITS[row_dot % 4][col_dot % 2]
            owner[row][col] = style
    text = Text()
    for row in range(height):
        label = _short(y_hi) if row == 0 else _short(y_lo) if row == height - 1 else ""
        text.append(label.rjust(label_width) + "│", style="dim")
        for col in range(plot_width):
            bits = cells[row][col]
            text.append(chr(0x2800 + bits) if bits else " ", style=owner[row][col] or "")
        if row < height - 1:
            text.append("\n")
    text.append("\n" + " " * label_width + "└" + "─" * plot_width, style="dim")
    left, right = f"epoch {x_lo:.2f}", f"{x_hi:.2f}"
    gap = max(plot_width - len(left) - len(right), 1)
    text.append("\n" + " " * (label_width + 1) + left + " " * gap + right, style="dim")
    return text


def _short(value: float) -> str:
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-2 or magnitude >= 1e4):
        return f"{value:.2e}"
    return f"{value:.3g}"


def _duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds) or math.isinf(seconds):
        return "--:--"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class _KeyReader:
    """Reads single keys from a terminal's stdin in a thread; `q` calls `on_quit`."""

    def __init__(self, on_quit):
        self.on_quit = on_quit
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved = None

    def start(self) -> bool:
        try:
            if not sys.stdin.isatty():
                return False
            import termios
            import tty

            fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
        except (ImportError, OSError, ValueError, AttributeError):
            return False
        self._thread = threading.Thread(target=self._run, name="burn-keys", daemon=True)
        self._thread.start()
        return True

    def _run(self) -> None:
        import select

        fd = sys.stdin.fileno()
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    key = os.read(fd, 1)
                    if key in (b"q", b"Q"):
                        self.on_quit()
            except (OSError, ValueError):
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self._saved is not None:
            import termios

            try:
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)
            except (OSError, ValueError):
                pass
            self._saved = None


class TuiMetricsRenderer(MetricsRendererBase):
    """The live `rich` dashboard (see the module's docstring).

    Args:
        console: where to draw (a `rich.console.Console`; stdout by default).
        refresh_per_second: redraws per second.
        plot_height: rows of each metric's plot.
        live: False draws nothing by itself: call `renderable()` to get the current frame
            (tests, or embedding the dashboard in another `rich` layout).
    """

    def __init__(
        self, console=None, refresh_per_second: float = 2.0, plot_height: int = 8, live: bool = True
    ):
        from rich.console import Console

        self.console = console if console is not None else Console()
        self.refresh_per_second = refresh_per_second
        self.plot_height = plot_height
        self.use_live = live
        self._lock = threading.Lock()
        self._live = None
        self._keys: _KeyReader | None = None
        self._interrupter = None
        self._stopping = False
        self._started = time.monotonic()
        self._split = "train"
        self._progress: dict[str, TrainingProgress] = {}
        self._split_started: dict[str, float] = {}
        self._epoch_seconds: list[float] = []
        self._epoch_started = time.monotonic()
        self._epoch_total = 0
        self._text: dict[str, dict[str, MetricState]] = {"train": {}, "valid": {}}
        self._curves: dict[str, dict[str, _Series]] = {}
        self._messages: list[str] = []

    # -------------------------------------------------------------- lifecycle
    def start(self, interrupter=None, epoch_total: int = 0) -> None:
        self._interrupter = interrupter
        self._epoch_total = epoch_total
        self._started = self._epoch_started = time.monotonic()
        if not self.use_live:
            return
        from rich.live import Live

        self._live = Live(
            console=self.console,
            get_renderable=self.renderable,
            refresh_per_second=self.refresh_per_second,
            transient=False,
        )
        self._live.start()
        if interrupter is not None:
            self._keys = _KeyReader(self._quit)
            if not self._keys.start():
                self._keys = None

    def _quit(self) -> None:
        self._stopping = True
        if self._interrupter is not None:
            self._interrupter.stop()

    def close(self) -> None:
        if self._keys is not None:
            self._keys.stop()
            self._keys = None
        if self._live is not None:
            self._live.stop()
            self._live = None

    def on_train_end(self, summary: str | None = None) -> None:
        self.close()
        if summary:
            self.console.print(summary, highlight=False, markup=False)

    # -------------------------------------------------------------- updates
    def _update(self, split: str, state: MetricState) -> None:
        with self._lock:
            self._text[split][state.name] = state
            if state.is_numeric():
                item = self._progress.get(split)
                x = _epoch_position(item)
                curves = self._curves.setdefault(state.name, {})
                curves.setdefault(split, _Series()).add(x, state.value)

    def update_train(self, state: MetricState) -> None:
        self._update("train", state)

    def update_valid(self, state: MetricState) -> None:
        self._update("valid", state)

    def _render(self, split: str, item: TrainingProgress) -> None:
        with self._lock:
            if self._split != split or split not in self._split_started:
                self._split_started[split] = time.monotonic()
            if item.iteration == 1:
                self._split_started[split] = time.monotonic()
                if split == "train":
                    self._epoch_started = time.monotonic()
            self._split = split
            self._progress[split] = item
            self._epoch_total = item.epoch_total

    def render_train(self, item: TrainingProgress) -> None:
        self._render("train", item)

    def render_valid(self, item: TrainingProgress) -> None:
        self._render("valid", item)

    def end_epoch(self, split: str, epoch: int) -> None:
        if split == "valid" or "valid" not in self._split_started:
            with self._lock:
                self._epoch_seconds.append(time.monotonic() - self._epoch_started)

    def message(self, text: str) -> None:
        with self._lock:
            self._messages = (self._messages + [text])[-3:]

    # -------------------------------------------------------------- drawing
    def _eta(self, split: str) -> float | None:
        item = self._progress.get(split)
        started = self._split_started.get(split)
        if item is None or started is None or not item.progress.items_processed:
            return None
        done = item.progress.items_processed
        rate = (time.monotonic() - started) / done
        return rate * (item.progress.items_total - done)

    def renderable(self):
        """The current frame as a `rich` renderable."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            item = self._progress.get(self._split)
            epoch = item.epoch if item else 0
            status = Text()
            mode = (
                "Stopping"
                if self._stopping
                else ("Training" if self._split == "train" else "Validating")
            )
            status.append(f"{mode} ", style="bold")
            status.append(f"| epoch {epoch}/{self._epoch_total} ")
            if item is not None:
                status.append(f"| iteration {item.iteration} ")
            status.append(f"| elapsed {_duration(time.monotonic() - self._started)} ")
            if self._epoch_seconds and self._epoch_total:
                mean = sum(self._epoch_seconds) / len(self._epoch_seconds)
                remaining = max(self._epoch_total - len(self._epoch_seconds), 0) * mean
                status.append(f"| training ETA {_duration(remaining)} ")
            if self._keys is not None:
                status.append("| press q to stop", style="dim")

            bars = Table.grid(padding=(0, 1))
            bars.add_column(width=6)
            bars.add_column(ratio=1)
            bars.add_column(justify="right")
            for split, style in (("train", _TRAIN_STYLE), ("valid", _VALID_STYLE)):
                progress = self._progress.get(split)
                if progress is None:
                    continue
                done, total = progress.progress.items_processed, progress.progress.items_total
                bar = ProgressBar(
                    total=max(total, 1), completed=done, complete_style=style, finished_style=style
                )
                share = 100.0 * done / total if total else 100.0
                bars.add_row(
                    Text(split, style=style),
                    bar,
                    f"{done}/{total} {share:3.0f}% ETA {_duration(self._eta(split))}",
                )

            metrics = Table.grid(padding=(0, 2))
            metrics.add_column(style=_TRAIN_STYLE)
            metrics.add_column(style=_VALID_STYLE)
            names = list(dict.fromkeys([*self._text["train"], *self._text["valid"]]))
            for name in names:
                cells = []
                for split in ("train", "valid"):
                    state = self._text[split].get(name)
                    if state is None:
                        cells.append("")
                    elif state.is_numeric():
                        cells.append(f"{split}: {running_text(state)}")
                    else:
                        cells.append(f"{split}: {state.entry.formatted}")
                metrics.add_row(*cells)

            width = max(self.console.width, 40)
            columns = 2 if width >= 100 and len(self._curves) > 1 else 1
            plot_width = max(width // columns - 6, 20)
            plots = Table.grid(padding=(0, 1), expand=True)
            for _ in range(columns):
                plots.add_column(ratio=1)
            panels = []
            for name, curves in self._curves.items():
                series = [
                    (curves[s], st)
                    for s, st in (("train", _TRAIN_STYLE), ("valid", _VALID_STYLE))
                    if s in curves
                ]
                title = Text(name)
                title.append("  train", style=_TRAIN_STYLE)
                title.append("  valid", style=_VALID_STYLE)
                panels.append(
                    Panel(
                        braille_plot(series, plot_width, self.plot_height),
                        title=title,
                        title_align="left",
                    )
                )
            for i in range(0, len(panels), columns):
                row = panels[i : i + columns]
                plots.add_row(*row, *([""] * (columns - len(row))))

            parts = [Panel(status, title="burn", title_align="left"), bars]
            if names:
                parts.append(Panel(metrics, title="Metrics (epoch so far)", title_align="left"))
            if panels:
                parts.append(plots)
            for line in self._messages:
                parts.append(Text(line, style="dim"))
            return Group(*parts)


def _epoch_position(item: TrainingProgress | None) -> float:
    if item is None:
        return 0.0
    p = item.progress
    share = p.items_processed / p.items_total if p.items_total else 1.0
    return item.epoch - 1 + share
