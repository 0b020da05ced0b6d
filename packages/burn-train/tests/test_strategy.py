"""The training-strategy hook: what the Learner asks a strategy, and what a non-main process
leaves alone."""

from __future__ import annotations

import numpy as np
import pytest
from burn.optim import AdamConfig
from burn.record import DefaultRecorder
from burn.train import LearnerBuilder, SingleProcess, TrainingStrategy
from burn.train.metric import AccuracyMetric, LossMetric


class Silent:
    def update_train(self, state):
        pass

    def update_valid(self, state):
        pass

    def render_train(self, progress):
        pass

    def render_valid(self, progress):
        pass


class Recording(SingleProcess):
    """One process alone, playing a process that is not the main one, counting the calls."""

    def __init__(self, main: bool):
        self.main = main
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def is_main(self) -> bool:
        return self.main

    def prepare(self, learner, train_loader, valid_loader):
        self._count("prepare")
        return train_loader, valid_loader

    def train_step(self, learner, batch):
        self._count("train_step")
        return super().train_step(learner, batch)

    def valid_step(self, model, batch):
        self._count("valid_step")
        return super().valid_step(model, batch)

    def reduce_metrics(self, split, updates, metadata):
        self._count("reduce_metrics")
        return updates

    def any_process(self, flag):
        self._count("any_process")
        return flag

    def main_decides(self, flag):
        self._count("main_decides")
        return flag

    def finish(self, learner):
        self._count("finish")


def build(tmp_path, toy, strategy):
    return (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(AccuracyMetric())
        .with_file_checkpointer(DefaultRecorder())
        .renderer(Silent())
        .num_epochs(2)
        .summary()
        .with_training_strategy(strategy)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
    )


def test_the_default_strategy_is_one_process():
    assert isinstance(SingleProcess(), TrainingStrategy)
    assert isinstance(LearnerBuilder("unused")._training_strategy, SingleProcess)


def test_a_strategy_is_asked_at_each_step_and_the_result_is_unchanged(tmp_path, toy):
    train, valid = toy.loaders()  # 6 training and 2 validation batches per epoch
    plain = (
        LearnerBuilder(tmp_path / "plain")
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(AccuracyMetric())
        .renderer(Silent())
        .num_epochs(2)
        .build(toy.model(toy.B.device()), AdamConfig().init(), 1e-2)
        .fit(train, valid)
    )
    strategy = Recording(main=True)
    train, valid = toy.loaders()
    model = build(tmp_path / "hooked", toy, strategy).fit(train, valid)
    for a, b in zip(plain.params(), model.params(), strict=True):
        np.testing.assert_array_equal(a.val().to_data().array, b.val().to_data().array)
    assert strategy.calls == {
        "prepare": 1,
        "train_step": 12,
        "valid_step": 4,
        "reduce_metrics": 16,
        "any_process": 16,
        "finish": 1,
    }  # main_decides is asked only with early stopping
    assert (tmp_path / "hooked/train/epoch-2/Loss.log").is_file()


def test_a_process_that_is_not_main_writes_nothing(tmp_path, toy):
    train, valid = toy.loaders()
    build(tmp_path, toy, Recording(main=False)).fit(train, valid)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_object_without_the_hooks_is_refused():
    with pytest.raises(TypeError, match="not a training strategy: it lacks is_main"):
        LearnerBuilder("unused").with_training_strategy(object())
