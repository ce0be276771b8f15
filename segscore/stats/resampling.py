"""The stated bootstrap draws, their statistics, intervals (percentile, BCa) and rank stability.

Draws: for a task with ``n`` units (its cases in natural order, or its clusters under
``cluster_by``), ``rng = numpy.random.default_rng(seed + task_index)`` and ``idx =
rng.integers(0, n, size=(resamples, n))``: the draws ``scipy.stats.bootstrap(..., rng=rng)`` makes.
They are generated chunk by chunk (``rng.integers(0, n, size=(chunk, n))`` in turn, whose
concatenation is the same stream: tests/stats/test_resampling.py checks it), and every column
(each model, each paired difference) is read off the same draws. A draw's statistic is taken
over every case of the drawn units that has a value; a draw where a column has none is left out
of that column's interval and counted. A mean is the sum over the count; where two columns' means
of a draw come within a relative 1e-9 of each other, both are recomputed from the correctly
rounded sum (``math.fsum``), so that means equal in exact arithmetic tie whatever the order of the
values (as R's long-double ``mean`` ties them, and challengeR's rankings with it).

Intervals at ``level``: ``percentile`` (the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
draws, linear interpolation: scipy's ``method="percentile"``) and ``bca`` (scipy's
``method="BCa"``: bias correction from the share of draws below and at the estimate, acceleration
from the jackknife that leaves out one unit at a time). Where BCa is undefined (scipy: NaN) the
bound is None with a note.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError

#: the statistics ``--statistic`` takes
STATISTICS = ("mean", "median")
#: the intervals ``--interval`` takes
INTERVALS = ("percentile", "bca")
#: draws' means closer than this (relative) to another column's are recomputed exactly (fsum / count)
TIE_RELATIVE = 1e-9
#: the draws one chunk holds at most, times the units of a draw (8 MiB of int64 indices)
CHUNK_ELEMENTS = 1 << 20


def chunk_rows(n_units: int, chunk_elements: int = CHUNK_ELEMENTS) -> int:
    """Draws per chunk: as many as fit ``chunk_elements`` indices (at least one)."""
    return max(1, chunk_elements // max(1, n_units))


def draws(rng, n_units: int, resamples: int, chunk: int):
    """Yield ``(start, idx)``: the stated draws ``rng.integers(0, n_units, size=(resamples, n_units))``
    generated ``chunk`` rows at a time."""
    start = 0
    while start < resamples:
        c = min(chunk, resamples - start)
        yield start, rng.integers(0, n_units, size=(c, n_units))
        start += c


class Columns:
    """Series to resample over one task's units: ``values`` is ``(cases, columns)`` float64 with
    NaN where a column has no value; ``unit_of_case`` maps each case to its unit."""

    def __init__(self, values, unit_of_case, n_units: int):
        self.values = np.ascontiguousarray(values, dtype=np.float64)
        self.unit_of_case = np.asarray(unit_of_case, np.int64)
        self.n_units = int(n_units)
        cases, cols = self.values.shape
        have = ~np.isnan(self.values)
        self.sums = np.zeros((self.n_units, cols))
        self.counts = np.zeros((self.n_units, cols))
        np.add.at(self.sums, self.unit_of_case, np.where(have, self.values, 0.0))
        np.add.at(self.counts, self.unit_of_case, have.astype(float))
        # one value per unit and column everywhere: the kernel need not read the counts
        self.full = bool(cases == self.n_units and have.all()
                         and np.array_equal(self.unit_of_case, np.arange(cases)))
        order = np.argsort(self.unit_of_case, kind="stable").astype(np.int64)
        self.unit_start = np.zeros(self.n_units + 1, np.int64)
        np.cumsum(np.bincount(self.unit_of_case, minlength=self.n_units), out=self.unit_start[1:])
        self.unit_cases = order

    @property
    def n_columns(self) -> int:
        return self.values.shape[1]

    def estimate(self, statistic: str) -> np.ndarray:
        """The statistic of each column over all its values (NaN where it has none)."""
        out = np.full(self.n_columns, np.nan)
        for c in range(self.n_columns):
            v = self.values[:, c]
            v = v[~np.isnan(v)]
            if v.size:
                out[c] = math.fsum(v) / v.size if statistic == "mean" else np.median(v)
        return out

    def jackknife(self, statistic: str) -> np.ndarray:
        """``(units, columns)``: each column's statistic with one unit left out (BCa's acceleration)."""
        out = np.full((self.n_units, self.n_columns), np.nan)
        if statistic == "mean":
            tot_s, tot_c = self.sums.sum(axis=0), self.counts.sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                out = (tot_s[None, :] - self.sums) / (tot_c[None, :] - self.counts)
            out[~np.isfinite(out)] = np.nan
            return out
        for u in range(self.n_units):
            keep = self.unit_of_case != u
            for c in range(self.n_columns):
                v = self.values[keep, c]
                v = v[~np.isnan(v)]
                if v.size:
                    out[u, c] = np.median(v)
        return out

    def resample(self, statistic: str, rng, resamples: int, *, chunk: int | None = None) -> np.ndarray:
        """``(resamples, columns)``: each draw's statistic per column (NaN: no value drawn)."""
        from segscore.kernels.resample import draw_means, draw_medians, refine_ties

        if statistic not in STATISTICS:
            raise ScoreError(f"--statistic {statistic!r}: give one of {', '.join(STATISTICS)}")
        out = np.empty((resamples, self.n_columns))
        chunk = chunk_rows(self.n_units) if chunk is None else chunk
        empty = np.zeros((0, 0))
        for start, idx in draws(rng, self.n_units, resamples, chunk):
            part = out[start:start + idx.shape[0]]
            if statistic == "mean":
                draw_means(idx, self.sums, empty if self.full else self.counts, part)
                if self.n_columns > 1 and near_ties(part, TIE_RELATIVE):
                    refine_ties(idx, self.values, self.unit_start, self.unit_cases, part, TIE_RELATIVE)
            else:
                draw_medians(idx, self.values, self.unit_start, self.unit_cases, part)
        return out


def near_ties(stat, rel: float) -> bool:
    """Whether any row of ``stat`` holds two values within ``rel`` (relative) of each other (the
    rows :func:`segscore.kernels.resample.refine_ties` would recompute)."""
    s = np.sort(stat, axis=1)
    with np.errstate(invalid="ignore"):
        gap = np.diff(s, axis=1)
        scale = np.maximum(np.abs(s[:, 1:]), np.abs(s[:, :-1]))
        return bool(np.any(gap <= rel * scale))


def interval(theta_b, theta_hat: float, jack, *, level: float, method: str) -> tuple:
    """``(low, high, note)`` of one column's draws ``theta_b`` (NaN draws left out) at ``level``;
    ``jack``: its jackknife values (BCa only). A bound is None where it is undefined, and
    ``note`` says why (else None)."""
    tb = np.asarray(theta_b, float)
    tb = tb[~np.isnan(tb)]
    if tb.size == 0 or np.isnan(theta_hat):
        return None, None, "no draw (or no case) has a value"
    alpha = (1 - level) / 2
    if method == "percentile":
        lo, hi = np.quantile(tb, [alpha, 1 - alpha])
        return float(lo), float(hi), None
    if method != "bca":
        raise ScoreError(f"--interval {method!r}: give one of {', '.join(INTERVALS)}")
    from scipy.special import ndtr, ndtri

    share = (np.count_nonzero(tb < theta_hat) + np.count_nonzero(tb <= theta_hat)) / (2 * tb.size)
    z0 = ndtri(share)
    j = np.asarray(jack, float)
    j = j[~np.isnan(j)]
    note = None
    with np.errstate(invalid="ignore", divide="ignore"):
        n = float(j.size)
        u = (n - 1) * (np.mean(j) - j) if j.size else np.array([np.nan])
        a_hat = 1 / 6 * (np.sum(u ** 3) / n ** 3) / (np.sum(u ** 2) / n ** 2) ** 1.5
        z_a = float(ndtri(alpha))
        num1 = z0 + z_a
        a1 = ndtr(z0 + num1 / (1 - a_hat * num1))
        num2 = z0 - z_a
        a2 = ndtr(z0 + num2 / (1 - a_hat * num2))
    bounds = []
    for a in (a1, a2):
        if np.isnan(a):
            bounds.append(None)
            note = ("BCa undefined: every draw is on one side of the estimate, or the jackknife values are "
                    "all equal (scipy gives NaN); use --interval percentile")
        else:
            bounds.append(float(np.quantile(tb, a)))
    return bounds[0], bounds[1], note


def stability(theta_b, theta_hat, *, larger_better: bool) -> dict:
    """Rank stability of models over the draws: each draw ranks the models by ``theta_b`` (``(draws,
    models)``; ties "min", a model without a value in a draw last), and is compared with the
    ranking of ``theta_hat`` by Kendall's tau-b.

    Returns ``{"rank_full": [...], "rank_counts": (models, models) int (draws in which model m
    ranks r + 1), "share_first": [...], "tau": (draws,) with NaN where a draw's ranks all tie,
    "tau_median", "tau_q1", "tau_q3" (over the defined ones; None when none is), "n_tau_undefined"}``."""
    from segscore.kernels.resample import rank_stability

    tb = np.asarray(theta_b, dtype=np.float64)
    d, m = tb.shape
    full = np.empty((1, m), np.int64)
    tau = np.empty(d)
    rank_stability(np.ascontiguousarray(theta_hat, dtype=np.float64).reshape(1, m), bool(larger_better),
                   np.zeros(0, np.int64), full, tau[:1])
    full = full[0]
    counts = np.zeros((m, m), np.int64)
    # the draws' ranks a block at a time (memory bounded by the block, not by the draws)
    step = max(1, CHUNK_ELEMENTS // max(1, m))
    ranks = np.empty((min(step, d), m), np.int64)
    for start in range(0, d, step):
        block = np.ascontiguousarray(tb[start:start + step])
        r = ranks[:block.shape[0]]
        rank_stability(block, bool(larger_better), full, r, tau[start:start + block.shape[0]])
        for k in range(m):
            counts[k] += np.bincount(r[:, k] - 1, minlength=m)[:m]
    ok = tau[~np.isnan(tau)]
    q = np.percentile(ok, [25, 50, 75]) if ok.size else [None, None, None]
    return {"rank_full": full, "rank_counts": counts, "share_first": counts[:, 0] / d if d else counts[:, 0] * 0.0,
            "tau": tau, "tau_q1": None if q[0] is None else float(q[0]),
            "tau_median": None if q[1] is None else float(q[1]),
            "tau_q3": None if q[2] is None else float(q[2]), "n_tau_undefined": int(d - ok.size)}


#: the rankings ``--stability-method`` bootstraps (``all``: the three); challengeR's names in the docstring
STABILITY_METHODS = ("aggregate", "rank-aggregate", "test-rank")
#: how a resample holds a case drawn more than once (``--stability-cases``)
STABILITY_CASES = ("challenger", "distinct")


def stability_methods(method) -> list:
    """``--stability-method`` as the list of rankings it asks for (``all``: the three, in order)."""
    names = [m.strip() for m in (method.split(",") if isinstance(method, str) else method) if m and m.strip()]
    if not names:
        names = ["aggregate"]
    if "all" in names:
        return list(STABILITY_METHODS)
    bad = [m for m in names if m not in STABILITY_METHODS]
    if bad:
        raise ScoreError(f"--stability-method {','.join(bad)}: give {', '.join(STABILITY_METHODS)} or all")
    return [m for m in STABILITY_METHODS if m in names]


def _better_counts(values, larger_better: bool) -> np.ndarray:
    """``(cases, models)`` int64: per case, how many models with a value are strictly better than each
    model (its rank, ties "min", minus 1); -1 where the model has no value."""
    v = np.asarray(values, float).T  # (cases, models)
    s = v if larger_better else -v
    have = ~np.isnan(s)
    out = np.empty(s.shape, np.int64)
    with np.errstate(invalid="ignore"):
        for i in range(s.shape[1]):  # a model at a time: memory cases x models, not x models^2
            out[:, i] = np.count_nonzero(s > s[:, i:i + 1], axis=1)  # NaN compares False: not better
    out[~have] = -1
    return out


def _pair_entries(values, larger_better: bool):
    """The unordered pairs' nonzero differences ("a better than b" positive) in increasing order of
    their absolute value, as :func:`segscore.kernels.resample.test_rank_draws` takes them."""
    v = np.asarray(values, float)
    k = v.shape[0]
    starts, pa, pb, cases, positive, new_group = [0], [], [], [], [], []
    for a in range(k):
        for b in range(a + 1, k):
            d = v[a] - v[b] if larger_better else v[b] - v[a]
            keep = np.flatnonzero(~np.isnan(d) & (d != 0))
            ad = np.abs(d[keep])
            order = np.argsort(ad, kind="mergesort")
            sa = ad[order]
            ng = np.ones(sa.size, bool)
            ng[1:] = sa[1:] != sa[:-1]
            cases.append(keep[order])
            positive.append(d[keep][order] > 0)
            new_group.append(ng)
            pa.append(a)
            pb.append(b)
            starts.append(starts[-1] + sa.size)
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
    return (np.asarray(starts, np.int64), np.asarray(pa, np.int64), np.asarray(pb, np.int64),
            cat(cases, np.int64), cat(positive, np.bool_), cat(new_group, np.bool_))


def ranking_draws(method: str, values, *, larger_better: bool, unit_of_case, n_units: int, rng, resamples: int,
                  cases: str = "challenger", alpha: float = 0.05, chunk: int | None = None) -> tuple:
    """``(theta_b, theta_hat, larger_better)`` of one task's ranking ``method`` (a
    :data:`STABILITY_METHODS` name other than ``aggregate``) over the stated draws of ``rng``:
    ``theta_b`` (resamples, models) is what each draw ranks the models by, ``theta_hat`` the same on
    the full data, and the direction to rank them in.

    - ``rank-aggregate``: the mean of per-case ranks (ties "min"; a model ranked among the models
      with a value in the case), smaller first;
    - ``test-rank``: the count of one-sided paired Wilcoxon wins (``p <= alpha``, unadjusted, on the
      common cases), larger first.

    ``cases``: ``challenger`` (a case drawn k times is k rows under one case id, as challengeR's
    ``bootstrap`` builds its resamples: ranked together within the case, paired once) or
    ``distinct`` (each drawn copy its own case)."""
    from segscore.kernels.resample import rank_aggregate_draws, test_rank_draws

    if cases not in STABILITY_CASES:
        raise ScoreError(f"--stability-cases {cases!r}: give one of {', '.join(STABILITY_CASES)}")
    v = np.asarray(values, float)
    m = v.shape[0]
    unit_of_case = np.asarray(unit_of_case, np.int64)
    unit_cases = np.argsort(unit_of_case, kind="stable").astype(np.int64)
    unit_start = np.zeros(n_units + 1, np.int64)
    np.cumsum(np.bincount(unit_of_case, minlength=n_units), out=unit_start[1:])
    challenger = cases == "challenger"
    whole = np.arange(n_units, dtype=np.int64).reshape(1, n_units)
    if method == "rank-aggregate":
        better = _better_counts(v, larger_better)
        hat = np.empty((1, m))
        rank_aggregate_draws(whole, better, unit_start, unit_cases, False, hat)
        run = lambda idx, part: rank_aggregate_draws(idx, better, unit_start, unit_cases, challenger, part)  # noqa: E731
        direction = False
    elif method == "test-rank":
        entries = _pair_entries(v, larger_better)
        hat = np.empty((1, m), np.int64)
        test_rank_draws(whole, unit_start, unit_cases, *entries, False, float(alpha), hat)
        wins = np.empty((chunk_rows(n_units) if chunk is None else chunk, m), np.int64)

        def run(idx, part):
            w = wins[:idx.shape[0]]
            test_rank_draws(idx, unit_start, unit_cases, *entries, challenger, float(alpha), w)
            part[:] = w

        direction = True
    else:
        raise ScoreError(f"ranking_draws: {method!r} is not one of rank-aggregate, test-rank")
    out = np.empty((resamples, m))
    for start, idx in draws(rng, n_units, resamples, chunk_rows(n_units) if chunk is None else chunk):
        run(idx, out[start:start + idx.shape[0]])
    return out, hat[0].astype(float), direction
