"""segscore.kernels.resample against brute-force NumPy: empty, one-element, constant, tied,
missing and non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from segscore.kernels.resample import draw_means, draw_medians, draw_ranks, kendall_tau_b


def _units(rng, cases, units):
    unit_of = np.sort(rng.integers(0, units, cases))
    unit_of[:units] = np.arange(units) if cases >= units else unit_of[:units]
    return np.sort(unit_of)


def _brute(idx, values, unit_of, fn):
    out = np.full((idx.shape[0], values.shape[1]), np.nan)
    for r, row in enumerate(idx):
        cases = np.concatenate([np.flatnonzero(unit_of == u) for u in row]) if row.size else np.zeros(0, int)
        for c in range(values.shape[1]):
            v = values[cases, c]
            v = v[~np.isnan(v)]
            if v.size:
                out[r, c] = fn(v)
    return out


@pytest.mark.parametrize("cases, units, cols, draws_", [(1, 1, 1, 3), (9, 4, 3, 17), (30, 30, 5, 8), (12, 5, 1, 0),
                                                        (6, 3, 0, 4)])
@pytest.mark.parametrize("missing", [False, True])
def test_draw_means_and_medians_equal_brute_force(cases, units, cols, draws_, missing):
    rng = np.random.default_rng(cases * 7 + cols)
    unit_of = _units(rng, cases, units)
    values = np.round(rng.random((cases, cols)), 1)
    if missing and values.size:
        values[rng.random(values.shape) < 0.3] = np.nan
    idx = rng.integers(0, units, size=(draws_, units))
    sums = np.zeros((units, cols))
    counts = np.zeros((units, cols))
    np.add.at(sums, unit_of, np.nan_to_num(values))
    np.add.at(counts, unit_of, (~np.isnan(values)).astype(float))
    out = np.empty((draws_, cols))
    draw_means(idx, sums, counts, out)
    assert np.allclose(out, _brute(idx, values, unit_of, np.mean), rtol=0, atol=1e-12, equal_nan=True)
    order = np.argsort(unit_of, kind="stable").astype(np.int64)
    start = np.zeros(units + 1, np.int64)
    np.cumsum(np.bincount(unit_of, minlength=units), out=start[1:])
    med = np.empty((draws_, cols))
    draw_medians(idx, values, start, order, med)
    assert np.array_equal(med, _brute(idx, values, unit_of, np.median), equal_nan=True)


def test_draw_means_full_fast_path_and_non_contiguous_input():
    rng = np.random.default_rng(1)
    big = rng.random((20, 8))
    values = big[:, ::2]  # non-contiguous view
    idx = rng.integers(0, 20, size=(11, 20))
    out = np.empty((11, 4))
    draw_means(idx, np.ascontiguousarray(values), np.zeros((0, 0)), out)
    assert np.allclose(out, values[idx].mean(axis=1), rtol=0, atol=1e-12)
    out2 = np.empty((11, 4))
    draw_means(idx, values, np.ones((20, 4)), out2)
    assert np.allclose(out2, out, rtol=0, atol=1e-12)


def _ranks_numpy(s, larger):
    s = np.asarray(s, float)
    ok = s[~np.isnan(s)]
    return np.array([s.size - np.isnan(s).sum() + 1 if np.isnan(v) else 1 + np.sum(ok > v if larger else ok < v)
                     for v in s])


@pytest.mark.parametrize("larger", [True, False])
def test_draw_ranks_and_tau_b_equal_numpy_and_scipy(larger):
    rng = np.random.default_rng(2)
    stat = np.round(rng.random((50, 6)), 1)
    stat[3] = 0.5  # all tied
    stat[4, 2] = np.nan
    ranks = np.empty(stat.shape, np.int64)
    draw_ranks(stat, larger, ranks)
    for r in range(stat.shape[0]):
        assert np.array_equal(ranks[r], _ranks_numpy(stat[r], larger))
    ref = _ranks_numpy(stat[0], larger)
    tau = np.empty(50)
    kendall_tau_b(ref, ranks, tau)
    for r in range(50):
        expect = stats.kendalltau(ref, ranks[r]).statistic
        assert (np.isnan(expect) and np.isnan(tau[r])) or abs(tau[r] - expect) < 1e-12
    assert np.isnan(tau[3])


def test_one_model_has_no_tau():
    tau = np.empty(2)
    kendall_tau_b(np.array([1]), np.array([[1], [1]]), tau)
    assert np.isnan(tau).all()


def test_rank_stability_is_draw_ranks_and_tau_in_one_pass():
    from segscore.kernels.resample import rank_stability

    rng = np.random.default_rng(4)
    stat = np.round(rng.random((30, 5)), 1)
    stat[2] = 0.3
    ref = np.array([1, 2, 2, 4, 5])
    ranks, tau = np.empty((30, 5), np.int64), np.empty(30)
    rank_stability(stat, True, ref, ranks, tau)
    r2, t2 = np.empty((30, 5), np.int64), np.empty(30)
    draw_ranks(stat, True, r2)
    kendall_tau_b(ref, r2, t2)
    assert np.array_equal(ranks, r2) and np.array_equal(tau, t2, equal_nan=True)


def test_refine_ties_makes_equal_sums_equal_whatever_the_order():
    from segscore.kernels.resample import refine_ties

    a = np.array([0.1, 0.2, 0.3, 0.7, 0.05, 0.65])
    values = np.stack([a, a[::-1]], axis=1)             # the same values in another order
    idx = np.arange(6)[None, :]
    sums, out = values.copy(), np.empty((1, 2))
    draw_means(idx, sums, np.zeros((0, 0)), out)
    refine_ties(idx, values, np.arange(7), np.arange(6), out, 1e-9)
    import math

    assert out[0, 0] == out[0, 1] == math.fsum(a) / 6


def _better(values):
    """(cases, models): models strictly better (larger) in the case; -1 where missing."""
    out = np.full(values.T.shape, -1, np.int64)
    for c in range(values.shape[1]):
        col = values[:, c]
        for i in np.flatnonzero(~np.isnan(col)):
            out[c, i] = int(np.count_nonzero(col[~np.isnan(col)] > col[i]))
    return out


@pytest.mark.parametrize("challenger", [True, False])
def test_rank_aggregate_draws_equal_brute_force_and_ignore_the_thread_count(challenger):
    import numba

    from segscore.kernels.resample import rank_aggregate_draws

    rng = np.random.default_rng(8)
    models, cases, units = 4, 15, 6
    values = np.round(rng.random((models, cases)), 1)
    values[rng.random(values.shape) < 0.15] = np.nan
    unit_of = _units(rng, cases, units)
    unit_cases = np.argsort(unit_of, kind="stable").astype(np.int64)
    unit_start = np.concatenate([[0], np.cumsum(np.bincount(unit_of, minlength=units))]).astype(np.int64)
    idx = rng.integers(0, units, size=(40, units))
    better = _better(values)
    expect = np.full((40, models), np.nan)
    for r, row in enumerate(idx):
        k = np.bincount(row, minlength=units)[unit_of]  # per case: times drawn
        s, cnt = np.zeros(models), np.zeros(models)
        for c in np.flatnonzero(k):
            have = better[c] >= 0
            rank = k[c] * better[c] + 1 if challenger else better[c] + 1
            s[have] += k[c] * rank[have]
            cnt[have] += k[c]
        with np.errstate(invalid="ignore"):
            expect[r] = np.where(cnt > 0, s / cnt, np.nan)
    outs = []
    before = numba.get_num_threads()
    try:
        for threads in (1, before):
            numba.set_num_threads(threads)
            out = np.empty((40, models))
            rank_aggregate_draws(idx, better, unit_start, unit_cases, challenger, out)
            outs.append(out)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(outs[0], expect, equal_nan=True)
    assert np.array_equal(outs[1], expect, equal_nan=True)


def test_upper_normal_and_signed_rank_p_equal_the_python_path():
    from scipy.special import ndtr

    from segscore.kernels.resample import signed_rank_p, upper_normal
    from segscore.stats.paired import wilcoxon_greater

    for z in (-40.0, -3.2, -0.7, -0.3, 0.0, 0.3, 0.70710678118, 1.5, 8.0, 38.0):
        assert abs(upper_normal(z) - ndtr(-z)) <= 1e-12 * ndtr(-z) + 1e-300
    assert np.isnan(upper_normal(np.nan))
    rng = np.random.default_rng(1)
    for _ in range(30):
        x, y = np.round(rng.random(25), 1), np.round(rng.random(25), 1)
        ref = wilcoxon_greater(x, y)
        d = (x - y)[x != y]
        absd = np.abs(d)
        ranks = stats.rankdata(absd)
        _, t = np.unique(absd, return_counts=True)
        got = signed_rank_p(float(ranks[d > 0].sum()), d.size, float(np.sum(t.astype(float) ** 3 - t)))
        assert got == ref["p"]


def test_test_rank_draws_count_the_wins_of_each_resample():
    from segscore.kernels.resample import test_rank_draws
    from segscore.stats.paired import wilcoxon_greater
    from segscore.stats.resampling import _pair_entries

    rng = np.random.default_rng(5)
    models, cases = 4, 30
    values = np.round(rng.random((models, cases)) + np.array([0, 0.1, 0.2, 0.4])[:, None], 1)
    values[0, 3] = np.nan
    unit_start = np.arange(cases + 1, dtype=np.int64)
    unit_cases = np.arange(cases, dtype=np.int64)
    idx = rng.integers(0, cases, size=(25, cases))
    entries = _pair_entries(values, True)
    for challenger in (True, False):
        wins = np.empty((25, models), np.int64)
        test_rank_draws(idx, unit_start, unit_cases, *entries, challenger, 0.05, wins)
        for r, row in enumerate(idx):
            rows = np.unique(row) if challenger else row
            expect = np.zeros(models, np.int64)
            for a in range(models):
                for b in range(models):
                    if a != b:
                        x, y = values[a, rows], values[b, rows]
                        ok = ~np.isnan(x) & ~np.isnan(y)
                        p = wilcoxon_greater(x[ok], y[ok])["p"]
                        expect[a] += p is not None and p <= 0.05
            assert np.array_equal(wins[r], expect), (challenger, r)
        assert wins.max() > 0
