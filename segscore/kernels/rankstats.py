"""Rank statistics: average ranks, Spearman's ρ, and ρ under a cluster bootstrap.

Ties take the average of the ranks they span (``scipy.stats.rankdata(method="average")``), and
Spearman's ρ is the Pearson correlation of those ranks (``scipy.stats.spearmanr``). The
bootstrap resamples clusters (groups of cases, e.g. every case of one reference mask) with
replacement; a resample is never materialised: each case carries the number of times its
cluster was drawn as a weight, and the ranks of the resample are read off the cases' order,
sorted once, in one pass per resample (a value drawn ``k`` times occupies ``k`` consecutive
ranks, as it would in the expanded array).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def _weighted_ranks(order, x, w, out):
    """Average ranks of ``x`` with case ``i`` counted ``w[i]`` times; ``order`` sorts ``x``.

    Writes ``out[i]`` (the rank of every copy of case ``i``; cases with weight 0 get the rank
    their value would have, which no sum reads) and returns the number of distinct values
    with positive weight.
    """
    n = order.shape[0]
    done = 0.0  # weight of the values below the current block
    distinct = 0
    s = 0
    while s < n:
        v = x[order[s]]
        e = s + 1
        while e < n and x[order[e]] == v:
            e += 1
        wb = 0.0
        for k in range(s, e):
            wb += w[order[k]]
        r = done + (wb + 1.0) / 2.0
        for k in range(s, e):
            out[order[k]] = r
        if wb > 0:
            distinct += 1
        done += wb
        s = e
    return distinct


@jit
def _weighted_pearson_of_ranks(rx, ry, w, total):
    """Pearson correlation of ranks ``rx``, ``ry`` under weights ``w`` summing to ``total``;
    ranks 1..total average (total + 1) / 2 exactly."""
    m = (total + 1.0) / 2.0
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(rx.shape[0]):
        wi = w[i]
        if wi == 0:
            continue
        dx = rx[i] - m
        dy = ry[i] - m
        sxy += wi * dx * dy
        sxx += wi * dx * dx
        syy += wi * dy * dy
    r = sxy / np.sqrt(sxx * syy)
    if r > 1.0:
        r = 1.0
    elif r < -1.0:
        r = -1.0
    return r


def spearman(x, y):
    """Spearman's ρ of ``x`` and ``y``, ties by average rank.

    Parameters
    ----------
    x, y : (n,) float64
        Same length.

    Returns
    -------
    rho : float
        NaN when ``x`` or ``y`` has fewer than two distinct values (n < 2 included).

    Notes
    -----
    Does not check lengths or NaN. The one resample of :func:`cluster_bootstrap_spearman` that
    draws every case once (one cluster, drawn once: each weight 1, the total ``n``), so a first
    run compiles one kernel for both (a second kernel and numba's argsort cost about 1.5 s).
    """
    out = np.empty(1)
    cluster_bootstrap_spearman(x, y, np.zeros(x.shape[0], np.int64), np.zeros((1, 1), np.int64), out)
    return out[0]


def cluster_bootstrap_spearman(x, y, group, picks, out):
    """Spearman's ρ of each cluster resample.

    Parameters
    ----------
    x, y : (n,) float64
        The paired values of the cases.
    group : (n,) int64
        The cluster of each case, in ``[0, g)``.
    picks : (b, g) int64
        Row ``j`` lists the clusters drawn (with replacement) in resample ``j``: resample ``j``
        holds every case of cluster ``picks[j, k]`` once per ``k``.
    out : (b,) float64
        Filled with ρ of each resample, NaN where the resample leaves ``x`` or ``y`` with one
        distinct value.

    Returns
    -------
    finite : int
        Number of resamples with a defined ρ.

    Notes
    -----
    Does not check NaN, lengths, or that ``group`` and ``picks`` lie in ``[0, g)``. The cases'
    orders are NumPy's stable argsort (the one permutation a stable sort gives: numba's mergesort
    gave the same, at about a second of compiling on a first run), the rest one kernel.
    """
    return _bootstrap(x, y, np.argsort(x, kind="stable"), np.argsort(y, kind="stable"), group, picks, out)


@jit
def _bootstrap(x, y, ox, oy, group, picks, out):
    """:func:`cluster_bootstrap_spearman` with the orders ``ox``, ``oy`` sorting ``x`` and ``y``."""
    n = x.shape[0]
    nb, g = picks.shape
    size = np.zeros(g, np.int64)
    for i in range(n):
        size[group[i]] += 1
    count = np.zeros(g, np.int64)
    w = np.empty(n, np.float64)
    rx = np.empty(n, np.float64)
    ry = np.empty(n, np.float64)
    finite = 0
    for j in range(nb):
        count[:] = 0
        for k in range(g):
            count[picks[j, k]] += 1
        total = 0
        for c in range(g):
            total += count[c] * size[c]
        for i in range(n):
            w[i] = count[group[i]]
        dx = _weighted_ranks(ox, x, w, rx)
        dy = _weighted_ranks(oy, y, w, ry)
        if dx < 2 or dy < 2:
            out[j] = np.nan
            continue
        out[j] = _weighted_pearson_of_ranks(rx, ry, w, float(total))
        finite += 1
    return finite
