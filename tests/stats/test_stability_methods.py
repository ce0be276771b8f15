"""``--stability-method rank-aggregate|test-rank`` and ``--stability-cases challenger|distinct``:
each draw's statistic against a NumPy re-implementation that builds every resample as stated, and
against challengeR's ``bootstrap`` run on the same draws (tests/data/challenger/*_bootstrap.json)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.stats import analyse
from segscore.stats.paired import wilcoxon_greater
from segscore.stats.ranking import rank_min
from segscore.stats.resampling import ranking_draws, stability_methods

CHALLENGER = Path(__file__).resolve().parents[1] / "data" / "challenger"


def _numpy_draw(method, values, larger_better, unit_of_case, draw, cases):
    """One resample built as stated: every case of the drawn units, a unit drawn k times giving k
    copies; ``challenger``: the copies of a case are one case id (ranked together, paired once)."""
    m = values.shape[0]
    mult = np.bincount(draw, minlength=unit_of_case.max() + 1)[unit_of_case]  # per case: times drawn
    drawn = np.flatnonzero(mult)
    if method == "rank-aggregate":
        s, cnt = np.zeros(m), np.zeros(m)
        for c in drawn:
            k = int(mult[c])
            col = values[:, c]
            have = np.flatnonzero(~np.isnan(col))
            if cases == "challenger":  # k * len(have) rows under one id, ranked together
                block = np.tile(col[have], k)
                ranks = rank_min(block, larger_better=larger_better).reshape(k, have.size)
                for row in ranks:
                    s[have] += row
                    cnt[have] += 1
            else:
                r = rank_min(col[have], larger_better=larger_better)
                s[have] += k * r
                cnt[have] += k
        with np.errstate(invalid="ignore"):
            return s / cnt
    rows = drawn if cases == "challenger" else np.repeat(drawn, mult[drawn])
    wins = np.zeros(m)
    for a in range(m):
        for b in range(m):
            if a == b:
                continue
            x, y = values[a, rows], values[b, rows]
            both = ~np.isnan(x) & ~np.isnan(y)
            x, y = (x[both], y[both]) if larger_better else (y[both], x[both])
            p = wilcoxon_greater(x, y)["p"]
            wins[a] += p is not None and p <= 0.05
    return wins


@pytest.mark.parametrize("method", ["rank-aggregate", "test-rank"])
@pytest.mark.parametrize("cases", ["challenger", "distinct"])
@pytest.mark.parametrize("larger_better, clustered", [(True, False), (False, True)])
def test_each_draw_equals_the_numpy_resample(method, cases, larger_better, clustered):
    rng = np.random.default_rng(11)
    m, n = 5, 24
    values = np.round(rng.random((m, n)) + np.linspace(0, 0.3, m)[:, None], 1)  # ties within cases and in |d|
    values[1] = np.where(rng.random(n) < 0.3, values[0], values[1])  # zero differences
    values[2, [3, 7]] = np.nan  # missing values
    values[4, 5] = np.nan
    unit_of_case = (np.arange(n) // 3) if clustered else np.arange(n)
    n_units = int(unit_of_case.max()) + 1
    resamples = 60
    tb, hat, direction = ranking_draws(method, values, larger_better=larger_better, unit_of_case=unit_of_case,
                                       n_units=n_units, rng=np.random.default_rng(4), resamples=resamples,
                                       cases=cases, chunk=7)
    idx = np.random.default_rng(4).integers(0, n_units, size=(resamples, n_units))
    ref = np.array([_numpy_draw(method, values, larger_better, unit_of_case, d, cases) for d in idx])
    assert np.allclose(tb, ref, rtol=0, atol=1e-12, equal_nan=True)
    assert np.array_equal(tb == tb, ref == ref)
    full = _numpy_draw(method, values, larger_better, unit_of_case, np.arange(n_units), "distinct")
    assert np.allclose(hat, full, rtol=0, atol=1e-12)
    assert direction is (method == "test-rank")
    if method == "test-rank":
        assert tb.max() > 0  # wins happen: the comparison can fail
    else:
        assert not np.array_equal(tb[0], tb[1])


def _fixture(name):
    path = CHALLENGER / f"{name}_bootstrap.json"
    if not path.is_file():
        pytest.skip(f"no {path}")
    boot = json.loads(path.read_text())
    idx = np.loadtxt(CHALLENGER / f"{name}_boot_index.csv", delimiter=",", dtype=np.int64, ndmin=2)
    return boot, idx


@pytest.mark.parametrize("name", ["single_12x200", "ties"])
@pytest.mark.parametrize("cases, variant", [("challenger", "challengeR"), ("distinct", "distinct_cases")])
def test_all_three_rankings_equal_challengers_bootstrap(name, cases, variant):
    """challengeR 1.0.5's own ``bootstrap.ranked.list`` given our draws: per draw aggregates (mean
    ranks exactly, test-then-rank's wins), rank counts, winners and Kendall's tau quartiles."""
    boot, idx = _fixture(name)
    draws = idx.shape[0]
    out = analyse(CHALLENGER / f"{name}.csv", case="case", by="algo", metric="value", task="task",
                  stability=True, resamples=draws, seed=0, stability_method="all", stability_cases=cases,
                  smaller_better=[])
    assert out["stability"]["params"]["methods"] == ["aggregate_mean", "rank_then_aggregate", "test_then_rank"]
    assert out["stability"]["params"]["cases"] == cases
    algos = boot["meta"]["algorithms"]
    with open(CHALLENGER / f"{name}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    case_ids = boot["meta"]["cases_sorted"]
    values = np.full((len(algos), len(case_ids)), np.nan)
    for r in rows:
        values[algos.index(r["algo"]), case_ids.index(r["case"])] = float(r["value"])
    for key, meth in (("atr_mean", "aggregate_mean"), ("rta", "rank_then_aggregate"), ("ttr", "test_then_rank")):
        ref = boot["results"][key][variant]
        if key != "atr_mean":
            tb, _, _ = ranking_draws("rank-aggregate" if key == "rta" else "test-rank", values, larger_better=True,
                                     unit_of_case=np.arange(len(case_ids)), n_units=len(case_ids),
                                     rng=np.random.default_rng(0), resamples=draws, cases=cases)
            agg = np.array(ref["aggregate"], float)
            if key == "ttr":
                agg = np.rint(agg * (len(algos) - 1))  # challengeR's aggregate: wins / (k - 1)
            assert np.array_equal(tb, agg), f"{name} {key}"
        got = {r["model"]: r for r in out["stability"]["rows"] if r["method"] == meth}
        for alg, counts in ref["rank_counts"]["counts"].items():
            assert got[alg]["rank_full"] == ref["full_rank"][alg], f"{name} {key} {alg}"
            assert got[alg]["rank_counts"] == counts, f"{name} {key} {alg}"
            assert round(got[alg]["share_first"] * draws) == ref["winner_frequency"][alg], f"{name} {key} {alg}"
        k = next(r for r in out["stability"]["kendall"] if r["method"] == meth)
        ks = ref["kendall_summary"]
        assert k["n_tau_undefined"] == ks["n_null"]
        for ours, theirs in ((k["tau_median"], ks["median"]), (k["tau_q1"], ks["q25"]), (k["tau_q3"], ks["q75"])):
            assert abs(ours - theirs) < 1e-12, f"{name} {key} tau"


def test_the_two_case_treatments_differ_where_challenger_says_they_do():
    boot, idx = _fixture("single_12x200")
    res = {c: analyse(CHALLENGER / "single_12x200.csv", case="case", by="algo", metric="value", stability=True,
                      resamples=idx.shape[0], stability_method="rank-aggregate", stability_cases=c)
           for c in ("challenger", "distinct")}
    t = {c: r["stability"]["kendall"][0]["tau_median"] for c, r in res.items()}
    assert t["challenger"] != t["distinct"]
    assert abs(t["distinct"] - boot["results"]["rta"]["distinct_cases"]["kendall_summary"]["median"]) < 1e-12


def test_stability_method_names_and_refusals():
    assert stability_methods("all") == ["aggregate", "rank-aggregate", "test-rank"]
    assert stability_methods("test-rank,aggregate") == ["aggregate", "test-rank"]
    assert stability_methods(["rank-aggregate"]) == ["rank-aggregate"]
    with pytest.raises(ScoreError, match="--stability-method"):
        stability_methods("ranks")
    t = {"case": ["c1", "c2"] * 2, "model": ["a", "a", "b", "b"], "s": [0.1, 0.2, 0.3, 0.4]}
    with pytest.raises(ScoreError, match="--stability-cases"):
        analyse(t, case="case", by="model", metric="s", stability=True, stability_cases="copies")
    with pytest.raises(ScoreError, match="give --stability too"):
        analyse(t, case="case", by="model", metric="s", intervals=True, stability_method="all")


def test_stability_ranks_in_blocks_equal_one_block(monkeypatch):
    """The draws' ranks are taken a block at a time (memory bounded by the block): counts and tau
    are the same whatever the block."""
    from segscore.stats import resampling

    rng = np.random.default_rng(2)
    theta_b = np.round(rng.random((103, 6)), 2)
    theta_b[5, 2] = np.nan
    hat = theta_b.mean(axis=0)
    one = resampling.stability(theta_b, hat, larger_better=True)
    monkeypatch.setattr(resampling, "CHUNK_ELEMENTS", 6 * 10)  # blocks of 10 draws
    many = resampling.stability(theta_b[:, :], hat, larger_better=True)
    assert np.array_equal(one["rank_counts"], many["rank_counts"])
    assert np.array_equal(one["tau"], many["tau"], equal_nan=True)
    assert one["rank_counts"].sum() == 103 * 6
    view = np.hstack([theta_b, theta_b])[:, :6]  # a strided view, as analyse passes the models' columns
    assert np.array_equal(resampling.stability(view, hat, larger_better=True)["rank_counts"], one["rank_counts"])
