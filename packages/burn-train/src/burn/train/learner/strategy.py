"""How the Learner spreads training over processes: the `TrainingStrategy` protocol.

The Learner itself knows one process. A strategy given to
`LearnerBuilder.with_training_strategy(...)` decides, at a few points of each step, what the
other processes of a job must share: the loaders it iterates (each process its shard), the
gradients of a step (averaged), the metric entries (combined), and the decisions to stop. It
also says whether this process is the *main* one, the only one that renders, writes logs and
saves checkpoints.

`SingleProcess` is the default: nothing is shared. `burn.collective.DataParallel` (the
`burn-collective` distribution) implements the protocol over MPI; burn-train does not depend on
it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass
class MetricUpdate:
    """One metric's entry after one item, with the numbers the renderer shows.

    `value` and `running_value` are None for a metric that is not numeric.
    """

    registered: Any
    entry: Any
    value: float | None = None
    running_value: float | None = None


@runtime_checkable
class TrainingStrategy(Protocol):
    """What the Learner asks of a strategy; `SingleProcess` shows the plain answers."""

    def is_main(self) -> bool:
        """Whether this process renders, writes metric logs and saves checkpoints."""
        ...

    def prepare(self, learner: Any, train_loader: Any, valid_loader: Any) -> tuple[Any, Any]:
        """Called once when `fit` starts: align the model across processes and return the
        loaders this process iterates."""
        ...

    def train_step(self, learner: Any, batch: Any) -> tuple[Any, list]:
        """The gradients of one step (as every process must apply them) and its items."""
        ...

    def valid_step(self, model: Any, batch: Any) -> list:
        """The items of one validation step (none when this process has no share of it)."""
        ...

    def reduce_metrics(
        self, split: Any, updates: list[MetricUpdate], metadata: Any
    ) -> list[MetricUpdate]:
        """The entries to log and render for one step (at `metadata`), given this process's
        own."""
        ...

    def any_process(self, flag: bool) -> bool:
        """True when `flag` is true in any process (a stop asked for anywhere stops all)."""
        ...

    def main_decides(self, flag: bool) -> bool:
        """The main process's `flag`, in every process (decisions read from its logs)."""
        ...

    def finish(self, learner: Any) -> None:
        """Called when training ends normally (a last check across processes)."""
        ...


class SingleProcess:
    """The default strategy: one process trains alone (on one device or several)."""

    def is_main(self) -> bool:
        return True

    def prepare(self, learner: Any, train_loader: Any, valid_loader: Any) -> tuple[Any, Any]:
        return train_loader, valid_loader

    def train_step(self, learner: Any, batch: Any) -> tuple[Any, list]:
        return learner.local_train_step(batch)

    def valid_step(self, model: Any, batch: Any) -> list:
        return [model.valid_step(batch)]

    def reduce_metrics(
        self, split: Any, updates: list[MetricUpdate], metadata: Any
    ) -> list[MetricUpdate]:
        return updates

    def any_process(self, flag: bool) -> bool:
        return flag

    def main_decides(self, flag: bool) -> bool:
        return flag

    def finish(self, learner: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "SingleProcess()"
