"""The bootstrap against scipy, the stated draws against NumPy, stability against a NumPy
re-implementation, all to 1e-12; thread-count independence."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from segscore.stats import analyse
from segscore.stats.resampling import Columns, chunk_rows, draws, stability


def _table(values, models=None, cases=None, tasks=None, clusters=None):
    """A long table from ``values`` (models, cases) (NaN: an empty cell)."""
    k, n = values.shape
    models = models or [f"m{i + 1}" for i in range(k)]
    cases = cases or [f"c{j + 1}" for j in range(n)]
    rows = []
    for i in range(k):
        for j in range(n):
            row = {"case": cases[j], "model": models[i], "score": None if np.isnan(values[i, j]) else values[i, j]}
            if clusters is not None:
                row["cluster"] = clusters[j]
            rows.append(row)
    return rows


@pytest.mark.parametrize("n, resamples, chunks", [(1, 5, (2, 3)), (7, 37, (5, 1, 31)), (13, 100, (33, 33, 34)),
                                                  (200, 11, (1,) * 11)])
def test_chunked_draws_are_the_one_stream(n, resamples, chunks):
    """The Generator's stream for integers(0, n, size=(R, n)) equals the concatenation of the chunks."""
    for seed in range(5):
        whole = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        got = np.concatenate([idx for _, idx in draws(np.random.default_rng(seed), n, resamples, chunks[0])])
        assert np.array_equal(whole, got)
        g = np.random.default_rng(seed)
        parts = [g.integers(0, n, size=(c, n)) for c in chunks]
        assert np.array_equal(whole, np.concatenate(parts))


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_intervals_equal_scipy_bootstrap(method, statistic):
    rng = np.random.default_rng(3)
    values = rng.random((4, 37))
    if not (method == "bca" and statistic == "mean"):
        # ties (BCa's bias correction counts the draws below and at the estimate: where a draw's
        # mean equals it on paper, the last bit of a sum decides, and summation order is numpy's)
        values[2] = np.round(values[2], 1)
    out = analyse(_table(values), case="case", by="model", metric="score", intervals=True, statistic=statistic,
                  interval=method, resamples=999, seed=11, level=0.9)
    fn = np.mean if statistic == "mean" else np.median
    warnings.simplefilter("ignore")  # scipy's warning where BCa is undefined
    for i, row in enumerate(out["intervals"]["rows"]):
        ref = stats.bootstrap((values[i],), fn, n_resamples=999, method="BCa" if method == "bca" else method,
                              confidence_level=0.9, rng=np.random.default_rng(11))
        if np.isnan(ref.confidence_interval.low):  # scipy: BCa undefined (jackknife medians all equal)
            assert row["low"] is None and row["high"] is None and method == "bca"
            continue
        assert abs(row["low"] - ref.confidence_interval.low) < 1e-12
        assert abs(row["high"] - ref.confidence_interval.high) < 1e-12
        assert abs(row["estimate"] - fn(values[i])) < 1e-12


def test_paired_difference_interval_equals_scipys_paired_bootstrap():
    rng = np.random.default_rng(4)
    values = rng.random((3, 25))
    out = analyse(_table(values), case="case", by="model", metric="score", compare=True, resamples=500, seed=2)
    row = next(r for r in out["comparisons"]["rows"] if (r["a"], r["b"]) == ("m1", "m3"))
    ref = stats.bootstrap((values[0], values[2]), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True,
                          n_resamples=500, method="percentile", rng=np.random.default_rng(2))
    assert abs(row["low"] - ref.confidence_interval.low) < 1e-12
    assert abs(row["high"] - ref.confidence_interval.high) < 1e-12
    rev = next(r for r in out["comparisons"]["rows"] if (r["a"], r["b"]) == ("m3", "m1"))
    assert rev["low"] == -row["high"] and rev["high"] == -row["low"]


def test_case_order_is_natural_not_file_order():
    rng = np.random.default_rng(5)
    values = rng.random((2, 12))
    cases = [f"case{j + 1}" for j in range(12)]
    a = analyse(_table(values, cases=cases), case="case", by="model", metric="score", resamples=200)
    perm = rng.permutation(len(cases))
    rows = _table(values, cases=cases)
    shuffled = [rows[i * 12 + j] for i in (1, 0) for j in perm]
    b = analyse(shuffled, case="case", by="model", metric="score", resamples=200)
    assert a["intervals"]["rows"] == b["intervals"]["rows"]
    # and the draws index the cases case1, case2, ..., case10 (not case1, case10, case11, case2)
    ref = stats.bootstrap((values[0],), np.mean, n_resamples=200, method="percentile", rng=np.random.default_rng(0))
    assert abs(a["intervals"]["rows"][0]["low"] - ref.confidence_interval.low) < 1e-12


def _numpy_statistics(values, clusters, idx, statistic):
    """Brute force: expand each draw into its cases, take the statistic of each model's values."""
    units = sorted(set(clusters), key=lambda u: int(u[1:]))
    members = [np.flatnonzero(np.array(clusters) == u) for u in units]
    out = np.full((idx.shape[0], values.shape[0]), np.nan)
    for r, row in enumerate(idx):
        cases = np.concatenate([members[u] for u in row])
        for m in range(values.shape[0]):
            v = values[m, cases]
            v = v[~np.isnan(v)]
            if v.size:
                out[r, m] = np.mean(v) if statistic == "mean" else np.median(v)
    return out, len(units)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_cluster_bootstrap_with_missing_values_equals_numpy(statistic):
    rng = np.random.default_rng(6)
    values = rng.random((3, 30))
    values[0, [2, 5, 6]] = np.nan
    values[1, :] = np.nan
    values[1, 4] = 0.5  # one value only: most draws have none
    clusters = [f"s{j % 7}" for j in range(30)]
    out = analyse(_table(values, clusters=clusters), case="case", by="model", metric="score", cluster_by="cluster",
                  statistic=statistic, resamples=300, seed=9)
    n_units = 7
    idx = np.random.default_rng(9).integers(0, n_units, size=(300, n_units))
    ref, _ = _numpy_statistics(values, clusters, idx, statistic)
    for m, row in enumerate(out["intervals"]["rows"]):
        tb = ref[:, m]
        assert row["draws_without_value"] == int(np.isnan(tb).sum())
        lo, hi = np.quantile(tb[~np.isnan(tb)], [0.025, 0.975])
        assert abs(row["low"] - lo) < 1e-12 and abs(row["high"] - hi) < 1e-12
        assert row["n_cases"] == int((~np.isnan(values[m])).sum())


def test_tasks_draw_from_seed_plus_task_index_in_sorted_order():
    rng = np.random.default_rng(7)
    rows = []
    vals = {}
    for t in ("t10", "t2", "t1"):  # natural order: t1, t2, t10
        v = rng.random((2, 15))
        vals[t] = v
        for r in _table(v):
            rows.append({**r, "task": t})
    out = analyse(rows, case="case", by="model", metric="score", task="task", resamples=100, seed=20)
    assert out["intervals"]["params"]["seeds"] == {"t1": 20, "t2": 21, "t10": 22}
    for row in out["intervals"]["rows"]:
        i = int(row["model"][1:]) - 1
        ref = stats.bootstrap((vals[row["task"]][i],), np.mean, n_resamples=100, method="percentile",
                              rng=np.random.default_rng(out["intervals"]["params"]["seeds"][row["task"]]))
        assert abs(row["low"] - ref.confidence_interval.low) < 1e-12


def _numpy_stability(theta_b, theta_hat, larger_better):
    sign = 1 if larger_better else -1

    def ranks(s):
        s = np.asarray(s, float)
        out = np.empty(s.size, np.int64)
        for a in range(s.size):
            if np.isnan(s[a]):
                out[a] = s.size - np.isnan(s).sum() + 1
            else:
                ok = s[~np.isnan(s)]
                out[a] = 1 + np.sum(sign * ok > sign * s[a])
        return out

    full = ranks(theta_hat)
    draws_ = np.array([ranks(r) for r in theta_b])
    tau = np.array([stats.kendalltau(full, r).statistic for r in draws_])
    return full, draws_, tau


@pytest.mark.parametrize("larger_better", [True, False])
def test_stability_equals_a_numpy_reimplementation(larger_better):
    rng = np.random.default_rng(8)
    values = np.round(rng.random((6, 20)), 1)  # ties in draws
    values[5] = values[4]  # two models always tied
    out = analyse(_table(values), case="case", by="model", metric="score", stability=True, resamples=400, seed=3,
                  smaller_better=[] if larger_better else ["score"])
    idx = np.random.default_rng(3).integers(0, 20, size=(400, 20))
    # the stated mean: the correctly rounded sum over the count (ties exact whatever the order)
    theta_b = np.array([[math.fsum(values[m, row]) / 20 for m in range(6)] for row in idx])
    full, ranks, tau = _numpy_stability(theta_b, [math.fsum(v) / 20 for v in values], larger_better)
    rows = out["stability"]["rows"]
    for m, row in enumerate(rows):
        assert row["rank_full"] == full[m]
        assert row["rank_counts"] == [int(np.sum(ranks[:, m] == r)) for r in range(1, 7)]
        assert abs(row["share_first"] - np.mean(ranks[:, m] == 1)) < 1e-12
    k = out["stability"]["kendall"][0]
    ok = tau[~np.isnan(tau)]
    assert k["n_tau_undefined"] == int(np.isnan(tau).sum())
    assert abs(k["tau_median"] - np.median(ok)) < 1e-12
    assert abs(k["tau_q1"] - np.percentile(ok, 25)) < 1e-12 and abs(k["tau_q3"] - np.percentile(ok, 75)) < 1e-12


def test_all_tie_draws_have_no_tau_and_are_counted():
    values = np.array([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5]])
    out = analyse(_table(values), case="case", by="model", metric="score", stability=True, resamples=200)
    idx = np.random.default_rng(0).integers(0, 4, size=(200, 4))
    theta_b = values[:, idx].mean(axis=2).T
    _, _, tau = _numpy_stability(theta_b, values.mean(axis=1), True)
    assert out["stability"]["kendall"][0]["n_tau_undefined"] == int(np.isnan(tau).sum()) > 0


def test_results_do_not_depend_on_thread_count_or_chunk():
    import numba

    rng = np.random.default_rng(9)
    v = rng.random((40, 5))
    v[3, 1] = np.nan
    c = Columns(v, np.arange(40) // 3, 14)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = c.resample("mean", np.random.default_rng(1), 333, chunk=7)
        one_med = c.resample("median", np.random.default_rng(1), 333, chunk=7)
        numba.set_num_threads(before)
        many = c.resample("mean", np.random.default_rng(1), 333, chunk=chunk_rows(14))
        many_med = c.resample("median", np.random.default_rng(1), 333, chunk=50)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, many, equal_nan=True) and np.array_equal(one_med, many_med, equal_nan=True)
    s1 = stability(one, c.estimate("mean"), larger_better=True)
    s2 = stability(many, c.estimate("mean"), larger_better=True)
    assert np.array_equal(s1["tau"], s2["tau"], equal_nan=True)
    assert np.array_equal(s1["rank_counts"], s2["rank_counts"])


def test_bca_undefined_is_null_with_a_note():
    values = np.array([[0.5] * 10, list(np.linspace(0, 1, 10))])
    out = analyse(_table(values), case="case", by="model", metric="score", interval="bca", resamples=200)
    row = out["intervals"]["rows"][0]
    assert row["low"] is None and row["high"] is None
    assert "BCa undefined" in out["notes"]["intervals.rows[0].low"]
    import json

    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_paired_difference_on_common_cases_with_a_missing_value_equals_numpy(statistic):
    rng = np.random.default_rng(12)
    values = rng.random((3, 16))
    values[0, 3] = np.nan
    out = analyse(_table(values), case="case", by="model", metric="score", compare=True, resamples=300, seed=6,
                  statistic=statistic)
    idx = np.random.default_rng(6).integers(0, 16, size=(300, 16))
    fn = np.mean if statistic == "mean" else np.median
    for a, b in ((0, 1), (1, 2)):  # with the missing case (common cases only), and complete
        d = values[a] - values[b]
        tb = np.array([fn(d[row][~np.isnan(d[row])]) for row in idx])
        lo, hi = np.quantile(tb, [0.025, 0.975])
        row = next(r for r in out["comparisons"]["rows"] if (r["a"], r["b"]) == (f"m{a + 1}", f"m{b + 1}"))
        assert abs(row["low"] - lo) < 1e-12 and abs(row["high"] - hi) < 1e-12
        assert row["n_common"] == int((~np.isnan(d)).sum())
