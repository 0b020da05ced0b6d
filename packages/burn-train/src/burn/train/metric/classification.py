"""Loss, accuracy, top-k accuracy, Hamming score, precision, recall, F-beta and AUROC.

Values are computed on the host with numpy from each step's item and averaged over the epoch
weighted by the number of items they cover, as Burn's numeric metrics are.
"""

from __future__ import annotations

import enum
import math

import numpy as np
from burn.train.metric.base import (
    FormatOptions,
    MetricEntry,
    MetricError,
    MetricMetadata,
    NumericMetricState,
)
from burn.train.metric.inputs import (
    AccuracyInput,
    AurocInput,
    ConfusionStatsInput,
    HammingScoreInput,
    LossInput,
    TopKAccuracyInput,
    host,
)


class _NumericMetric:
    """Shared plumbing of the numeric metrics below: a `NumericMetricState` and its format."""

    input_type = None
    precision = 2
    unit: str | None = None

    def __init__(self):
        self.state = NumericMetricState()

    def name(self) -> str:
        raise NotImplementedError

    def _entry(self, value: float, count: int) -> MetricEntry:
        return self.state.update(
            value, count, FormatOptions(self.name(), self.precision, self.unit)
        )

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.current_value()

    def running_value(self) -> float:
        return self.state.running_value()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name()!r})"


class LossMetric(_NumericMetric):
    """The mean loss of each step."""

    input_type = LossInput
    precision = 3

    def name(self) -> str:
        return "Loss"

    def update(self, input: LossInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        values = host(input.tensor).astype(np.float64)
        # A mean loss has one element and counts once; a loss per item counts per item.
        return self._entry(float(values.mean()), max(int(values.size), 1))


def _class_scores(outputs: np.ndarray, op: str) -> np.ndarray:
    if outputs.ndim != 2:
        raise MetricError(
            f"{op}: expected scores [batch, classes], got shape {list(outputs.shape)}"
        )
    return outputs


def _targets(targets: np.ndarray, batch: int, op: str) -> np.ndarray:
    targets = targets.reshape(-1) if targets.ndim == 2 and targets.shape[1] == 1 else targets
    if targets.shape != (batch,):
        raise MetricError(f"{op}: expected targets [{batch}], got shape {list(targets.shape)}")
    return targets.astype(np.int64)


class AccuracyMetric(_NumericMetric):
    """The share of items whose highest score is the target class, in percent.

    With a pad token, items whose target is that token are left out (sequence padding).
    """

    input_type = AccuracyInput
    unit = "%"

    def __init__(self, pad_token: int | None = None):
        super().__init__()
        self.pad_token = pad_token

    def with_pad_token(self, index: int) -> AccuracyMetric:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return "Accuracy"

    def update(self, input: AccuracyInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        outputs = _class_scores(host(input.outputs), "Accuracy")
        targets = _targets(host(input.targets), outputs.shape[0], "Accuracy")
        predicted = outputs.argmax(axis=1)
        keep = (
            targets != self.pad_token if self.pad_token is not None else np.ones_like(targets, bool)
        )
        count = int(keep.sum())
        correct = int((predicted[keep] == targets[keep]).sum())
        return self._entry(100.0 * correct / count if count else math.nan, count)


class TopKAccuracyMetric(_NumericMetric):
    """The share of items whose target is among the `k` highest scores, in percent."""

    input_type = TopKAccuracyInput
    unit = "%"

    def __init__(self, k: int, pad_token: int | None = None):
        super().__init__()
        if k < 1:
            raise MetricError(f"TopKAccuracyMetric: k must be at least 1, got {k}")
        self.k = int(k)
        self.pad_token = pad_token

    def with_pad_token(self, index: int) -> TopKAccuracyMetric:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return f"Top-{self.k} Accuracy"

    def update(self, input: TopKAccuracyInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        outputs = _class_scores(host(input.outputs), self.name())
        targets = _targets(host(input.targets), outputs.shape[0], self.name())
        k = min(self.k, outputs.shape[1])
        # Stable order: among equal scores the lower class index ranks first, as argmax does.
        top = np.argsort(-outputs, axis=1, kind="stable")[:, :k]
        hit = (top == targets[:, None]).any(axis=1)
        keep = targets != self.pad_token if self.pad_token is not None else np.ones_like(hit)
        count = int(keep.sum())
        return self._entry(100.0 * hit[keep].sum() / count if count else math.nan, count)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class HammingScore(_NumericMetric):
    """Multi-label: the share of (item, label) pairs predicted right, in percent.

    A label is predicted present when its score (after a sigmoid if `sigmoid`) exceeds
    `threshold`.
    """

    input_type = HammingScoreInput
    unit = "%"

    def __init__(self, threshold: float = 0.5, sigmoid: bool = False):
        super().__init__()
        self.threshold = float(threshold)
        self.sigmoid = bool(sigmoid)

    def with_threshold(self, threshold: float) -> HammingScore:
        self.threshold = float(threshold)
        return self

    def with_sigmoid(self, sigmoid: bool) -> HammingScore:
        self.sigmoid = bool(sigmoid)
        return self

    def name(self) -> str:
        return f"Hamming Score @ Threshold({self.threshold})"

    def update(self, input: HammingScoreInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        outputs = host(input.outputs).astype(np.float64)
        targets = host(input.targets)
        if outputs.shape != targets.shape or outputs.ndim != 2:
            raise MetricError(
                f"{self.name()}: scores and targets must both be [batch, labels], got "
                f"{list(outputs.shape)} and {list(targets.shape)}"
            )
        scores = _sigmoid(outputs) if self.sigmoid else outputs
        predicted = scores > self.threshold
        score = float((predicted == (targets != 0)).mean()) if targets.size else math.nan
        return self._entry(100.0 * score, outputs.shape[0])


class ClassReduction(enum.Enum):
    """How per-class counts become one number: pooled first (Micro) or averaged after (Macro)."""

    Micro = "micro"
    Macro = "macro"


class DecisionRule:
    """How scores become predicted classes: a threshold (binary, multi-label) or the top k."""

    def __init__(self, threshold: float | None = None, top_k: int | None = None):
        if (threshold is None) == (top_k is None):
            raise MetricError("DecisionRule: give exactly one of threshold or top_k")
        self.threshold = threshold
        self.top_k = top_k

    @classmethod
    def Threshold(cls, threshold: float) -> DecisionRule:  # noqa: N802
        return cls(threshold=float(threshold))

    @classmethod
    def TopK(cls, k: int) -> DecisionRule:  # noqa: N802
        return cls(top_k=int(k))

    def predict(self, scores: np.ndarray) -> np.ndarray:
        if self.threshold is not None:
            return scores >= self.threshold
        k = min(self.top_k, scores.shape[1])
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        out = np.zeros(scores.shape, bool)
        np.put_along_axis(out, top, True, axis=1)
        return out

    def __repr__(self) -> str:
        if self.threshold is not None:
            return f"Threshold({self.threshold})"
        return f"TopK({self.top_k})"


class _ConfusionMetric(_NumericMetric):
    """Precision, recall and F-beta from the true/false positives and negatives of a step.

    Build them for the task: `binary(threshold)`, `multiclass(top_k, reduction)` or
    `multilabel(threshold, reduction)`. Macro averages over the classes that occur in the step
    (as a target or a prediction), so an absent class does not count as a zero.
    """

    input_type = ConfusionStatsInput
    unit = "%"
    label = ""

    def __init__(
        self,
        rule: DecisionRule | None = None,
        reduction: ClassReduction = ClassReduction.Micro,
    ):
        super().__init__()
        self.rule = rule if rule is not None else DecisionRule.Threshold(0.5)
        self.reduction = ClassReduction(reduction)

    @classmethod
    def binary(cls, threshold: float = 0.5, **kwargs):
        return cls(DecisionRule.Threshold(threshold), ClassReduction.Micro, **kwargs)

    @classmethod
    def multiclass(cls, top_k: int = 1, reduction=ClassReduction.Macro, **kwargs):
        return cls(DecisionRule.TopK(top_k), reduction, **kwargs)

    @classmethod
    def multilabel(cls, threshold: float = 0.5, reduction=ClassReduction.Macro, **kwargs):
        return cls(DecisionRule.Threshold(threshold), reduction, **kwargs)

    def name(self) -> str:
        return self.label

    def counts(self, input: ConfusionStatsInput):  # noqa: A002
        scores = host(input.predictions).astype(np.float64)
        targets = host(input.targets) != 0
        if scores.ndim == 1:
            scores = scores[:, None]
        if targets.ndim == 1:
            targets = targets[:, None]
        if scores.shape != targets.shape:
            raise MetricError(
                f"{self.name()}: predictions {list(scores.shape)} and targets "
                f"{list(targets.shape)} must have the same shape [batch, classes]"
            )
        predicted = self.rule.predict(scores)
        tp = (predicted & targets).sum(axis=0).astype(np.float64)
        fp = (predicted & ~targets).sum(axis=0).astype(np.float64)
        fn = (~predicted & targets).sum(axis=0).astype(np.float64)
        return tp, fp, fn

    def score(self, tp, fp, fn) -> np.ndarray:
        raise NotImplementedError

    def update(self, input: ConfusionStatsInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        tp, fp, fn = self.counts(input)
        batch = int(np.asarray(host(input.predictions)).shape[0])
        if self.reduction is ClassReduction.Micro:
            value = float(self.score(tp.sum(), fp.sum(), fn.sum()))
        else:
            present = (tp + fp + fn) > 0
            scores = self.score(tp[present], fp[present], fn[present])
            value = float(np.mean(scores)) if scores.size else math.nan
        return self._entry(100.0 * value, batch)


def _ratio(num, den):
    num = np.asarray(num, np.float64)
    den = np.asarray(den, np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


class PrecisionMetric(_ConfusionMetric):
    """TP / (TP + FP): of the items predicted in a class, the share that belong there."""

    label = "Precision"

    def score(self, tp, fp, fn):
        return _ratio(tp, tp + fp)


class RecallMetric(_ConfusionMetric):
    """TP / (TP + FN): of the items of a class, the share that were found."""

    label = "Recall"

    def score(self, tp, fp, fn):
        return _ratio(tp, tp + fn)


class FBetaScoreMetric(_ConfusionMetric):
    """(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP): recall weighted `beta` times precision."""

    def __init__(
        self,
        rule: DecisionRule | None = None,
        reduction: ClassReduction = ClassReduction.Micro,
        beta: float = 1.0,
    ):
        super().__init__(rule, reduction)
        if beta <= 0:
            raise MetricError(f"FBetaScoreMetric: beta must be positive, got {beta}")
        self.beta = float(beta)

    def name(self) -> str:
        return f"FBetaScore({self.beta:g})"

    def score(self, tp, fp, fn):
        b2 = self.beta**2
        return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties sharing their mean rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), np.float64)
    sorted_values = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def binary_auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    """The probability that a random positive scores above a random negative (ties count half).

    NaN when the step has only positives or only negatives.
    """
    positive = positive.astype(bool)
    n_pos = int(positive.sum())
    n_neg = int(positive.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = _ranks(scores.astype(np.float64))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


class AurocMetric(_NumericMetric):
    """Area under the ROC curve, in percent.

    Binary: scores `[batch]` or `[batch, 1]` of the positive class, or `[batch, 2]` logits
    (class 1 is positive, after a softmax). More classes: one-vs-rest on softmax probabilities,
    averaged over the classes that have both positives and negatives in the step.
    """

    input_type = AurocInput
    unit = "%"

    def name(self) -> str:
        return "AUROC"

    def update(self, input: AurocInput, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        outputs = host(input.outputs).astype(np.float64)
        targets = host(input.targets).reshape(-1).astype(np.int64)
        if outputs.ndim == 2 and outputs.shape[1] == 1:
            outputs = outputs[:, 0]
        if outputs.shape[0] != targets.shape[0]:
            raise MetricError(f"AUROC: {outputs.shape[0]} scores for {targets.shape[0]} targets")
        if outputs.ndim == 1:
            value = binary_auroc(outputs, targets != 0)
        else:
            probs = _softmax(outputs)
            if probs.shape[1] == 2:
                value = binary_auroc(probs[:, 1], targets == 1)
            else:
                per_class = [binary_auroc(probs[:, c], targets == c) for c in range(probs.shape[1])]
                defined = [v for v in per_class if not math.isnan(v)]
                value = float(np.mean(defined)) if defined else math.nan
        return self._entry(100.0 * value, targets.shape[0])
