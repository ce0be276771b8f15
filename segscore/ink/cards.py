"""ScrollGT's metrics card, computed exactly from two level histograms (ink, background).

A map on a fixed [0, 1] scale has a finite set of levels, each with its probability
``p_levels[k]`` (an 8-bit map: ``k / 255``; a uint16 map: ``k / 65535``; a float map read on
65,536 levels: ``rint(p * 65535) / 65535``). Everything on the card is a function of how many
ink and background pixels sit on each level:

- thresholded scores use the test ``p >= t`` on the level's probability, exactly as a
  per-pixel NumPy comparison of the same float64 values would;
- ``average_precision`` is scikit-learn's ``average_precision_score``: the step-wise sum
  ``sum_k (R_k - R_{k-1}) P_k`` over the distinct levels in decreasing order (ties by level);
- ``roc_auc`` is the Mann-Whitney statistic with ties half (scikit-learn's trapezoidal ROC-AUC).

A mask with one class (or no pixel) gives ``None`` for every metric with a ``note``.
"""

from __future__ import annotations

import numpy as np

#: the 19 thresholds of the headline F1 sweep
THRESHOLDS = np.linspace(0.05, 0.95, 19)

#: card fields that are undefined (None) when the mask holds one class
METRIC_KEYS = ("val_f1", "best_threshold", "f1_at_0.5", "val_f05", "precision", "recall",
               "pred_positive_rate", "average_precision", "ap_prevalence_lift", "roc_auc",
               "best_f1_any_threshold", "best_threshold_any")

DEGENERATE_NOTE = "degenerate: the mask holds one class (no ink/background contrast); metrics undefined"


def _fbeta(precision: float, recall: float, beta: float) -> float:
    b2 = beta * beta
    denom = b2 * precision + recall
    return (1.0 + b2) * precision * recall / denom if denom > 0 else 0.0


def p_levels_for(kind: str) -> np.ndarray:
    """Probabilities of the levels of a map read as ``'uint8'``, ``'uint16'`` or ``'float'``."""
    if kind == "uint8":
        return np.arange(256, dtype=np.float64) / 255.0
    return np.arange(65536, dtype=np.float64) / 65535.0


def card_from_histograms(ink, bg, p_levels, *, thresholds=THRESHOLDS) -> dict:
    """The metrics card of a map whose pixels on level ``k`` (probability ``p_levels[k]``) are
    ``ink[k]`` ink and ``bg[k]`` background pixels.

    ``p_levels`` must increase strictly. Returns plain Python floats and ints; undefined
    metrics are None and the card then carries a ``note``.
    """
    ink = np.asarray(ink, dtype=np.int64)
    bg = np.asarray(bg, dtype=np.int64)
    p_levels = np.asarray(p_levels, dtype=np.float64)
    if not (ink.shape == bg.shape == p_levels.shape) or ink.ndim != 1:
        raise ValueError("ink, bg and p_levels must be 1D arrays of one length")
    pos = int(ink.sum())
    neg = int(bg.sum())
    n = pos + neg
    card: dict = {k: None for k in METRIC_KEYS}
    card["positive_rate"] = pos / n if n else None
    card["n_pixels"] = n
    card["n_ink_pixels"] = pos
    if pos == 0 or neg == 0:
        card["note"] = DEGENERATE_NOTE if n else "no pixel inside the mask; metrics undefined"
        return card

    # pixels at or above each level (index L: above every level)
    tp_ge = np.zeros(ink.size + 1, np.int64)
    fp_ge = np.zeros(ink.size + 1, np.int64)
    tp_ge[:-1] = np.cumsum(ink[::-1])[::-1]
    fp_ge[:-1] = np.cumsum(bg[::-1])[::-1]

    def at(k):
        tp, fp = int(tp_ge[k]), int(fp_ge[k])
        precision = tp / (tp + fp) if (tp + fp) else 0.0
        recall = tp / pos
        return precision, recall, tp + fp

    best = None
    best_f05 = -1.0
    for t in thresholds:
        k = int(np.searchsorted(p_levels, float(t), side="left"))  # first level with p >= t
        precision, recall, pred_pos = at(k)
        f1 = _fbeta(precision, recall, 1.0)
        best_f05 = max(best_f05, _fbeta(precision, recall, 0.5))
        if best is None or f1 > best[0]:
            best = (f1, float(t), precision, recall, pred_pos / n)
    k_half = int(np.searchsorted(p_levels, 0.5, side="left"))
    ph, rh, _ = at(k_half)

    occupied = np.flatnonzero((ink + bg) > 0)
    tp_o = tp_ge[occupied].astype(np.float64)
    fp_o = fp_ge[occupied].astype(np.float64)
    prec_o = tp_o / (tp_o + fp_o)
    # scikit-learn: sum over distinct scores (decreasing) of (R_k - R_{k-1}) * P_k
    ap = float(np.sum((ink[occupied][::-1] / pos) * prec_o[::-1]))
    rec_o = tp_o / pos
    denom = prec_o + rec_o
    f1_o = np.where(denom > 0, 2.0 * prec_o * rec_o / np.where(denom > 0, denom, 1.0), 0.0)
    j = int(np.argmax(f1_o))

    below = np.cumsum(bg) - bg  # background pixels strictly below each level
    wins2 = int(np.sum(ink * (2 * below + bg)))
    roc = wins2 / (2.0 * pos * neg)

    positive_rate = pos / n
    card.update({
        "val_f1": best[0],
        "best_threshold": best[1],
        "f1_at_0.5": _fbeta(ph, rh, 1.0),
        "val_f05": best_f05,
        "precision": best[2],
        "recall": best[3],
        "pred_positive_rate": best[4],
        "average_precision": ap,
        "ap_prevalence_lift": ap / positive_rate,
        "roc_auc": roc,
        "best_f1_any_threshold": float(f1_o[j]),
        "best_threshold_any": float(p_levels[occupied[j]]),
    })
    return card


def constant_card(pos: int, neg: int, p: float) -> dict:
    """The card of a map that is ``p`` everywhere: its histogram is one level holding every pixel."""
    return card_from_histograms(np.array([pos]), np.array([neg]), np.array([float(p)]))
