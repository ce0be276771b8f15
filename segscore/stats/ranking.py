"""challengeR's rankings of one task, and its consensus over tasks.

Every ranking gives rank 1 to the best model and ties the rank ``"min"`` (R's
``rank(ties.method="min")``: two models tied for second are both 2, the next is 4); a model with
no value is ranked after every model with one.

- aggregate-then-rank (``aggregate_mean``, ``aggregate_median``): rank the models' mean (median) over
  the cases they have;
- rank-then-aggregate (``rank_then_aggregate``): rank the models within each case (among those
  with a value there), average each model's ranks over its cases, rank the averages (smaller
  first);
- test-then-rank (``test_then_rank``): count each model's significant one-sided wins (the paired
  Wilcoxon test of :func:`segscore.stats.paired.wilcoxon_greater` on the pair's common cases, p
  unadjusted ``<= alpha``: challengeR's defaults), rank the counts (more first);
- consensus over tasks (:func:`consensus`, challengeR's ``consensus(method="euclidean")``): each
  task's ranking read as average-tie ranks (R's ``rank(ties.method="average")`` of the ranks), their
  mean over tasks per model, ranked (smaller first) after rounding to 10 decimals (so that means
  equal on paper tie).
"""

from __future__ import annotations

import numpy as np

#: the rankings, in the order they are reported
METHODS = ("aggregate_mean", "aggregate_median", "rank_then_aggregate", "test_then_rank")


def rank_min(score, *, larger_better: bool) -> np.ndarray:
    """R's ``rank(ties.method="min")`` of the better-first order of ``score``; NaN ranked last (tied)."""
    s = np.asarray(score, float)
    m = s.size
    nan = np.isnan(s)
    out = np.empty(m, np.int64)
    for a in range(m):
        if nan[a]:
            out[a] = m - int(nan.sum()) + 1
        else:
            ok = ~nan
            out[a] = 1 + int(np.count_nonzero(s[ok] > s[a] if larger_better else s[ok] < s[a]))
    return out


def aggregate(values, statistic: str) -> np.ndarray:
    """Each model's (row's) mean or median over the cases it has; NaN where it has none. The mean
    is the correctly rounded sum (``math.fsum``) over the count, so that two models with the same
    values in another order tie exactly, as they do in R's long-double mean."""
    import math

    v = np.asarray(values, float)
    out = np.full(v.shape[0], np.nan)
    for i, row in enumerate(v):
        row = row[~np.isnan(row)]
        if row.size:
            out[i] = math.fsum(row) / row.size if statistic == "mean" else np.median(row)
    return out


def case_ranks(values, *, larger_better: bool) -> np.ndarray:
    """``(models, cases)``: each case's ranks among the models with a value there (ties "min"); NaN
    where a model has none."""
    v = np.asarray(values, float)
    out = np.full(v.shape, np.nan)
    for c in range(v.shape[1]):
        col = v[:, c]
        ok = ~np.isnan(col)
        if ok.any():
            out[ok, c] = rank_min(col[ok], larger_better=larger_better)
    return out


def rank_then_aggregate(values, *, larger_better: bool) -> tuple:
    """``(mean ranks, ranks, per-case rank counts (models, models))``."""
    r = case_ranks(values, larger_better=larger_better)
    mean_rank = aggregate(r, "mean")
    m = r.shape[0]
    counts = np.zeros((m, m), np.int64)
    for i in range(m):
        ri = r[i][~np.isnan(r[i])].astype(np.int64)
        counts[i] = np.bincount(ri - 1, minlength=m)[:m]
    return mean_rank, rank_min(mean_rank, larger_better=False), counts


def wins(p_matrix, alpha: float) -> np.ndarray:
    """Each row's count of columns with ``p <= alpha`` (None or NaN: not a win)."""
    p = np.array([[np.nan if x is None else x for x in row] for row in p_matrix], float)
    with np.errstate(invalid="ignore"):
        return np.count_nonzero(p <= alpha, axis=1)


def consensus(task_ranks) -> tuple:
    """``(score, rank)`` of the Euclidean consensus of ``task_ranks`` (tasks x models, each row a
    ranking with ties "min"): the mean over tasks of average-tie ranks, ranked smaller first."""
    from segscore.stats.paired import average_ranks

    r = np.asarray(task_ranks, float)
    avg = np.vstack([average_ranks(row) for row in r])
    score = avg.mean(axis=0)
    return score, rank_min(np.round(score, 10), larger_better=False)
