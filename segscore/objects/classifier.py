"""Classifier metrics at a stated threshold, as scikit-learn defines them, without scikit-learn.

``score_classifier(labels, scores, threshold=0.5)`` returns ``threshold, n, n_positive, tp, fp,
tn, fn, accuracy, balanced_accuracy, precision, recall, specificity, f1, mcc`` (threshold-bound:
a score >= threshold is a positive call) and ``auroc, auprc, brier, ece`` (threshold-free), plus
``notes``. ``auprc`` is scikit-learn's ``average_precision_score`` (the step-wise sum
Σ (R_n - R_{n-1}) P_n over distinct score thresholds, never interpolated); ``ece`` is the expected
calibration error over ``calibration_bins`` equal-width bins ((lo, hi], the first [0, hi]),
each weighted by its share of the scores. A ratio whose denominator is 0 is None with a note
(scikit-learn would warn and return 0); one class present makes ``auroc``/``auprc`` None.
``auroc`` and ``auprc`` are :func:`segscore.metrics.ranking.auc` and ``average_precision`` of the
scores' histograms.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError
from segscore.io.results import as_result
from segscore.metrics.ranking import auc, average_precision, histograms_of_scores

COUNTS = ("threshold", "n", "n_positive", "tp", "fp", "tn", "fn")


def _check(labels, scores):
    y = np.asarray(labels).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ScoreError(f"{y.size} labels against {s.size} scores; give one score per label")
    if y.size == 0:
        raise ScoreError("no labels to score; give at least one (label, score) pair")
    if y.dtype == bool:
        y = y.astype(np.int64)
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        raise ScoreError(f"labels must be 0 or 1; found {y[bad][0]!r}")
    if not np.all(np.isfinite(s)) or s.min() < 0 or s.max() > 1:
        raise ScoreError("scores must be probabilities of the positive class in [0, 1] (no NaN)")
    return y.astype(np.int64), s


def _ratio(num, den):
    return float(num) / float(den) if den else None


def ece(y, s, bins=10):
    """Expected calibration error over ``bins`` equal-width bins of the score."""
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    idx = np.searchsorted(edges[1:-1], s, side="left")  # (lo, hi], first bin [0, hi]
    n = np.bincount(idx, minlength=bins)
    conf = np.bincount(idx, weights=s, minlength=bins)
    acc = np.bincount(idx, weights=y.astype(np.float64), minlength=bins)
    used = n > 0
    return float(np.sum(np.abs(conf[used] - acc[used])) / y.size)


@as_result
def score_classifier(labels, scores, *, threshold: float = 0.5, calibration_bins: int = 10) -> dict:
    """Every classifier metric of the scorecard at a STATED threshold (module docstring)."""
    y, s = _check(labels, scores)
    threshold = float(threshold)
    if not math.isfinite(threshold):
        raise ScoreError(f"threshold {threshold}: must be a finite number")
    if int(calibration_bins) < 1:
        raise ScoreError(f"calibration_bins {calibration_bins}: must be at least 1")
    notes = {}
    called = s >= threshold
    pos = y == 1
    tp = int(np.sum(called & pos))
    fp = int(np.sum(called & ~pos))
    fn = int(np.sum(~called & pos))
    tn = int(np.sum(~called & ~pos))
    n, n_pos = int(y.size), int(pos.sum())
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    if precision is None:
        notes["precision"] = f"no score reaches the threshold {threshold:g}: no positive calls"
    if recall is None:
        notes["recall"] = "no positive labels"
    if specificity is None:
        notes["specificity"] = "no negative labels"
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    if f1 is None:
        notes["f1"] = "no positive labels and no positive calls"
    balanced = None if recall is None or specificity is None else (recall + specificity) / 2
    if balanced is None:
        notes["balanced_accuracy"] = "one class only: recall or specificity does not exist"
    den = float(tp + fp) * float(tp + fn) * float(tn + fp) * float(tn + fn)
    mcc = (tp * tn - fp * fn) / math.sqrt(den) if den else None
    if mcc is None:
        notes["mcc"] = "a row or column of the confusion matrix is empty"
    _, pos_h, neg_h = histograms_of_scores(y, s)
    roc, pr = auc(pos_h, neg_h), average_precision(pos_h, neg_h)
    if roc is None:
        notes["auroc"] = notes["auprc"] = "one class only: ranking needs positives and negatives"
    return {"threshold": threshold, "n": n, "n_positive": n_pos, "tp": tp, "fp": fp, "tn": tn, "fn": fn,
            "accuracy": (tp + tn) / n, "balanced_accuracy": balanced, "precision": precision, "recall": recall,
            "specificity": specificity, "f1": f1, "mcc": mcc, "auroc": roc, "auprc": pr,
            "brier": float(np.mean((s - y) ** 2)), "ece": ece(y, s, int(calibration_bins)), "notes": notes}


@as_result
def compare_classifier_against_baseline(labels, finetuned, vanilla, **kwargs) -> dict:
    """Two classifiers on the same labels: ``{"finetuned", "vanilla", "delta"}``.

    ``delta`` is finetuned - vanilla for every metric except the threshold and the counts
    (``threshold, n, n_positive, tp, fp, tn, fn``); None where either side is None.
    """
    from segscore.objects.metrics import delta_of

    a = score_classifier(labels, finetuned, **kwargs)
    b = score_classifier(labels, vanilla, **kwargs)
    return {"finetuned": a, "vanilla": b, "delta": delta_of(a, b, drop=set(COUNTS))}
