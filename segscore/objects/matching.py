"""One-to-one object matching at an IoU threshold, and the AP sweep, from one contingency table.

The rule is stardist's: among the pairs with IoU >= threshold, match as MANY objects as
possible (a maximum-cardinality matching), and among the matchings of that size take the one
with the largest total IoU of its matched pairs. Where several matchings tie exactly, objects
are taken in the order of their first pixel (C order), never of their ids, so relabelling
either image cannot change the result; sums over matched pairs are exactly rounded
(``math.fsum``), so their order cannot change the last bit either.

(stardist breaks those ties by the total IoU of its whole assignment, pairs below the
threshold included; :func:`matching_stardist` follows it, with stardist's other conventions:
any threshold, 0 for 0/0.)

spacr's ``match_objects`` instead maximises total IoU over all pairs first and then drops the
assigned pairs below the threshold, which can match fewer objects (a test pins such a case).

Pairs with IoU > 0.5 are unique on both sides (an object cannot overlap two others by more
than half of their union each), so at thresholds above 0.5, and at 0.5 unless two pairs tie
at exactly 0.5, the candidate pairs are already a matching. Otherwise each connected
component of the candidate graph is solved on its own with
``scipy.optimize.linear_sum_assignment``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from segscore.errors import ScoreError
from segscore.objects.table import ContingencyTable, table_for

#: the IoU sweep 0.5, 0.55, ..., 0.9
DEFAULT_IOU_THRESHOLDS = tuple(round(0.5 + 0.05 * k, 2) for k in range(9))


def _ratio(num, den):
    return float(num) / float(den) if den else None


@dataclass(frozen=True)
class Match:
    """One IoU threshold's worth of matching, and what it implies.

    ``pairs`` are ``(truth index, pred index)`` into the id arrays of the contingency table
    (sorted ids, as :func:`iou_matrix` returns them); ``ious`` the matched pairs' IoU.
    Ratios that do not exist (no predictions for precision, no truth for recall, neither for
    F1 and AP) are ``None``.
    """

    threshold: float
    pairs: tuple
    ious: tuple
    n_truth: int
    n_pred: int

    @property
    def true_positives(self) -> int:
        """Predicted objects matched to a truth object at this threshold."""
        return len(self.pairs)

    @property
    def false_positives(self) -> int:
        """Predicted objects with no truth object to match."""
        return self.n_pred - self.true_positives

    @property
    def false_negatives(self) -> int:
        """Truth objects the prediction did not find."""
        return self.n_truth - self.true_positives

    @property
    def precision(self):
        """TP / n_pred; None when nothing was predicted."""
        return _ratio(self.true_positives, self.n_pred)

    @property
    def recall(self):
        """TP / n_truth; None when there was nothing to find."""
        return _ratio(self.true_positives, self.n_truth)

    @property
    def f1(self):
        """2TP / (2TP + FP + FN), the harmonic mean of precision and recall (0 when both are 0);
        None only when both images are empty."""
        tp = self.true_positives
        return _ratio(2 * tp, 2 * tp + self.false_positives + self.false_negatives)

    @property
    def average_precision(self):
        """TP / (TP + FP + FN): the segmentation-benchmark "AP" (as stardist's ``accuracy``).

        NOT the area under a precision-recall curve; the name is the literature's.
        None when both images are empty.
        """
        tp = self.true_positives
        return _ratio(tp, tp + self.false_positives + self.false_negatives)

    @property
    def iou_mean(self):
        """Mean IoU of the matched pairs (an exactly rounded sum); None when nothing matched."""
        return math.fsum(self.ious) / len(self.ious) if self.ious else None


def _assign_components(ct, cp, ciou, n_t, t_rank=None, p_rank=None):
    """Maximum-cardinality, then maximum-IoU matching of a candidate edge list, by component.

    ``t_rank``/``p_rank`` order the objects of a component (by where they are) before the
    assignment, so exact ties are broken the same way whatever the ids."""
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    # nodes: truth indices 0..n_t-1, pred indices offset by n_t (only those in edges matter)
    n_nodes = n_t + int(cp.max()) + 1
    g = coo_matrix((np.ones(ct.size), (ct, cp + n_t)), shape=(n_nodes, n_nodes))
    _, comp = connected_components(g, directed=False)
    edge_comp = comp[ct]
    order = np.argsort(edge_comp, kind="stable")
    bounds = np.flatnonzero(np.diff(edge_comp[order])) + 1
    keep = []
    for group in np.split(order, bounds):
        if group.size == 1:
            keep.append(group)
            continue
        rows, r_inv = np.unique(ct[group] if t_rank is None else t_rank[ct[group]], return_inverse=True)
        cols, c_inv = np.unique(cp[group] if p_rank is None else p_rank[cp[group]], return_inverse=True)
        if rows.size == group.size and cols.size == group.size:  # already a matching (a path of 1)
            keep.append(group)
            continue
        m = min(rows.size, cols.size)
        w = np.zeros((rows.size, cols.size))
        # count first (weight 1 each), total IoU second (< 1 in all)
        w[r_inv, c_inv] = 1.0 + ciou[group] / (m + 1.0)
        eidx = np.full((rows.size, cols.size), -1, dtype=np.int64)
        eidx[r_inv, c_inv] = group
        r, c = linear_sum_assignment(w, maximize=True)
        chosen = eidx[r, c]
        keep.append(chosen[chosen >= 0])
    return np.concatenate(keep) if keep else np.zeros(0, dtype=np.int64)


def match_table(table: ContingencyTable, threshold: float = 0.5, *, iou=None) -> Match:
    """:class:`Match` of a precomputed table at ``threshold`` (``iou``: the table's IoUs, if known)."""
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold <= 0 or threshold > 1:
        raise ScoreError(f"IoU threshold {threshold}: must be in (0, 1] (stardist's conventions, where any "
                         "threshold is taken: segscore.objects.matching_stardist)")
    iou = table.iou if iou is None else iou
    cand = np.flatnonzero(iou >= threshold)
    ct, cp = table.pair_t[cand], table.pair_p[cand]
    if cand.size > 1 and (np.bincount(ct).max() > 1 or np.bincount(cp).max() > 1):
        t_rank = p_rank = None
        if table.truth_first is not None and table.pred_first is not None:
            t_rank = np.argsort(np.argsort(table.truth_first, kind="stable"), kind="stable")
            p_rank = np.argsort(np.argsort(table.pred_first, kind="stable"), kind="stable")
        chosen = cand[_assign_components(ct, cp, iou[cand], table.n_truth, t_rank, p_rank)]
    else:
        chosen = cand
    chosen = chosen[np.lexsort((table.pair_p[chosen], table.pair_t[chosen]))]
    pairs = tuple(zip(table.pair_t[chosen].tolist(), table.pair_p[chosen].tolist()))
    return Match(threshold, pairs, tuple(iou[chosen].tolist()), table.n_truth, table.n_pred)


def _chosen_index(table: ContingencyTable, match: Match) -> np.ndarray:
    """Indices into the table's pair arrays of a match's pairs."""
    if not match.pairs:
        return np.zeros(0, dtype=np.int64)
    key = table.pair_t * max(table.n_pred, 1) + table.pair_p
    mt = np.array([p[0] for p in match.pairs], dtype=np.int64)
    mp = np.array([p[1] for p in match.pairs], dtype=np.int64)
    return np.searchsorted(key, mt * max(table.n_pred, 1) + mp)


def match_objects(truth, pred, threshold: float = 0.5, *, table=None) -> Match:
    """Match predicted objects to truth objects one to one at IoU >= ``threshold``.

    Maximum number of matched pairs, ties broken by total IoU (see the module docstring).
    ``table``: a :class:`ContingencyTable` of the same pair, to reuse.
    """
    return match_table(table_for(truth, pred, table), threshold)


def iou_matrix(truth, pred, *, dense: bool = False, table=None):
    """``(iou, truth_ids, pred_ids)``: the IoU of every overlapping pair.

    ``iou`` is a ``scipy.sparse.csr_array`` of shape ``(n_truth, n_pred)`` (pairs that do
    not overlap are absent, never stored); ``dense=True`` returns an ndarray instead, for
    small images only. Ids are sorted ascending, background excluded.
    """
    tab = table_for(truth, pred, table)
    if dense:
        out = np.zeros((tab.n_truth, tab.n_pred))
        out[tab.pair_t, tab.pair_p] = tab.iou
        return out, tab.truth_ids, tab.pred_ids
    from scipy.sparse import csr_array

    out = csr_array((tab.iou, (tab.pair_t, tab.pair_p)), shape=(tab.n_truth, tab.n_pred))
    return out, tab.truth_ids, tab.pred_ids


def ap_key(threshold: float) -> str:
    return f"ap_{float(threshold):g}"


def sweep(table: ContingencyTable, thresholds=DEFAULT_IOU_THRESHOLDS) -> dict:
    """``{threshold: Match}`` for every threshold, from one table."""
    iou = table.iou
    return {float(t): match_table(table, t, iou=iou) for t in thresholds}


def average_precision(truth, pred, thresholds=DEFAULT_IOU_THRESHOLDS, *, table=None) -> dict:
    """``ap_{t}`` = TP/(TP+FP+FN) at each IoU in the sweep, and ``ap_mean`` across it.

    Values are None (and ``ap_mean`` None) when both images are empty.
    """
    thresholds = tuple(thresholds)
    if not thresholds:
        raise ScoreError("average_precision: give at least one IoU threshold")
    matches = sweep(table_for(truth, pred, table), thresholds)
    out = {ap_key(t): m.average_precision for t, m in matches.items()}
    vals = list(out.values())
    out["ap_mean"] = None if any(v is None for v in vals) else float(np.mean(vals))
    return out


# ---------------------------------------------------------------- stardist's conventions

#: the fields of stardist's ``Matching`` (``stardist.matching.matching``), in its order
STARDIST_FIELDS = ("criterion", "thresh", "fp", "tp", "fn", "precision", "recall", "accuracy", "f1", "n_true",
                   "n_pred", "mean_true_score", "mean_matched_score", "panoptic_quality")


def _assignment_pairs(table: ContingencyTable, iou: np.ndarray, thresh: float) -> np.ndarray:
    """Indices of the overlapping pairs of stardist's assignment at ``thresh``: the most pairs
    with IoU >= ``thresh`` (every pair when ``thresh <= 0``), then the largest total IoU of all
    assigned pairs, those below the threshold included; each connected component of the overlap
    graph solved on its own (pairs that do not overlap add nothing)."""
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    k = iou.size
    if not k:
        return np.zeros(0, dtype=np.int64)
    ct, cp, n_t = table.pair_t, table.pair_p, table.n_truth
    n_nodes = n_t + table.n_pred
    g = coo_matrix((np.ones(k), (ct, cp + n_t)), shape=(n_nodes, n_nodes))
    _, comp = connected_components(g, directed=False)
    edge_comp = comp[ct]
    order = np.argsort(edge_comp, kind="stable")
    keep = []
    for group in np.split(order, np.flatnonzero(np.diff(edge_comp[order])) + 1):
        rows, r_inv = np.unique(ct[group], return_inverse=True)
        cols, c_inv = np.unique(cp[group], return_inverse=True)
        m = min(rows.size, cols.size)
        w = np.zeros((rows.size, cols.size))
        # the count of pairs at the threshold first (1 each), the total IoU second (< 1 in all)
        counted = (iou[group] >= thresh) if thresh > 0 else np.zeros(group.size, bool)
        w[r_inv, c_inv] = counted + iou[group] / (m + 1.0)
        eidx = np.full((rows.size, cols.size), -1, dtype=np.int64)
        eidx[r_inv, c_inv] = group
        r, c = linear_sum_assignment(w, maximize=True)
        chosen = eidx[r, c]
        keep.append(chosen[chosen >= 0])
    return np.concatenate(keep)


def _stardist_row(table: ContingencyTable, thresh: float, iou: np.ndarray) -> dict:
    n_true, n_pred = table.n_truth, table.n_pred
    if thresh > 1:  # no IoU reaches it: nothing matches
        tp, ious = 0, []
    elif thresh <= 0:
        # every assigned pair passes, overlapping or not: min(n_true, n_pred) matches, the
        # assignment the one of largest total IoU (pairs that do not overlap add 0)
        tp = min(n_true, n_pred)
        ious = iou[_assignment_pairs(table, iou, thresh)].tolist()
    else:
        got = iou[_assignment_pairs(table, iou, thresh)]
        ious = got[got >= thresh].tolist()
        tp = len(ious)
    fp, fn = n_pred - tp, n_true - tp
    total = math.fsum(ious)

    def div(a, b):  # stardist's 0 where the denominator is 0
        return a / b if b else 0.0

    return {"criterion": "iou", "thresh": thresh, "fp": fp, "tp": tp, "fn": fn,
            "precision": div(tp, tp + fp) if tp else 0.0, "recall": div(tp, tp + fn) if tp else 0.0,
            "accuracy": div(tp, tp + fp + fn) if tp else 0.0, "f1": div(2 * tp, 2 * tp + fp + fn) if tp else 0.0,
            "n_true": n_true, "n_pred": n_pred, "mean_true_score": div(total, n_true),
            "mean_matched_score": div(total, tp), "panoptic_quality": div(total, tp + fp / 2 + fn / 2)}


def matching_stardist(y_true, y_pred, thresh=0.5, *, table=None):
    """stardist's ``matching(y_true, y_pred, thresh=thresh)`` (criterion ``"iou"``): a dict of its
    fields (:data:`STARDIST_FIELDS`), or a tuple of them for a sequence of thresholds.

    ``y_true`` is the truth. stardist assigns objects one to one: the most pairs with IoU >=
    ``thresh`` (so ``tp`` equals :func:`match_objects`'s), then the largest total IoU of the whole
    assignment, pairs below the threshold included (where :func:`match_objects` maximizes the
    matched pairs' IoU alone, so the mean scores can differ where several matchings have the
    most pairs); its other conventions differ from segscore's own functions too:

    * any threshold is taken (None is 0): above 1 nothing matches (``tp`` 0); at 0 or below every
      pair of the assignment counts, overlapping or not, so ``tp = min(n_true, n_pred)`` and the
      scores sum the assignment of largest total IoU; segscore's own functions refuse a
      threshold outside (0, 1].
    * a ratio whose denominator is 0 is 0 (precision, recall, accuracy, f1 whenever ``tp`` is 0;
      the mean scores of no objects), where segscore's own fields are null with a note.

    IoUs are float64 here; stardist divides in float32, so its mean scores differ from these in
    about the 7th significant digit (counts and ratios of counts are equal).
    """
    tab = table_for(y_true, y_pred, table)
    iou = tab.iou

    def one(t):
        t = 0.0 if t is None else t
        if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) or not math.isfinite(t):
            raise ScoreError(f"thresh {t!r}: give a finite number (or a sequence of them)")
        return _stardist_row(tab, float(t), iou)

    if thresh is None or np.isscalar(thresh):
        return one(thresh)
    return tuple(one(t) for t in thresh)
