"""segscore.api: one typed function per scoring command, equal to the command's ``--json``.

Every subpackage is imported first (``segscore.objects``, ``segscore.fibers``, ``segscore.columns``
and ``segscore.batch`` are then bound to the subpackages, as in a user's session), then every
function is called with the paths of one valid invocation of each command (tests/fuzz/corpus.py),
with argparse's parsing made to raise (the API never parses command-line words), and compared
with what ``segscore CMD ... --json`` prints for the same inputs, then with the inputs given as
arrays (NumPy, zarr, dask), where only the names of the inputs may differ. (Every golden case
is scored through the API too: tests/test_golden.py.)
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import segscore
from segscore.errors import ScoreError

REPO = Path(__file__).resolve().parents[1]


def _import_everything():
    for m in pkgutil.walk_packages(segscore.__path__, "segscore."):
        if m.name.endswith("__main__"):
            continue
        importlib.import_module(m.name)


_import_everything()
from segscore import api  # noqa: E402  (after the subpackages, on purpose)
from segscore.io.results import Result  # noqa: E402


@pytest.fixture(scope="module")
def p(tmp_path_factory):
    from tests.fuzz.corpus import build

    return build(tmp_path_factory.mktemp("api"))


def cli_json(argv) -> dict:
    from segscore.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*map(str, argv), "--json"])
    assert code in (0, 3), (argv, code)
    return json.loads(out.getvalue())


def plain(result) -> dict:
    return json.loads(json.dumps(result))


AUDIT = dict(severities=[0.2], radius_scales="0.85", boundary_fracs=(0.05,), n_boot=20, no_redraw_floor=True)


def calls(p, out: Path):
    """command -> (api call with paths, the same command line)."""
    s = str
    cards = Path(p["cards"])
    return {
        "auc": (lambda: api.auc(p["labels"], p["map"], mask=p["mask"], control=p["rev"]),
                ["auc", p["map"], "--labels", p["labels"], "--mask", p["mask"], "--control", p["rev"]]),
        "target": (lambda: api.target(truth=p["ink_target"], pred=p["ink_pred"], no_floors=True),
                   ["target", p["ink_pred"], p["ink_target"], "--no-floors"]),
        "placement": (lambda: api.placement(p["ink_target"], p["ink_pred"], radius=64),
                      ["placement", p["ink_pred"], p["ink_target"], "--radius", "64"]),
        "columns": (lambda: api.columns(p["col_target"], p["col_pred"], no_floors=True, origin=(0, 0)),
                    ["columns", p["col_pred"], p["col_target"], "--no-floors", "--origin", "0", "0"]),
        "check": (lambda: api.check(window_px=64, scan_um=7.91, regions_json=p["regions"]),
                  ["check", "--window-px", "64", "--scan-um", "7.91", "--regions-json", p["regions"]]),
        "objects": (lambda: api.objects(p["truth"], p["objpred"], iou=0.6, tolerances=[1, 2], tile_rows=7),
                    ["objects", p["truth"], p["objpred"], "--iou", "0.6", "--tolerances", "1", "2",
                     "--tile-rows", "7"]),
        "holdout": (lambda: api.holdout(p["manifest"], p["preds"]),
                    ["holdout", p["manifest"], "--predictions", p["preds"]]),
        "curve": (lambda: api.curve(truth=p["gt"], pred=p["pred"], prune_px=4),
                  ["curve", p["pred"], "--gt", p["gt"], "--prune-px", "4"]),
        "perturb": (lambda: api.perturb(p["gt_npy"], operator="break", severity=0.2, output=out / "api.npy"),
                    ["perturb", p["gt_npy"], "--operator", "break", "--severity", "0.2", "-o", out / "api.npy"]),
        "fibers": (lambda: api.fibers(p["fiber_target"], p["fiber_labels"]),
                   ["fibers", p["fiber_labels"], p["fiber_target"]]),
        "fibers-aggregate": (lambda: api.fibers_aggregate([cards / "card1.json", cards / "card2.json"]),
                             ["fibers-aggregate", cards / "card1.json", cards / "card2.json"]),
        "audit": (lambda: api.audit([p["gt"], p["gt_npy"]], **AUDIT),
                  ["audit", p["gt"], p["gt_npy"], "--severities", "0.2", "--radius-scales", "0.85",
                   "--boundary-fracs", "0.05", "--n-boot", "20", "--no-redraw-floor"]),
        "profile": (lambda: api.profile(p["gt"], p["pred"], seeds=1),
                    ["profile", p["pred"], "--gt", p["gt"], "--seeds", "1"]),
    }


def test_every_scoring_command_has_a_function():
    from segscore.families import COMMANDS

    assert set(api.COMMANDS) == set(COMMANDS)  # every batch command, audit and profile and surfaces among them
    inputs = {"check": [], "fibers-aggregate": ["cards"], "fibers-target": ["nml", "mask"], "demo": [],
              "perturb": ["mask"], "holdout": ["manifest", "predictions"], "audit": ["masks"]}
    for name, fn in api.COMMANDS.items():
        params = list(inspect.signature(fn).parameters.values())
        names = [q.name for q in params if q.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        assert names == inputs.get(name, ["truth", "pred"]), name  # the truth first, as scikit-learn
        rest = [q for q in params if q.name not in names]
        assert rest and all(q.kind is inspect.Parameter.KEYWORD_ONLY for q in rest), name  # options keyword-only
        assert not any(q.kind is inspect.Parameter.VAR_KEYWORD for q in params), name  # real parameters
        assert fn.__doc__ and f"segscore {name}" in fn.__doc__  # the command line it mirrors
        for q in rest:  # each option is in the docstring
            assert f"\n{q.name}" in fn.__doc__, (name, q.name)
    sig = inspect.signature(api.objects)
    assert sig.parameters["iou"].default == 0.5 and sig.parameters["tolerances"].default == (1, 2, 3)
    assert sig.parameters["executor"].default is None and "executor" not in inspect.signature(api.curve).parameters


def test_one_declaration_serves_the_cli_the_api_and_batch():
    """The CLI's options, the API's keywords and a batch job's are the same declarations."""
    import argparse

    from segscore.commands._declare import add_to_parser
    from segscore.families import COMMANDS

    for name, spec in COMMANDS.items():
        module = spec.module
        declared = [o.name for o in module.OPTIONS]
        assert len(declared) == len(set(declared)), name  # no option declared twice
        sig = inspect.signature(api.COMMANDS[name])
        assert set(sig.parameters) - {"progress"} == {o.name for o in module.OPTIONS if o.where != "cli"}, name
        p = argparse.ArgumentParser(add_help=False)
        add_to_parser(p, module.OPTIONS)
        usage = p.format_usage()
        for o in module.OPTIONS:
            for flag in o.flags:
                assert flag in p.format_help(), (name, flag)
        if "truth" in sig.parameters and name != "fibers":  # the usage line names the roles
            assert "TRUTH" in usage and "PRED" in usage, (name, usage)
        assert set(spec.inputs) <= set(declared) | {"truth", "pred"}, name


def test_the_api_never_parses_command_line_words(p, tmp_path, monkeypatch):
    import argparse

    def refuse(*a, **k):
        raise AssertionError("the API parsed command-line words")

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", refuse)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", refuse)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_intermixed_args", refuse)
    for command, (call, _) in calls(p, tmp_path).items():
        assert isinstance(call(), Result), command
    rng = np.random.default_rng(3)
    truth = np.zeros((8, 10, 12), np.uint8)
    truth[3:6, 2:8, 2:10] = 1
    pred = truth.copy()
    pred[rng.random(pred.shape) < 0.05] ^= 1
    assert api.surfaces(truth, pred, topo_tiles=[1, 1, 1])["leaderboard"] is not None
    prepared = api.prepare_surfaces(truth, topo_tiles=[1, 1, 1])
    assert api.surfaces(prepared, pred, topo_tiles=[1, 1, 1])["leaderboard"] is not None
    assert api.fibers_target(p["nml"], p["fiber_mask"], out=tmp_path / "built")["notes"] is not None
    assert "forward" in api.demo(bootstrap=0, keep=tmp_path / "demo")
    table = tmp_path / "suite.csv"
    table.write_text("case,model,dice\n" + "".join(f"c{i},{m},{0.5 + 0.05 * i + (0.1 if m == 'a' else 0)}\n"
                                                   for i in range(5) for m in "ab"))
    stats = api.report(table=table, case="case", by="model", metric="dice", intervals=True, resamples=50)
    assert {r["model"] for r in stats["intervals"]["rows"]} == {"a", "b"}
    called = set(calls(p, tmp_path)) | {"surfaces", "fibers-target", "demo"}
    assert called == set(api.COMMANDS)  # every function of segscore.api, and report and prepare_surfaces above
    assert api.warm(["report"], processes=1)["families"] == []  # warm: tests/test_warmup.py
    assert set(api.__all__) == {n.replace("-", "_") for n in api.COMMANDS} | {"COMMANDS", "run_command", "report",
                                                                              "prepare_surfaces", "warm"}


def test_the_older_functions_warn_and_segscore_never_calls_them(p, tmp_path):
    """Each older per-family function still works at its old path and warns FutureWarning naming
    the segscore.api call; the API, the demo, the warm-ups and a batch never trigger one (warnings
    are errors)."""
    import warnings

    from segscore.columns.score import score_columns
    from segscore.curvilinear.scoring import score
    from segscore.fibers.card import score_fibers
    from segscore.ink.auc import auc_scores, score_array, score_files
    from segscore.ink.placement import probe_target
    from segscore.ink.targets import score_target
    from segscore.objects.holdout import score_holdout, score_holdout_files
    from segscore.objects.metrics import score_segmentation
    from segscore.io.readers import read_image

    t = read_image(p["truth"])
    old = [
        (lambda: score_files(p["map"], p["labels"], p["mask"]), "segscore.api.auc"),
        (lambda: score_array(np.arange(16.0).reshape(4, 4), np.eye(4, dtype=bool), np.ones((4, 4), bool)),
         "segscore.api.auc"),
        (lambda: auc_scores(np.array([3, 4]), np.array([1, 2])), "segscore.api.auc"),
        (lambda: score_target(p["ink_pred"], p["ink_target"], floors=False), "segscore.api.target"),
        (lambda: probe_target(p["ink_pred"], p["ink_target"], radius=16), "segscore.api.placement"),
        (lambda: score_columns(p["col_pred"], p["col_target"], floors=False), "segscore.api.columns"),
        (lambda: score_segmentation(t, t), "segscore.api.objects"),
        (lambda: score_holdout([(t, t)], name="n", version="1"), "segscore.api.holdout"),
        (lambda: score_holdout_files(p["manifest"], p["preds"]), "segscore.api.holdout"),
        (lambda: score_fibers(p["fiber_target"], p["fiber_labels"]), "segscore.api.fibers"),
        (lambda: score(read_image(p["gt"]) > 0, read_image(p["pred"]) > 0), "segscore.api.curve"),
    ]
    for call, new in old:
        with pytest.warns(FutureWarning, match=re.escape(new)):
            assert call() is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for command, (call, _) in calls(p, tmp_path).items():
            call()
        api.demo(bootstrap=0)
        segscore.warm()  # every family's warm-up (what a batch runs before its jobs)
        from segscore.batch import run

        res = run(["objects {} {}".format(p["truth"], p["objpred"]),
                   {"family": "objects", "args": [t, t], "id": "arrays"},
                   {"family": "curvilinear", "args": [p["gt"], p["pred"]], "id": "curve"}], threads=1)
        assert not res.errors, res.errors


def test_subpackages_keep_their_names_and_free_names_are_re_exported():
    import types

    for name in ("objects", "fibers", "columns", "batch"):
        assert isinstance(getattr(segscore, name), types.ModuleType), name
    for name in ("auc", "target", "curve", "holdout", "audit", "profile", "perturb", "check", "placement",
                 "fibers_aggregate", "surfaces"):
        assert getattr(segscore, name) is getattr(api, name), name


def test_import_segscore_api_is_light():
    code = ("import sys, segscore, segscore.api; f = segscore.curve; "
            "print([m for m in ('dask', 'zarr', 'matplotlib', 'pandas', 'numba', 'scipy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("command", ["auc", "target", "placement", "columns", "check", "objects", "holdout", "curve",
                                     "perturb", "fibers", "fibers-aggregate", "audit", "profile"])
def test_paths_give_the_cli_json(p, tmp_path, command):
    call, argv = calls(p, tmp_path)[command]
    result = call()
    assert isinstance(result, Result)
    if command == "perturb":  # the CLI writes its own copy, the same mask
        argv[-1] = tmp_path / "cli.npy"
        expected = cli_json(argv)
        assert np.array_equal(np.load(tmp_path / "api.npy"), np.load(tmp_path / "cli.npy"))
        expected["output"] = str(tmp_path / "api.npy")
    else:
        expected = cli_json(argv)
    assert plain(result) == expected


def _names_aside(a: dict, b: dict) -> list:
    """The flattened fields where ``a`` and ``b`` differ, except those naming an input
    (``<array>`` and the like on the array side)."""
    from segscore.io.results import flatten

    fa, fb = flatten(plain(a)), flatten(plain(b))
    assert set(fa) == set(fb)
    return [k for k in fa if fa[k] != fb[k] and not (isinstance(fb[k], str) and "<" in fb[k])]


def test_arrays_give_what_paths_give(p, tmp_path):
    import dask.array as da
    import tifffile
    import zarr

    from segscore.io.readers import read_image

    def z(key):
        return zarr.open_array(str(p[key]) + "/2", mode="r")

    pairs = {
        "auc": (api.auc(p["labels"], p["map"], mask=p["mask"], control=p["rev"]),
                api.auc(z("labels"), da.from_array(tifffile.imread(p["map"]), chunks=16), mask=z("mask"),
                        control=tifffile.imread(p["rev"]))),
        "target": (api.target(p["ink_target"], p["ink_pred"], no_floors=True),
                   api.target(p["ink_target"], read_image(p["ink_pred"]), no_floors=True)),
        "placement": (api.placement(p["ink_target"], p["ink_pred"], radius=64),
                      api.placement(p["ink_target"], read_image(p["ink_pred"]), radius=64)),
        "columns": (api.columns(p["col_target"], p["col_pred"], no_floors=True),
                    api.columns(p["col_target"], np.load(p["col_pred"]), no_floors=True)),
        "objects": (api.objects(p["truth"], p["objpred"]),
                    api.objects(truth=read_image(p["truth"]), pred=da.from_array(np.load(p["objpred"]), chunks=16))),
        "curve": (api.curve(p["gt"], p["pred"]), api.curve(read_image(p["gt"]), read_image(p["pred"]))),
        "perturb": (api.perturb(p["gt_npy"], operator="break", severity=0.2, output=tmp_path / "a.npy"),
                    api.perturb(np.load(p["gt_npy"]), operator="break", severity=0.2, output=tmp_path / "b.npy")),
        "fibers": (api.fibers(p["fiber_target"], p["fiber_labels"]),
                   api.fibers(p["fiber_target"], np.load(p["fiber_labels"]))),
        "profile": (api.profile(p["gt"], p["pred"], seeds=1), api.profile(read_image(p["gt"]), read_image(p["pred"]),
                                                                          seeds=1)),
        "audit": (api.audit([p["gt"], p["gt_npy"]], **AUDIT),
                  api.audit([read_image(p["gt"]), np.load(p["gt_npy"])], **AUDIT)),
    }
    for command, (from_paths, from_arrays) in pairs.items():
        differ = _names_aside(from_paths, from_arrays)
        if command == "perturb":
            differ.remove("output")
            assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
        if command == "audit":  # the masks are named mask0, mask1 instead of their paths
            differ = [k for k in differ if not k.startswith("references.")]
        assert differ == [], (command, differ[:5])
    # and the numbers are there: a number field that exists on the path side is equal on the array side
    assert pairs["objects"][1]["f1"] == pairs["objects"][0]["f1"] is not None


def test_unknown_options_are_refused_with_the_valid_ones(p):
    with pytest.raises(TypeError, match=r"tile_row \(did you mean tile_rows\?\).*valid options: .*tile_rows"):
        api.objects(p["truth"], p["objpred"], tile_row=4)
    with pytest.raises(TypeError, match="json"):  # the API returns; --json is the CLI's printing
        api.curve(p["gt"], p["pred"], json=True)
    with pytest.raises(TypeError, match="flag"):
        api.target(p["ink_target"], p["ink_pred"], no_floors="yes")
    with pytest.raises(TypeError):
        api.objects(p["truth"], p["objpred"], 0.5)  # options are keyword-only


@pytest.mark.parametrize("call, match", [
    (lambda p: api.objects(p["truth"], p["objpred"], iou=1.5), "--iou.*at most 1"),
    (lambda p: api.objects(p["truth"], p["objpred"], tile_rows=0), "--tile-rows.*at least 1"),
    (lambda p: api.curve(p["gt"], p["pred"], prune_px=float("nan")), "--prune-px.*finite"),
    (lambda p: api.perturb(p["gt_npy"], operator="melt", severity=0.1, output="x.npy"), "--operator.*choice"),
    (lambda p: api.check(scan_um=7.91), "--window-px"),  # a required option missing
    (lambda p: api.objects(p["truth"], p["objpred"], iou=[0.5, 0.6]), "--iou.*0.5,0.6"),  # one value, not a list
    (lambda p: api.auc(p["labels"], p["map"]), "--mask"),
])
def test_bad_values_are_the_clis_refusals(p, call, match):
    with pytest.raises(ScoreError, match=match):
        call(p)


def test_truth_first_by_position_or_keyword(p):
    from tests.objects.helpers import synthetic_pair

    t, q = synthetic_pair(shape=(40, 40), n=6, seed=9)
    q = q * (q != q.max())  # one object fewer in the prediction: the pair is not symmetric
    by_keyword = api.objects(pred=q, truth=t)
    assert plain(by_keyword) == plain(api.objects(t, q))
    assert by_keyword["n_truth"] == len(np.unique(t)) - 1 and by_keyword["n_pred"] == len(np.unique(q)) - 1
    swapped = api.objects(q, t)
    assert (swapped["n_truth"], swapped["n_pred"]) == (by_keyword["n_pred"], by_keyword["n_truth"])
    assert plain(api.curve(pred=p["pred"], truth=p["gt"])) == cli_json(["curve", p["pred"], "--gt", p["gt"]])


def test_outputs_are_written_as_the_cli_writes_them(p, tmp_path):
    out = tmp_path / "card.json"
    per = tmp_path / "per.csv"
    result = api.objects(p["truth"], p["objpred"], json_out=out, per_object=per)
    assert json.loads(out.read_text()) == plain(result)
    assert per.read_text().splitlines()[0].startswith(("truth_id", "id", "kind")) or per.stat().st_size > 0


def test_to_frame_and_plot(p, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    r = api.objects(p["truth"], p["objpred"])
    frame = r.to_frame()
    assert frame.shape[0] == 1 and frame.loc[0, "f1"] == r["f1"] and "notes" not in frame.columns
    assert isinstance(r.plot(), Figure)
    hold = api.holdout(p["manifest"], p["preds"])
    rows = hold.to_frame("per_field")
    assert len(rows) == len(hold["per_field"]) == 1
    assert rows.loc[0, "f1"] == hold["per_field"][0]["f1"] is not None
    with pytest.raises(ScoreError, match="tables"):
        hold.to_frame("nothing")
    assert isinstance(api.fibers(p["fiber_target"], p["fiber_labels"]).plot(), Figure)
    assert isinstance(api.target(p["ink_target"], p["ink_pred"], no_floors=True).plot(), Figure)
    booted = api.auc(p["labels"], p["map"], mask=p["mask"], control=p["rev"], bootstrap=20)
    assert isinstance(booted.plot(), Figure)
    with pytest.raises(ScoreError, match="bootstrap"):
        api.auc(p["labels"], p["map"], mask=p["mask"]).plot()
    with pytest.raises(ScoreError, match="no figure"):
        api.curve(p["gt"], p["pred"]).plot()
    import segscore.ink.targets as targets_module

    calls_made = []
    real = targets_module._score_target
    try:  # plot() draws from the result it has: it scores nothing again
        targets_module._score_target = lambda *a, **k: calls_made.append(1) or real(*a, **k)
        card = api.target(p["ink_target"], p["ink_pred"], no_floors=True)
        assert len(calls_made) == 1
        assert isinstance(card.plot(), Figure) and len(calls_made) == 1
    finally:
        targets_module._score_target = real
    assert "<table>" in r._repr_html_()


def test_the_notebook_runs(p, tmp_path):
    """docs/notebook.py scores each family through segscore.api, gets a DataFrame and draws each
    figure; it names no private name of segscore."""
    script = REPO / "docs" / "notebook.py"
    text = script.read_text()
    import re

    assert not re.search(r"\._[a-z]|import _|from segscore\.\w*\._", text.replace("._repr_html_", "")), \
        "the notebook touches a private name"
    folder = Path(p["map"]).parent
    run = subprocess.run([sys.executable, str(script), str(folder), str(tmp_path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    pngs = sorted(q.name for q in tmp_path.glob("*.png"))
    assert pngs == sorted(["auc.png", "target.png", "objects.png", "fibers.png", "audit.png"]), pngs
    for line in ("ink", "columns", "objects", "fibers", "curvilinear", "topology"):
        assert f"== {line}" in run.stdout


def test_the_ledger_records_the_call(p, tmp_path):
    import shutil

    root = tmp_path / "ledger"
    shutil.copytree(p["ledger"], root)
    api.auc(p["labels"], p["map"], mask=p["mask"], slug="exp", root=root, seed=np.int64(3))  # a NumPy integer too
    run = json.loads(next(root.rglob("run.json")).read_text())
    (call,) = run["checks"][-1]["argv"]
    assert call.startswith(f"segscore.api.auc(truth={str(p['labels'])!r}, pred={str(p['map'])!r}, ")
    assert "seed=3" in call and f"root={str(root)!r}" in call


def test_surfaces_paths_arrays_and_cli(tmp_path):
    rng = np.random.default_rng(3)
    truth = np.zeros((10, 12, 14), np.uint8)
    truth[3:7, 2:10, 2:12] = 1
    pred = truth.copy()
    pred[rng.random(pred.shape) < 0.05] ^= 1
    np.save(tmp_path / "g.npy", truth)
    np.save(tmp_path / "p.npy", pred)
    from_paths = api.surfaces(tmp_path / "g.npy", tmp_path / "p.npy", topo_tiles=[1, 1, 1], tolerance=1.5)
    assert plain(from_paths) == cli_json(["surfaces", tmp_path / "p.npy", tmp_path / "g.npy", "--topo-tiles", "1", "1",
                                          "1", "--tolerance", "1.5"])
    from_arrays = api.surfaces(truth=truth, pred=pred, topo_tiles=[1, 1, 1], tolerance=1.5)
    assert _names_aside(from_paths, from_arrays) == []
    assert from_arrays["leaderboard"] == from_paths["leaderboard"] is not None


def test_modes_without_a_prediction(p):
    """holdout --verify and fibers --floor: the truth alone, as on the command line."""
    assert plain(api.holdout(p["manifest"], verify=True)) == cli_json(["holdout", p["manifest"], "--verify"])
    floor = api.fibers(truth=p["fiber_target"], floor="connected_components")
    assert plain(floor) == cli_json(["fibers", "--floor", "connected_components", p["fiber_target"]])
    with pytest.raises(ScoreError, match="LABELS or --floor"):
        api.fibers(p["fiber_target"], p["fiber_labels"], floor="oracle")


def test_surfaces_prepared_truth_dims_and_weight_mapping(tmp_path):
    """``api.prepare_surfaces(truth)`` passed back as the truth gives the unprepared JSON; ``dims``
    and a ``topo_weights`` mapping reach the score (topometrics' options), and ``--dims`` on the
    command line gives the API's JSON."""
    import json

    import numpy as np

    from segscore import api
    from segscore.cli.main import main

    g = np.zeros((20, 24, 24), np.uint8)
    g[3, 2:22, 2:22] = 1
    g[7, 2:22, 2:22] = 1
    p = g.copy()
    p[7, 4:7, 4:7] = 0
    p[4, 2:22, 2:22] = 1
    plain = api.surfaces(g, p)
    assert json.dumps(api.surfaces(api.prepare_surfaces(g), p), sort_keys=True) == json.dumps(plain, sort_keys=True)
    two = api.surfaces(g, p, dims=[0, 1], topo_weights={0: 0.5})
    assert two["params"]["dims"] == [0, 1] and two["params"]["topo_weights"][0] == 0.5
    assert two["toposcore"] != plain["toposcore"]
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "p.npy", p)
    out = tmp_path / "cli.json"
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--dims", "0", "1", "--topo-weights",
                 "0.5", "0.33", "--json-out", str(out)]) == 0
    api_two = api.surfaces(g, p, dims=[0, 1], topo_weights=[0.5, 0.33])
    got = json.loads(out.read_text())
    assert {k: got[k] for k in ("leaderboard", "toposcore", "topology")} == \
        {k: api_two[k] for k in ("leaderboard", "toposcore", "topology")}
