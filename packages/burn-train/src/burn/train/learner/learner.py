"""The `Learner`: runs epochs of training and validation, with metrics, checkpoints and resume.

Each epoch: for every training batch, take the learning rate from the scheduler, call
`model.train_step(batch)` (on each device's share of the batch when several devices are
given), step the optimizer with the gradients (every `grads_accumulation` batches), and feed
the item to the training metrics. Then `model.valid()` runs `valid_step` over the validation
batches. After both, the checkpointing strategy saves and deletes records, and the early
stopping strategy may end training.

A training strategy (`LearnerBuilder.with_training_strategy`) spreads this over processes: it
hands each process its shard of the loaders, shares the gradients and metric entries of each
step, and leaves rendering, logs and checkpoints to the main process (see `strategy.py`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from burn.data import Progress
from burn.optim import GradientsAccumulator, GradientsParams
from burn.train.checkpoint import CheckpointError
from burn.train.learner.split import split_batch
from burn.train.learner.strategy import MetricUpdate
from burn.train.learner.summary import LearnerSummary
from burn.train.logger import InMemoryMetricLogger, MetricStore, Split
from burn.train.metric.base import MetricError, MetricMetadata, adapt, metric_name
from burn.train.metric.inputs import read_ahead
from burn.train.output import TrainOutput
from burn.train.renderer.base import MetricState, TrainingProgress
from burn.train.tracking.run import end_run

log = logging.getLogger("burn.train")


@dataclass
class RegisteredMetric:
    """A metric as the Learner keeps it: the metric, and whether its value is plotted."""

    metric: object
    numeric: bool

    @property
    def name(self) -> str:
        return metric_name(self.metric)


class _Epoch:
    """One pass over a loader, with its progress in items (or in batches for plain iterables).

    `prefetch()` loads the next batch early (the loop then gets it from there), so that the
    loading overlaps what the device still computes of the step; `progress()` is read before
    it, since a loader counts the items it has loaded."""

    _EMPTY = object()

    def __init__(self, loader):
        self.iterator = loader.iter() if hasattr(loader, "iter") else iter(loader)
        self.total_batches = len(loader) if hasattr(loader, "__len__") else 0
        self.count = 0
        self._ahead = _Epoch._EMPTY

    def __iter__(self):
        return self

    def __next__(self):
        batch, self._ahead = self._ahead, _Epoch._EMPTY
        if batch is _Epoch._EMPTY:
            batch = next(self.iterator)
        self.count += 1
        return batch

    def prefetch(self) -> None:
        """Load the next batch now (nothing when the loader is done)."""
        if self._ahead is _Epoch._EMPTY:
            self._ahead = next(self.iterator, _Epoch._EMPTY)

    def progress(self) -> Progress:
        get = getattr(self.iterator, "progress", None)
        if get is not None:
            return get()
        return Progress(self.count, max(self.total_batches, self.count))

    def close(self) -> None:
        close = getattr(self.iterator, "close", None)
        if close is not None:
            close()


class Learner:
    """Trains a model; built by `LearnerBuilder(...).build(model, optim, lr_or_scheduler)`."""

    def __init__(self, builder, model, optim, scheduler):
        self.b = builder
        self.model = model
        self.optim = optim
        self.scheduler = scheduler
        self.training_strategy = builder._training_strategy
        self.main = self.training_strategy.is_main()
        if self.main:
            self.store = MetricStore(builder._train_loggers(), builder._valid_loggers())
            self.renderer = builder._make_renderer()
        else:  # other processes keep the entries in memory only, and show nothing
            self.store = MetricStore([InMemoryMetricLogger()], [InMemoryMetricLogger()])
            self.renderer = builder._silent_renderer()
        self.metrics = {Split.Train: builder._metrics_train, Split.Valid: builder._metrics_valid}
        self.epoch = 0
        self.stopped_early = False
        self.interrupted = False

    # ------------------------------------------------------------------ checkpoints
    def _save_checkpoint(self, epoch: int) -> None:
        ckpt = self.b._checkpointers
        if ckpt is None or not self.main:
            return
        actions = self.b._strategy.checkpointing(epoch, self.store)
        for action in actions:
            if action.kind == "save":
                ckpt["model"].save(epoch, self.model.into_record())
                ckpt["optim"].save(epoch, self.optim.to_record())
                ckpt["scheduler"].save(epoch, self.scheduler.to_record())
                log.info("saved the checkpoint of epoch %d in %s", epoch, ckpt["model"].directory)
            else:
                for checkpointer in ckpt.values():
                    checkpointer.delete(action.epoch)
                log.info("deleted the checkpoint of epoch %d", action.epoch)

    def _resume(self, epoch: int, train_loader, valid_loader) -> None:
        ckpt = self.b._checkpointers
        if ckpt is None:
            raise CheckpointError(
                "checkpoint(epoch) needs a checkpointer: call with_file_checkpointer(recorder)"
            )
        record = ckpt["model"].restore(epoch, self.model.record_schema())
        self.model = self.model.load_record(record)
        self.optim = self.optim.load_record(ckpt["optim"].restore(epoch))
        self.scheduler = self.scheduler.load_record(ckpt["scheduler"].restore(epoch))
        # Replay the strategies over the logged epochs so they know what was kept and when
        # the metric last improved, and draw the shuffles of the epochs already done so the
        # loaders continue the same sequence.
        for done in range(1, epoch + 1):
            self.b._strategy.checkpointing(done, self.store)
            if self.b._early_stopping is not None:
                self.b._early_stopping.should_stop(done, self.store)
            for loader in (train_loader, valid_loader):
                if loader is not None and hasattr(loader, "iter"):
                    loader.iter().close()
        log.info("resumed from the checkpoint of epoch %d", epoch)

    # ------------------------------------------------------------------ metrics
    def _update_metrics(self, split: Split, items: list, metadata: MetricMetadata) -> None:
        render = self.renderer.update_train if split is Split.Train else self.renderer.update_valid
        updates = []
        # Every item adapted first, so that the tensors the metrics read come back together.
        inputs: list[dict] = []
        for item in items:
            adapted: dict = {}
            for registered in self.metrics[split]:
                input_type = getattr(registered.metric, "input_type", None)
                if input_type not in adapted:
                    adapted[input_type] = adapt(item, input_type)
            inputs.append(adapted)
        with read_ahead(value for adapted in inputs for value in adapted.values()):
            for adapted in inputs:
                for registered in self.metrics[split]:
                    metric = registered.metric
                    input_type = getattr(metric, "input_type", None)
                    entry = metric.update(adapted[input_type], metadata)
                    update = MetricUpdate(registered, entry)
                    if registered.numeric:
                        update.value = metric.value()
                        update.running_value = metric.running_value()
                    updates.append(update)
        for update in self.training_strategy.reduce_metrics(split, updates, metadata):
            self.store.log(split, update.entry, metadata.epoch)
            if update.registered.numeric:
                render(MetricState(update.entry, update.value, update.running_value))
            else:
                render(MetricState(update.entry))

    def _clear_metrics(self, split: Split) -> None:
        for registered in self.metrics[split]:
            registered.metric.clear()

    # ------------------------------------------------------------------ steps
    def local_train_step(self, batch) -> tuple[GradientsParams, list]:
        """This process's gradients and items for `batch` (split over its devices, if several)."""
        devices = self.b._devices
        if len(devices) <= 1:
            output = self.model.train_step(batch)
            _check_output(output)
            return output.grads, [output.item]
        parts = split_batch(batch, devices)
        total = sum(size for _, size in parts)
        main = devices[0]
        summed: GradientsParams | None = None
        items = []
        for (part, size), device in zip(parts, devices, strict=False):
            model = self.model if device == main else self.model.fork(device)
            output = model.train_step(part)
            _check_output(output)
            items.append(output.item)
            grads = output.grads.to_device(main) if device != main else output.grads
            weight = size / total
            weighted = GradientsParams({pid: g * weight for pid, g in grads.items()})
            if summed is None:
                summed = weighted
            else:
                for pid, g in weighted.items():
                    old = summed.remove(pid)
                    summed.register(pid, g if old is None else old + g)
        return summed, items

    def _train_epoch(self, loader, epoch: int, epoch_total: int) -> None:
        self._clear_metrics(Split.Train)
        accumulation = self.b._grads_accumulation
        accumulator = GradientsAccumulator() if accumulation > 1 else None
        pending = 0
        epoch_iter = _Epoch(loader)
        devices = _devices_of(self.model)
        iteration = 0
        try:
            for batch in epoch_iter:
                iteration += 1
                lr = self.scheduler.step()
                grads, items = self.training_strategy.train_step(self, batch)
                if accumulator is None:
                    self.model = self.optim.step(lr, self.model, grads)
                else:
                    accumulator.accumulate(self.model, grads)
                    pending += 1
                    if pending >= accumulation:
                        self.model = self.optim.step(lr, self.model, accumulator.grads())
                        pending = 0
                progress = epoch_iter.progress()
                _overlap_reads(devices, epoch_iter)
                metadata = MetricMetadata(progress, epoch, epoch_total, iteration, float(lr))
                self._update_metrics(Split.Train, items, metadata)
                self.renderer.render_train(
                    TrainingProgress(progress, epoch, epoch_total, iteration)
                )
                if self.training_strategy.any_process(self.b._interrupter.should_stop()):
                    self.interrupted = True
                    break
        finally:
            epoch_iter.close()
        self.store.end_epoch(Split.Train, epoch)
        self.renderer.end_epoch("train", epoch)

    def _valid_epoch(self, loader, epoch: int, epoch_total: int) -> None:
        self._clear_metrics(Split.Valid)
        model = self.model.valid()
        epoch_iter = _Epoch(loader)
        devices = _devices_of(model)
        iteration = 0
        try:
            for batch in epoch_iter:
                iteration += 1
                items = self.training_strategy.valid_step(model, batch)
                progress = epoch_iter.progress()
                _overlap_reads(devices, epoch_iter)
                metadata = MetricMetadata(progress, epoch, epoch_total, iteration, None)
                self._update_metrics(Split.Valid, items, metadata)
                self.renderer.render_valid(
                    TrainingProgress(progress, epoch, epoch_total, iteration)
                )
                if self.training_strategy.any_process(self.b._interrupter.should_stop()):
                    self.interrupted = True
                    break
        finally:
            epoch_iter.close()
        self.store.end_epoch(Split.Valid, epoch)
        self.renderer.end_epoch("valid", epoch)

    # ------------------------------------------------------------------ fit
    def fit(self, train_loader, valid_loader=None):
        """Train for the configured epochs and return the trained model (on its autodiff
        backend). `valid_loader` may be None to skip validation."""
        b = self.b
        installer = b._app_logger if self.main else None
        if installer is not None:
            installer.install()
        epoch_total = b._num_epochs
        start = 1
        self.renderer_started = False
        try:
            train_loader, valid_loader = self.training_strategy.prepare(
                self, train_loader, valid_loader
            )
            if b._checkpoint is not None:
                self._resume(b._checkpoint, train_loader, valid_loader)
                start = b._checkpoint + 1
            log.info(
                "training %s for epochs %d..%d on %s",
                type(self.model).__name__,
                start,
                epoch_total,
                ", ".join(map(repr, b._devices)) or "its device",
            )
            _start_renderer(self.renderer, b._interrupter, epoch_total)
            last = start - 1
            for epoch in range(start, epoch_total + 1):
                self.epoch = epoch
                began = time.perf_counter()
                self._train_epoch(train_loader, epoch, epoch_total)
                if self.interrupted:
                    log.info("training interrupted during epoch %d", epoch)
                    break
                if valid_loader is not None:
                    self._valid_epoch(valid_loader, epoch, epoch_total)
                    if self.interrupted:
                        log.info("training interrupted during validation of epoch %d", epoch)
                        break
                last = epoch
                self._log_epoch(epoch, time.perf_counter() - began)
                self._save_checkpoint(epoch)
                if b._early_stopping is not None and self.training_strategy.main_decides(
                    b._early_stopping.should_stop(epoch, self.store)
                ):
                    self.stopped_early = True
                    text = f"early stopping after epoch {epoch}: {b._early_stopping!r}"
                    log.info(text)
                    _message(self.renderer, text)
                    break
            self.store.flush()
            self.training_strategy.finish(self)
            if self.main:
                end_run(self, "interrupted" if self.interrupted else "finished")
            summary = None
            if b._summary and self.main:
                summary = str(self.summary(max(last, self.epoch if self.interrupted else last)))
                log.info("\n%s", summary)
            _end_renderer(self.renderer, summary)
            return self.model
        except BaseException:
            self.store.flush()
            if self.main:
                end_run(self, "failed")
            _end_renderer(self.renderer, None)
            raise
        finally:
            if installer is not None:
                installer.uninstall()

    def _log_epoch(self, epoch: int, seconds: float) -> None:
        parts = []
        for split in (Split.Train, Split.Valid):
            for registered in self.metrics[split]:
                value = self.store.aggregate(registered.name, epoch, split)
                if value is not None:
                    parts.append(f"{split.value} {registered.name} {value:.4f}")
        log.info("epoch %d done in %.1f s: %s", epoch, seconds, "; ".join(parts))

    def summary(self, epochs: int | None = None) -> LearnerSummary:
        """The table of each numeric metric's best and worst epochs."""
        names = {
            split: [m.name for m in self.metrics[split] if m.numeric] for split in self.metrics
        }
        model = self.model
        label = (
            f"{type(model).__name__} ({model.num_params()} parameters)"
            if hasattr(model, "num_params")
            else type(model).__name__
        )
        return LearnerSummary.from_store(self.store, names, epochs or self.epoch, label)


def _devices_of(model) -> list:
    """The devices holding `model`'s parameters (none for a model without any)."""
    devices = getattr(model, "devices", None)
    return list(devices()) if callable(devices) else []


def _overlap_reads(devices: list, epoch_iter: _Epoch) -> None:
    """Before the metrics read a step's outputs: start the step's queued work on each device
    (`Backend.submit`) and load the next batch while it runs.

    On a GPU the metrics' first read would otherwise start the step's kernels and wait for all
    of them, with the host idle; on a backend that computes each op when called, submitting
    does nothing and the batch is only loaded earlier."""
    for device in devices:
        backend = device.backend
        if backend is not None:
            backend.submit(device)
    epoch_iter.prefetch()


def _check_output(output) -> None:
    if not isinstance(output, TrainOutput):
        raise MetricError(
            f"train_step must return a TrainOutput(model, grads, item), got {type(output).__name__}"
        )


def _start_renderer(renderer, interrupter, epoch_total: int) -> None:
    start = getattr(renderer, "start", None)
    if start is not None:
        start(interrupter, epoch_total)


def _end_renderer(renderer, summary) -> None:
    end = getattr(renderer, "on_train_end", None)
    if end is not None:
        end(summary)


def _message(renderer, text: str) -> None:
    message = getattr(renderer, "message", None)
    if message is not None:
        message(text)


def artifact_path(directory, *parts: str) -> Path:
    return Path(directory).joinpath(*parts)
