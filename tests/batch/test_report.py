"""`segscore report` and `segscore.batch.report`: leaderboards from a real batch results folder."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from segscore.batch import report, run
from tests.batch.helpers import workspace, write_csv
from tests.cli_checks import one_line_error

TARGET_HEADER = ["val_f1", "val_f1 [all_positive]", "val_f1 [constant_0_5]", "val_f1 [uniform_random]",
                 "ap_prevalence_lift", "ap_prevalence_lift [all_positive]", "ap_prevalence_lift [constant_0_5]",
                 "ap_prevalence_lift [uniform_random]",
                 "roc_auc", "roc_auc [all_positive]", "roc_auc [constant_0_5]", "roc_auc [uniform_random]"]
FIBERS_HEADER = ["erl", "erl [connected_components]", "erl [oracle]", "erl_merge_penalized",
                 "erl_merge_penalized [connected_components]", "erl_merge_penalized [oracle]"]
AUC_HEADER = ["map_auc", "control_auc", "gap", "ci95_lo", "ci95_hi"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A results folder of real jobs: two models on an ink target, auc, objects, curves, fibers,
    columns, and one refused job; tags model and target."""
    from tests.columns.helpers import make_column_target, reading_prediction
    from tests.targets.helpers import reading_map, write_png

    folder = tmp_path_factory.mktemp("report")
    ws = workspace(folder)
    ink = np.asarray(__import__("PIL.Image", fromlist=["Image"]).open(folder / "targets/a/gt_ink.png")) >= 128
    write_png(folder / "map2.png", reading_map(ink, seed=7, signal=0.15))
    np.save(folder / "empty.npy", np.zeros_like(np.load(folder / "truth.npy")))
    make_column_target(folder / "coltgt")
    np.save(folder / "colp.npy", reading_prediction().astype(np.float32))
    jobs = {
        "m1-a": (ws["target"], "m1", "a"),
        "m2-a": ("target map2.png targets/a --seed 3", "m2", "a"),
        "m1-seg": (ws["auc"], "m1", "seg"),
        "m2-seg": ("auc REV.tif --labels inklabels.zarr --mask supervision.zarr", "m2", "seg"),  # no control
        "m1-fib": (ws["fibers"], "m1", "fib"),
        "m1-obj": (ws["objects"], "m1", "obj"),
        "m2-obj": ("objects truth.npy empty.npy", "m2", "obj"),  # nothing predicted: null precision
        "m1-ves-a": (ws["curve0"], "m1", "ves-a"),
        "m1-ves-b": (ws["curve1"], "m1", "ves-b"),
        "m2-ves-a": (ws["curve2"], "m2", "ves-a"),
        "m1-col": ("columns colp.npy coltgt", "m1", "col"),
        "m3-ves-a": ("curve missing.png --gt gt.png", "m3", "ves-a"),
    }
    manifest = write_csv(folder / "jobs.csv", {k: v[0] for k, v in jobs.items()},
                         {k: {"model": v[1], "target": v[2]} for k, v in jobs.items()})
    res = run(manifest, out=folder / "out", threads=2)
    assert res.counts() == {"scored": 11, "refused": 1, "crashed": 0}, res.errors
    return folder / "out", res


def latest(out):
    rows = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["id"]] = row
    return rows


def tables(markdown):
    """``{command: (header, rows)}`` of the report's markdown tables, and its other lines."""
    out, command, other = {}, None, []
    for line in markdown.splitlines():
        if line.startswith("## "):
            command = line[3:].split(" (", 1)[0]
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if command not in out:
                out[command] = (cells, [])
            elif not set(line) <= set("|-: "):
                out[command][1].append(cells)
        else:
            other.append(line)
    return out, other


def text(v):
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def by_key(rows, *keys):
    return {tuple(r[:len(keys)]): r for r in rows}


def test_markdown_tables_hold_the_results_fields_beside_their_floors(batch, cli):
    out, _ = batch
    results = {k: r["result"] for k, r in latest(out).items()}
    code, md, err = cli("report", out)
    assert code == 0, err
    got, _ = tables(md)
    assert list(got) == ["auc", "target", "columns", "objects", "fibers", "curve"]  # the registry's order

    header, rows = got["target"]
    assert header == ["model", "target", *TARGET_HEADER]
    assert [r[:2] for r in rows] == [["m1", "a"], ["m2", "a"]]
    for row, job in zip(rows, ("m1-a", "m2-a")):
        r = results[job]
        want = []
        for key in ("val_f1", "ap_prevalence_lift", "roc_auc"):
            want.append(text(r["metrics"][key]))
            want += [text(r["floors"][fl][key]) for fl in ("all_positive", "constant_0_5", "uniform_random")]
        assert row[2:] == want
    assert rows[0][2] != rows[1][2]  # two models, two F1s

    header, rows = got["fibers"]
    assert header == ["model", "target", *FIBERS_HEADER]
    f = results["m1-fib"]
    assert rows == [["m1", "fib"] + [text(v) for key in ("erl", "erl_merge_penalized") for v in (
        f["metrics"][key], f["floors"]["floor_connected_components"][key], f["oracle"][key])]]

    header, rows = got["auc"]
    assert header == ["model", "target", *AUC_HEADER]
    a = results["m1-seg"]
    gap = a["forward"]["auc"] - a["control"]["auc"]
    assert rows[0] == ["m1", "seg", text(a["forward"]["auc"]), text(a["control"]["auc"]), f"{gap:.4f}",
                       text(a["bootstrap"]["ci95"][0]), text(a["bootstrap"]["ci95"][1])]
    # the map without a control: its control and gap are null (said why), no interval was drawn
    assert rows[1] == ["m2", "seg", text(results["m2-seg"]["forward"]["auc"]), "—", "—", "", ""]

    header, rows = got["objects"]
    assert header[:2] == ["model", "target"] and {"f1", "precision", "recall", "ap_0.5", "ap_mean"} <= set(header)
    for row, job in zip(rows, ("m1-obj", "m2-obj")):
        assert row[header.index("ap_0.5")] == text(results[job]["ap_0.5"])
        assert row[header.index("f1")] == text(results[job]["f1"])
    assert rows[1][header.index("precision")] == "—"

    header, rows = got["curve"]
    assert header[:4] == ["model", "target", "dice", "cldice"]
    assert [r[:2] for r in rows] == [["m1", "ves-a"], ["m1", "ves-b"], ["m2", "ves-a"]]  # grouped by model
    assert [r[2] for r in rows] == [text(results[j]["dice"]) for j in ("m1-ves-a", "m1-ves-b", "m2-ves-a")]

    header, rows = got["columns"]
    c = results["m1-col"]
    assert header[2:6] == ["col_gutter_auc", "col_gutter_auc [constant_0_5]", "col_gutter_auc [papyrus_mask]",
                           "col_gutter_auc [uniform_random]"]
    assert rows[0][2:6] == [text(c["metrics"]["col_gutter_auc"])] + [
        text(c["floors"][fl]["col_gutter_auc"]) for fl in ("constant_0_5", "papyrus_mask", "uniform_random")]


def test_null_values_print_a_dash_and_their_reasons(batch, cli):
    out, _ = batch
    code, md, err = cli("report", out)
    assert code == 0
    assert "- m2 / seg: control_auc is null: no --control map given" in md
    assert "- m2 / obj: precision is null: no predicted objects" in md  # the result's own note
    code, js, _ = cli("report", out, "--json")
    data = json.loads(js)
    objects = next(t for t in data["tables"] if t["command"] == "objects")
    m2 = next(r for r in objects["rows"] if r["id"] == "m2-obj")
    assert m2["values"]["precision"] is None and m2["notes"]["precision"].startswith("no predicted objects")
    assert latest(out)["m2-obj"]["result"]["notes"]["precision"] == m2["notes"]["precision"]
    m1 = next(r for r in objects["rows"] if r["id"] == "m1-obj")
    assert m1["notes"] == {} and m1["values"]["precision"] == latest(out)["m1-obj"]["result"]["precision"]


def test_refused_and_crashed_rows_are_listed_and_counted(batch, cli, tmp_path):
    out, _ = batch
    code, md, err = cli("report", out)
    assert code == 0
    assert "12 jobs: 11 scored, 1 refused, 0 crashed" in md
    assert "## not scored: 1 of 12 jobs (1 refused, 0 crashed)" in md
    error = latest(out)["m3-ves-a"]["error"]
    assert "missing.png: no such file or folder" in error
    assert f"- m3-ves-a (curve, refused; model=m3, target=ves-a): {error}" in md
    assert err.strip().splitlines() == [
        "segscore report: warning: 1 of 12 jobs did not score (1 refused, 0 crashed); listed below the tables "
        "with their errors"]
    # a later row of an id wins: m1-fib crashed in a rerun, m3-ves-a scored
    from segscore.batch.store import ResultsStore

    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    rows = latest(out)
    store = ResultsStore(copy)
    store.append(dict(rows["m1-fib"], status="crashed", result=None, error="RuntimeError: boom\nTraceback..."))
    store.append(dict(rows["m2-ves-a"], id="m3-ves-a", tags={"model": "m3", "target": "ves-a"}))
    rep = report(copy)
    assert rep.counts == {"jobs": 12, "scored": 11, "refused": 0, "crashed": 1}
    assert [(f["id"], f["status"], f["error"]) for f in rep.failed] == [("m1-fib", "crashed", "RuntimeError: boom")]
    assert "fibers" not in [t.command for t in rep.tables]
    curve = rep.table("curve")
    assert [r["id"] for r in curve.rows] == ["m1-ves-a", "m1-ves-b", "m2-ves-a", "m3-ves-a"]


def test_by_chooses_the_row_keys_and_an_unknown_column_is_one_line(batch, cli):
    out, _ = batch
    code, md, err = cli("report", out, "--by", "model")
    assert code == 0, err
    got, _ = tables(md)
    assert got["target"][0][:2] == ["model", "val_f1"]  # one row per model: the model alone keys it
    assert [r[0] for r in got["target"][1]] == ["m1", "m2"]
    assert got["curve"][0][:3] == ["model", "target", "dice"]  # m1 has two curves: the target tells them apart
    code, md, _ = cli("report", out, "--by", "target,model")
    got, _ = tables(md)
    assert got["curve"][0][:2] == ["target", "model"]
    assert [r[:2] for r in got["curve"][1]] == [["ves-a", "m1"], ["ves-a", "m2"], ["ves-b", "m1"]]
    one_line_error(*cli("report", out, "--by", "model,checkpoint"), "--by checkpoint")
    code, _, err = cli("report", out, "--by", "checkpoint")
    assert "tag columns: model, target" in err
    with pytest.raises(ValueError, match="checkpoint"):
        report(out, by=["checkpoint"])


def test_csv_round_trips(batch, cli, tmp_path):
    out, _ = batch
    path = tmp_path / "board.csv"
    code, _, err = cli("report", out, "--csv", path)
    assert code == 0, err
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    assert header[:7] == ["command", "family", "model", "target", "id", "status", "error"]
    assert header[-1] == "notes" and set(TARGET_HEADER + FIBERS_HEADER + AUC_HEADER) <= set(header)
    rep = report(out)
    assert [r["id"] for r in rows] == [r["id"] for r in rep.rows] + ["m3-ves-a"]
    for want, got in zip(rep.rows, rows):
        assert (got["command"], got["model"], got["target"], got["status"]) == (
            want["command"], want["tags"]["model"], want["tags"]["target"], "scored")
        for name, value in want["values"].items():
            if value is None:
                assert got[name] == "" and f"{name}: {want['notes'][name]}" in got["notes"]
            elif isinstance(value, bool):
                assert got[name] == str(value)
            else:
                assert float(got[name]) == value, (want["id"], name)
    failed = rows[-1]
    assert failed["status"] == "refused" and "missing.png" in failed["error"] and failed["val_f1"] == ""
    assert rep.to_csv() == path.read_text()


def test_json_is_the_api_report(batch, cli):
    out, res = batch
    code, js, _ = cli("report", out, "--json", "--by", "model,target")
    assert code == 0
    data = json.loads(js)
    assert data == json.loads(report(out, by="model,target").to_json())
    assert data["counts"] == {"jobs": 12, "scored": 11, "refused": 1, "crashed": 0}
    target = next(t for t in data["tables"] if t["command"] == "target")
    cols = {c["name"]: c for c in target["columns"]}
    assert cols["val_f1 [uniform_random]"] == {"name": "val_f1 [uniform_random]", "role": "floor", "of": "val_f1",
                                               "ref": "uniform_random"}
    # the API takes a BatchResult (or its rows) as well as the folder
    from_result = report(res)
    assert [r["values"] for r in from_result.rows] == [r["values"] for r in report(out).rows]


def test_bars_hold_each_models_headline_and_its_floors(batch):
    out, _ = batch
    rep = report(out)
    rows = latest(out)
    bars = rep.bars("target")
    assert [b["label"] for b in bars] == ["m1 / a", "m2 / a"]
    for b, job in zip(bars, ("m1-a", "m2-a")):
        r = rows[job]["result"]
        assert b["headline"] == "val_f1" and b["value"] == r["metrics"]["val_f1"]
        assert b["references"] == {fl: r["floors"][fl]["val_f1"] for fl in ("all_positive", "constant_0_5",
                                                                              "uniform_random")}
    fib = rep.bars("fibers", "erl_merge_penalized")
    f = rows["m1-fib"]["result"]
    assert fib[0]["references"] == {"connected_components": f["floors"]["floor_connected_components"][
        "erl_merge_penalized"], "oracle": f["oracle"]["erl_merge_penalized"]}
    assert fib[0]["roles"] == {"connected_components": "floor", "oracle": "oracle"}
    assert rep.bars("auc")[0]["references"] == {"control": rows["m1-seg"]["result"]["control"]["auc"]}
    with pytest.raises(KeyError, match="headlines: map_auc"):
        rep.bars("auc", "gap")


def test_bad_folders_and_damaged_lines_are_one_line_errors(batch, cli, tmp_path):
    out, _ = batch
    one_line_error(*cli("report", tmp_path / "nowhere"), "nowhere: no such results folder")
    (tmp_path / "empty").mkdir()
    one_line_error(*cli("report", tmp_path / "empty"), "results.jsonl: no results.jsonl in this folder")
    copy = tmp_path / "damaged"
    shutil.copytree(out, copy)
    lines = (copy / "results.jsonl").read_text().splitlines()
    lines.insert(3, lines[3][: len(lines[3]) // 2])  # a torn line in the middle
    (copy / "results.jsonl").write_text("\n".join(lines) + "\n")
    code, stdout, err = cli("report", copy)  # a torn line (a killed batch): read past, as the store does
    assert code == 0 and "read past 1 torn line(s) (line 4)" in err and str(copy / "results.jsonl") in err
    assert report(copy).skipped_lines == [4] and report(copy).counts == report(out).counts
    lines[3] = '{"id": 3, "status": "scored"}'  # JSON, but no batch row: an edited file is refused
    (copy / "results.jsonl").write_text("\n".join(lines) + "\n")
    code, stdout, err = cli("report", copy)
    one_line_error(code, stdout, err, f"{copy / 'results.jsonl'}: line 4 is damaged")
    assert "delete that line" in err
    (copy / "results.jsonl").write_text('{"id": "x", "status": "done"}\n')
    one_line_error(*cli("report", copy), "line 1 is damaged: status 'done'")


def test_every_command_has_a_loadable_headline():
    from segscore.batch import report as report_function
    from segscore.batch.report import Cell, ROLES
    from segscore.commands._headline import scalars_headline
    from segscore.families import COMMANDS, headline

    assert callable(report_function) and report_function is report
    named = {}
    for c in COMMANDS.values():
        fn = headline(c)
        assert callable(fn), c.name
        cells = fn({"notes": {}})  # an empty result: every cell null with a reason, never a crash
        assert all(isinstance(x, Cell) and x.role in ROLES and x.value is None and x.note for x in cells), c.name
        named[c.name] = fn
    assert named["fibers-target"] is scalars_headline and named["target"] is not scalars_headline
    assert named["demo"] is named["auc"]
    cells = scalars_headline({"a": 1, "b": "text", "metrics": {"c": 0.5, "d": None}, "notes": {"metrics.d": "why"}})
    assert [(x.name, x.value, x.path) for x in cells] == [("a", 1, "a"), ("c", 0.5, "metrics.c"),
                                                          ("d", None, "metrics.d")]


def test_the_report_function_survives_importing_its_module_and_stays_light():
    code = ("import importlib, sys, types\n"
            "module = importlib.import_module('segscore.batch.report')  # as the registry loads it\n"
            "import segscore.batch as b\n"
            "print(isinstance(b.report, types.FunctionType), b.report is module.report,"
            " [m for m in ('pandas', 'matplotlib', 'dask', 'zarr', 'numba') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "[]"]


def test_report_plot_draws_the_leaderboard_of_a_headline(batch, cli, tmp_path):
    out, _ = batch
    rows = latest(out)
    code, text, err = cli("report", out, "--plot", tmp_path / "board.svg", "--plot-of", "target:roc_auc")
    assert code == 0, err
    svg = (tmp_path / "board.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "target: roc_auc" in svg
    from segscore.cli.report import leaderboard_rows

    drawn, title = leaderboard_rows(report(out), "target:roc_auc")
    assert title == "target: roc_auc" and [r["model"] for r in drawn] == ["m1 / a", "m2 / a"]
    assert drawn[0]["value"] == rows["m1-a"]["result"]["metrics"]["roc_auc"]
    assert set(drawn[0]["floors"]) == {"all_positive", "constant_0_5", "uniform_random"}
    code, _, err = cli("report", out, "--plot", tmp_path / "x.png", "--plot-of", "target:nothing")
    assert code == 2 and err.count("\n") == 1 and "--plot-of target:nothing" in err
    assert not (tmp_path / "x.png").exists()


def test_the_leaderboard_figure_takes_what_report_returns(batch):
    """``figures.leaderboard`` draws ``report(folder)``, its ``bars(...)`` rows and the CLI's rows alike."""
    from segscore import figures
    from segscore.cli.report import leaderboard_rows

    out, _ = batch
    rows = latest(out)
    rep = report(out)
    bars = rep.bars("target")
    drawn = [figures.leaderboard(bars), figures.leaderboard(rep, of="target"),
             figures.leaderboard(leaderboard_rows(rep, "target")[0])]
    for fig in drawn:
        (ax,) = fig.axes
        assert ax.get_ylabel() == "val_f1" and ax.get_title() == "target: val_f1 per model beside its floors"
        for i, job in enumerate(("m1-a", "m2-a")):
            r = rows[job]["result"]
            assert [p.get_height() for p in ax.patches if p.get_gid() == f"value:{i}"] == [r["metrics"]["val_f1"]]
            for fl in ("all_positive", "constant_0_5", "uniform_random"):
                got = [p.get_height() for p in ax.patches if p.get_gid() == f"floor:{i}:{fl}"]
                assert got == ([r["floors"][fl]["val_f1"]] if r["floors"][fl]["val_f1"] is not None else [])
        assert [t.get_text() for t in ax.get_xticklabels()] == ["m1 / a", "m2 / a"]
    (auc_ax,) = figures.leaderboard(rep, of="auc").axes
    assert auc_ax.get_ylabel() == "map_auc" and auc_ax.get_title() == "auc: map_auc per model beside its control"
    (fib_ax,) = figures.leaderboard(rep.bars("fibers", "erl_merge_penalized")).axes
    assert fib_ax.get_title() == "fibers: erl_merge_penalized per model beside its floors and oracle"
    assert [t.get_text() for t in fib_ax.get_legend().get_texts()][1:] == ["floor connected_components", "oracle"]
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match="headlines: map_auc"):
        figures.leaderboard(rep, of="auc:gap")
