"""The Learner and its builder."""

from burn.train.learner.builder import LearnerBuilder
from burn.train.learner.learner import Learner
from burn.train.learner.split import BatchSplitError, split_batch
from burn.train.learner.strategy import MetricUpdate, SingleProcess, TrainingStrategy
from burn.train.learner.summary import LearnerSummary

__all__ = [
    "BatchSplitError",
    "Learner",
    "LearnerBuilder",
    "LearnerSummary",
    "MetricUpdate",
    "SingleProcess",
    "TrainingStrategy",
    "split_batch",
]
