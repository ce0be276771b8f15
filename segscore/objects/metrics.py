"""Every segmentation metric of the scorecard, on one field, from one contingency table.

Keys (spacr.scorecard's names): ``match_iou, precision, recall, f1, true_positives,
false_positives, false_negatives, iou_mean, dice_per_object, dice_pixel, n_matched,
ap_0.5 ... ap_0.9, ap_mean, boundary_precision_{t}px, boundary_recall_{t}px,
boundary_f1_{t}px, splits, merges, n_truth, n_pred, count_error, area_error_mean,
area_error_abs_mean`` and ``notes`` ({metric: why it is null}). A ratio that does not exist
(an empty truth or prediction, nothing matched) is None with a note, never 0 or NaN.
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError
from segscore.objects.matching import (DEFAULT_IOU_THRESHOLDS, Match, _chosen_index, _ratio, ap_key,
                                       match_table, sweep)
from segscore.objects.table import ContingencyTable, check_pair, table_for

#: boundary tolerances in pixels (Chebyshev distance)
DEFAULT_BOUNDARY_TOLERANCES = (1, 2, 3)
#: fraction of a truth object a prediction must cover to count in a split or a merge
DEFAULT_MINIMUM_OVERLAP = 0.1


def _f1(p, r):
    if p is None or r is None:
        return None
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


# ---------------------------------------------------------------- parts (each from a table)

def _dice_sums(table: ContingencyTable, match: Match) -> dict:
    ious = np.asarray(match.ious, dtype=np.float64)
    return {"dice_sum": float(np.sum(2 * ious / (1 + ious))) if ious.size else 0.0,
            "n_matched": int(ious.size),
            "fg_overlap": table.foreground_overlap,
            "fg_total": int(table.truth_area.sum() + table.pred_area.sum())}


def _dice_from_sums(s: dict, notes: dict) -> dict:
    per_object = s["dice_sum"] / s["n_matched"] if s["n_matched"] else None
    if per_object is None:
        notes["dice_per_object"] = "no matched pairs at the match IoU"
    pixel = _ratio(2 * s["fg_overlap"], s["fg_total"])
    if pixel is None:
        notes["dice_pixel"] = "neither image has a labelled pixel"
    return {"dice_per_object": per_object, "dice_pixel": pixel, "n_matched": s["n_matched"]}


def _area_sums(table: ContingencyTable, match: Match) -> dict:
    idx = _chosen_index(table, match)
    ta = table.truth_area[table.pair_t[idx]].astype(np.float64)
    pa = table.pred_area[table.pair_p[idx]].astype(np.float64)
    err = (pa - ta) / ta
    return {"area_err_sum": float(err.sum()), "area_abs_sum": float(np.abs(err).sum()), "n_matched": int(idx.size),
            "n_truth": table.n_truth, "n_pred": table.n_pred}


def _areas_from_sums(s: dict, notes: dict) -> dict:
    n = s["n_matched"]
    if not n:
        notes["area_error_mean"] = notes["area_error_abs_mean"] = "no matched pairs at the match IoU"
    return {"n_truth": s["n_truth"], "n_pred": s["n_pred"], "count_error": s["n_pred"] - s["n_truth"],
            "area_error_mean": s["area_err_sum"] / n if n else None,
            "area_error_abs_mean": s["area_abs_sum"] / n if n else None}


def _splits_merges_table(table: ContingencyTable, minimum_overlap: float) -> dict:
    minimum_overlap = float(minimum_overlap)
    if not 0 < minimum_overlap <= 1:
        raise ScoreError(f"minimum_overlap {minimum_overlap}: must be in (0, 1]")
    covers = table.pair_n / table.truth_area[table.pair_t] >= minimum_overlap
    per_truth = np.bincount(table.pair_t[covers], minlength=table.n_truth)
    per_pred = np.bincount(table.pair_p[covers], minlength=table.n_pred)
    return {"splits": int((per_truth >= 2).sum()), "merges": int((per_pred >= 2).sum())}


def _boundary_counts(t, p, tolerances) -> dict:
    """Boundary pixel counts and matched counts at each tolerance (additive over fields)."""
    from segscore.kernels.boundary import boundary_distance_counts, boundary_mask

    tols = [int(x) for x in tolerances]
    if any(x < 0 for x in tols) or any(x != y for x, y in zip(tols, tolerances)):
        raise ScoreError(f"boundary tolerances {list(tolerances)}: must be whole numbers of pixels >= 0")
    if t.ndim not in (2, 3):
        raise ScoreError(f"boundary F1 of shape {t.shape}: expected a 2D or 3D label image")
    t3 = t[None] if t.ndim == 2 else t
    p3 = p[None] if p.ndim == 2 else p
    te = np.zeros(t3.shape, np.uint8)
    pe = np.zeros(p3.shape, np.uint8)
    n_t = boundary_mask(t3, te)
    n_p = boundary_mask(p3, pe)
    T = max(tols) if tols else 0
    ph = np.zeros(T + 2, np.int64)
    th = np.zeros(T + 2, np.int64)
    if n_t and n_p:
        boundary_distance_counts(te, pe, T, ph, th)
    pc, tc = np.cumsum(ph), np.cumsum(th)
    return {"tolerances": tols, "truth_boundary": int(n_t), "pred_boundary": int(n_p),
            "pred_matched": [int(pc[x]) for x in tols], "truth_matched": [int(tc[x]) for x in tols]}


def _boundary_from_counts(s: dict, notes: dict) -> dict:
    out = {}
    for k, tol in enumerate(s["tolerances"]):
        p = _ratio(s["pred_matched"][k], s["pred_boundary"])
        r = _ratio(s["truth_matched"][k], s["truth_boundary"])
        if p is None:
            notes[f"boundary_precision_{tol}px"] = "the prediction has no boundary pixels"
        if r is None:
            notes[f"boundary_recall_{tol}px"] = "the truth has no boundary pixels"
        if p is None and r is None:
            f = None
            notes[f"boundary_f1_{tol}px"] = "neither image has boundary pixels"
        elif p is None or r is None:
            f = 0.0  # one side has a boundary and the other none: nothing of it was found
        else:
            f = _f1(p, r)
        out[f"boundary_precision_{tol}px"] = p
        out[f"boundary_recall_{tol}px"] = r
        out[f"boundary_f1_{tol}px"] = f
    return out


# ---------------------------------------------------------------- the public parts

def dice(truth, pred, threshold: float = 0.5, *, table=None) -> dict:
    """Per-object Dice (mean 2·IoU/(1+IoU) over pairs matched at ``threshold``) and pixel-wise Dice.

    ``dice_per_object`` is None when nothing matched; ``dice_pixel`` when neither image has
    a labelled pixel. ``notes`` says why.
    """
    tab = table_for(truth, pred, table)
    notes = {}
    out = _dice_from_sums(_dice_sums(tab, match_table(tab, threshold)), notes)
    out["notes"] = notes
    return out


def counts_and_areas(truth, pred, threshold: float = 0.5, *, table=None) -> dict:
    """``count_error = n_pred - n_truth`` (signed) and the relative area error of matched pairs.

    ``area_error_mean`` is the mean of (pred area - truth area) / truth area over pairs matched
    at ``threshold``; ``area_error_abs_mean`` the mean of its absolute value. None when nothing matched.
    """
    tab = table_for(truth, pred, table)
    notes = {}
    out = _areas_from_sums(_area_sums(tab, match_table(tab, threshold)), notes)
    out["notes"] = notes
    return out


def splits_and_merges(truth, pred, minimum_overlap: float = DEFAULT_MINIMUM_OVERLAP, *, table=None) -> dict:
    """Truth objects split, and predicted objects that merge truth objects.

    A truth object is split when two or more predicted objects each cover >= ``minimum_overlap``
    of it; a predicted object merges when it covers >= ``minimum_overlap`` of each of two or more
    truth objects (both fractions of the TRUTH object's area, as the issue defines them;
    spacr measures the merge fraction against the predicted object instead).
    """
    return _splits_merges_table(table_for(truth, pred, table), minimum_overlap)


def boundary_f1(truth, pred, tolerances=DEFAULT_BOUNDARY_TOLERANCES) -> dict:
    """Boundary precision, recall and F1 at each tolerance (pixels, Chebyshev distance).

    See :mod:`segscore.kernels.boundary` for the definitions. Precision is None when the
    prediction has no boundary pixel, recall when the truth has none; F1 is 0 when exactly
    one of them is None and None when both are.
    """
    t, p = check_pair(truth, pred, ndims=(2, 3))
    notes = {}
    out = _boundary_from_counts(_boundary_counts(t, p, tuple(tolerances)), notes)
    out["notes"] = notes
    return out


# ---------------------------------------------------------------- the whole scorecard

def field_sums(truth, pred, *, threshold=0.5, iou_thresholds=DEFAULT_IOU_THRESHOLDS,
               boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES, minimum_overlap=DEFAULT_MINIMUM_OVERLAP,
               table=None) -> dict:
    """The additive summary of one field every scorecard metric derives from (pooled by
    :func:`metrics_from_sums` for one field or summed over a held-out set)."""
    t, p = check_pair(truth, pred, ndims=(2, 3))
    threshold = float(threshold)
    thresholds = tuple(float(x) for x in iou_thresholds)
    if not thresholds:
        raise ScoreError("give at least one IoU threshold for the AP sweep")
    tab = table if table is not None else contingency_of(t, p)
    matches = sweep(tab, thresholds + ((threshold,) if threshold not in thresholds else ()))
    m = matches[threshold]
    return {
        "match_iou": threshold,
        "thresholds": list(thresholds),
        "n_truth": tab.n_truth, "n_pred": tab.n_pred,
        "tp": m.true_positives, "iou_sum": float(np.sum(m.ious)) if m.ious else 0.0,
        "sweep_tp": [matches[x].true_positives for x in thresholds],
        "dice": _dice_sums(tab, m),
        "areas": _area_sums(tab, m),
        "split_merge": _splits_merges_table(tab, minimum_overlap),
        "boundary": _boundary_counts(t, p, tuple(boundary_tolerances)),
    }


def contingency_of(t, p) -> ContingencyTable:
    from segscore.kernels.contingency import contingency

    return ContingencyTable(*contingency(t, p))


def add_sums(a: dict, b: dict) -> dict:
    """Two fields' summaries added (same settings)."""
    if a["thresholds"] != b["thresholds"] or a["match_iou"] != b["match_iou"] \
            or a["boundary"]["tolerances"] != b["boundary"]["tolerances"]:
        raise ScoreError("fields scored with different settings cannot be pooled")

    def add(x, y):
        if isinstance(x, dict):
            return {k: add(x[k], y[k]) for k in x}
        if isinstance(x, list):
            return [add(u, v) for u, v in zip(x, y)]
        return x + y

    out = add({k: v for k, v in a.items() if k not in ("match_iou", "thresholds")},
              {k: v for k, v in b.items() if k not in ("match_iou", "thresholds")})
    out["boundary"]["tolerances"] = a["boundary"]["tolerances"]
    out["match_iou"], out["thresholds"] = a["match_iou"], a["thresholds"]
    return out


def metrics_from_sums(s: dict) -> dict:
    """The scorecard dict (keys in the module docstring) from a field summary or a pooled one."""
    notes = {}
    n_t, n_p, tp = s["n_truth"], s["n_pred"], s["tp"]
    fp, fn = n_p - tp, n_t - tp
    precision, recall = _ratio(tp, n_p), _ratio(tp, n_t)
    if precision is None:
        notes["precision"] = "no predicted objects"
    if recall is None:
        notes["recall"] = "no truth objects"
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    if f1 is None:
        notes["f1"] = "neither image has an object"
    out = {"match_iou": s["match_iou"], "precision": precision, "recall": recall, "f1": f1,
           "true_positives": tp, "false_positives": fp, "false_negatives": fn,
           "iou_mean": s["iou_sum"] / tp if tp else None}
    if not tp:
        notes["iou_mean"] = "no matched pairs at the match IoU"
    out.update(_dice_from_sums(s["dice"], notes))
    aps = []
    for thr, tpt in zip(s["thresholds"], s["sweep_tp"]):
        ap = _ratio(tpt, n_t + n_p - tpt)
        out[ap_key(thr)] = ap
        aps.append(ap)
    out["ap_mean"] = None if any(a is None for a in aps) else float(np.mean(aps))
    if out["ap_mean"] is None:
        notes["ap_mean"] = "neither image has an object"
    out.update(_boundary_from_counts(s["boundary"], notes))
    out.update(s["split_merge"])
    out.update(_areas_from_sums(s["areas"], notes))
    out["notes"] = notes
    return out


def score_segmentation(truth, pred, *, threshold: float = 0.5, iou_thresholds=DEFAULT_IOU_THRESHOLDS,
                       boundary_tolerances=DEFAULT_BOUNDARY_TOLERANCES,
                       minimum_overlap: float = DEFAULT_MINIMUM_OVERLAP, table=None) -> dict:
    """Every segmentation metric of the scorecard on one 2D or 3D field (one contingency pass,
    one boundary pass). ``threshold`` is the IoU at which precision, recall, F1, Dice and the
    area errors are matched, reported as ``match_iou``."""
    return metrics_from_sums(field_sums(truth, pred, threshold=threshold, iou_thresholds=iou_thresholds,
                                        boundary_tolerances=boundary_tolerances,
                                        minimum_overlap=minimum_overlap, table=table))


#: keys describing the data or the settings; they have no meaningful difference
NOT_A_SCORE = frozenset({"match_iou", "n_fields", "n_truth", "n_pred", "count_error", "threshold", "n",
                         "n_positive"})


def delta_of(a: dict, b: dict, drop=NOT_A_SCORE) -> dict:
    """``a - b`` for every numeric key of both (None where either is None), settings dropped."""
    out = {}
    for k, va in a.items():
        if k in drop or k == "notes" or k not in b:
            continue
        vb = b[k]
        if isinstance(va, bool) or isinstance(vb, bool):
            continue
        if va is None or vb is None:
            out[k] = None
        elif isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            out[k] = va - vb
    return out


def compare_against_baseline(truth, finetuned, vanilla, **kwargs) -> dict:
    """Score two predictions of the same field: ``{"finetuned", "vanilla", "delta"}``.

    ``delta`` is finetuned - vanilla for every numeric metric except ``match_iou`` (a setting)
    and ``n_truth`` (the same truth); None where either side is None.
    """
    a = score_segmentation(truth, finetuned, **kwargs)
    b = score_segmentation(truth, vanilla, **kwargs)
    return {"finetuned": a, "vanilla": b, "delta": delta_of(a, b, drop={"match_iou", "n_truth"})}
