"""Ranking statistics of a binary score, all from one primitive: the counts at every threshold.

The input is two class histograms on the same ordered levels: ``pos[k]`` positives and
``neg[k]`` negatives score level ``k`` (levels increase with ``k``; ``levels[k]`` is the level's
value where thresholds or curve points need one, else ``k`` itself). Raw scores become such
histograms with :func:`histograms_of_scores` or :func:`histograms_of_samples` (the sorted unique
scores, with counts or summed weights). Integer counts give exact results; float counts
(weights) are summed in float64.

A score at or above a threshold is a positive call. Where a class is empty (no positive or no
negative) every function returns None, never NaN; only :func:`auc_batch`, whose rows share one
float array, puts NaN in such a row.

The definitions are scikit-learn's (``sklearn/metrics/_ranking.py``):

- :func:`threshold_counts`: ``tps``, ``fps`` = positives and negatives at or above each occupied
  level, in decreasing level order (its ``confusion_matrix_at_thresholds``).
- :func:`auc`: the Mann-Whitney ``(#pairs pos > neg + 0.5 #ties) / (P N)`` (= ``roc_auc_score``).
  On integer counts the doubled win count is kept in int64 by the numba kernel
  :func:`segscore.kernels.levels.auc_rows` (:func:`auc_batch`): the only rounding is the final
  division.
- :func:`average_precision`: ``sum_k (R_k - R_{k-1}) P_k`` over the occupied levels in decreasing
  order, never interpolated, evaluated in the order ``average_precision_score`` evaluates it, so
  equal to it bit for bit on integer counts. Not the segmentation "AP" (TP / (TP + FP + FN)).
- :func:`fbeta_sweep`: precision, recall and F-beta at given thresholds, with scikit-learn's
  ``zero_division=0`` (no positive call: precision 0; precision = recall = 0: F-beta 0).
- :func:`roc_curve`, :func:`precision_recall_curve`: the points of scikit-learn's ``roc_curve(...,
  drop_intermediate=False)`` and ``precision_recall_curve(...)``, for figures.

``import segscore.metrics.ranking`` loads numpy only; the kernel loads on the first integer AUC.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from segscore.errors import ScoreError

__all__ = ["ThresholdCounts", "Sweep", "histograms_of_scores", "histograms_of_samples", "threshold_counts",
           "auc", "auc_batch", "average_precision", "fbeta_sweep", "fbeta_of_counts", "roc_curve", "precision_recall_curve"]


class ThresholdCounts(NamedTuple):
    """Counts at every occupied level, highest level first."""

    #: the occupied levels' values (``levels[k]``, or ``k``), decreasing
    thresholds: np.ndarray
    #: positives scoring at or above each threshold (int64 counts, or float64 weights)
    tps: np.ndarray
    #: negatives scoring at or above each threshold
    fps: np.ndarray


class Sweep(NamedTuple):
    """Thresholded scores at each of the given thresholds (a score ``>= t`` is a positive call)."""

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    fbeta: np.ndarray


# ---------------------------------------------------------------------------------------------
# inputs


def _counts(pos, neg):
    """Two 1D histograms of one length, both int64 or both float64; negative or non-finite refused."""
    pos = np.asarray(pos)
    neg = np.asarray(neg)
    if pos.ndim != 1 or pos.shape != neg.shape:
        raise ScoreError(f"pos and neg must be 1D histograms of one length; got shapes {pos.shape} and {neg.shape}")
    kinds = {pos.dtype.kind, neg.dtype.kind}
    if not kinds <= set("biuf"):
        raise ScoreError(f"pos and neg must hold counts or weights; got dtypes {pos.dtype} and {neg.dtype}")
    dtype = np.float64 if "f" in kinds else np.int64
    pos = pos.astype(dtype, copy=False)
    neg = neg.astype(dtype, copy=False)
    for name, a in (("pos", pos), ("neg", neg)):
        if dtype is np.float64 and not np.all(np.isfinite(a)):
            raise ScoreError(f"{name} holds a NaN or infinite weight; give finite counts")
        if a.size and a.min() < 0:
            raise ScoreError(f"{name} holds a negative count ({a.min()!r}); counts must be >= 0")
    return pos, neg


def _levels(levels, n):
    if levels is None:
        return np.arange(n, dtype=np.int64)
    lv = np.asarray(levels)
    if lv.shape != (n,):
        raise ScoreError(f"levels has shape {lv.shape}; give one value per histogram bin ({n})")
    if n > 1 and not np.all(lv[1:] > lv[:-1]):
        raise ScoreError("levels must increase strictly (one value per bin, lowest first)")
    return lv


def histograms_of_scores(y_true, y_score, *, sample_weight=None):
    """``(levels, pos, neg)``: the sorted unique scores and, on each, the positives and negatives.

    ``y_true`` holds 0/1 (or bool) labels, 1 the positive class (the truth); ``y_score`` one finite
    score per label. Counts are int64, or float64 sums of ``sample_weight`` (finite, >= 0) when
    given; samples of weight 0 are left out, as scikit-learn leaves them out.
    """
    y = np.asarray(y_true).ravel()
    s = np.asarray(y_score, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ScoreError(f"{y.size} labels against {s.size} scores; give one score per label")
    if y.dtype != bool:
        bad = ~np.isin(y, (0, 1))
        if bad.any():
            raise ScoreError(f"labels must be 0 or 1; found {y[bad][0]!r}")
        y = y == 1
    if not np.all(np.isfinite(s)):
        raise ScoreError("scores must be finite (no NaN or infinity)")
    w = None
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64).ravel()
        if w.shape != s.shape:
            raise ScoreError(f"{w.size} sample weights against {s.size} scores; give one weight per score")
        if not np.all(np.isfinite(w)) or (w.size and w.min() < 0):
            raise ScoreError("sample weights must be finite and >= 0")
        keep = w != 0
        y, s, w = y[keep], s[keep], w[keep]
    levels, inv = np.unique(s, return_inverse=True)
    inv = inv.ravel()
    pos = np.bincount(inv[y], weights=None if w is None else w[y], minlength=levels.size)
    neg = np.bincount(inv[~y], weights=None if w is None else w[~y], minlength=levels.size)
    if w is None:
        pos, neg = pos.astype(np.int64, copy=False), neg.astype(np.int64, copy=False)
    return levels, pos, neg


def histograms_of_samples(pos_scores, neg_scores):
    """``(levels, pos, neg)`` of two samples of scores: the positives' and the negatives'."""
    a = np.asarray(pos_scores, dtype=np.float64).ravel()
    b = np.asarray(neg_scores, dtype=np.float64).ravel()
    y = np.concatenate([np.ones(a.size, bool), np.zeros(b.size, bool)])
    return histograms_of_scores(y, np.concatenate([a, b]))


# ---------------------------------------------------------------------------------------------
# the primitive and what derives from it


def threshold_counts(pos, neg, *, levels=None) -> ThresholdCounts:
    """Positives and negatives at or above each occupied level, highest level first."""
    pos, neg = _counts(pos, neg)
    lv = _levels(levels, pos.size)
    occ = np.flatnonzero((pos + neg) > 0)[::-1]
    return ThresholdCounts(lv[occ], np.cumsum(pos[occ]), np.cumsum(neg[occ]))


def _two_classes(c: ThresholdCounts) -> bool:
    return c.tps.size > 0 and c.tps[-1] > 0 and c.fps[-1] > 0


def auc_batch(pos, neg) -> np.ndarray:
    """Exact AUC (ties half) of each row of ``pos`` against the same row of ``neg``.

    ``pos``, ``neg``: (k, L) or (L,) integer counts. Returns (k,) float64, NaN in a row where a
    class is empty. The batched form of :func:`auc` (bootstrap draws), on the numba kernel.
    """
    from segscore.kernels.levels import auc_rows

    pos = np.atleast_2d(np.asarray(pos))
    neg = np.atleast_2d(np.asarray(neg))
    if pos.ndim != 2 or pos.shape != neg.shape:
        raise ScoreError(f"pos and neg must be (k, L) histograms of one shape; got {pos.shape} and {neg.shape}")
    out = []
    for name, a in (("pos", pos), ("neg", neg)):
        if a.dtype.kind not in "biuf":
            raise ScoreError(f"{name} must hold integer counts; got dtype {a.dtype}")
        if a.dtype.kind == "f" and not np.array_equal(a, np.floor(a)):
            raise ScoreError(f"{name} holds non-integer counts; auc_batch counts integers (use auc for weights)")
        a = np.ascontiguousarray(a, dtype=np.int64)
        if a.size and a.min() < 0:
            raise ScoreError(f"{name} holds a negative count ({a.min()}); counts must be >= 0")
        out.append(a)
    if pos.size:  # the doubled win count is at most 2 P N; keep it inside int64
        big = float(np.max(out[0].sum(axis=1).astype(np.float64) * out[1].sum(axis=1)))
        if big >= 2.0**62:
            raise ScoreError(f"too many pixels for an exact int64 AUC (positives x negatives = {big:.3g}, "
                             "needs < 2**62); score a smaller region or give the counts as float weights to auc")
    return auc_rows(out[0], out[1], np.empty(pos.shape[0], np.float64))


def auc(pos, neg) -> float | None:
    """Mann-Whitney AUC, ties half (= scikit-learn's ``roc_auc_score``); None if a class is empty.

    Integer counts: exact (int64 win count, one division). Float weights: summed in float64.
    """
    pos, neg = _counts(pos, neg)
    if pos.dtype == np.float64:
        p, n = float(pos.sum()), float(neg.sum())
        if p <= 0 or n <= 0:
            return None
        below = np.concatenate([[0.0], np.cumsum(neg)[:-1]])  # negatives strictly below each level
        return float(np.sum(pos * (below + 0.5 * neg)) / (p * n))
    v = float(auc_batch(pos, neg)[0])
    return None if v != v else v


def average_precision(pos, neg) -> float | None:
    """scikit-learn's ``average_precision_score``: ``sum (R_k - R_{k-1}) P_k`` over the occupied
    levels, highest first; None if a class is empty."""
    c = threshold_counts(pos, neg)
    if not _two_classes(c):
        return None
    precision = c.tps / (c.tps + c.fps)  # every occupied level has a call
    recall = c.tps / c.tps[-1]
    # scikit-learn's evaluation order: increasing thresholds, then the end point (recall 0)
    rec = np.concatenate([recall[::-1], [0.0]])
    return float(max(0.0, -np.sum(np.diff(rec) * precision[::-1])))


def fbeta_sweep(pos, neg, thresholds, *, levels=None, beta: float = 1.0) -> Sweep | None:
    """Counts, precision, recall and F-beta at each of ``thresholds`` (in the order given).

    A level is called positive when its value (``levels[k]``, or ``k``) is ``>= t``. Precision is 0
    where nothing is called and F-beta 0 where precision and recall are both 0 (scikit-learn's
    ``zero_division=0``). None if a class is empty.
    """
    pos, neg = _counts(pos, neg)
    lv = _levels(levels, pos.size)
    t = np.asarray(thresholds, dtype=np.float64).ravel()
    if np.isnan(t).any():
        raise ScoreError("thresholds must not be NaN")
    n_pos, n_neg = pos.sum(), neg.sum()
    if n_pos <= 0 or n_neg <= 0:
        return None
    tp_ge = np.zeros(pos.size + 1, pos.dtype)  # index L: above every level
    fp_ge = np.zeros(pos.size + 1, neg.dtype)
    tp_ge[:-1] = np.cumsum(pos[::-1])[::-1]
    fp_ge[:-1] = np.cumsum(neg[::-1])[::-1]
    k = np.searchsorted(lv, t, side="left")  # first level with value >= t
    return fbeta_of_counts(tp_ge[k], fp_ge[k], n_pos, t, beta=beta)


def fbeta_of_counts(tp, fp, n_pos, thresholds, *, beta: float = 1.0) -> Sweep:
    """Precision, recall and F-beta from the counts ``tp``, ``fp`` called positive at each of
    ``thresholds`` (``n_pos`` positives in all), with :func:`fbeta_sweep`'s ``zero_division=0``
    rules: the sweep of scores already counted (exact float ranking counts them in one pass)."""
    t = np.asarray(thresholds, dtype=np.float64).ravel()
    tp = np.asarray(tp)
    fp = np.asarray(fp)
    called = tp + fp
    precision = np.divide(tp, called, out=np.zeros(t.size), where=called > 0)
    recall = tp / n_pos
    b2 = float(beta) * float(beta)
    num = (1.0 + b2) * precision * recall
    denom = b2 * precision + recall
    f = np.divide(num, denom, out=np.zeros(t.size), where=denom > 0)
    return Sweep(t, tp, fp, precision, recall, f)


def roc_curve(pos, neg, *, levels=None):
    """``(fpr, tpr, thresholds)`` as scikit-learn's ``roc_curve(..., drop_intermediate=False)``:
    a first point (0, 0) at threshold ``inf``, then one per occupied level, highest first.
    None if a class is empty."""
    c = threshold_counts(pos, neg, levels=levels)
    if not _two_classes(c):
        return None
    tps = np.concatenate([np.zeros(1, c.tps.dtype), c.tps])
    fps = np.concatenate([np.zeros(1, c.fps.dtype), c.fps])
    thresholds = np.concatenate([[np.inf], c.thresholds.astype(np.float64)])
    return fps / fps[-1], tps / tps[-1], thresholds


def precision_recall_curve(pos, neg, *, levels=None):
    """``(precision, recall, thresholds)`` as scikit-learn's ``precision_recall_curve``: one point
    per occupied level, lowest threshold first, then the end point (precision 1, recall 0) with no
    threshold. None if a class is empty."""
    c = threshold_counts(pos, neg, levels=levels)
    if not _two_classes(c):
        return None
    precision = c.tps / (c.tps + c.fps)
    recall = c.tps / c.tps[-1]
    return (np.concatenate([precision[::-1], [1.0]]), np.concatenate([recall[::-1], [0.0]]),
            c.thresholds[::-1].astype(np.float64))
