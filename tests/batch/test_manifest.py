"""Manifests: CSV, JSON, JSON Lines, grids; relative paths; a bad row names its line."""

from __future__ import annotations

import json
import os

import pytest

from segscore.batch import ManifestError, load_manifest
from tests.cli_checks import one_line_error


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "set"
    (d / "runs" / "m1").mkdir(parents=True)
    (d / "runs" / "m2").mkdir(parents=True)
    for m in ("m1", "m2"):
        (d / "runs" / m / "pred.png").write_bytes(b"")
    return d


def test_csv_with_tags_and_relative_paths(folder):
    (folder / "jobs.csv").write_text("id,job,model,target\n"
                                     "# a comment\n"
                                     "a,curve runs/m1/pred.png --gt gt.png --prune-px 17,m1,t\n"
                                     "\n"
                                     "b,\"objects T.tif P.tif --tolerances 1 2\",m2,t\n")
    a, b = load_manifest(folder / "jobs.csv")
    assert (a.id, a.command, a.family, a.tags) == ("a", "curve", "curvilinear", {"model": "m1", "target": "t"})
    assert a.values["pred"] == str(folder / "runs" / "m1" / "pred.png")
    assert a.values["truth"] == str(folder / "gt.png") and a.values["prune_px"] == 17
    assert a.inputs == [a.values["pred"], a.values["truth"]]
    assert a.where.endswith("jobs.csv:3")
    assert b.values["tolerances"] == [1, 2] and b.inputs == [str(folder / "T.tif"), str(folder / "P.tif")]


def test_json_list_and_jsonl(folder):
    items = [{"id": "x", "job": "fibers LABELS.npy TARGET", "tags": {"model": "m1"}, "split": "val"},
             "target P.png /abs/target", {"id": 7, "job": "columns P.npy COL --origin 3 4"}]
    (folder / "jobs.json").write_text(json.dumps(items, indent=2))
    (folder / "jobs.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")
    for name in ("jobs.json", "jobs.jsonl"):
        x, t, c = load_manifest(folder / name)
        assert x.tags == {"model": "m1", "split": "val"} and [x.values["pred"], x.values["truth"]] == [
            str(folder / "LABELS.npy"), str(folder / "TARGET")]
        assert t.id.startswith("target-") and t.values["truth"] == "/abs/target"  # absolute stays
        assert c.id == "7" and c.values["origin"] == [3, 4]
    assert load_manifest(folder / "jobs.json")[2].where.endswith("jobs.json:11")
    assert load_manifest(folder / "jobs.jsonl")[2].where.endswith("jobs.jsonl:3")


def test_grid_expands_globs_and_lists(folder):
    grid = {"template": "target {pred} {target} --seed {seed}",
            "grid": {"pred": "runs/*/pred.png", "target": ["targets/a", "targets/b"], "seed": [0]}}
    (folder / "grid.json").write_text(json.dumps(grid))
    jobs = load_manifest(folder / "grid.json")
    assert [j.id for j in jobs] == ["m1_a_0", "m1_b_0", "m2_a_0", "m2_b_0"]
    assert jobs[1].job == "target runs/m1/pred.png targets/b --seed 0"
    assert jobs[1].tags == {"pred": "runs/m1/pred.png", "target": "targets/b", "seed": 0}
    assert jobs[1].values["pred"] == str(folder / "runs/m1/pred.png")
    grid["id"] = "{target}-{pred}"
    (folder / "grid.json").write_text(json.dumps(grid))
    assert load_manifest(folder / "grid.json")[0].id == "a-m1"


@pytest.mark.parametrize(("name", "text", "where", "what"), [
    ("j.csv", "id,job\na,curve P.png --gt G.png\nb,curve P.png\n", "j.csv:3", "required: --gt"),
    ("j.csv", "id,job\na,frobnicate x\n", "j.csv:2", "'frobnicate' is not a batch command"),
    ("j.csv", "id,job\na,objects T P --iou 2\n", "j.csv:2", "--iou"),
    ("j.csv", "id,job\na,curve P --gt G\na,curve Q --gt G\n", "j.csv:3", "given twice (first on line 2)"),
    ("j.csv", "id,job\na/b,curve P --gt G\n", "j.csv:2", "cannot name a folder"),
    ("j.csv", "id,cmd\na,curve P --gt G\n", "j.csv:1", "no `job` column"),
    ("j.csv", "id,job\na,\"curve P --gt 'G\"\n", "j.csv:2", "close its quotes"),
    ("j.json", '[\n  {"id": "a", "job": "curve P --gt G"},\n  {"id": "b"}\n]', "j.json:3", "has no job"),
    ("j.json", '[\n  "curve P --gt G",\n  {"id": "b", \n]', "j.json:3", "not valid JSON"),
    ("j.jsonl", '{"id": "a", "job": "curve P --gt G"}\n\n{"id": "b", "job": "perturb M"}\n', "j.jsonl:3",
     "required"),
    ("j.json", '{\n "template": "target {pred} T",\n "grid": {"pred": "nothing/*.png"}}', "j.json:2",
     "matches nothing"),
    ("j.json", '{"template": "target {pred} {tgt}", "grid": {"pred": ["a"]}}', "j.json:1", "{tgt}"),
    ("j.json", '[\n  {"id": "a", "job": "check --window-px 64 --scan-um 9", "x": NaN}\n]', "j.json:2",
     "tag 'x' is nan"),
    ("j.jsonl", '{"id": "a", "job": "check --window-px 64 --scan-um 9", "tags": {"y": Infinity}}\n', "j.jsonl:1",
     "tag 'y' is inf"),
])
def test_a_bad_row_names_its_line(tmp_path, cli, name, text, where, what):
    (tmp_path / name).write_text(text)
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / name)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / where}: ") and what in message and "; " in message, message
    code, out, err = cli("batch", tmp_path / name, "--out", tmp_path / "out")
    one_line_error(code, out, err, f"{where}: ")
    assert err.startswith("segscore batch: ")
    assert not (tmp_path / "out").exists()  # nothing ran


def test_missing_manifest_is_one_line(cli, tmp_path):
    one_line_error(*cli("batch", tmp_path / "nope.csv", "--out", tmp_path / "o"), "nope.csv: no such manifest")
    one_line_error(*cli("batch", tmp_path / "nope.csv"), "--out")


def test_paths_resolve_against_the_manifest_not_the_working_folder(folder, tmp_path, monkeypatch):
    (folder / "jobs.csv").write_text("id,job\na,curve p.png --gt ../g.png --json-out r.json\n")
    monkeypatch.chdir(tmp_path)
    (job,) = load_manifest(os.path.relpath(folder / "jobs.csv"))
    assert job.values["pred"] == str(folder / "p.png") and job.values["truth"] == str(tmp_path / "g.png")
    assert job.values["json_out"] == str(folder / "r.json") and job.outputs == {"--json-out": "json_out"}
