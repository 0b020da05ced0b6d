"""`TensorBoardLogger`: a run's metrics as TensorBoard event files.

Written with the `tensorboard` package's own event writer and summary helpers (no
TensorFlow, no protobuf of our own), so `tensorboard --logdir DIR` shows them. The layout
follows the convention TensorBoard's users know from Keras: one run folder per split, the
same tags in both, so the training and validation curves of a metric share a chart.

```text
DIR/                     hyperparameters (HParams tab) and the config as text
DIR/train/events.*       iteration/<Metric> (step: the split's update count),
DIR/valid/events.*       epoch/<Metric> (step: the epoch)
```
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from burn.train.logger import Split
from burn.train.tracking.base import ExperimentLogger, Hyperparameter, Scalar, require


class TensorBoardLogger(ExperimentLogger):
    """Sends the Learner's numeric metrics to TensorBoard event files.

    Args:
        logdir: the folder to pass to `tensorboard --logdir`; by default `tensorboard/` in
            the Learner's artifact folder.
        hyperparameters: the run's config or a mapping, shown in the HParams tab.
        log_iterations: write every step's value too (default), not only epoch values.

    Needs `pip install "burn-train[tensorboard]"`.

    ```python
    import tempfile
    from burn.train import LearnerBuilder
    from burn.train.tracking import TensorBoardLogger

    builder = LearnerBuilder(tempfile.mkdtemp()).with_metric_logger(
        TensorBoardLogger(hyperparameters={"lr": 1e-3, "batch_size": 64})
    )
    ```
    """

    def __init__(
        self,
        logdir: str | Path | None = None,
        hyperparameters: object = None,
        *,
        log_iterations: bool = True,
    ):
        super().__init__(hyperparameters, log_iterations=log_iterations)
        require("tensorboard", "tensorboard")
        self._logdir = Path(logdir) if logdir is not None else None
        self._writers: dict[str | None, object] = {}
        self._config_text = (
            json.dumps(hyperparameters.to_dict(), indent=2)
            if hasattr(hyperparameters, "to_dict")
            else None
        )

    @property
    def logdir(self) -> Path:
        """Where the event files go."""
        if self._logdir is not None:
            return self._logdir
        if self.artifact_dir is not None:
            return self.artifact_dir / "tensorboard"
        return Path("tensorboard")

    def _writer(self, split: Split | None):
        key = None if split is None else split.value
        writer = self._writers.get(key)
        if writer is None:
            from tensorboard.summary.writer.event_file_writer import EventFileWriter

            folder = self.logdir if split is None else self.logdir / split.value
            writer = EventFileWriter(str(folder), flush_secs=30)
            self._writers[key] = writer
        return writer

    def _emit(self, split: Split | None, summary, step: int) -> None:
        from tensorboard.compat.proto import event_pb2

        event = event_pb2.Event(wall_time=time.time(), step=step, summary=summary)
        self._writer(split).add_event(event)

    # ------------------------------------------------------------------ ExperimentLogger
    def _open(self) -> None:
        self.logdir.mkdir(parents=True, exist_ok=True)

    def _write_hyperparameters(self, flat: dict[str, Hyperparameter]) -> None:
        from tensorboard.plugins.hparams import summary_v2 as hparams
        from tensorboard.plugins.text import summary_v2 as text

        self._emit(None, hparams.hparams_pb(flat), 0)
        body = self._config_text or json.dumps(flat, indent=2)
        # Markdown: four spaces make a code block, so the JSON keeps its layout.
        markdown = "\n".join("    " + line for line in body.splitlines())
        self._emit(None, text.text_pb("config", markdown), 0)

    def _write_scalars(self, split: Split, scope: str, scalars: list[Scalar]) -> None:
        from tensorboard.plugins.scalar import summary_v2 as scalar

        for item in scalars:
            self._emit(split, scalar.scalar_pb(f"{scope}/{item.name}", item.value), item.step)

    def flush(self) -> None:
        for writer in self._writers.values():
            writer.flush()

    def _finish(self, model, status: str) -> None:
        writers, self._writers = self._writers, {}
        for writer in writers.values():
            writer.close()

    def __repr__(self) -> str:
        return f"TensorBoardLogger({str(self.logdir)!r})"
