"""The bootstrap loop of the benchmark statistics (:mod:`segscore.stats`): draws x columns.

A *unit* is what one draw picks with replacement: a case, or a cluster of cases (a scroll, a
patient). A *column* is one series being resampled: a model's metric, or the paired difference
of two models. The caller reduces each column to per-unit sums and counts once (the count is the
number of the unit's cases that carry a value), then each draw's statistic is read off a draw's
unit indices without ever building the resample:

- :func:`draw_means`: ``sum_j sums[idx[j]] / sum_j counts[idx[j]]`` per column (the mean over
  every case of the drawn units that has a value; NaN where none has);
- :func:`draw_medians`: the median of those values, gathered case by case;
- :func:`refine_ties`: where two columns' means of one draw are within a relative ``1e-9`` of each
  other, both are recomputed as the correctly rounded sum (:func:`fsum_add`, Shewchuk's exact
  partials, as ``math.fsum``) over the count, so that means equal in exact arithmetic are equal
  whatever the order of their values (R's long-double mean ties them too);
- :func:`draw_ranks`: each draw's ranking of the columns (ties "min", NaN last);
- :func:`kendall_tau_b`: Kendall's tau-b of one reference ranking against each draw's.

Draws arrive in chunks (``idx`` of shape ``(chunk, n_units)``), so memory is bounded by the chunk,
not by resamples x cases. The loops run in parallel over the draws of a chunk (``prange``); each
draw owns its output row and is computed in a fixed order, so results do not depend on the
number of threads.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.kernels._jit import jit, prange


# parallel=True: prange over the draws of a chunk (each owns its row); cache and nogil as shared
@jit(parallel=True)
def draw_means(idx, sums, counts, out):
    """Each draw's mean per column.

    Parameters
    ----------
    idx : (d, n) int64
        Unit indices of ``d`` draws of ``n`` units each, every value in ``[0, units)``.
    sums, counts : (units, columns) float64
        Per unit and column: the sum of the values of its cases, and how many there are.
        ``counts`` of shape ``(0, 0)``: every unit holds one value in every column (the count of
        a draw is ``n``), which skips reading the counts.
    out : (d, columns) float64
        Filled with ``sum / count`` over the drawn units (NaN where the count is 0).

    Notes
    -----
    Does not check the range of ``idx`` nor the shapes: :mod:`segscore.stats.resampling` does.
    Sums run left to right over the draw (a fixed order: thread count cannot change them).
    """
    d, n = idx.shape
    cols = sums.shape[1]
    full = counts.shape[0] == 0
    for r in prange(d):
        acc = np.zeros(cols)
        cnt = np.zeros(cols)
        for j in range(n):
            u = idx[r, j]
            for c in range(cols):
                acc[c] += sums[u, c]
            if not full:
                for c in range(cols):
                    cnt[c] += counts[u, c]
        if full:
            cnt[:] = n
        for c in range(cols):
            out[r, c] = acc[c] / cnt[c] if cnt[c] > 0 else np.nan
    return d


@jit
def largest_unit(unit_start):
    """The most cases any unit holds (``unit_start`` as :func:`draw_medians` takes it)."""
    most = 0
    for u in range(unit_start.shape[0] - 1):
        most = max(most, unit_start[u + 1] - unit_start[u])
    return most


@jit
def gather_drawn(draw, values, unit_start, unit_cases, c, buf):
    """Copy column ``c``'s values of every case of the units in ``draw`` (NaN skipped) into
    ``buf``, in draw order; returns how many."""
    k = 0
    for j in range(draw.shape[0]):
        u = draw[j]
        for p in range(unit_start[u], unit_start[u + 1]):
            v = values[unit_cases[p], c]
            if not np.isnan(v):
                buf[k] = v
                k += 1
    return k


# parallel=True: prange over the draws of a chunk (each owns its row and its buffer)
@jit(parallel=True)
def draw_medians(idx, values, unit_start, unit_cases, out):
    """Each draw's median per column over every case of the drawn units that has a value.

    Parameters
    ----------
    idx : (d, n) int64
        Unit indices of the draws.
    values : (cases, columns) float64
        One row per case; NaN where the column has no value for the case.
    unit_start : (units + 1,) int64
        Unit ``u``'s cases are ``unit_cases[unit_start[u]:unit_start[u + 1]]``.
    unit_cases : (cases,) int64
        Case rows grouped by unit.
    out : (d, columns) float64
        Filled with the medians (NaN where no drawn case has a value).

    Notes
    -----
    The median of an even count is the mean of the two middle values (``numpy.median``).
    Does not check shapes or index ranges.
    """
    d, n = idx.shape
    cols = values.shape[1]
    most = largest_unit(unit_start)
    for r in prange(d):
        buf = np.empty(n * most)
        for c in range(cols):
            k = gather_drawn(idx[r], values, unit_start, unit_cases, c, buf)
            out[r, c] = np.median(buf[:k]) if k > 0 else np.nan
    return d


@jit
def fsum_add(partials, count, x):
    """Add ``x`` to the exact sum held as ``count`` non-overlapping ``partials`` (Shewchuk's
    algorithm); returns the new count. ``partials`` needs room for 64 entries (finite doubles
    never need more than about 40)."""
    i = 0
    for j in range(count):
        y = partials[j]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    partials[i] = x
    return i + 1


@jit
def fsum_total(partials, count):
    """The correctly rounded value of the exact sum in ``partials`` (``math.fsum``'s last step,
    half-even rounding across partials)."""
    if count == 0:
        return 0.0
    n = count - 1
    hi = partials[n]
    lo = 0.0
    while n > 0:
        x = hi
        n -= 1
        y = partials[n]
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            break
    if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or (lo > 0.0 and partials[n - 1] > 0.0)):
        y = lo * 2.0
        x = hi + y
        if y == x - hi:
            hi = x
    return hi


# parallel=True: prange over the draws of a chunk (each owns its row)
@jit(parallel=True)
def refine_ties(idx, values, unit_start, unit_cases, out, rel):
    """Recompute, as ``fsum / count``, every column of a draw whose mean in ``out`` is within
    ``rel`` (relative) of another column's in the same draw (:func:`draw_means`'s arguments).
    Returns the number of values recomputed.

    Notes
    -----
    Columns are compared in sorted order, neighbours only (a near-tie is a neighbour in that order).
    """
    d, n = idx.shape
    cols = out.shape[1]
    most = largest_unit(unit_start)
    fixed = np.zeros(d, np.int64)
    for r in prange(d):
        row = out[r]
        order = np.argsort(row)
        flag = np.zeros(cols, np.bool_)
        for k in range(cols - 1):
            a = row[order[k]]
            b = row[order[k + 1]]
            if np.isnan(a) or np.isnan(b):
                continue
            if abs(b - a) <= rel * max(abs(a), abs(b)):
                flag[order[k]] = True
                flag[order[k + 1]] = True
        partials = np.empty(64)
        buf = np.empty(n * most)
        for c in range(cols):
            if not flag[c]:
                continue
            k = gather_drawn(idx[r], values, unit_start, unit_cases, c, buf)
            count = np.int64(0)  # int64, not Literal[int](0): fsum_add/fsum_total compiled once
            for i in range(k):
                count = fsum_add(partials, count, buf[i])
            if k > 0:
                out[r, c] = fsum_total(partials, count) / k
                fixed[r] += 1
    return fixed.sum()


@jit
def rank_min(stat, larger_better, out):
    """Ranks of ``stat`` (one draw), ties "min", the best rank 1, NaN ranked after every number
    (and tied among themselves). ``out`` (int64, same length) is filled; returns the count of NaN."""
    m = stat.shape[0]
    nan = 0
    for a in range(m):
        if np.isnan(stat[a]):
            nan += 1
    for a in range(m):
        va = stat[a]
        if np.isnan(va):
            out[a] = m - nan + 1
            continue
        better = 0
        for b in range(m):
            vb = stat[b]
            if np.isnan(vb):
                continue
            if (vb > va) if larger_better else (vb < va):
                better += 1
        out[a] = better + 1
    return nan


# parallel=True: prange over draws (each owns its row)
@jit(parallel=True)
def draw_ranks(stat, larger_better, out):
    """Ranks of each draw's columns (:func:`rank_min` row by row).

    Parameters
    ----------
    stat : (d, m) float64
        Each draw's statistic per model.
    larger_better : bool
        Direction: True when a larger statistic is better.
    out : (d, m) int64
        Filled with ranks, 1 best, ties "min", NaN last.
    """
    d = stat.shape[0]
    for r in prange(d):
        rank_min(stat[r], larger_better, out[r])
    return d


@jit
def tau_b(x, y):
    """Kendall's tau-b of two equally long rankings; NaN where either is all tied (or shorter than 2)."""
    m = x.shape[0]
    conc = 0.0
    disc = 0.0
    tx = 0.0
    ty = 0.0
    for a in range(m):
        for b in range(a + 1, m):
            dx = x[a] - x[b]
            dy = y[a] - y[b]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    den = (conc + disc + tx) * (conc + disc + ty)
    if den == 0:
        return np.nan
    return (conc - disc) / np.sqrt(den)


# parallel=True: prange over draws (each owns its entry)
@jit(parallel=True)
def kendall_tau_b(ref, ranks, out):
    """Kendall's tau-b of ``ref`` (m,) against each row of ``ranks`` (d, m), into ``out`` (d,)
    float64; NaN where a draw's ranks (or ``ref``) all tie (``scipy.stats.kendalltau``'s tau-b)."""
    d = ranks.shape[0]
    for r in prange(d):
        out[r] = tau_b(ref.astype(np.float64), ranks[r].astype(np.float64))
    return d


# parallel=True: prange over draws (each owns its row of ranks and its tau)
@jit(parallel=True)
def rank_stability(stat, larger_better, ref, ranks, tau):
    """:func:`draw_ranks` and :func:`kendall_tau_b` in one pass: ``ranks`` (d, m) int64 filled
    with each draw's ranks, ``tau`` (d,) with Kendall's tau-b of ``ref`` (m,) int64 against them
    (NaN where either all ties). With ``ref`` of length 0, ``tau`` is not written (the full-data
    ranking itself)."""
    d, m = stat.shape
    with_tau = ref.shape[0] == m
    for r in prange(d):
        rank_min(stat[r], larger_better, ranks[r])
        if with_tau:
            tau[r] = tau_b(ref.astype(np.float64), ranks[r].astype(np.float64))
    return d


# parallel=True: prange over the draws of a chunk (each owns its row and its unit weights)
@jit(parallel=True)
def rank_aggregate_draws(idx, better, unit_start, unit_cases, challenger, out):
    """Each draw's mean of per-case ranks per model (rank-then-aggregate over the drawn units).

    Parameters
    ----------
    idx : (d, n) int64
        Unit indices of the draws.
    better : (cases, models) int64
        Per case and model: how many models with a value in the case are strictly better (its
        rank, ties "min", is ``better + 1``); -1 where the model has no value.
    unit_start, unit_cases : int64
        The cases of each unit (:func:`draw_medians`).
    challenger : bool
        True: a unit drawn ``k`` times puts ``k`` copies of each of its cases under one case id, and
        they are ranked together (challengeR's ``bootstrap``: a rank ``b + 1`` becomes ``k * b + 1``);
        False: each drawn copy is its own case (rank ``b + 1``).
    out : (d, models) float64
        The sum of the drawn copies' ranks over their count (exact integer sums; NaN where a model has
        no drawn value).
    """
    d, n = idx.shape
    units = unit_start.shape[0] - 1
    m = better.shape[1]
    for r in prange(d):
        w = np.zeros(units, np.int64)
        for j in range(n):
            w[idx[r, j]] += 1
        s = np.zeros(m, np.int64)
        cnt = np.zeros(m, np.int64)
        for u in range(units):
            k = w[u]
            if k == 0:
                continue
            for p in range(unit_start[u], unit_start[u + 1]):
                case = unit_cases[p]
                for i in range(m):
                    b = better[case, i]
                    if b < 0:
                        continue
                    s[i] += k * (k * b + 1) if challenger else k * (b + 1)
                    cnt[i] += k
        for i in range(m):
            out[r, i] = s[i] / cnt[i] if cnt[i] > 0 else np.nan
    return d


@jit
def upper_normal(z):
    """``P(Z > z)``: cephes' ``ndtr(-z)`` with the C library's ``erf``/``erfc`` (as
    ``segscore.stats.paired``'s)."""
    x = -z * np.sqrt(0.5)
    if np.isnan(x):
        return np.nan
    if abs(x) < np.sqrt(0.5):
        return 0.5 + 0.5 * math.erf(x)
    y = 0.5 * math.erfc(abs(x))
    return 1.0 - y if x > 0 else y


@jit
def signed_rank_p(v, n, ties):
    """R's one-sided ``wilcox.test(exact=FALSE)`` p-value of a signed-rank sum ``v`` over ``n``
    nonzero differences, ``ties`` the sum of ``t**3 - t`` over tie groups (the arithmetic of
    ``segscore.stats.paired.wilcoxon_greater``); NaN where the variance is not positive."""
    sigma2 = n * (n + 1) * (2 * n + 1) / 24 - ties / 48
    if sigma2 <= 0:
        return np.nan
    z = v - n * (n + 1) / 4
    z = (z - 0.5) / np.sqrt(sigma2)
    return upper_normal(z)


# parallel=True: prange over the draws of a chunk (each owns its row of wins and its case weights)
@jit(parallel=True)
def test_rank_draws(idx, unit_start, unit_cases, pair_start, pair_a, pair_b, entry_case, entry_positive,
                    entry_new_group, challenger, alpha, wins):
    """Each draw's count of significant one-sided paired Wilcoxon wins per model (test-then-rank).

    Parameters
    ----------
    idx : (d, n) int64
        Unit indices of the draws.
    unit_start, unit_cases : int64
        The cases of each unit (:func:`draw_medians`).
    pair_start : (pairs + 1,) int64; pair_a, pair_b : (pairs,) int64
        Unordered pairs ``a < b``; pair ``q``'s entries are ``pair_start[q]:pair_start[q + 1]``.
    entry_case, entry_positive, entry_new_group : (entries,)
        Per pair, its cases with a nonzero difference ("a better than b" positive), in increasing
        order of ``|difference|``; ``entry_new_group``: the entry's ``|difference|`` differs from
        the previous entry's (a new tie group).
    challenger : bool
        True: a drawn case is paired once however often it is drawn (challengeR's ``bootstrap``
        pairs cases by ``intersect()`` of ids); False: every drawn copy is a pair.
    alpha : float
        A win is ``p <= alpha`` (unadjusted).
    wins : (d, models) int64
        Filled with the wins.
    """
    d, n = idx.shape
    units = unit_start.shape[0] - 1
    cases = unit_cases.shape[0]
    m = wins.shape[1]
    pairs = pair_a.shape[0]
    for r in prange(d):
        w = np.zeros(units, np.int64)
        for j in range(n):
            w[idx[r, j]] += 1
        wc = np.zeros(cases, np.int64)
        for u in range(units):
            if w[u] == 0:
                continue
            for p in range(unit_start[u], unit_start[u + 1]):
                wc[unit_cases[p]] = 1 if challenger else w[u]
        for i in range(m):
            wins[r, i] = 0
        for q in range(pairs):
            pos = 0.0
            vpos = 0.0
            vneg = 0.0
            ties = 0.0
            e = pair_start[q]
            end = pair_start[q + 1]
            while e < end:
                t = 0
                tp = 0
                f = e
                while f < end and (f == e or not entry_new_group[f]):
                    k = wc[entry_case[f]]
                    t += k
                    if entry_positive[f]:
                        tp += k
                    f += 1
                if t > 0:
                    avg = pos + (t + 1) / 2
                    vpos += tp * avg
                    vneg += (t - tp) * avg
                    ties += float(t) ** 3 - t
                    pos += t
                e = f
            if pos > 0:
                nn = np.int64(pos)
                if signed_rank_p(vpos, nn, ties) <= alpha:
                    wins[r, pair_a[q]] += 1
                if signed_rank_p(vneg, nn, ties) <= alpha:
                    wins[r, pair_b[q]] += 1
    return d
