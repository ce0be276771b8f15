"""`segscore batch` and `segscore.batch.run`: rows as the single commands', resume, failures, outputs."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from segscore.batch import run
from tests.batch.helpers import workspace, write_csv

REPO = Path(__file__).resolve().parents[2]
KEYS = ["id", "job", "family", "tags", "status", "result", "error", "inputs", "version", "seconds", "finished"]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ws")
    jobs = workspace(folder)
    return folder, jobs


def rows(out):
    return [json.loads(line) for line in (Path(out) / "results.jsonl").read_text().splitlines()]


def resolve_files(result, folder):
    if isinstance(result.get("files"), dict):
        result = dict(result, files={k: None if v is None else os.path.normpath(os.path.join(folder, v))
                                     for k, v in result["files"].items()})
    return result


def test_rows_are_the_single_commands_json(ws, cli, tmp_path, monkeypatch):
    folder, jobs = ws
    tags = {k: {"model": f"m{i}", "target": "t"} for i, k in enumerate(jobs)}
    manifest = write_csv(folder / "jobs.csv", jobs, tags)
    code, out, err = cli("batch", manifest, "--out", tmp_path / "out", "--threads", "2")
    assert (code, out) == (0, ""), err
    got = rows(tmp_path / "out")
    assert [r["id"] for r in got] != [] and sorted(r["id"] for r in got) == sorted(jobs)
    monkeypatch.chdir(folder)  # the single commands see the same relative paths
    for row in got:
        assert list(row) == KEYS
        assert row["status"] == "scored" and row["error"] is None
        assert row["tags"] == tags[row["id"]] and row["job"] == jobs[row["id"]]
        code, single, err = cli(*shlex.split(row["job"]), "--json")
        assert code == 0, err
        assert row["result"] == resolve_files(json.loads(single), folder), row["id"]
        assert row["family"] == {"curve": "curvilinear", "objects": "objects", "target": "ink", "auc": "ink",
                                 "fibers": "fibers"}[row["job"].split()[0]]
        assert all(i["size"] > 0 and i["mtime"] > 0 and "sha256" not in i for i in row["inputs"])
    auc = next(r for r in got if r["id"] == "auc")
    assert auc["result"]["files"]["labels"] == str(folder / "inklabels.zarr")  # resolved against the manifest
    store = next(i for i in auc["inputs"] if i["path"].endswith("inklabels.zarr"))
    assert store["files"] >= 2 and "zarr.json" in store["metadata"] and store["size"] > store["metadata"]["zarr.json"]
    target = next(r for r in got if r["id"] == "target")
    assert next(i for i in target["inputs"] if i["path"].endswith("targets/a"))["metadata"] == {
        "meta.json": (folder / "targets/a/meta.json").stat().st_size}


def test_results_csv_and_to_frame(ws, tmp_path):
    folder, jobs = ws
    manifest = write_csv(folder / "jobs2.csv", {k: jobs[k] for k in ("curve0", "auc")},
                         {"curve0": {"model": "a"}, "auc": {"model": "b"}})
    res = run(manifest, out=tmp_path / "out")
    header = (tmp_path / "out" / "results.csv").read_text().splitlines()[0].split(",")
    assert header[:8] == ["id", "job", "family", "status", "error", "seconds", "finished", "version"]
    assert {"tags.model", "result.dice", "result.forward.auc", "result.bootstrap.ci95.0", "result.files.labels"} \
        <= set(header)
    frame = res.to_frame()
    assert list(frame.columns) == header
    assert list(frame["id"]) == ["curve0", "auc"] and list(frame["tags.model"]) == ["a", "b"]
    assert frame.loc[1, "result.forward.auc"] == res.results["auc"]["forward"]["auc"]
    from segscore.io.frames import to_frame

    plain = to_frame([res.results["curve0"], res.results["auc"]])
    assert {"dice", "notes", "forward.auc", "bootstrap.ci95.1"} <= set(plain.columns) or "dice" in plain.columns
    assert "forward.auc" in plain.columns and "result.dice" not in plain.columns
    assert plain.loc[0, "dice"] == res.results["curve0"]["dice"]


def test_to_frame_without_pandas_is_a_clear_refusal(monkeypatch):
    from segscore.errors import ScoreError
    from segscore.io.frames import to_frame

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ScoreError, match="pip install pandas"):
        to_frame([{"a": 1}])


def test_resume_skips_scored_retries_failed_and_rescores_changed_inputs(ws, tmp_path, cli):
    folder, jobs = ws
    sub = {k: jobs[k] for k in ("curve0", "curve1", "objects")}
    sub["broken"] = "curve missing.png --gt gt.png"
    manifest = write_csv(tmp_path / "jobs.csv", {k: v.replace(" pred", f" {folder}/pred").replace(
        " truth", f" {folder}/truth").replace("--gt gt", f"--gt {folder}/gt") for k, v in sub.items()})
    out = tmp_path / "out"
    code, _, err = cli("batch", manifest, "--out", out, "--quiet")
    assert code == 2 and "1 of 4 jobs refused" in err
    first = rows(out)
    assert {r["id"]: r["status"] for r in first} == {"curve0": "scored", "curve1": "scored", "objects": "scored",
                                                      "broken": "refused"}
    assert "missing.png: no such file or folder" in next(r for r in first if r["id"] == "broken")["error"]
    # the rerun runs the refused job only
    assert cli("batch", manifest, "--out", out, "--quiet")[0] == 2
    second = rows(out)
    assert [r["id"] for r in second[len(first):]] == ["broken"]
    # the missing input appears: only that job is scored now; then nothing runs at all
    (tmp_path / "missing.png").write_bytes((folder / "pred2.png").read_bytes())
    manifest.write_text(manifest.read_text().replace("curve missing.png", f"curve {tmp_path}/missing.png"))
    assert cli("batch", manifest, "--out", out, "--quiet")[0] == 0
    third = rows(out)
    assert [(r["id"], r["status"]) for r in third[len(second):]] == [("broken", "scored")]
    assert cli("batch", manifest, "--out", out)[0] == 0 and len(rows(out)) == len(third)
    # an input that changes (size or mtime) is rescored; --hash fingerprints with sha256
    pred0 = folder / "pred0.png"
    st = pred0.stat()
    os.utime(pred0, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        assert cli("batch", manifest, "--out", out, "--hash")[0] == 0
    finally:
        os.utime(pred0, ns=(st.st_atime_ns, st.st_mtime_ns))
    fourth = rows(out)[len(third):]
    assert sorted(r["id"] for r in fourth) == sorted(sub)  # the hash is new to every fingerprint
    assert all("sha256" in i for r in fourth for i in r["inputs"])
    # --force rescores all; the latest row per id is the one in results.csv
    assert cli("batch", manifest, "--out", out, "--force", "--hash")[0] == 0
    assert len(rows(out)) == len(third) + 2 * len(sub)
    csv_rows = (out / "results.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + len(sub)
    last = {r["id"]: r["finished"] for r in rows(out)}
    assert all(last[line.split(",")[0]] in line for line in csv_rows[1:])


def test_a_crash_is_recorded_and_the_batch_goes_on(ws, tmp_path, cli, monkeypatch):
    folder, jobs = ws
    import segscore.commands.objects as objects_command

    def boom(**kw):
        raise RuntimeError("a bug\nsecond line")

    monkeypatch.setattr(objects_command, "compute", boom)
    manifest = write_csv(folder / "jobs3.csv", {k: jobs[k] for k in ("curve0", "objects", "curve1")})
    code, out, err = cli("batch", manifest, "--out", tmp_path / "out", "--threads", "1")
    assert code == 1
    assert "job objects crashed" in err and "Traceback" in err and "1 of 3 jobs crashed" in err
    got = {r["id"]: r for r in rows(tmp_path / "out")}
    assert got["objects"]["status"] == "crashed" and got["objects"]["error"] == "RuntimeError: a bug"
    assert got["objects"]["result"] is None
    assert got["curve0"]["status"] == got["curve1"]["status"] == "scored"


def test_outputs_are_written_under_the_job_folder(ws, tmp_path):
    folder, jobs = ws
    manifest = tmp_path / "jobs.jsonl"
    lines = [
        {"id": "c", "job": f"{jobs['curve0']} --json-out elsewhere/row.json --csv row.csv"},
        {"id": "p", "job": "perturb gt.png --operator break --severity 0.2 -o broken.png --info-json info.json"},
        {"id": "a", "job": f"{jobs['auc']} --slug exp1 --json-out auc.json"},
        {"id": "d", "job": "demo --bootstrap 0 --keep sample"},
    ]
    manifest.write_text("\n".join(json.dumps(x) for x in lines).replace(" gt.png", f" {folder}/gt.png")
                        .replace("pred0.png", f"{folder}/pred0.png").replace("MAP.tif", f"{folder}/MAP.tif")
                        .replace("REV.tif", f"{folder}/REV.tif").replace(" inklabels", f" {folder}/inklabels")
                        .replace(" supervision", f" {folder}/supervision"))
    res = run(manifest, out=tmp_path / "out")
    assert not res.errors, res.errors
    o = tmp_path / "out" / "outputs"
    assert json.loads((o / "c" / "row.json").read_text()) == res.results["c"]
    assert (o / "c" / "row.csv").read_text().startswith("dice,")
    assert res.results["p"]["output"] == str(o / "p" / "broken.png") and (o / "p" / "broken.png").stat().st_size
    assert json.loads((o / "p" / "info.json").read_text()) == res.results["p"]
    ledger = json.loads((o / "a" / "exp1" / "run.json").read_text())
    assert ledger["checks"][0]["argv"][:2] == ["segscore", "auc"] and ledger["checks"][0]["result"] == res.results["a"]
    assert (o / "a" / "auc.json").exists() and (o / "d" / "sample" / "seg" / "MAP.tif").exists()
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "broken.png").exists()
    # a rescored job starts from an empty folder (demo --keep refuses a folder holding other files)
    (o / "d" / "stray.txt").write_text("x")
    assert not run(manifest, out=tmp_path / "out", force=True).errors


def test_array_jobs_in_python(tmp_path):
    from segscore.api import objects as score_segmentation
    from tests.objects.helpers import synthetic_pair

    truth, pred = synthetic_pair((64, 64), n=12, seed=1)[:2]
    import dask.array as da

    jobs = [{"id": "np", "family": "objects", "args": [truth, pred], "tags": {"kind": "numpy"}},
            {"id": "dask", "family": "objects", "args": [da.from_array(truth, chunks=16),
                                                         da.from_array(pred, chunks=16)]},
            {"id": "bad", "family": "objects", "args": [truth, pred[:10]]}]
    res = run(jobs, threads=2, out=tmp_path / "out")
    want = json.loads(json.dumps(score_segmentation(truth, pred)))
    assert res.results["np"] == want and res.results["dask"] == want
    assert res.rows[0]["job"].startswith("objects(<ndarray (64, 64)") and res.rows[0]["tags"] == {"kind": "numpy"}
    assert [e["id"] for e in res.errors] == ["bad"] and "different shapes" in res.errors[0]["error"]
    assert "BatchResult(3 jobs: 2 scored" in repr(res)
    assert len(run(jobs, out=tmp_path / "out").rows) == 3 and len(rows(tmp_path / "out")) == 6  # never skipped


def test_imports_are_light_and_batch_never_imports_cli():
    code = ("import sys, segscore.batch, segscore.families, segscore.commands.auc, segscore.io.frames\n"
            "from segscore.batch import load_manifest, run\n"
            "print([m for m in ('dask', 'distributed', 'pandas', 'numba', 'zarr', 'segscore.cli') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    from tests.test_repository import _layer_of, _segscore_imports

    bad = []
    for layer, forbidden in (("batch", {"cli"}), ("commands", {"cli", "batch"})):
        for path in sorted((REPO / "segscore" / layer).rglob("*.py")):
            bad += [f"{path.name} imports {m}" for m in _segscore_imports(path) if _layer_of(m) in forbidden]
    bad += [f"families.py imports {m}" for m in _segscore_imports(REPO / "segscore" / "families.py")
            if _layer_of(m) in {"cli", "batch"}]
    bad += [f"frames.py imports {m}" for m in _segscore_imports(REPO / "segscore" / "io" / "frames.py")
            if _layer_of(m) not in {"io", "errors"}]
    assert not bad, bad


def test_the_registry_describes_every_batch_command():
    from segscore.batch.jobs import output_names
    from segscore.cli.main import ALIASES, COMMANDS as CLI
    from segscore.families import COMMANDS, FAMILIES, command

    for name, spec in COMMANDS.items():
        assert name in CLI and name in FAMILIES[spec.family].commands
        assert callable(spec.load("compute")) and callable(spec.load("row"))
        names = {o.name for o in spec.module.OPTIONS}
        assert set(spec.inputs) <= names, name
        assert set(output_names(name, spec.outputs)) == set(spec.outputs), name
        # the CLI module uses the same declarations
        import importlib

        assert importlib.import_module(CLI[name]).OPTIONS is spec.module.OPTIONS
    for alias, name in ALIASES.items():
        assert command(alias).name == name
    with pytest.raises(KeyError, match="commands:"):
        command("audit-nope")


def test_progress_line_counts_failures_and_estimates():
    import io

    from segscore.batch.runner import Progress

    stream = io.StringIO()
    p = Progress(3, stream)
    p.step("scored")
    p.step("refused")
    p.step("scored")
    text = stream.getvalue()
    assert "1/3 jobs, 0 failed" in text and "2/3 jobs, 1 failed" in text and text.endswith("\n")
    assert "elapsed, ~" in text and "left" in text
    quiet = Progress(2, None)
    quiet.step("crashed")
    assert (quiet.done, quiet.failed) == (1, 1)


def test_an_unusable_out_folder_refuses_before_any_job(ws, tmp_path, cli):
    folder, jobs = ws
    manifest = write_csv(tmp_path / "jobs.csv", {"c": jobs["curve0"].replace("pred0", f"{folder}/pred0")
                                                 .replace("gt.png", f"{folder}/gt.png")})
    (tmp_path / "file").write_text("")
    code, out, err = cli("batch", manifest, "--out", tmp_path / "file" / "out")
    assert code == 2 and "file" in err and len(err.strip().splitlines()) == 1


def test_audit_and_profile_jobs_give_the_single_commands_json(tmp_path, cli, monkeypatch):
    """audit and profile are batch commands: a job's row holds what `segscore audit|profile ... --json`
    prints (an audit re-read from its cases too), and an audit job's --csv lands in its job folder."""
    from segscore.curvilinear.masks import save_mask
    from tests.curvilinear.helpers import vessel_tree

    monkeypatch.chdir(tmp_path)  # the single commands see the manifest's relative paths
    for i in range(3):
        save_mask(vessel_tree((48, 48), seed=i, depth=3, r0=3.0), tmp_path / f"gt{i}.png")
    pred = vessel_tree((48, 48), seed=0, depth=3, r0=3.0)
    pred[20:23] = False
    save_mask(pred, tmp_path / "pred.png")
    small = "gt0.png gt1.png gt2.png --prune-px 3 --severities 0.2 --radius-scales 0.85 --boundary-fracs 0.05"
    code, _, err = cli("audit", *small.split(), "--n-boot", "20", "--include-cases", "--json-out", "cases.json",
                       "--quiet")
    assert code == 0, err
    jobs = [f"audit {small} --n-boot 20 --csv cells.csv", "audit --cases cases.json --n-boot 30",
            "profile pred.png --gt gt0.png --prune-px 3 --seeds 1"]
    res = run(jobs, out=tmp_path / "out", threads=2)
    assert not res.errors, res.errors
    for row, job in zip(res.rows, jobs):
        code, single, err = cli(*shlex.split(job.replace("cells.csv", "direct.csv")), "--json")
        assert code == 0, err
        assert row["status"] == "scored" and row["family"] == "curvilinear" and row["job"] == job
        assert row["result"] == json.loads(single), job
    assert res.rows[1]["result"]["n_boot"] == 30 and res.rows[2]["result"]["mean"]
    written = tmp_path / "out" / "outputs" / res.rows[0]["id"] / "cells.csv"
    assert written.read_text() == (tmp_path / "direct.csv").read_text() and not (tmp_path / "cells.csv").exists()


def test_a_run_on_threads_divides_its_commands_first_runs_as_the_commands_do(ws, tmp_path, monkeypatch):
    """Before the jobs, each distinct command's first run goes through the family's plan
    (``families.first_run``: two processes on an empty cache, nothing once stamped), once."""
    import segscore.families as F

    folder, jobs = ws
    asked = []
    monkeypatch.setattr(F, "first_run", lambda command: asked.append(command))
    manifest = write_csv(folder / "jobs_first.csv", {k: v for k, v in jobs.items() if v.startswith("objects")})
    result = run(manifest, out=tmp_path / "out", threads=1)
    assert asked == ["objects"]
    assert all(r["status"] == "scored" for r in result.rows)
