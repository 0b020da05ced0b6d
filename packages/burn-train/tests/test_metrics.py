"""Metrics against hand-computed values and independent numpy references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from burn.backend import NdArray
from burn.data import Progress
from burn.tensor import Int, Tensor
from burn.train import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from burn.train.metric import (
    AccuracyInput,
    AccuracyMetric,
    Adaptor,
    AurocInput,
    AurocMetric,
    ClassReduction,
    ConfusionStatsInput,
    CpuMemory,
    CpuTemperature,
    CpuUse,
    CudaMetric,
    FBetaScoreMetric,
    FormatOptions,
    HammingScore,
    HammingScoreInput,
    IterationSpeedMetric,
    LearningRateMetric,
    LossInput,
    LossMetric,
    MetricError,
    MetricMetadata,
    NumericEntry,
    NumericMetricState,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyInput,
    TopKAccuracyMetric,
    adapt,
)

META = MetricMetadata.fake()
DEV = NdArray.device()


def f(values) -> Tensor:
    return Tensor.from_data(np.asarray(values, np.float32), DEV)


def i(values) -> Tensor:
    return Tensor[np.asarray(values).ndim, Int].from_data(np.asarray(values, np.int64), DEV)


# ------------------------------------------------------------------ entries and state
def test_numeric_entry_round_trip():
    assert NumericEntry.deserialize(NumericEntry(0.25, 32).serialize()) == NumericEntry(0.25, 32)
    assert NumericEntry.deserialize("1.5") == NumericEntry(1.5, 1)


def test_numeric_state_is_a_mean_weighted_by_batch_size():
    state = NumericMetricState()
    state.update(1.0, 3, FormatOptions("M"))
    entry = state.update(3.0, 1, FormatOptions("M"))
    assert state.running_value() == pytest.approx(1.5)
    assert state.current_value() == 3.0
    assert entry.formatted == "M 3.00 (epoch 1.50)"
    assert entry.serialized == "3.0,1"


# ------------------------------------------------------------------ loss and accuracy
def test_loss_is_the_mean_of_each_step():
    metric = LossMetric()
    metric.update(LossInput(f([0.5])), META)
    metric.update(LossInput(f([1.5])), META)
    assert metric.value() == pytest.approx(1.5)
    assert metric.running_value() == pytest.approx(1.0)
    metric.clear()
    assert math.isnan(metric.running_value())


SCORES = [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.4, 0.1, 0.5]]
TARGETS = [1, 0, 1, 2]


def test_accuracy_by_hand():
    metric = AccuracyMetric()
    entry = metric.update(AccuracyInput(f(SCORES), i(TARGETS)), META)
    assert metric.value() == pytest.approx(75.0)  # rows 0, 1, 3 are right
    assert entry.formatted.startswith("Accuracy 75.00 %")
    assert entry.serialized == "75.0,4"


def test_accuracy_leaves_out_the_pad_token():
    metric = AccuracyMetric().with_pad_token(2)
    entry = metric.update(AccuracyInput(f(SCORES), i(TARGETS)), META)
    # Row 3 (target 2) is padding: 2 right out of 3.
    assert metric.value() == pytest.approx(200.0 / 3)
    assert entry.serialized.endswith(",3")


def test_top_k_accuracy_by_hand():
    metric = TopKAccuracyMetric(2)
    metric.update(TopKAccuracyInput(f(SCORES), i(TARGETS)), META)
    # top-2 per row: {1,2}, {0,1}, {2,1}, {2,0}: every target is in.
    assert metric.value() == pytest.approx(100.0)
    top1 = TopKAccuracyMetric(1)
    top1.update(TopKAccuracyInput(f(SCORES), i(TARGETS)), META)
    assert top1.value() == pytest.approx(75.0)
    assert metric.name() == "Top-2 Accuracy"


def test_top_k_with_pad_token():
    metric = TopKAccuracyMetric(1, pad_token=0)
    metric.update(TopKAccuracyInput(f(SCORES), i(TARGETS)), META)
    assert metric.value() == pytest.approx(200.0 / 3)


def test_accuracy_rejects_bad_shapes():
    with pytest.raises(MetricError, match="targets"):
        AccuracyMetric().update(AccuracyInput(f(SCORES), i([1, 0])), META)


# ------------------------------------------------------------------ multi-label
def test_hamming_score_by_hand():
    outputs = f([[0.9, 0.2, 0.6], [0.1, 0.8, 0.4]])
    targets = i([[1, 0, 0], [0, 1, 1]])
    metric = HammingScore()
    metric.update(HammingScoreInput(outputs, targets), META)
    assert metric.value() == pytest.approx(100.0 * 4 / 6)
    logits = HammingScore(threshold=0.5, sigmoid=True)
    logits.update(HammingScoreInput(f([[2.0, -1.0], [-3.0, 0.5]]), i([[1, 0], [0, 0]])), META)
    assert logits.value() == pytest.approx(75.0)


# ------------------------------------------------------------------ precision, recall, F-beta
def _reference(pred: np.ndarray, true: np.ndarray, macro: bool, beta: float = 1.0):
    """Precision, recall and F-beta computed from scratch, pair by pair."""
    classes = range(true.shape[1])
    counts = []
    for c in classes:
        tp = sum(1 for p, t in zip(pred[:, c], true[:, c], strict=True) if p and t)
        fp = sum(1 for p, t in zip(pred[:, c], true[:, c], strict=True) if p and not t)
        fn = sum(1 for p, t in zip(pred[:, c], true[:, c], strict=True) if not p and t)
        counts.append((tp, fp, fn))

    def scores(tp, fp, fn):
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        b2 = beta * beta
        denom = (1 + b2) * tp + b2 * fn + fp
        return precision, recall, ((1 + b2) * tp / denom if denom else 0.0)

    if not macro:
        return scores(*(sum(c[k] for c in counts) for k in range(3)))
    per = [scores(*c) for c in counts if sum(c) > 0]
    return tuple(float(np.mean([p[k] for p in per])) for k in range(3))


@pytest.mark.parametrize("reduction", [ClassReduction.Micro, ClassReduction.Macro])
def test_multiclass_precision_recall_fbeta(reduction):
    rng = np.random.default_rng(0)
    scores = rng.random((40, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 40)
    onehot = np.eye(4, dtype=bool)[labels]
    pred = np.eye(4, dtype=bool)[scores.argmax(1)]
    macro = reduction is ClassReduction.Macro
    expected = _reference(pred, onehot, macro, beta=2.0)
    item = ClassificationOutput(f([0.0]), f(scores), i(labels))
    got = []
    for metric in (
        PrecisionMetric.multiclass(reduction=reduction),
        RecallMetric.multiclass(reduction=reduction),
        FBetaScoreMetric(PrecisionMetric.multiclass().rule, reduction, beta=2.0),
    ):
        metric.update(adapt(item, metric.input_type), META)
        got.append(metric.value() / 100.0)
    assert got == pytest.approx(list(expected))


def test_binary_precision_recall_by_hand():
    scores = f([[0.9], [0.8], [0.3], [0.6], [0.1]])
    targets = i([[1], [0], [1], [1], [0]])
    # threshold 0.5 predicts 1, 1, 0, 1, 0: TP 2, FP 1, FN 1.
    precision = PrecisionMetric.binary(0.5)
    recall = RecallMetric.binary(0.5)
    f1 = FBetaScoreMetric.binary(0.5)
    for metric in (precision, recall, f1):
        metric.update(ConfusionStatsInput(scores, targets), META)
    assert precision.value() == pytest.approx(200.0 / 3)
    assert recall.value() == pytest.approx(200.0 / 3)
    assert f1.value() == pytest.approx(200.0 / 3)


@pytest.mark.parametrize("macro", [False, True])
def test_multilabel_scores(macro):
    rng = np.random.default_rng(1)
    probs = rng.random((30, 5))
    truth = rng.random((30, 5)) > 0.6
    expected = _reference(probs >= 0.5, truth, macro)
    reduction = ClassReduction.Macro if macro else ClassReduction.Micro
    item = MultiLabelClassificationOutput(f([0.0]), f(probs), i(truth.astype(np.int64)))
    for k, metric in enumerate(
        (
            PrecisionMetric.multilabel(0.5, reduction),
            RecallMetric.multilabel(0.5, reduction),
            FBetaScoreMetric.multilabel(0.5, reduction),
        )
    ):
        metric.update(adapt(item, metric.input_type), META)
        assert metric.value() / 100.0 == pytest.approx(expected[k])


def test_top_k_decision_rule_counts_any_of_the_k():
    metric = RecallMetric.multiclass(top_k=2, reduction=ClassReduction.Micro)
    item = ClassificationOutput(f([0.0]), f(SCORES), i(TARGETS))
    metric.update(adapt(item, metric.input_type), META)
    assert metric.value() == pytest.approx(100.0)


# ------------------------------------------------------------------ AUROC
def _auroc_pairs(scores, positive) -> float:
    """Every (positive, negative) pair: 1 if the positive scores higher, 1/2 on a tie."""
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    neg = [s for s, p in zip(scores, positive, strict=True) if not p]
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_binary_auroc_by_hand():
    metric = AurocMetric()
    # Positives 0.8, 0.4 and 0.35; negatives 0.1 and 0.4 (a tie): (2 + 1.5 + 1) / 6.
    metric.update(AurocInput(f([0.1, 0.4, 0.35, 0.8, 0.4]), i([0, 0, 1, 1, 1])), META)
    assert metric.value() == pytest.approx(100.0 * 4.5 / 6)


def test_auroc_two_logits_and_multiclass_one_vs_rest():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(50, 3))
    labels = rng.integers(0, 3, 50)
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    expected = np.mean([_auroc_pairs(probs[:, c], labels == c) for c in range(3)])
    metric = AurocMetric()
    item = ClassificationOutput(f([0.0]), f(logits), i(labels))
    metric.update(adapt(item, metric.input_type), META)
    assert metric.value() / 100.0 == pytest.approx(expected, abs=1e-6)
    binary = AurocMetric()
    two = logits[:, :2]
    p1 = np.exp(two[:, 1]) / np.exp(two).sum(1)
    binary.update(AurocInput(f(two), i(labels % 2)), META)
    assert binary.value() / 100.0 == pytest.approx(_auroc_pairs(p1, labels % 2 == 1), abs=1e-6)


def test_auroc_of_one_class_only_is_undefined():
    metric = AurocMetric()
    entry = metric.update(AurocInput(f([0.2, 0.9]), i([1, 1])), META)
    assert math.isnan(metric.value())
    assert "n/a" in entry.formatted


# ------------------------------------------------------------------ system metrics
def test_learning_rate_reads_the_metadata():
    metric = LearningRateMetric()
    meta = MetricMetadata(Progress(1, 10), 1, 1, 1, 3e-4)
    entry = metric.update(None, meta)
    assert metric.value() == pytest.approx(3e-4)
    assert entry.formatted == "Learning Rate 3.000e-04"


def test_iteration_speed_counts_steps_per_second():
    metric = IterationSpeedMetric()
    first = metric.update(None, MetricMetadata(Progress(1, 4), 1, 1, 1))
    assert "unavailable" in first.formatted
    import time

    time.sleep(0.02)
    metric.update(None, MetricMetadata(Progress(2, 4), 1, 1, 3))
    assert 0 < metric.value() <= 2 / 0.02 * 1.01


def test_cpu_metrics_read_or_say_unavailable():
    use = CpuUse()
    sum(range(200_000))
    entry = use.update(None, META)
    assert "unavailable" in entry.formatted or 0.0 <= use.value() <= 100.0
    memory = CpuMemory()
    entry = memory.update(None, META)
    assert "unavailable" in entry.formatted or memory.value() > 0
    temperature = CpuTemperature()
    entry = temperature.update(None, META)
    if temperature.available():
        assert -50 < temperature.value() < 150
    else:
        assert entry.formatted == "CPU Temperature unavailable"
        assert math.isnan(temperature.value())


def test_gpu_metric_is_optional():
    metric = CudaMetric()
    entry = metric.update(None, META)
    if not metric.available():
        assert entry.formatted == "GPU unavailable"
    else:
        assert entry.formatted.startswith("GPU #0 memory")


# ------------------------------------------------------------------ adaptors
def test_outputs_adapt_to_the_inputs_of_their_metrics():
    item = ClassificationOutput(f([0.3]), f(SCORES), i(TARGETS))
    assert isinstance(adapt(item, LossInput), LossInput)
    assert adapt(item, None) is None
    confusion = adapt(item, ConfusionStatsInput)
    assert confusion.targets.dims() == [4, 3]
    regression = RegressionOutput(f([0.1]), f([[1.0]]), f([[1.5]]))
    assert adapt(regression, LossInput).tensor.into_scalar() == pytest.approx(0.1)
    with pytest.raises(MetricError, match="Adaptor.register"):
        adapt(regression, AccuracyInput)


def test_a_user_metric_with_its_own_input_and_adaptor():
    """The shape of the book's custom-metric example: a metric of the prediction margin."""

    class MarginInput:
        def __init__(self, outputs: Tensor):
            self.outputs = outputs

    class MarginMetric:
        input_type = MarginInput

        def __init__(self):
            self.state = NumericMetricState()

        def name(self) -> str:
            return "Margin"

        def update(self, input: MarginInput, metadata: MetricMetadata):  # noqa: A002
            top2 = input.outputs.topk(2, 1)
            margin = (top2.narrow(1, 0, 1) - top2.narrow(1, 1, 1)).mean().into_scalar()
            return self.state.update(margin, input.outputs.dims()[0], FormatOptions(self.name()))

        def clear(self) -> None:
            self.state.reset()

        def value(self) -> float:
            return self.state.current_value()

        def running_value(self) -> float:
            return self.state.running_value()

    Adaptor.register(ClassificationOutput, MarginInput, lambda out: MarginInput(out.output))
    metric = MarginMetric()
    item = ClassificationOutput(f([0.3]), f(SCORES), i(TARGETS))
    entry = metric.update(adapt(item, metric.input_type), META)
    expected = np.mean([0.5, 0.3, 0.2, 0.1])
    assert metric.value() == pytest.approx(expected, abs=1e-6)
    assert entry.name == "Margin"
