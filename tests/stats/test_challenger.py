"""challengeR's own answers, run in R (``challengeR 1.0.5``), against :func:`segscore.stats.analyse`.

Every fixture is a CSV (``task,case,algo,value``) with challengeR's JSON beside it, listed in the
folder's ``manifest.json``: the shared ones in ``SHARED/challenger/`` and those under
``tests/data/challenger/`` (same schema). Each missing-value treatment of a fixture maps to a
policy: ``na.rm`` is ``missing="null"``, a number ``v`` is ``missing="worst"`` with ``worst=v``, and
``none`` (challengeR's default: a missing value ranked last, no aggregate) is compared only where
the data has no missing value. A method challengeR refused (``{"error": ...}``) is not compared.
Ranks and counts are equal exactly; p-values, aggregates and mean ranks to 1e-12.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import shared_data_dir

REPO = Path(__file__).resolve().parents[2]
TOL = 1e-12


def _folders():
    shared = shared_data_dir()
    out = [REPO / "tests" / "data" / "challenger"]
    if shared is not None:
        out.insert(0, shared / "challenger")
    return out


def _fixtures():
    found = []
    for folder in _folders():
        manifest = folder / "manifest.json"
        if manifest.is_file():
            entries = json.loads(manifest.read_text())
            for name, e in entries.items():
                found.append(pytest.param(folder, name, e, id=f"{folder.parent.name}/{name}"))
        elif folder.is_dir():
            for j in sorted(folder.glob("*.json")):
                if (folder / (j.stem + ".csv")).is_file():
                    found.append(pytest.param(folder, j.stem, {"csv": j.stem + ".csv", "json": j.name},
                                              id=f"{folder.parent.name}/{j.stem}"))
    if shared_data_dir() is None:
        found.append(pytest.param(None, None, None, marks=pytest.mark.skip(
            reason="challengeR fixtures not found: set SEGSCORE_SHARED_DATA or place them at ../shared/data")))
    return found


def _modes(answer):
    for mode, res in answer["results"].items():
        if mode == "none":
            if answer["meta"].get("n_missing_values", 0):
                continue  # challengeR's NA-ranked-last default: no policy of ours matches it
            yield mode, res, {"missing": "null"}
        elif mode == "na.rm":
            yield mode, res, {"missing": "null"}
        else:
            yield mode, res, {"missing": "worst", "worst": {"value": float(mode)}}


def _analyse(folder, entry, answer, policy, **kw):
    from segscore.stats import analyse

    smaller = answer["meta"].get("smallBetter", False)
    return analyse(folder / entry["csv"], case="case", by="algo", metric="value", task="task",
                   smaller_better=["value"] if smaller else [], rank=True, compare=True, resamples=1, **policy, **kw)


def _close(a, b, what):
    if b is None:
        assert a is None, what
        return
    assert a is not None, what
    assert abs(a - b) <= TOL * max(1.0, abs(b)), f"{what}: {a!r} != {b!r}"


@pytest.mark.parametrize("folder, name, entry", _fixtures())
def test_rankings_tests_and_consensus_equal_challengers(folder, name, entry):
    answer = json.loads((folder / entry["json"]).read_text())
    algos = answer["meta"]["algorithms"]
    compared = 0
    for mode, res, policy in _modes(answer):
        out = holm = _analyse(folder, entry, answer, policy, adjust="holm")
        rk = {(r["task"], r["method"], r["model"]): r for r in out["rankings"]["rows"]}
        cmp = {(r["task"], r["a"], r["b"]): r for r in holm["comparisons"]["rows"]}
        for task, t in res["tasks"].items():
            where = f"{name} {mode} {task}"
            for key, meth, vfield in (("aggregateThenRank_mean", "aggregate_mean", "value"),
                                      ("aggregateThenRank_median", "aggregate_median", "value"),
                                      ("rankThenAggregate_mean", "rank_then_aggregate", "mean_rank")):
                a = t.get(key, {})
                if "error" in a or not a:
                    continue
                for alg in algos:
                    if alg not in a["rank"]:
                        continue
                    ours = rk[(task, meth, alg)]
                    assert ours["rank"] == a["rank"][alg], f"{where} {key} {alg}"
                    _close(ours["value"], a[vfield][alg], f"{where} {key} {alg}")
                    compared += 1
            heat = t.get("rankingHeatmap_counts", {})
            if "counts" in heat:
                for alg, counts in heat["counts"].items():
                    assert rk[(task, "rank_then_aggregate", alg)]["case_rank_counts"] == counts, f"{where} heat {alg}"
            ttr = t.get("testThenRank", {})
            if "rank" in ttr:
                for alg in algos:
                    ours = rk[(task, "test_then_rank", alg)]
                    assert ours["rank"] == ttr["rank"][alg], f"{where} ttr rank {alg}"
                    assert ours["value"] == ttr["n_significant_wins"][alg], f"{where} ttr wins {alg}"
                pw = ttr["pairwise"]
                for i, a_ in enumerate(pw["algorithms"]):
                    for j, b_ in enumerate(pw["algorithms"]):
                        if i != j:
                            _close(cmp[(task, a_, b_)]["p"], pw["p_unadjusted"][i][j], f"{where} p {a_}>{b_}")
                            compared += 1
            th = t.get("testThenRank_holm", {})
            if "pairwise" in th:
                pw = th["pairwise"]
                wins = {a_: 0 for a_ in pw["algorithms"]}
                for i, a_ in enumerate(pw["algorithms"]):
                    for j, b_ in enumerate(pw["algorithms"]):
                        if i != j:
                            row = cmp[(task, a_, b_)]
                            _close(row["p_adjusted"], pw["p_adjusted"][i][j], f"{where} holm {a_}>{b_}")
                            assert int(row["win"]) == pw["significant"][i][j], f"{where} holm win {a_}>{b_}"
                            wins[a_] += int(row["win"])
                assert wins == th["n_significant_wins"], where
            sm = t.get("significanceMap_holm", {})
            if "significant" in sm:
                for i, a_ in enumerate(sm["algorithms"]):
                    for j, b_ in enumerate(sm["algorithms"]):
                        if i != j:
                            assert int(cmp[(task, a_, b_)]["win"]) == sm["significant"][i][j], f"{where} map"
            base = t.get("baseR_wilcox", {})
            for pair in base.get("pairs", []):
                row = cmp[(task, pair["a"], pair["b"])]
                assert row["n_common"] == pair["n_pairs"] and row["n_nonzero"] == pair["n_nonzero_diff"], where
                _close(row["p"], pair["p_one_sided"], f"{where} wilcox {pair['a']}>{pair['b']}")
                _close(row["p_adjusted"], pair["p_one_sided_holm"], f"{where} wilcox holm {pair['a']}>{pair['b']}")
                if not answer["meta"].get("smallBetter", False):
                    assert row["statistic"] == pair["V"], where
                compared += 1
            tau = t.get("kendall_tau_vs_aggregateThenRank_mean", {})
            if tau:
                from scipy.stats import kendalltau

                ref = [rk[(task, "aggregate_mean", a_)]["rank"] for a_ in algos]
                for key, meth in (("atr_median", "aggregate_median"), ("rta", "rank_then_aggregate"),
                                  ("ttr", "test_then_rank")):
                    if key in tau and tau[key] is not None:
                        other = [rk[(task, meth, a_)]["rank"] for a_ in algos]
                        assert abs(kendalltau(ref, other).statistic - tau[key]) < 1e-12, f"{where} tau {key}"
        cons = {(r["method"], r["model"]): r for r in out["rankings"]["consensus"]}
        for key, meth in (("aggregateThenRank_mean", "aggregate_mean"), ("aggregateThenRank_median", "aggregate_median"),
                          ("rankThenAggregate_mean", "rank_then_aggregate"), ("testThenRank", "test_then_rank")):
            c = res.get("consensus_euclidean", {}).get(key, {})
            if "rank" not in c:
                continue
            if len(res["tasks"]) == 1:
                continue  # one task: no consensus asked of us
            # relations sums the mean in another order: ``rank_rounded10`` ranks the scores rounded to 10
            # decimals (where equal means split in the last bit, ``rank`` splits them; we do not)
            for alg, r in c.get("rank_rounded10", c["rank"]).items():
                assert cons[(meth, alg)]["rank"] == r, f"{name} {mode} consensus {key} {alg}"
                _close(cons[(meth, alg)]["score"], c["mean_of_average_tie_ranks"][alg], f"{name} consensus score")
                compared += 1
    assert compared > 0


def test_a_fixture_folder_is_found_or_the_test_says_why():
    assert _fixtures()


def _bootstrap_fixtures():
    found = []
    for folder in _folders():
        manifest = folder / "manifest.json"
        if manifest.is_file():
            for name, e in json.loads(manifest.read_text()).items():
                if isinstance(e.get("bootstrap"), dict):
                    found.append(pytest.param(folder, name, e, id=f"{folder.parent.name}/{name}"))
    if not found:
        found.append(pytest.param(None, None, None, marks=pytest.mark.skip(
            reason="no challengeR bootstrap fixture (tests/data/challenger/*_bootstrap.json) found")))
    return found


@pytest.mark.parametrize("folder, name, entry", _bootstrap_fixtures())
def test_stability_equals_challengers_bootstrap_on_the_stated_draws(folder, name, entry):
    """challengeR's ``bootstrap()`` run on our draws (``default_rng(0).integers(0, n, size=(B, n))``,
    given to its ``sample()``): aggregate-then-rank's rank counts, winners and Kendall's tau."""
    from segscore.stats import analyse

    boot = json.loads((folder / entry["bootstrap"]["json"]).read_text())
    index = np.loadtxt(folder / entry["bootstrap"]["index"], delimiter=",", dtype=np.int64, ndmin=2)
    draws = index.shape[0]
    n = index.shape[1]
    assert np.array_equal(index, np.random.default_rng(0).integers(0, n, size=(draws, n)))
    smaller = boot["meta"].get("direction") == "smaller"
    for key, statistic in (("atr_mean", "mean"), ("atr_median", "median")):
        ref = boot["results"][key]["challengeR"]
        out = analyse(folder / entry["csv"], case="case", by="algo", metric="value", task="task", stability=True,
                      statistic=statistic, resamples=draws, seed=0, smaller_better=["value"] if smaller else [])
        rows = {r["model"]: r for r in out["stability"]["rows"]}
        for alg, counts in ref["rank_counts"]["counts"].items():
            assert rows[alg]["rank_full"] == ref["full_rank"][alg], f"{name} {key} {alg}"
            assert rows[alg]["rank_counts"] == counts, f"{name} {key} {alg}"
            assert round(rows[alg]["share_first"] * draws) == ref["winner_frequency"][alg], f"{name} {key} {alg}"
        k, ks = out["stability"]["kendall"][0], ref["kendall_summary"]
        assert k["n_tau_undefined"] == ks["n_null"]
        for ours, theirs in ((k["tau_median"], ks["median"]), (k["tau_q1"], ks["q25"]), (k["tau_q3"], ks["q75"])):
            assert abs(ours - theirs) < 1e-12, f"{name} {key} tau"
