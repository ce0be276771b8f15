"""The audit's statistics from a case table (segscore.curvilinear.findings, kernels.rankstats).

Oracles: scipy.stats (rankdata, spearmanr), a slow per-unit resampling loop in NumPy, and
curvicost 0.3.1's own audit of four masks (tests/data/curvicost/audit_fixture*.json, written by
benchmarks/curvicost_audit_fixtures.py).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from segscore.curvilinear.findings import (CASE_TABLE_FORMAT, CaseTable, cluster_interval, findings_from_cases,
                                           label_cell, read_cases, spearman_rho)
from segscore.errors import InputFileError, ScoreError
from segscore.kernels.rankstats import cluster_bootstrap_spearman, spearman
from tests.test_result_contract import check_contract

DATA = Path(__file__).resolve().parents[1] / "data" / "curvicost"
FIXTURE = DATA / "audit_fixture.json"
FIXTURE_3_5 = DATA / "audit_fixture_floors_3_5.json"
ROW_FIELDS = ["cost", "operator", "metric", "n", "n_units", "aligned_rho", "ci_lo", "ci_hi", "label", "reason",
              "undefined", "inconclusive", "blind", "anti", "cost_constant"]


def scipy_rho(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        r = stats.spearmanr(x, y).statistic
    return float(r)


# ------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------

def test_spearman_is_scipys_on_random_tied_data():
    rng = np.random.default_rng(1)
    worst = 0.0
    n_nan = 0
    for trial in range(400):
        n = int(rng.integers(2, 60))
        x = rng.integers(0, int(rng.integers(1, 8)), n).astype(float)
        y = (rng.integers(0, int(rng.integers(1, 8)), n) + (x if trial % 2 else 0)).astype(float)
        want = scipy_rho(x, y)
        got = spearman(x, y)
        if math.isnan(want):
            assert math.isnan(got) and spearman_rho(x, y) is None
            n_nan += 1
            continue
        worst = max(worst, abs(got - want), abs(spearman_rho(x[::-1].copy(), y[::-1].copy()) - want))
    assert worst < 1e-12 and 0 < n_nan < 400
    assert math.isnan(spearman(np.empty(0), np.empty(0))) and math.isnan(spearman(np.ones(1), np.ones(1)))
    # a non-contiguous view through the wrapper
    x = rng.integers(0, 4, 40).astype(float)
    y = rng.integers(0, 4, 40).astype(float)
    assert spearman_rho(x[::2], y[::2]) == pytest.approx(scipy_rho(x[::2], y[::2]), abs=1e-12)


def slow_cluster_interval(x, y, groups, n_boot, seed):
    """The cluster bootstrap by hand: resample units, concatenate their cases, rank with scipy."""
    members = [np.flatnonzero(groups == g) for g in range(groups.max() + 1)]
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(members), len(members))
        idx = np.concatenate([members[p] for p in pick])
        r = scipy_rho(x[idx], y[idx])
        if np.isfinite(r):
            draws.append(r)
    if not draws:
        return None, None, 0
    return float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5)), len(draws)


@pytest.mark.parametrize("case", range(8))
def test_cluster_bootstrap_is_the_slow_resampling_loop_with_the_same_seed(case):
    rng = np.random.default_rng(100 + case)
    n_units = int(rng.integers(3, 9))
    sizes = rng.integers(1, 6, n_units)
    groups = np.repeat(np.arange(n_units), sizes)
    n = groups.size
    x = rng.integers(0, 4, n).astype(float)
    y = (x * (case % 3) + rng.integers(0, 5, n)).astype(float)
    if case == 7:  # only unit 0 varies: many resamples are constant and dropped
        x = np.where(groups == 0, rng.integers(0, 3, n), 1).astype(float)
    seed = int(rng.integers(0, 1000))
    want = slow_cluster_interval(x, y, groups, 300, seed)
    got = cluster_interval(x, y, groups, n_boot=300, seed=seed)
    assert got[2] == want[2]
    if want[0] is None:
        assert got[:2] == (None, None)
    else:
        assert got[0] == pytest.approx(want[0], abs=1e-12) and got[1] == pytest.approx(want[1], abs=1e-12)


def test_cluster_bootstrap_on_empty_one_element_constant_and_strided_input():
    assert cluster_interval([], [], [], n_boot=20) == (None, None, 0)
    assert cluster_interval([1.0], [2.0], [0], n_boot=20) == (None, None, 0)
    assert cluster_interval([1.0, 1, 1], [1.0, 2, 3], [0, 1, 2], n_boot=20) == (None, None, 0)
    rng = np.random.default_rng(9)
    x = rng.integers(0, 5, 60).astype(float)
    y = rng.integers(0, 5, 60).astype(float)
    groups = np.repeat(np.arange(6), 5)
    got = cluster_interval(x[::2], y[::2], groups, n_boot=150, seed=4)
    want = slow_cluster_interval(x[::2].copy(), y[::2].copy(), groups, 150, 4)
    assert got[2] == want[2] and got[:2] == (pytest.approx(want[0], abs=1e-12), pytest.approx(want[1], abs=1e-12))
    with pytest.raises(ScoreError, match="groups"):
        cluster_interval([1.0, 2, 3], [1.0, 2, 3], [0, 2, 2])
    with pytest.raises(ScoreError, match="NaN"):
        cluster_interval([1.0, np.nan, 3], [1.0, 2, 3], [0, 1, 2])


def test_the_picks_are_curvicosts_stream_of_one_draw_per_resample():
    for g in (3, 4, 7, 12):
        rng = np.random.default_rng(5)
        seq = np.stack([rng.integers(0, g, g) for _ in range(50)])
        assert np.array_equal(np.random.default_rng(5).integers(0, g, size=(50, g)), seq)


def test_bootstrap_kernel_on_one_resample_is_spearman_of_the_expanded_array():
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(5), [2, 3, 1, 4, 2])
    x = rng.integers(0, 4, groups.size).astype(float)
    y = rng.integers(0, 4, groups.size).astype(float)
    picks = np.array([[0, 0, 3, 4, 1], [2, 2, 2, 2, 2], [4, 3, 2, 1, 0]], np.int64)
    out = np.empty(3)
    finite = cluster_bootstrap_spearman(x, y, groups.astype(np.int64), picks, out)
    assert math.isnan(out[1]) and finite == 2  # one unit of one case: constant
    for j in (0, 2):
        idx = np.concatenate([np.flatnonzero(groups == p) for p in picks[j]])
        assert out[j] == pytest.approx(scipy_rho(x[idx], y[idx]), abs=1e-12)


# ------------------------------------------------------------------------------------------
# labels on hand-built case tables
# ------------------------------------------------------------------------------------------

def table(n_units, per_unit, cost, metrics, operator="break", start=0):
    """``cost(u, k)`` and ``metrics[name](u, k)`` for case k of unit u."""
    rows = []
    for u in range(n_units):
        for k in range(per_unit):
            row = dict(unit=f"gt{u + start:02d}.png", operator=operator, severity=0.1 * (k + 1), seed=0,
                       acted=True, traceable_frac=cost(u, k))
            row.update({m: f(u, k) for m, f in metrics.items()})
            rows.append(row)
    return rows


def only(result, metric, cost="traceable_frac", operator="break"):
    rows = [f for f in result["findings"] if (f["metric"], f["cost"], f["operator"]) == (metric, cost, operator)]
    assert len(rows) == 1
    return rows[0]


def run(cases, **kw):
    kw.setdefault("costs", ["traceable_frac"])
    kw.setdefault("n_boot", 200)
    result = findings_from_cases(cases, **kw)
    json.dumps(result, allow_nan=False)
    check_contract(result)
    for f in result["findings"]:
        assert list(f) == ROW_FIELDS
        assert [f["undefined"], f["inconclusive"], f["blind"], f["anti"]].count(True) == (f["label"] != "tracks")
    return result


def falling(u, k):
    return 1.0 - 0.05 * k - 0.003 * u


def test_constant_cost_and_constant_metric_are_undefined_and_say_which():
    cases = table(12, 2, lambda u, k: 1.0, {"dice": falling})
    cases += table(12, 2, falling, {"dice": lambda u, k: 0.9}, operator="radius")
    r = run(cases, metrics=["dice"])
    a = only(r, "dice")
    assert a["label"] == "undefined" and a["cost_constant"] and a["aligned_rho"] is None and a["ci_lo"] is None
    assert "cost traceable_frac is constant" in a["reason"]
    b = only(r, "dice", operator="radius")
    assert b["label"] == "undefined" and not b["cost_constant"] and "metric dice is constant" in b["reason"]
    assert "traceable_frac stays at 1" in r["operator_notes"]["break"]
    assert "dice does not move" in r["operator_notes"]["radius"]


@pytest.mark.parametrize("n_units, label", [(9, "inconclusive"), (10, "tracks")])
def test_the_unit_floor_is_ten_acting_units(n_units, label):
    r = run(table(n_units, 2, falling, {"dice": falling, "hd95": lambda u, k: 3.0 * k + 0.01 * u}))
    for m in ("dice", "hd95"):  # hd95 rises as the cost falls: lower is better, so it tracks too
        f = only(r, m)
        assert f["label"] == label and f["n"] == 2 * n_units and f["n_units"] == n_units
        assert f["aligned_rho"] == pytest.approx(1.0) and (f["ci_lo"], f["ci_hi"]) == (pytest.approx(1), pytest.approx(1))
        assert f["reason"] == ("<10 units" if n_units < 10 else "")


@pytest.mark.parametrize("n_cases, label", [(11, "inconclusive"), (12, "tracks")])
def test_the_case_floor_is_twelve_acting_cases(n_cases, label):
    r = run(table(n_cases, 1, lambda u, k: 1 - 0.01 * u, {"dice": lambda u, k: 1 - 0.02 * u}))
    f = only(r, "dice")
    assert f["label"] == label and f["reason"] == ("<12 cases" if n_cases < 12 else "")
    r = run(table(n_cases, 1, lambda u, k: 1 - 0.01 * u, {"dice": lambda u, k: 1 - 0.02 * u}), min_cases=n_cases)
    assert only(r, "dice")["label"] == "tracks"


def test_declined_cases_count_for_nothing():
    cases = table(10, 2, falling, {"dice": falling})
    cases += [dict(c, acted=False, unit="gt99.png") for c in cases[:4]]  # a unit where nothing acted
    cases += [dict(c, acted=False, traceable_frac=0.0, dice=1.0) for c in cases[:3]]
    r = run(cases)
    f = only(r, "dice")
    assert (f["n"], f["n_units"], f["label"]) == (20, 10, "tracks")
    assert (r["n_cases"], r["n_units"], r["n_declined"]) == (20, 10, 7)
    assert "changed nothing in gt99.png" in r["operator_notes"]["break"]


def test_the_interval_rule_at_and_around_zero():
    assert label_cell(0.3, 0.0, 0.6, 20, 10) == ("tracks", "")  # an end at 0 does not include it (curvicost)
    assert label_cell(0.3, -1e-12, 0.6, 20, 10) == ("blind", "")
    assert label_cell(-0.3, -0.6, 0.0, 20, 10) == ("anti-correlated", "")
    assert label_cell(-0.3, -0.6, 1e-12, 20, 10) == ("blind", "")
    assert label_cell(-0.3, -0.6, -0.1, 20, 9) == ("inconclusive", "<10 units")
    assert label_cell(-0.3, -0.6, -0.1, 11, 9) == ("inconclusive", "<10 units, <12 cases")
    assert label_cell(-0.3, None, None, 20, 10) == ("inconclusive", "no interval")
    assert label_cell(None, None, None, 3, 1) == ("undefined", "")


def test_blind_and_anti_correlated_on_data():
    rng = np.random.default_rng(3)
    noise = rng.random((12, 3))
    r = run(table(12, 3, falling, {"dice": lambda u, k: noise[u, k],
                                   "cldice": lambda u, k: 0.5 + 0.05 * k + 0.001 * u,  # rises as the cost falls
                                   "betti0_error": lambda u, k: -k + 0.0 * u}))       # lower is better: falls
    assert only(r, "dice")["label"] == "blind"
    anti = only(r, "cldice")
    assert anti["label"] == "anti-correlated" and anti["aligned_rho"] < 0 and anti["ci_hi"] < 0
    b = only(r, "betti0_error")
    assert b["label"] == "anti-correlated" and b["ci_lo"] <= b["ci_hi"] < 0
    raw = scipy_rho([-k for u in range(12) for k in range(3)], [falling(u, k) for u in range(12) for k in range(3)])
    assert raw > 0 and b["aligned_rho"] == pytest.approx(-raw, abs=1e-12)


def test_below_three_units_there_are_no_intervals_and_it_is_said():
    r = run(table(2, 8, falling, {"dice": falling}), min_units=1, min_cases=1)
    f = only(r, "dice")
    assert r["has_ci"] is False and f["aligned_rho"] == pytest.approx(1.0)
    assert f["ci_lo"] is None and f["ci_hi"] is None and f["label"] == "inconclusive"
    assert "no interval" in f["reason"] and "needs 3" in f["reason"]
    assert "No intervals" in r["operator_notes"]["break"]
    r = run(table(2, 8, falling, {"dice": falling}))
    assert only(r, "dice")["reason"].startswith("<10 units; no interval")


def test_operators_with_fewer_than_three_cases_are_named_and_skipped():
    cases = table(12, 2, falling, {"dice": falling}) + table(2, 1, falling, {"dice": falling}, operator="truncate")
    cases += [dict(c, acted=False) for c in table(3, 2, falling, {"dice": falling}, operator="bridge")]
    r = run(cases)
    assert {f["operator"] for f in r["findings"]} == {"break"}
    assert "Skipped: 2 acting case(s)" in r["operator_notes"]["truncate"]
    assert "unchanged in all 6 case(s)" in r["operator_notes"]["bridge"]


def test_a_saturated_ladder_is_named():
    cases = table(12, 4, falling, {"dice": falling}, operator="bridge")
    for c in cases:
        c["realised"] = 1
    r = run(cases, min_units=3)
    assert "saturated" in r["operator_notes"]["bridge"] and "gt00.png" in r["operator_notes"]["bridge"]


def test_metric_nulls_drop_out_of_their_cells_only():
    cases = table(12, 2, falling, {"dice": falling, "apls": falling})
    for c in cases[:5]:
        c["apls"] = None
    cases[6]["apls"] = float("nan")
    r = run(cases, metrics=["dice", "apls"])
    assert only(r, "apls")["n"] == 24 and only(r, "apls")["aligned_rho"] == pytest.approx(1.0)
    assert "apls is null on 6 of its 24" in r["operator_notes"]["break"]
    cases = table(12, 2, falling, {"dice": falling, "apls": lambda u, k: None})
    r = run(cases, metrics=["dice", "apls"])
    assert only(r, "apls")["label"] == "undefined" and "only 0 acting case(s)" in only(r, "apls")["reason"]
    assert "apls" not in run(cases)["metrics"]  # by default, a metric null everywhere is not audited


def test_columns_and_rows_give_the_same_findings():
    rows = table(10, 2, falling, {"dice": falling, "iou": lambda u, k: (u * 7 + k * 3) % 5})
    cols = {k: [r[k] for r in rows] for k in rows[0]}
    assert run(cols) == run(rows)


def test_bad_tables_and_options_are_refused_in_one_line():
    good = table(4, 3, falling, {"dice": falling})
    bad = [
        ([dict(good[0], unit=3)], "cases[0].unit is 3"),
        ([{k: v for k, v in good[0].items() if k != "operator"}], "cases[0].operator is missing"),
        ([dict(good[0], acted="yes")], "cases[0].acted is 'yes'"),
        ([dict(good[0], dice="0.9")], "cases[0].dice is '0.9'"),
        ([dict(good[0], dice=True)], "cases[0].dice is True"),
        ({"unit": ["a", "b"], "operator": ["break"]}, "one list per key"),
        ("cases", "cases is a str"),
    ]
    for cases, text in bad:
        with pytest.raises(ScoreError, match="^findings_from_cases: ") as e:
            findings_from_cases(cases, metrics=["dice"])
        assert text in str(e.value) and "\n" not in str(e.value) and "fix" in str(e.value)
    for kw, text in [(dict(costs=["nope"]), "no acting case has the cost 'nope'"), (dict(metrics=["dice2"]), "no known direction"),
                     (dict(n_boot=0), "n_boot 0"), (dict(min_units=-1), "min_units -1"), (dict(seed=1.5), "seed 1.5")]:
        with pytest.raises(ScoreError, match=text):
            findings_from_cases(good, **kw)


def test_a_metric_of_ones_own_takes_its_direction():
    cases = table(10, 2, falling, {"my_error": lambda u, k: float(k) + 0.01 * u})
    r = run(cases, metrics=["my_error"], directions={"my_error": "lower"})
    assert only(r, "my_error")["label"] == "tracks"


# ------------------------------------------------------------------------------------------
# curvicost's own audit
# ------------------------------------------------------------------------------------------

def compare(ours, theirs, near=0.05):
    """(cells, max |rho diff|, labels equal, labels compared, max |interval diff|)."""
    assert [(f["cost"], f["operator"], f["metric"]) for f in ours] == \
        [(f["cost"], f["operator"], f["metric"]) for f in theirs]
    worst = worst_ci = 0.0
    equal = compared = 0
    for a, b in zip(ours, theirs):
        assert (a["n"], a["n_units"], a["cost_constant"]) == (b["n"], b["n_units"], b["cost_constant"])
        if a["aligned_rho"] is None:
            assert math.isnan(b["aligned_rho"])
        else:
            worst = max(worst, abs(a["aligned_rho"] - b["aligned_rho"]))
        for k in ("ci_lo", "ci_hi"):
            if a[k] is None:
                assert math.isnan(b[k])
            else:
                worst_ci = max(worst_ci, abs(a[k] - b[k]))
        hinges = b["label"] in ("blind", "tracks", "anti-correlated") and min(abs(b["ci_lo"]), abs(b["ci_hi"])) < near
        if not hinges:
            compared += 1
            equal += a["label"] == b["label"]
            assert a["label"] == b["label"], (a, b)
    return len(ours), worst, equal, compared, worst_ci


@pytest.mark.parametrize("path, floors", [(FIXTURE_3_5, dict(min_units=3, min_cases=5)), (FIXTURE, {})])
def test_findings_recomputed_from_curvicosts_cases_are_curvicosts(path, floors):
    theirs = json.loads(path.read_text())
    cases = read_cases(FIXTURE)
    assert cases.format == "curvicost" and cases.costs == ("traceable_frac", "conductance_twosided")
    ours = findings_from_cases(cases, n_boot=1000, **floors)
    cells, worst, equal, compared, worst_ci = compare(ours["findings"], theirs["findings"])
    assert cells == 110 and worst < 1e-9 and equal == compared >= 100
    assert worst_ci < 1e-9  # the same resamples, drawn from the same stream: the same intervals
    for k in ("n_cases", "n_units", "has_ci", "min_units", "min_cases"):
        assert ours[k] == theirs[k]
    assert set(ours["operator_notes"]) == set(theirs["notes"])
    labels = {f["label"] for f in ours["findings"]}
    assert labels >= ({"undefined", "inconclusive", "blind", "tracks"} if floors else {"undefined", "inconclusive"})
    check_contract(json.loads(json.dumps(ours, allow_nan=False)))


def test_the_order_of_a_units_cases_changes_nothing():
    """Only the units' order counts (the order they first appear): each unit's cases shuffled
    among themselves give the same findings, bit for bit."""
    cases = list(read_cases(FIXTURE))
    want = findings_from_cases(cases, min_units=3, min_cases=5, n_boot=300)
    units = list(dict.fromkeys(c["unit"] for c in cases))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        shuffled = []
        for u in units:
            mine = [c for c in cases if c["unit"] == u]
            shuffled += [mine[i] for i in rng.permutation(len(mine))]
        assert findings_from_cases(shuffled, min_units=3, min_cases=5, n_boot=300) == want


def test_the_units_enter_the_bootstrap_in_the_order_they_first_appear_as_in_curvicost():
    """curvicost 0.3.1 resamples the units in the order they first appear among a cell's cases
    (its masks' order): with the units reordered, ρ stays, the intervals move, and both are
    curvicost's own audit of the reordered cases."""
    cc = pytest.importorskip("curvicost.audit")
    rows = json.loads(FIXTURE.read_text())["cases"]
    units = list(dict.fromkeys(r["unit"] for r in rows))
    assert len(units) == 4
    base = findings_from_cases(read_cases(FIXTURE), min_units=3, min_cases=5, n_boot=40)["findings"]
    for order in ([units[i] for i in (2, 0, 3, 1)],):
        reordered = [r for u in order for r in rows if r["unit"] == u]
        ours = findings_from_cases([dict(r, acted=True) for r in reordered], min_units=3, min_cases=5, n_boot=40)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = cc.audit(reordered, n_boot=40, min_units=3, min_cases=5)
        cells, worst, equal, compared, worst_ci = compare(ours["findings"], theirs["findings"], near=0.0)
        assert worst < 1e-9 and worst_ci < 1e-9 and equal == compared == cells
        assert [f["aligned_rho"] for f in ours["findings"]] == [f["aligned_rho"] for f in base]
        assert any((f["ci_lo"], f["ci_hi"]) != (g["ci_lo"], g["ci_hi"]) for f, g in zip(ours["findings"], base))


def test_the_reader_adds_the_rungs_curvicost_did_not_record():
    cases = read_cases(FIXTURE)
    theirs = json.loads(FIXTURE.read_text())
    declined = [c for c in cases if not c["acted"]]
    assert len(cases) - len(declined) == theirs["n_cases"] == 54
    # bridge acted on neither synthetic tree: 3 rungs x 2 trees
    assert sorted((c["unit"], c["operator"]) for c in declined) == sorted(
        [(u, "bridge") for u in ("tree_192_s0.png", "tree_192_s1.png") for _ in range(3)])


def test_a_segscore_case_table_reads_back(tmp_path):
    rows = table(10, 2, falling, {"dice": falling})
    p = tmp_path / "cases.json"
    p.write_text(json.dumps({"format": CASE_TABLE_FORMAT, "version": 1, "costs": ["traceable_frac"],
                             "cases": {k: [r[k] for r in rows] for k in rows[0]}}))
    got = read_cases(p)
    assert isinstance(got, CaseTable) and got.costs == ("traceable_frac",) and list(got) == rows
    assert findings_from_cases(got, n_boot=100) == findings_from_cases(rows, costs=["traceable_frac"], n_boot=100)
    (tmp_path / "bare.json").write_text(json.dumps(rows))
    assert list(read_cases(tmp_path / "bare.json")) == rows


def test_malformed_files_are_refused_in_one_line_naming_the_file(tmp_path):
    with pytest.raises(InputFileError, match="no such file"):
        read_cases(tmp_path / "missing.json")
    with pytest.raises(InputFileError, match="is a folder"):
        read_cases(tmp_path)
    theirs = json.loads(FIXTURE.read_text())
    bad = {
        "trunc.json": FIXTURE.read_text()[:500],
        "binary.json": b"\xff\xfe\x00garbage",
        "number.json": "3",
        "nocases.json": json.dumps(dict(theirs, cases=None)),
        "casesnum.json": json.dumps({"cases": 5}),
        "caseitem.json": json.dumps({"cases": [1, 2]}),
        "nounit.json": json.dumps({"cases": [{"operator": "break"}]}),
        "format.json": json.dumps({"format": "other", "cases": []}),
        "version.json": json.dumps({"format": CASE_TABLE_FORMAT, "version": 9, "cases": []}),
        "value.json": json.dumps([{"unit": "a", "operator": "break", "traceable_frac": 1, "dice": [1]}]),
        "nocost.json": json.dumps([{"unit": "a", "operator": "break", "dice": 1}]),
    }
    for name, body in bad.items():
        p = tmp_path / name
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
        with pytest.raises(ScoreError) as e:
            findings_from_cases(read_cases(p), costs=["traceable_frac"], metrics=["dice"])
        msg = str(e.value)
        assert msg.startswith(f"{p}: ") and "\n" not in msg, msg
    assert "--include-cases" in _refusal(tmp_path / "nocases.json")


def _refusal(p):
    try:
        read_cases(p)
    except ScoreError as e:
        return str(e)
    raise AssertionError(f"{p} was read")


def test_malformed_curvicost_ladders_and_cases_are_refused_or_skipped(tmp_path):
    """A list where a severity or seed belongs is one line naming the file; ladder rungs of no
    known operator, non-finite levels and odd seeds add no declined case."""
    import json as _json

    from segscore.curvilinear.findings import read_cases
    from segscore.errors import ScoreError

    case = {"unit": "a.png", "operator": "break", "severity": 0.05, "seed": 0, "acted": True,
            "traceable_frac": 0.9, "dice": 0.95}
    doc = {"cases": [dict(case, severity=[0.05])], "ladder": {"severities": {"break": [0.05]}, "seeds": [0]}}
    (tmp_path / "bad.json").write_text(_json.dumps(doc))
    with pytest.raises(ScoreError, match=r"bad\.json: cases\[0\]\.severity") as err:
        read_cases(tmp_path / "bad.json")
    assert "\n" not in str(err.value)
    doc = {"cases": [case], "ladder": {"severities": {"break": [0.05, 1e400], "bogus": [0.1]}, "seeds": [[0], 0]}}
    (tmp_path / "odd.json").write_text(_json.dumps(doc).replace("Infinity", "1e400"))
    table = read_cases(tmp_path / "odd.json")
    assert all(c["operator"] in ("break", "bridge", "truncate", "radius", "boundary") for c in table)
    assert all(math.isfinite(c["severity"]) for c in table)


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_cells_in_parts_give_the_findings_of_one_call(parts):
    """The statistics' bulk split over workers: the parts cover every cell once, and the findings
    made from them are those computed in one call, whatever the number of parts."""
    from segscore.curvilinear.findings import cell_statistics

    cases = list(read_cases(FIXTURE))
    want = findings_from_cases(cases, min_units=3, min_cases=5, n_boot=300)
    got = [cell_statistics(cases, n_boot=300, part=k, parts=parts) for k in range(parts)]
    keys = [k for g in got for k in g]
    assert len(keys) == len(set(keys)) == len(want["findings"])
    assert set(keys) == {(f["cost"], f["operator"], f["metric"]) for f in want["findings"]}
    cells = {k: v for g in got for k, v in g.items()}
    assert findings_from_cases(cases, min_units=3, min_cases=5, n_boot=300, cells=cells) == want


def test_cells_given_are_used_and_not_computed_again(monkeypatch):
    from segscore.curvilinear import findings as F

    cases = list(read_cases(FIXTURE))
    cells = F.cell_statistics(cases, n_boot=300)
    monkeypatch.setattr(F, "_cell", lambda *a, **k: pytest.fail("a cell was computed again"))
    assert F.findings_from_cases(cases, min_units=3, min_cases=5, n_boot=300, cells=cells)["findings"]


@pytest.mark.parametrize("kw, match", [(dict(part=2, parts=2), "part 2 of 2"), (dict(parts=0), "parts 0"),
                                       (dict(part=-1, parts=2), "part -1")])
def test_cell_statistics_refuses_a_part_outside_its_parts(kw, match):
    from segscore.curvilinear.findings import cell_statistics

    with pytest.raises(ScoreError, match=match):
        cell_statistics(list(read_cases(FIXTURE)), **kw)
