"""The metric audit's API (segscore.curvilinear.audit): cases, seeds, ladders, quantities, the
redraw floor, fan-out over threads and processes, the result contract.

Oracles: curvicost 0.3.1 (its ladders; its ``sweep`` and ``redraw_floor`` rows where the operator
draws nothing: the radius arm and the redraw, case for case; its ``scale_report``), and the
definitions themselves (a user quantity's fraction from the masks' voxel counts).
Small synthetic trees (96², tests/curvilinear/helpers.py) and a short ladder keep it quick.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from segscore.curvilinear.masks import load_mask, save_mask
from segscore.errors import ScoreError
from tests.curvilinear.helpers import vessel_tree
from tests.test_result_contract import check_contract

AUD = importlib.import_module("segscore.curvilinear.auditing")
LADDER = dict(severities=[0.1, 0.3, 0.6], radius_scales=[0.7, 1.3], boundary_fracs=[0.05, 0.2], seeds=2, n_boot=200)
FLOORS = dict(min_units=3, min_cases=5)
ROW_FIELDS = ["cost", "operator", "metric", "n", "n_units", "aligned_rho", "ci_lo", "ci_hi", "label", "reason",
              "undefined", "inconclusive", "blind", "anti", "cost_constant", "redraw_metric", "redraw_cost"]
CURVICOST_TOP = ("n_cases", "n_units", "has_ci", "min_units", "min_cases", "findings", "ladder", "scale",
                 "redraw_floor", "cases", "cost_labels", "cost_sided")


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit_trees")
    paths = []
    for i in range(4):
        p = d / f"t{i}.png"
        save_mask(vessel_tree((96, 96), seed=i), p)
        paths.append(str(p))
    return paths


@pytest.fixture(scope="module")
def base(trees):
    """One audit, single-threaded, with its cases."""
    return AUD.audit(trees, threads=1, include_cases=True, **LADDER, **FLOORS)


def key(case):
    return case["unit"], case["operator"], case["severity"], case["seed"]


# ------------------------------------------------------------------------------------------
# cases and seeds
# ------------------------------------------------------------------------------------------

def test_the_cases_are_references_x_operators_x_severities_x_seeds(base, trees):
    cases = base["cases"]
    per_mask = 3 * 3 * 2 + 2 * 1 + 2 * 2  # counting ops x seeds, radius with the first seed only, boundary
    assert len(cases) == 4 * per_mask
    assert [c["unit"] for c in cases[::per_mask]] == trees
    assert {c["operator"] for c in cases} == set(AUD.OPERATORS)
    assert {c["seed"] for c in cases if c["operator"] == "radius"} == {0}
    assert base["n_cases"] + base["n_declined"] == len(cases)
    assert base["n_cases"] == sum(c["acted"] for c in cases)
    for c in cases:
        if not c["acted"]:  # no data point: nothing scored
            assert not {"dice", "traceable_frac"} & set(c)
        else:
            assert set(AUD.BUILTIN_COSTS) <= set(c) and "betti_matching" not in c
    assert base["redraw_floor"]["n_units"] == 4 and len(base["redraw_floor"]["cases"]) == 4


def test_each_case_is_seeded_with_its_seed_number_as_curvicost_seeds_it(trees, monkeypatch):
    """The operator gets the ladder's seed number itself (curvicost's ``sweep``: ``perturb(mask,
    operator, severity, seed=seed)``), not anything made from the file name or the run order."""
    ops = importlib.import_module("segscore.curvilinear.operators")
    perturb = ops.perturb
    calls = []

    def recording(mask, operator, severity, *, seed=0, **kw):
        calls.append((kw.get("name"), operator, float(severity), seed))
        return perturb(mask, operator, severity, seed=seed, **kw)

    monkeypatch.setattr(ops, "perturb", recording)
    got = AUD.audit(trees[:2], threads=1, include_cases=True, redraw_floor=False, **LADDER)
    # less the warm-up's draws on a tiny mask (no name) and each reference's redraw (radius 1.0)
    drawn = [c for c in calls if c[0] is not None and (c[1], c[2]) != ("radius", 1.0)]
    assert [(c["unit"], c["operator"], c["severity"], c["seed"]) for c in got["cases"]] == drawn
    assert {c[3] for c in drawn if c[1] != "radius"} == {0, 1} and {c[3] for c in drawn if c[1] == "radius"} == {0}
    assert all(type(c[3]) is int for c in drawn)


def test_each_mask_draws_the_same_cases_whatever_the_order(base, trees):
    # masks in another order, and one mask alone: the same rows for each mask
    rev = AUD.audit(list(reversed(trees)), threads=2, include_cases=True, **LADDER, **FLOORS)
    assert sorted(rev["cases"], key=key) == sorted(base["cases"], key=key)
    one = AUD.audit([trees[2]], threads=1, include_cases=True, redraw_floor=False, **LADDER)
    assert one["cases"] == [c for c in base["cases"] if c["unit"] == trees[2]]
    # ρ does not depend on the order either; the intervals take the units in the order given
    # (test_audit_parity.py: as curvicost's do)
    rho = lambda r: [(f["cost"], f["operator"], f["metric"], f["n"], f["aligned_rho"]) for f in r["findings"]]  # noqa: E731
    assert rho(rev) == rho(base)


def test_threads_1_and_2_give_the_same_result(base, trees):
    two = AUD.audit(trees, threads=2, include_cases=True, **LADDER, **FLOORS)
    assert two == base


def test_one_thread_holds_one_prepared_reference_at_a_time(trees, monkeypatch):
    """Inline (one thread), a reference is let go once its cases are scored, before the next is
    prepared: memory stays that of one reference however many masks are audited."""
    import weakref

    alive, most = [], [0]
    prepare, case_row = AUD._prepare, AUD._case_row

    def tracked_prepare(*a):
        p = prepare(*a)
        alive.append(weakref.ref(p))
        return p

    def counted_case_row(*a):
        most[0] = max(most[0], sum(r() is not None for r in alive))
        return case_row(*a)

    monkeypatch.setattr(AUD, "_prepare", tracked_prepare)
    monkeypatch.setattr(AUD, "_case_row", counted_case_row)
    AUD.audit(trees, threads=1, severities=[0.3], radius_scales=[1.3], boundary_fracs=[0.1], n_boot=50)
    assert len(alive) == len(trees) and most[0] == 1


@pytest.mark.parametrize("where", ["threads", "inline", "cluster"])
def test_each_task_runs_on_one_thread(trees, monkeypatch, where):
    """A case runs on the one thread its task has: the passes inside it (the surface distances'
    two directions) get no threads of their own, so N threads or N one-thread workers use N CPUs.
    A cluster in this process (threads of one worker) records what its tasks saw."""
    import os

    import segscore.engine
    from segscore.engine import executor

    import threading

    seen = []
    in_case = threading.local()
    case_row, side_by_side = AUD._case_row, executor.side_by_side

    def recording_case_row(*a):
        seen.append(("budget", executor.default_workers()))
        in_case.on = True
        try:
            return case_row(*a)
        finally:
            in_case.on = False

    def recording_side_by_side(calls, *, threads=None):
        if getattr(in_case, "on", False):
            seen.append(("side_by_side", executor._capped(threads or executor.default_workers())))
        return side_by_side(calls, threads=threads)

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)  # 4 CPUs, whatever
    # this machine has: a pass would take 4 threads unless held to one
    monkeypatch.setattr(AUD, "_case_row", recording_case_row)
    monkeypatch.setattr(executor, "side_by_side", recording_side_by_side)
    monkeypatch.setattr(segscore.engine, "side_by_side", recording_side_by_side)
    kw = dict(severities=[0.3], radius_scales=[1.3], boundary_fracs=[0.1], n_boot=20)
    if where == "cluster":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                                      host="127.0.0.1", protocol="tcp") as cluster, distributed.Client(cluster) as c:
            AUD.audit(trees[:2], scheduler=c, **kw)
    else:
        AUD.audit(trees[:2], threads=2 if where == "threads" else 1, **kw)
    assert ("budget", 1) in seen and ("side_by_side", 1) in seen  # the hd95 of every case: in its own thread
    assert {n for _, n in seen} == {1}
    assert executor.default_workers() == 4  # outside the tasks: unchanged


def test_processes_1_and_2_give_the_same_case_table(base, trees):
    """Each run starts its own LocalCluster on 127.0.0.1 and closes it."""
    pytest.importorskip("distributed")
    for n in (1, 2):
        got = AUD.audit(trees, processes=n, include_cases=True, **LADDER, **FLOORS)
        assert got["cases"] == base["cases"], n
        assert got == base
    import threading
    import time

    def left():
        return [t for t in threading.enumerate() if "distributed" in t.name.lower() or "Nanny" in t.name]

    deadline = time.monotonic() + 30  # a nanny's watch thread ends on its next tick after the close
    while left() and time.monotonic() < deadline:
        left()[0].join(0.1)
    assert not left()


def test_an_existing_cluster_by_address_and_by_client(base, trees):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                                  host="127.0.0.1", protocol="tcp") as cluster, distributed.Client(cluster) as client:
        by_address = AUD.audit(trees[:2], scheduler=cluster.scheduler_address, include_cases=True, **LADDER)
        by_client = AUD.audit(trees[:2], scheduler=client, include_cases=True, **LADDER)
        assert client.status == "running"  # a cluster given is left as it was
    want = [c for c in base["cases"] if c["unit"] in trees[:2]]
    assert by_address["cases"] == by_client["cases"] == want


def test_the_operator_acted_only_where_the_copy_differs(base, trees):
    """acted as findings.py defines it: the copy differs from the reference it is scored against
    (the radius arm's: its redraw at scale 1.0, so scale 1.0 itself never acts)."""
    got = AUD.audit(trees[:1], threads=1, include_cases=True, redraw_floor=False,
                    severities={"break": [], "bridge": [], "truncate": [], "boundary": []}, radius_scales=[1.0, 1.3],
                    n_boot=10)
    rows = got["cases"]
    assert [(c["severity"], c["acted"]) for c in rows] == [(1.0, False), (1.3, True)]
    bridge = [c for c in base["cases"] if c["operator"] == "bridge"]
    assert bridge and not any(c["acted"] for c in bridge)  # no tip pairs on these trees
    assert "bridge" in base["operator_notes"] and not any(f["operator"] == "bridge" for f in base["findings"])


# ------------------------------------------------------------------------------------------
# against curvicost
# ------------------------------------------------------------------------------------------

def test_the_ladders_are_curvicosts():
    cc = pytest.importorskip("curvicost.audit")
    d = AUD.resolve_ladder("default")
    s = AUD.resolve_ladder("study")
    assert d["severities"] == {k: tuple(v) for k, v in cc.DEFAULT_SEVERITIES.items()}
    assert s["severities"] == {k: tuple(v) for k, v in cc.STUDY_SEVERITIES.items()}
    assert d["seeds"] == (0,) and d["n_boot"] == cc.DEFAULT_N_BOOT == 1000
    assert s["seeds"] == tuple(cc.STUDY_SEEDS) and s["n_boot"] == cc.STUDY_N_BOOT == 2000
    o = AUD.resolve_ladder("study", severities=[0.3], seeds=1, n_boot=9)
    assert o["severities"]["break"] == o["severities"]["truncate"] == (0.3,)
    assert o["severities"]["radius"] == s["severities"]["radius"] and o["seeds"] == (0,) and o["n_boot"] == 9


def test_the_radius_arm_and_the_redraw_floor_are_curvicosts_case_for_case(base, trees):
    """The radius operator draws nothing, so its cases (scored against the redraw at scale 1.0)
    and the redraw rows are curvicost 0.3.1's, key for key; so is the scale."""
    cc = pytest.importorskip("curvicost.audit")
    keys = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac", "dice", "iou",
            "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "erl_star", "node_recall", "apls",
            "junction_f1", "hd95")
    radii = []
    for u in trees[:2]:
        mask, _ = load_mask(u)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = cc.sweep(mask, severities={"radius": (0.7, 1.3)}, prune_px=5, unit=u)
            floor = cc.redraw_floor(mask, prune_px=5, unit=u)
        ours = [c for c in base["cases"] if c["unit"] == u and c["operator"] == "radius"]
        assert [c["severity"] for c in ours] == [r["severity"] for r in theirs]
        for a, b in zip(ours, theirs):
            for k in keys:
                assert a[k] == pytest.approx(b[k], abs=1e-9), (u, a["severity"], k)
        ofl = next(r for r in base["redraw_floor"]["cases"] if r["unit"] == u)
        for k in keys:
            assert ofl[k] == pytest.approx(floor[k], abs=1e-9), (u, k)
        radii.append(cc.scale_report(mask, 5)["median_radius"])
    for u in trees[2:]:
        radii.append(cc.scale_report(load_mask(u)[0], 5)["median_radius"])
    assert base["scale"]["median_radius"] == pytest.approx(float(np.median(radii)))
    assert base["scale"]["prune_in_radii"] == pytest.approx(float(np.median([5 / r for r in radii])))


def test_the_findings_are_findings_from_cases_of_the_case_table(base):
    from segscore.curvilinear.findings import findings_from_cases

    plain = [{k: v for k, v in c.items()} for c in base["cases"]]
    got = findings_from_cases(plain, costs=base["costs"], n_boot=200, **FLOORS)
    strip = lambda rows: [{k: v for k, v in r.items() if not k.startswith("redraw_")} for r in rows]  # noqa: E731
    assert strip(base["findings"]) == got["findings"]
    assert base["operator_notes"] == got["operator_notes"]
    labels = {f["label"] for f in base["findings"]}
    assert {"tracks", "undefined"} <= labels  # the floors lowered: verdicts exist


# ------------------------------------------------------------------------------------------
# quantities
# ------------------------------------------------------------------------------------------

MEASURES = "import numpy as np\n\ndef area(mask):\n    return float(np.count_nonzero(mask))\n"


def _check_area(result, sided):
    for c in result["cases"]:
        if not c.get("acted"):
            continue
        kept = c["density_kept"]  # 1 - |c - 1|, c the count ratio: c itself where c <= 1
        u = c["user:area"]
        if c["operator"] in ("break", "truncate", "boundary"):  # only remove voxels: c <= 1
            assert u == pytest.approx(kept, abs=1e-12)
        assert 0 < u <= 1 if sided == "two" else u > 0


@pytest.mark.parametrize("how", ["importable", "current folder", "path"])
def test_a_cost_function_loads_three_ways(how, trees, tmp_path, monkeypatch):
    if how == "importable":
        pkg = tmp_path / "site" / "measurespkg"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "quant.py").write_text(MEASURES)
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
        spec = "measurespkg.quant:area"
    elif how == "current folder":
        (tmp_path / "mymeasures_cwd.py").write_text(MEASURES)
        monkeypatch.chdir(tmp_path)
        monkeypatch.delitem(sys.modules, "mymeasures_cwd", raising=False)
        spec = "mymeasures_cwd:area"
    else:
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "m.py").write_text(MEASURES)
        spec = str(tmp_path / "sub" / "m.py") + ":area"
    sided = "one" if how == "path" else "two"
    r = AUD.audit(trees[:3], threads=1, include_cases=True, redraw_floor=False, cost_fns=[spec], cost_sided=sided,
                  costs=("traceable_frac", "density_kept"), severities=[0.3], radius_scales=[1.3],
                  boundary_fracs=[0.1], n_boot=20)
    assert r["costs"] == ["traceable_frac", "density_kept", "user:area"]
    assert r["cost_sided"] == {"density_kept": "kept", "user:area": sided}
    assert spec in r["cost_labels"]["user:area"]
    _check_area(r, sided)
    assert any(f["cost"] == "user:area" for f in r["findings"])


def test_a_cost_function_of_the_current_folder_on_worker_processes(trees, tmp_path, monkeypatch):
    """Worker processes find a module of this process's current folder and give the rows a
    thread gives."""
    pytest.importorskip("distributed")
    (tmp_path / "mymeasures_workers.py").write_text(MEASURES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mymeasures_workers", raising=False)
    kw = dict(include_cases=True, redraw_floor=False, cost_fns=["mymeasures_workers:area"], severities=[0.3],
              radius_scales=[1.3], boundary_fracs=[0.1], n_boot=20)
    here = AUD.audit(trees[:3], threads=1, **kw)
    there = AUD.audit(trees[:3], processes=1, **kw)
    assert there == here and "user:area" in there["costs"]


KILL_ONCE = """import os, pathlib, signal
import numpy as np

def area(mask):
    flag = pathlib.Path(__file__).with_name("killed")
    if not flag.exists():  # the first case on a worker process: that process dies mid-run, once
        flag.write_text("1")
        os.kill(os.getpid(), signal.SIGKILL)
    return float(np.count_nonzero(mask))
"""


def test_a_worker_lost_mid_run_changes_no_case(trees, tmp_path):
    """A worker process killed while it scores: distributed runs its tasks again on the worker the
    nanny starts, and the case table is the one threads give."""
    pytest.importorskip("distributed")
    (tmp_path / "killonce.py").write_text(KILL_ONCE)
    kw = dict(include_cases=True, redraw_floor=False, cost_fns=[f"{tmp_path / 'killonce.py'}:area"],
              severities=[0.3], radius_scales=[1.3], boundary_fracs=[0.1], n_boot=20)
    there = AUD.audit(trees[:3], processes=2, **kw)
    assert (tmp_path / "killed").exists()
    (tmp_path / "killed").write_text("1")
    here = AUD.audit(trees[:3], threads=1, **kw)
    assert there["cases"] == here["cases"] and there["findings"] == here["findings"]


def test_a_callable_and_a_reference_where_it_is_zero(trees):
    calls = []

    def spy(mask):
        calls.append(mask.dtype)
        mask[:] = False  # a function that scribbles on its argument changes nothing
        return 0.0

    r = AUD.audit(trees[:1], threads=1, include_cases=True, cost_fns=[spy], severities=[0.3], radius_scales=[0.7],
                  boundary_fracs=[0.1], n_boot=20)
    assert set(calls) == {np.dtype(bool)}
    acting = [i for i, c in enumerate(r["cases"]) if c["acted"]]
    assert acting and all(r["cases"][i]["user:spy"] is None for i in acting)
    assert all("is 0 on the reference" in r["notes"][f"cases.{i}.user:spy"] for i in acting)
    assert r["cases"][acting[0]]["dice"] < 1  # scored on the undamaged copy, not on what spy left
    check_contract(json.loads(json.dumps(r)))


@pytest.mark.parametrize("body, fragment", [
    ("def f(mask):\n    raise RuntimeError('no good\\nsecond line')\n", "raised RuntimeError: no good"),
    ("def f(mask):\n    return float('nan')\n", "returned nan"),
    ("def f(mask):\n    return 'x'\n", "returned a str"),
    ("def f(mask):\n    import numpy as np\n    n = np.count_nonzero(mask)\n"
     "    if n < 1250: raise ValueError('small')\n    return float(n)\n", "copy at severity"),
])
def test_a_failing_cost_function_is_refused_naming_the_mask(body, fragment, trees, tmp_path):
    p = tmp_path / "bad.py"
    p.write_text(body)
    with pytest.raises(ScoreError) as exc:
        AUD.audit(trees[:1], threads=2, cost_fns=[f"{p}:f"], severities=[0.6], radius_scales=[0.7],
                  boundary_fracs=[0.2], n_boot=5)
    msg = str(exc.value)
    assert "\n" not in msg and fragment in msg and msg.startswith(trees[0]) and "fix:" in msg


@pytest.mark.parametrize("spec, fragment", [
    ("no_such_module_xyz:f", "cannot import no_such_module_xyz"),
    ("json:no_such_function", "json has no function no_such_function"),
    ("json:__doc__", "no callable __doc__"),
    ("nowhere/m.py:f", "no such file"),
    ("justamodule", "expected MODULE:FUNCTION"),
])
def test_a_cost_function_that_does_not_load_is_refused(spec, fragment, trees):
    with pytest.raises(ScoreError, match="--cost-fn") as exc:
        AUD.audit(trees[:1], cost_fns=[spec])
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


# ------------------------------------------------------------------------------------------
# the result
# ------------------------------------------------------------------------------------------

def test_the_result_has_curvicosts_fields_and_keeps_the_contract(base):
    assert set(CURVICOST_TOP) <= set(base)
    assert all(list(f) == ROW_FIELDS for f in base["findings"])
    assert base["has_ci"] and base["n_units"] == 4 and base["min_units"] == 3
    assert base["ladder"]["severities"]["radius"] == [0.7, 1.3] and base["ladder"]["seeds"] == [0, 1]
    for f in base["findings"]:
        assert f["redraw_metric"] == base["redraw_floor"]["values"][f["metric"]]["median"]
        assert f["redraw_cost"] == base["redraw_floor"]["values"][f["cost"]]["median"]
        if f["label"] == "undefined":
            assert f["aligned_rho"] is None and f["reason"]
    assert base["redraw_floor"]["values"]["traceable_frac"]["median"] == 1.0  # by construction
    text = json.dumps(base, allow_nan=False)
    check_contract(json.loads(text))
    without = AUD.audit(base["references"][:2], threads=1, redraw_floor=False, erl=False, severities=[0.3],
                        radius_scales=[0.7], boundary_fracs=[0.1], n_boot=20)
    assert without["cases"] is None and without["redraw_floor"] is None
    assert all("redraw_metric" not in f for f in without["findings"])
    assert not {"erl_star", "node_recall"} & set(without["metrics"])
    check_contract(json.loads(json.dumps(without)), not_given=("cases", "redraw_floor"))


def test_a_null_metric_in_a_case_has_a_note_at_its_path():
    """A reference with no branch longer than prune_px: its conductance fractions are null."""
    m = np.zeros((40, 40), bool)
    m[10:14, 5:35] = True
    m[5:35, 18:22] = True
    r = AUD.audit({"cross": m}, prune_px=40, threads=1, include_cases=True, severities=[0.5], radius_scales=[0.7],
                  boundary_fracs=[0.2], n_boot=5)
    notes = check_contract(json.loads(json.dumps(r)))
    assert any(k.endswith("conductance_twosided") for k in notes)
    assert any(k.startswith("redraw_floor.values.conductance_twosided") for k in notes)


def test_progress_counts_every_case(trees):
    seen = []
    AUD.audit(trees[:2], threads=2, progress=lambda d, t: seen.append((d, t)), severities=[0.3], radius_scales=[0.7],
              boundary_fracs=[0.1], n_boot=5)
    total = 2 * (3 + 1 + 1 + 1)  # three counting rungs, radius, boundary, the redraw
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == list(range(total + 1))


@pytest.mark.parametrize("kw, fragment", [
    (dict(masks=[]), "no reference masks"),
    (dict(severities=[0.0]), "outside (0, 1]"),
    (dict(radius_scales=[3.5]), "outside (0, 3]"),
    (dict(boundary_fracs=[0.1, 0.1]), "given twice"),
    (dict(seeds=0), "seeds 0"),
    (dict(n_boot=0), "n_boot 0"),
    (dict(min_units=-1), "min_units -1"),
    (dict(prune_px=float("nan")), "prune_px"),
    (dict(costs=("nope",)), "'nope' is not one of"),
    (dict(costs=(), cost_fns=()), "none given"),
    (dict(cost_sided="three"), "cost_sided"),
    (dict(processes=2, scheduler="tcp://127.0.0.1:1"), "give one"),
    (dict(threads=0), "threads 0"),
    (dict(ladder="huge"), "ladder 'huge'"),
])
def test_bad_arguments_are_refused(kw, fragment, trees):
    kw = {"masks": trees[:1], **kw}
    with pytest.raises(ScoreError) as exc:
        AUD.audit(kw.pop("masks"), **kw)
    assert fragment in str(exc.value)


def test_masks_are_refused_in_one_line_naming_them(trees, tmp_path):
    np.save(tmp_path / "empty.npy", np.zeros((20, 20), bool))
    with pytest.raises(ScoreError, match=r"empty\.npy: the mask is empty"):
        AUD.audit([trees[0], str(tmp_path / "empty.npy")])
    with pytest.raises(ScoreError, match="given twice"):
        AUD.audit([trees[0], trees[0]])
    with pytest.raises(ScoreError, match="mask1"):
        AUD.audit([np.ones((20, 20), bool), np.zeros((20, 20), np.uint8)])
    with pytest.raises(ScoreError, match="3 distinct values"):
        AUD.audit({"labels": np.arange(400).reshape(20, 20) % 3})


def test_the_package_attribute_is_the_function_and_the_module_stays_light():
    import segscore.curvilinear as pkg

    assert pkg.audit is AUD.audit and pkg.audit_from_cases is AUD.audit_from_cases and callable(pkg.audit)
    from segscore.curvilinear import advice, profiling

    assert pkg.profile is profiling.profile and pkg.recommend is advice.recommend
    code = ("import sys, segscore.curvilinear as c, segscore.curvilinear.auditing, segscore.cli.audit; "
            "print(callable(c.audit), [m for m in ('dask', 'distributed') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True []"


def test_audit_from_cases_reads_back_its_own_json(base, tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps(base))
    again = AUD.audit_from_cases(str(p), n_boot=200, **FLOORS)
    assert again["findings"] == base["findings"]
    assert again["redraw_floor"]["values"] == base["redraw_floor"]["values"]
    assert again["ladder"] == base["ladder"] and again["scale"] == base["scale"]
    assert math.isclose(again["n_cases"], base["n_cases"]) and again["source"] == str(p)
    other = AUD.audit_from_cases(str(p), costs=("conductance_frac",), n_boot=200, **FLOORS)
    assert {f["cost"] for f in other["findings"]} == {"conductance_frac"}
    assert all(f["redraw_cost"] is not None for f in other["findings"])
