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

A mask with one class (or no pixel) gives ``None`` for every metric, and the card's ``notes``
maps each of them to the reason (the result contract of :mod:`segscore.io.results`).

The counts, the sweep, AP and ROC-AUC come from :mod:`segscore.metrics.ranking`.
"""

from __future__ import annotations

import numpy as np

from segscore.metrics import ranking as R

#: the 19 thresholds of the headline F1 sweep
THRESHOLDS = np.linspace(0.05, 0.95, 19)

#: card fields that are undefined (None) when the mask holds one class
METRIC_KEYS = ("val_f1", "best_threshold", "f1_at_0.5", "val_f05", "precision", "recall",
               "pred_positive_rate", "average_precision", "ap_prevalence_lift", "roc_auc",
               "best_f1_any_threshold", "best_threshold_any")

DEGENERATE_NOTE = "degenerate: the mask holds one class (no ink/background contrast); metrics undefined"
EMPTY_NOTE = "no pixel inside the mask; metrics undefined"


def p_levels_for(kind: str) -> np.ndarray:
    """Probabilities of the levels of a map read as ``'uint8'``, ``'uint16'`` or ``'float'``."""
    if kind == "uint8":
        return np.arange(256, dtype=np.float64) / 255.0
    return np.arange(65536, dtype=np.float64) / 65535.0


def _empty_card(pos: int, neg: int) -> dict:
    """A card's counts with every metric None; when one class is missing, each metric's note
    says why (the metrics are filled by the caller otherwise)."""
    n = pos + neg
    card: dict = {k: None for k in METRIC_KEYS}
    card["positive_rate"] = pos / n if n else None
    card["n_pixels"] = n
    card["n_ink_pixels"] = pos
    card["notes"] = {}
    if pos == 0 or neg == 0:
        why = DEGENERATE_NOTE if n else EMPTY_NOTE
        card["notes"] = {k: why for k in METRIC_KEYS + (() if n else ("positive_rate",))}
    return card


def card_from_histograms(ink, bg, p_levels, *, thresholds=THRESHOLDS) -> dict:
    """The metrics card of a map whose pixels on level ``k`` (probability ``p_levels[k]``) are
    ``ink[k]`` ink and ``bg[k]`` background pixels.

    ``p_levels`` must increase strictly. Returns plain Python floats and ints; undefined
    metrics are None and the card's ``notes`` (always present) maps each to the reason.
    """
    ink = np.asarray(ink, dtype=np.int64)
    bg = np.asarray(bg, dtype=np.int64)
    p_levels = np.asarray(p_levels, dtype=np.float64)
    if not (ink.shape == bg.shape == p_levels.shape) or ink.ndim != 1:
        raise ValueError("ink, bg and p_levels must be 1D arrays of one length")
    card = _empty_card(int(ink.sum()), int(bg.sum()))
    if card["notes"]:
        return card

    f1 = R.fbeta_sweep(ink, bg, thresholds, levels=p_levels, beta=1.0)
    f05 = R.fbeta_sweep(ink, bg, thresholds, levels=p_levels, beta=0.5)
    half = R.fbeta_sweep(ink, bg, [0.5], levels=p_levels, beta=1.0)
    occupied = np.flatnonzero((ink + bg) > 0)
    every = R.fbeta_sweep(ink, bg, p_levels[occupied], levels=p_levels, beta=1.0)
    j = int(np.argmax(every.fbeta))
    ap = R.average_precision(ink, bg)
    roc = R.auc(ink, bg)

    return _filled(card, f1, f05, half, ap, roc, float(every.fbeta[j]), float(every.thresholds[j]))


def _filled(card, f1, f05, half, ap, roc, best_f1, best_threshold) -> dict:
    """``card`` (from :func:`_empty_card`) with the metrics of the sweeps ``f1`` (beta 1),
    ``f05`` (beta 0.5) and ``half`` (beta 1 at 0.5), the first best-F1 threshold chosen."""
    n = card["n_pixels"]
    i = int(np.argmax(f1.fbeta))  # the first (lowest) threshold of the best F1
    card.update({
        "val_f1": float(f1.fbeta[i]),
        "best_threshold": float(f1.thresholds[i]),
        "f1_at_0.5": float(half.fbeta[0]),
        "val_f05": float(np.max(f05.fbeta)),
        "precision": float(f1.precision[i]),
        "recall": float(f1.recall[i]),
        "pred_positive_rate": int(f1.tp[i] + f1.fp[i]) / n,
        "average_precision": ap,
        "ap_prevalence_lift": ap / card["positive_rate"],
        "roc_auc": roc,
        "best_f1_any_threshold": best_f1,
        "best_threshold_any": best_threshold,
    })
    return card


#: the thresholds one exact float pass counts: the sweep's 19 and 0.5 (``f1_at_0.5``)
EXACT_THRESHOLDS = np.unique(np.r_[THRESHOLDS, 0.5])


def card_from_exact(ex, *, thresholds=THRESHOLDS) -> dict:
    """The metrics card of a float map ranked exactly (:func:`segscore.metrics.exact.rank_exact`
    with ``thresholds=EXACT_THRESHOLDS``): every distinct float64 score is a threshold, as in
    ScrollGT's scikit-learn. The same fields and rules as :func:`card_from_histograms`."""
    pos, neg = int(ex.n_pos), int(ex.n_neg)
    card = _empty_card(pos, neg)
    if pos == 0 or neg == 0:
        return card

    def at(ts):
        k = np.searchsorted(ex.thresholds, ts)
        if not np.array_equal(ex.thresholds[np.minimum(k, ex.thresholds.size - 1)], ts):
            raise ValueError("the exact pass did not count every threshold of the sweep")
        return ex.tp_ge[k], ex.fp_ge[k]

    t = np.asarray(thresholds, np.float64)
    tp, fp = at(t)
    f1 = R.fbeta_of_counts(tp, fp, pos, t, beta=1.0)
    f05 = R.fbeta_of_counts(tp, fp, pos, t, beta=0.5)
    half = R.fbeta_of_counts(*at(np.array([0.5])), pos, [0.5], beta=1.0)
    return _filled(card, f1, f05, half, ex.average_precision, ex.roc_auc, ex.best_f1, ex.best_threshold)


def constant_card(pos: int, neg: int, p: float) -> dict:
    """The card of a map that is ``p`` everywhere: its histogram is one level holding every pixel."""
    return card_from_histograms(np.array([pos]), np.array([neg]), np.array([float(p)]))
