"""What a miss counts as in an aggregate: the ``--missing null|worst`` policy of ``report`` and ``holdout``.

A *miss* is a case where one side is empty and the other is not: the truth has a structure
and the prediction is empty, or the reverse. Both empty is a correct prediction, not a miss,
and is never imputed. Under ``null`` (the default) a null metric is left out of a mean and
counted; under ``worst`` a null whose case is a miss counts as the metric's declared worst
value (:data:`WORST`), and per-object means (:data:`PER_OBJECT`) count every unmatched object,
truth or predicted, at the worst value before they are averaged. A metric declared
``"none: ..."`` (VOI: unbounded) is never imputed and the aggregate says so.

Whether a case is a miss is read from the counts a result already carries (:func:`emptiness`:
``n_truth``/``n_pred`` of an objects scorecard, ``foreground_gt``/``foreground_pred`` of a
surfaces result, ``betti0_gt``/``betti0_pred`` of a curve result, or an explicit
``empty: {"truth", "pred"}``), never from the wording of a note.
"""

from __future__ import annotations

import math

from segscore.errors import ScoreError

#: the policies ``--missing`` takes; ``null`` is the default
POLICIES = ("null", "worst")
#: the worst value of a distance: the image diagonal in physical units (``shape`` times ``spacing``)
DIAGONAL = "diagonal"
_UNBOUNDED = "none: not imputable (unbounded above: no worst value)"
_SIGNED = "none: not imputable (a signed error: no worst side)"

#: each metric's worst value, declared once: a number, :data:`DIAGONAL`, or ``"none: why"``.
#: Keys are the result fields (the name a report column carries); ``ap_*``, ``boundary_*`` and
#: ``nsd_*`` fields follow :data:`WORST_PREFIXES`.
WORST: dict = {
    # objects (segscore objects, holdout)
    "f1": 0.0, "precision": 0.0, "recall": 0.0, "ap_mean": 0.0, "iou_mean": 0.0, "dice_per_object": 0.0,
    "dice_pixel": 0.0, "pq": 0.0, "sq": 0.0, "rq": 0.0, "pq_dsc": 0.0, "sq_dsc": 0.0,
    "hd95_per_object": DIAGONAL, "assd_per_object": DIAGONAL, "hd_pixel": DIAGONAL, "hd95_pixel": DIAGONAL,
    "assd_pixel": DIAGONAL,
    "voi_split": _UNBOUNDED, "voi_merge": _UNBOUNDED, "adapted_rand_error": 1.0,
    "adapted_rand_precision": 0.0, "adapted_rand_recall": 0.0,
    "area_error_mean": _SIGNED, "area_error_abs_mean": _UNBOUNDED,
    # curvilinear (segscore curve)
    "dice": 0.0, "iou": 0.0, "cldice": 0.0, "erl_frac": 0.0, "traceable_frac": 0.0, "conductance_frac": 0.0,
    "hd95": DIAGONAL, "betti0_error": _UNBOUNDED,
    # topology (segscore surfaces)
    "leaderboard": 0.0, "toposcore": 0.0, "topoF1_0": 0.0, "topoF1_1": 0.0, "topoF1_2": 0.0, "surface_dice": 0.0,
    "voi_score": 0.0, "voi_total": _UNBOUNDED,
}
#: families of fields sharing a worst value
WORST_PREFIXES = (("ap_0", 0.0), ("ap_1", 0.0), ("boundary_", 0.0), ("nsd_", 0.0))  # not ap_prevalence_lift
#: per-object means: ``metric`` averaged over matched pairs; under ``worst`` every unmatched
#: object (``false_negatives + false_positives``) counts the worst value too
PER_OBJECT = ("iou_mean", "dice_per_object", "hd95_per_object", "assd_per_object", "nsd_per_object")


def check_policy(missing) -> str:
    """``missing`` as one of :data:`POLICIES` (None: ``null``); a :class:`ScoreError` otherwise."""
    if missing is None:
        return "null"
    if missing not in POLICIES:
        raise ScoreError(f"--missing {missing!r}: give one of {', '.join(POLICIES)} (null: leave a miss out and "
                         "count it; worst: count it as the metric's worst value)")
    return missing


def worst_of(metric: str):
    """The declared worst value of ``metric`` (a number, :data:`DIAGONAL`, ``"none: why"``), or
    None when it declares none (then it is never imputed)."""
    if metric in WORST:
        return WORST[metric]
    for prefix, value in WORST_PREFIXES:
        if metric.startswith(prefix) and not metric.endswith("_sd"):
            return value
    return None


def diagonal(shape, spacing=None) -> float:
    """The image diagonal in physical units: ``|shape * spacing|`` (curvicost's hd95 of an empty mask)."""
    spacing = [1.0] * len(shape) if spacing is None else list(spacing)
    if len(spacing) != len(shape):
        raise ScoreError(f"spacing {spacing} does not have one value per axis of shape {list(shape)}")
    return math.sqrt(math.fsum((float(n) * float(s)) ** 2 for n, s in zip(shape, spacing)))


def result_diagonal(result: dict):
    """:func:`diagonal` of a result carrying ``shape`` (and ``spacing``, or ``params.spacing``), else None."""
    shape = result.get("shape") if isinstance(result, dict) else None
    if not isinstance(shape, (list, tuple)) or not shape:
        return None
    spacing = result.get("spacing")
    if spacing is None and isinstance(result.get("params"), dict):
        spacing = result["params"].get("spacing")
    try:
        return diagonal(shape, spacing)
    except (ScoreError, TypeError, ValueError):
        return None


#: the count fields telling whether each side of a case is empty, per family
_EMPTY_COUNTS = (("n_truth", "n_pred"), ("foreground_gt", "foreground_pred"), ("betti0_gt", "betti0_pred"))


def emptiness(result) -> tuple | None:
    """``(truth_empty, pred_empty)`` of a case, from its result's own counts (module docstring),
    or None when the result says neither."""
    if not isinstance(result, dict):
        return None
    empty = result.get("empty")
    if isinstance(empty, dict) and isinstance(empty.get("truth"), bool) and isinstance(empty.get("pred"), bool):
        return empty["truth"], empty["pred"]
    for t, p in _EMPTY_COUNTS:
        a, b = result.get(t), result.get(p)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return a == 0, b == 0
    return None


def is_miss(result) -> bool:
    """Whether the case is a miss: exactly one side empty (both empty is a correct prediction)."""
    e = emptiness(result)
    return e is not None and e[0] != e[1]


def worst_number(metric: str, result: dict):
    """``(value, None)``: the number ``metric`` counts as under ``worst`` in ``result``'s case;
    ``(None, why)`` when it cannot be imputed (declared none, undeclared, no diagonal)."""
    w = worst_of(metric)
    if w is None:
        return None, f"{metric} declares no worst value: not imputable"
    if isinstance(w, str) and w.startswith("none"):
        return None, f"{metric}: {w}"
    if w == DIAGONAL:
        d = result_diagonal(result)
        if d is None:
            return None, f"{metric}: its worst value is the image diagonal, and the result carries no shape"
        return d, None
    return float(w), None


def per_object_worst(metric: str, metrics: dict, result: dict | None = None):
    """``(mean, n_imputed, why)``: ``metric`` (one of :data:`PER_OBJECT`) of a scorecard with its
    unmatched objects (``false_negatives + false_positives``) counted at the worst value; the
    matched mean is ``metrics[metric]`` over ``true_positives`` pairs. ``mean`` is None when
    there is no object at all (both empty: not a miss) or the worst value is not declared
    (``why`` says so). ``result``: where the diagonal is read (default ``metrics``)."""
    tp, fn, fp = (metrics.get(k) for k in ("true_positives", "false_negatives", "false_positives"))
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (tp, fn, fp)):
        return metrics.get(metric), 0, f"{metric}: the result carries no object counts"
    missed = fn + fp
    if tp + missed == 0:
        return None, 0, None
    if missed == 0:
        return metrics.get(metric), 0, None
    w, why = worst_number(metric, result if result is not None else metrics)
    if w is None:
        return metrics.get(metric), 0, why
    if tp and metrics.get(metric) is None:  # matched pairs without their mean: no silent zeros
        return None, 0, f"{metric}: the result has {tp} matched pair(s) but no mean of them"
    summed, count = worst_sum(metric, metrics, w)
    return summed / count, missed, None


def worst_sum(metric: str, metrics: dict, diag=None):
    """``(sum, count)`` of ``metric`` over all of a field's objects under ``worst`` (poolable over
    fields: a held-out set's mean is the sums' ratio), or None when it cannot be imputed."""
    tp, fn, fp = (int(metrics.get(k) or 0) for k in ("true_positives", "false_negatives", "false_positives"))
    w = worst_of(metric)
    if w is None or (isinstance(w, str) and w.startswith("none")):
        return None
    if w == DIAGONAL:
        if diag is None:
            return None
        w = diag
    matched = metrics.get(metric)
    if tp and matched is None:
        return None
    return (matched * tp if tp else 0.0) + float(w) * (fn + fp), tp + fn + fp


def mean(values) -> float | None:
    """The mean of the numbers in ``values`` (None left out); None when none is left."""
    xs = [float(v) for v in values if v is not None]
    return math.fsum(xs) / len(xs) if xs else None



#: the headline metrics where a smaller value is better (distances, errors, VOI); every other
#: headline is larger-better (:func:`larger_is_better` also reads the name patterns below). Read by
#: the benchmark statistics (``segscore.stats``) to orient intervals, comparisons and rankings.
SMALLER_BETTER = frozenset({
    "voi_split", "voi_merge", "voi_total", "adapted_rand_error", "area_error_mean", "area_error_abs_mean",
    "hd", "hd95", "assd", "hd95_per_object", "assd_per_object", "hd_pixel", "hd95_pixel", "assd_pixel",
    "betti0_error", "betti1_error", "betti2_error", "betti_error", "area_error",
})
#: name patterns of smaller-better fields: distance prefixes and error suffixes
SMALLER_BETTER_PREFIXES = ("hd_", "hd95_", "assd_")
SMALLER_BETTER_SUFFIXES = ("_error",)


def larger_is_better(metric: str) -> bool:
    """The declared direction of ``metric``: False for :data:`SMALLER_BETTER` and the names matching
    its prefixes or suffixes, True otherwise (``voi_score`` is a larger-better score)."""
    return not (metric in SMALLER_BETTER or metric.startswith(SMALLER_BETTER_PREFIXES)
                or metric.endswith(SMALLER_BETTER_SUFFIXES))
