"""What the Learner does with its experiment loggers and plots: views per split when it is
built, and the end of the run when `fit` returns or fails."""

from __future__ import annotations

import logging

from burn.train.logger import Split

log = logging.getLogger("burn.train")


def with_views(loggers: list, experiment_loggers: list, split: Split) -> list:
    """`loggers` of one split followed by each experiment logger's view of it; every view
    counts the steps of earlier epochs through the split's other loggers (after a resume)."""
    views = [logger.for_split(split) for logger in experiment_loggers]
    for view in views:
        view.history = list(loggers)
    return [*loggers, *views]


def end_run(learner, status: str) -> None:
    """Draw the plots (unless the run failed) and close the experiment loggers' runs.

    `status` is "finished", "interrupted" or "failed". A plot that cannot be drawn is logged,
    not raised: the trained model matters more than its picture.
    """
    builder = learner.b
    plots = getattr(builder, "_metric_plots", None)
    if plots is not None and status != "failed":
        from burn.train.plot import read_store, write_plots

        names = {
            split: [m.name for m in learner.metrics[split] if m.numeric]
            for split in learner.metrics
        }
        try:
            written = write_plots(read_store(learner.store, names, learner.epoch), plots)
            log.info("metric plots written to %s (%d files)", plots, len(written))
        except Exception as error:
            log.warning("could not draw the metric plots in %s: %s", plots, error)
    errors = []
    for logger in getattr(builder, "_experiment_loggers", []):
        try:
            logger.end_training(learner.model, status)
        except Exception as error:
            errors.append(error)
            log.warning("%r could not end its run: %s", logger, error)
    if errors and status != "failed":
        raise errors[0]
