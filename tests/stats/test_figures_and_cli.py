"""The statistics figures (their data asserted against the analysis) and `segscore report --table`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segscore.stats import analyse


def _suite_rows(seed=0, tasks=("t1",), missing=False):
    rng = np.random.default_rng(seed)
    rows = []
    for t in tasks:
        hard = rng.normal(0, 0.1, 30)
        for k, m in enumerate(("base", "big", "huge", "tiny")):
            skill = (0.6, 0.7, 0.72, 0.5)[k]
            for j in range(30):
                v = float(np.clip(skill + hard[j] + rng.normal(0, 0.05), 0, 1))
                if missing and m == "tiny" and j % 7 == 0:
                    v = None
                rows.append({"task": t, "case": f"c{j + 1}", "model": m, "dice": v, "site": f"s{j % 5}"})
    return rows


@pytest.fixture(scope="module")
def full():
    return analyse(_suite_rows(), case="case", by="model", metric="dice", intervals=True, compare=True, rank=True,
                   stability=True, resamples=500)


def test_interval_plot_draws_each_models_interval_best_first(full):
    from segscore.figures.stats import interval_data, interval_plot

    d = interval_data(full)
    rows = {r["model"]: r for r in full["intervals"]["rows"]}
    assert d["models"] == sorted(rows, key=lambda m: -rows[m]["estimate"])
    fig = interval_plot(full)
    ax = fig.axes[0]
    bars = [ln for ln in ax.lines if ln.get_label() == "_interval"]
    assert len(bars) == 4
    drawn = sorted(tuple(ln.get_xdata()) for ln in bars)
    assert drawn == sorted((rows[m]["low"], rows[m]["high"]) for m in rows)
    assert [t.get_text() for t in ax.get_yticklabels()] == d["models"]
    assert list(ax.get_yticks()) == [3, 2, 1, 0]  # the best at the top


def test_interval_plot_draws_the_floors_it_is_given(full):
    from segscore.figures.stats import interval_plot

    with_floor = dict(full)
    with_floor["intervals"] = {**full["intervals"], "floors": {"dice": {"all_positive": 0.3}}}
    fig = interval_plot(with_floor)
    floors = [ln for ln in fig.axes[0].lines if "floor" in ln.get_label()]
    assert len(floors) == 1 and list(floors[0].get_xdata()) == [0.3, 0.3]


def test_significance_map_fills_the_adjusted_wins(full):
    from segscore.figures.stats import significance_data, significance_map

    d = significance_data(full)
    wins = {(r["a"], r["b"]) for r in full["comparisons"]["rows"] if r["win"]}
    got = {(a, b) for i, a in enumerate(d["models"]) for j, b in enumerate(d["models"]) if d["significant"][i][j]}
    assert got == wins and wins
    fig = significance_map(full)
    assert np.array_equal(np.asarray(fig.axes[0].images[0].get_array()), np.array(d["significant"], float))
    assert d["adjust"] == "holm"


def test_blob_plot_areas_are_the_rank_shares(full):
    from segscore.figures.stats import blob_data, blob_plot

    d = blob_data(full)
    rows = {r["model"]: r for r in full["stability"]["rows"]}
    for m, shares in zip(d["models"], d["share"]):
        assert shares == [c / 500 for c in rows[m]["rank_counts"]]
        assert abs(sum(shares) - 1) < 1e-12
    fig = blob_plot(full)
    blobs = fig.axes[0].collections[0]
    expect = [600 * s for shares in d["share"] for s in shares if s > 0]
    assert np.allclose(blobs.get_sizes(), expect)


def test_figures_refuse_what_the_analysis_lacks():
    from segscore.errors import ScoreError
    from segscore.figures.stats import blob_plot

    only = analyse(_suite_rows(), case="case", by="model", metric="dice", resamples=20)
    with pytest.raises(ScoreError, match="--stability"):
        blob_plot(only)


def test_several_tasks_missing_values_clusters_and_frames():
    out = analyse(_suite_rows(tasks=("t2", "t10", "t1"), missing=True), case="case", by="model", metric="dice",
                  task="task", cluster_by="site", compare=True, rank=True, stability=True, intervals=True,
                  resamples=200)
    assert out["params"]["tasks"] == ["t1", "t2", "t10"]
    assert out["intervals"]["params"]["units"] == "clusters"
    tiny = [r for r in out["intervals"]["rows"] if r["model"] == "tiny"]
    assert all(r["n_missing"] == 5 and r["n_cases"] == 25 and r["n_units"] == 5 for r in tiny)
    assert {r["method"] for r in out["rankings"]["consensus"]} == {"aggregate_mean", "aggregate_median",
                                                                   "rank_then_aggregate", "test_then_rank"}
    frame = out.to_frame("comparisons")
    assert len(frame) == 3 * 12 and {"p", "p_adjusted", "win"} <= set(frame.columns)
    json.dumps(out, allow_nan=False)


def _write_suite(path, *, missing):
    """The suite of :func:`_suite_rows` as a CSV long table at ``path``."""
    import csv

    rows = _suite_rows(missing=missing)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_report_table_cli_writes_json_csv_and_a_figure(tmp_path, cli):
    import csv

    table = _write_suite(tmp_path / "suite.csv", missing=True)
    code, out, err = cli("report", "--table", table, "--case", "case", "--by", "model", "--metric", "dice",
                         "--intervals", "--compare", "--resamples", "300", "--seed", "4", "--json",
                         "--csv", tmp_path / "s.csv", "--plot", tmp_path / "iv.png")
    assert code == 0, err
    res = json.loads(out)
    api = analyse(table, case="case", by="model", metric="dice", intervals=True, compare=True, resamples=300, seed=4)
    assert res["intervals"]["rows"] == api["intervals"]["rows"] and res["intervals"]["params"]["seed"] == 4
    assert (tmp_path / "s.intervals.csv").read_text().startswith("task,metric,model")
    assert (tmp_path / "s.comparisons.csv").is_file() and (tmp_path / "iv.png").stat().st_size > 0
    code, out, err = cli("report", "--table", table, "--case", "case", "--by", "model", "--metric", "dice",
                         "--missing", "worst", "--intervals")
    assert code == 2 and "--worst dice=VALUE" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli("report", "--table", table, "--case", "case", "--by", "model", "--metric", "dice",
                         "--missing", "worst", "--worst", "dice=0", "--rank")
    assert code == 0 and "rank_then_aggregate" in out
    code, out, err = cli("report", "--table", tmp_path / "nope.csv", "--case", "case", "--by", "model",
                         "--metric", "dice")
    assert code == 2 and "nope.csv" in err


def test_parquet_table_reads_like_csv_or_names_the_extra(tmp_path):
    from segscore.errors import ScoreError

    rows = _suite_rows()
    path = tmp_path / "suite.parquet"
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        path.write_bytes(b"PAR1")
        with pytest.raises(ScoreError, match=r"segscore\[parquet\]"):
            analyse(path, case="case", by="model", metric="dice")
        return
    pq.write_table(pa.table({k: [r[k] for r in rows] for k in rows[0]}), path)
    a = analyse(path, case="case", by="model", metric="dice", resamples=50)
    b = analyse(rows, case="case", by="model", metric="dice", resamples=50)
    assert a["intervals"]["rows"] == b["intervals"]["rows"]


def test_registry_directions():
    from segscore.metrics.missing import SMALLER_BETTER, WORST, larger_is_better

    for m in ("voi_split", "voi_merge", "voi_total", "hd95", "hd95_pixel", "assd_per_object", "betti0_error",
              "area_error_mean", "adapted_rand_error", "hd_pixel"):
        assert not larger_is_better(m), m
    for m in ("dice", "cldice", "f1", "pq", "voi_score", "leaderboard", "roc_auc", "adapted_rand_precision"):
        assert larger_is_better(m), m
    # every smaller-better metric the worst-value table names has a worst that is not 0 (Dice-like)
    assert all(WORST[m] != 0.0 for m in SMALLER_BETTER if m in WORST)


def _store_report():
    """A results folder's report as ``Report.to_dict()`` gives it: two tables, tags, a floor, a null."""
    def row(model, case, dice, floor):
        return {"id": f"{model}-{case}", "tags": {"model": model, "case": case},
                "values": {"dice": dice, "dice [all_positive]": floor, "hd95": None if dice is None else 1 - dice}}

    cols = [{"name": "dice", "role": "headline", "of": None, "ref": None},
            {"name": "dice [all_positive]", "role": "floor", "of": "dice", "ref": "all_positive"},
            {"name": "hd95", "role": "headline", "of": None, "ref": None}]
    rows = [row(m, f"c{j}", None if (m == "b" and j == 2) else 0.5 + 0.1 * k + 0.01 * j, 0.2 + 0.01 * j)
            for k, m in enumerate(("a", "b")) for j in range(1, 7)]
    return {"source": "results", "tables": [{"command": "curve", "columns": cols, "rows": rows}]}


def test_results_folder_rows_directions_worst_and_floors():
    import argparse

    from segscore.cli.report import STATS_OPTIONS
    from segscore.commands._declare import add_to_parser
    from segscore.stats.options import analyse_args

    p = argparse.ArgumentParser()
    p.add_argument("--by")
    p.add_argument("--missing")
    add_to_parser(p, STATS_OPTIONS)
    args = p.parse_args(["--case", "case", "--by", "model", "--intervals", "--rank", "--resamples", "100"])
    out = analyse_args(args, _store_report())
    assert out["params"]["metrics"] == ["dice", "hd95"]
    assert out["params"]["directions"] == {"dice": "larger", "hd95": "smaller"}
    assert abs(out["intervals"]["floors"]["dice"]["all_positive"] - (0.2 + 0.035)) < 1e-12
    b = next(r for r in out["intervals"]["rows"] if r["model"] == "b" and r["metric"] == "dice")
    assert b["n_missing"] == 1 and b["n_cases"] == 5
    ranks = {(r["metric"], r["method"], r["model"]): r["rank"] for r in out["rankings"]["rows"]}
    assert ranks[("dice", "aggregate_mean", "b")] == 1 and ranks[("hd95", "aggregate_mean", "b")] == 1
    args = p.parse_args(["--case", "case", "--by", "model", "--metric", "dice", "--missing", "worst", "--intervals",
                         "--resamples", "10"])
    worst = analyse_args(args, _store_report())  # Dice's declared worst value is 0
    assert worst["counts"]["imputed"] == {"dice": 1} and worst["params"]["worst"] == {"dice": 0.0}
    args = p.parse_args(["--case", "nope", "--by", "model", "--intervals"])
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match="no tag 'nope'"):
        analyse_args(args, _store_report())


def test_api_report_is_the_cli_json_and_typed(tmp_path, cli):
    """``segscore.api.report`` takes report's declared options as keywords (a list for ``metric``
    too), checks them as the command line does, and returns the JSON ``--json`` prints."""
    import csv
    import inspect

    from segscore import api
    from segscore.errors import ScoreError

    table = _write_suite(tmp_path / "suite.csv", missing=False)
    params = inspect.signature(api.report).parameters
    assert list(params)[0] == "results" and params["resamples"].default == 10_000 and params["seed"].default == 0
    assert params["adjust"].kind is inspect.Parameter.KEYWORD_ONLY
    code, out, err = cli("report", "--table", table, "--case", "case", "--by", "model", "--metric", "dice",
                         "--intervals", "--compare", "--rank", "--stability", "--resamples", "200", "--json")
    assert code == 0, err
    got = api.report(table=str(table), case="case", by="model", metric=["dice"], intervals=True, compare=True,
                     rank=True, stability=True, resamples=200)
    assert json.loads(out) == json.loads(json.dumps(got))
    with pytest.raises(ScoreError, match="--adjust"):
        api.report(table=str(table), case="case", by="model", metric="dice", compare=True, adjust="sidak")


def test_stability_method_and_cases_on_the_cli_api_and_blob_plot(tmp_path, cli):
    from segscore import api
    from segscore.figures.stats import blob_data, blob_plot

    table = _write_suite(tmp_path / "suite.csv", missing=False)
    args = ("report", "--table", table, "--case", "case", "--by", "model", "--metric", "dice", "--stability",
            "--resamples", "100", "--json")
    code, out, err = cli(*args, "--stability-method", "rank-aggregate,test-rank", "--stability-cases", "distinct")
    assert code == 0, err
    got = json.loads(out)["stability"]
    assert got["params"]["methods"] == ["rank_then_aggregate", "test_then_rank"]
    assert got["params"]["cases"] == "distinct"
    assert [k["method"] for k in got["kendall"]] == ["rank_then_aggregate", "test_then_rank"]
    same = api.report(table=str(table), case="case", by="model", metric="dice", stability=True, resamples=100,
                      stability_method=["rank-aggregate", "test-rank"], stability_cases="distinct")
    assert json.loads(json.dumps(same["stability"])) == got
    code, out, err = cli(*args, "--stability-method", "all")
    assert code == 0, err
    full = json.loads(out)
    assert full["stability"]["params"]["cases"] == "challenger"
    d = blob_data(full, method="test_then_rank")
    rows = {r["model"]: r for r in full["stability"]["rows"] if r["method"] == "test_then_rank"}
    assert d["method"] == "test_then_rank" and set(d["models"]) == set(rows)
    for m, shares in zip(d["models"], d["share"]):
        assert shares == [c / 100 for c in rows[m]["rank_counts"]]
    assert blob_data(full)["method"] == "aggregate_mean"
    assert "test_then_rank" in blob_plot(full, method="test_then_rank").axes[0].get_title()
    code, out, err = cli(*args, "--stability-method", "ranks")
    assert code == 2 and "--stability-method" in err and "Traceback" not in err
