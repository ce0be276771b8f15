"""The audit draws curvicost's cases (issue 26): each damaged copy is seeded with the ladder's seed
number, as curvicost 0.3.1's ``sweep`` seeds it, so ``segscore.curvilinear.audit`` and curvicost's
own ``sweep`` + ``redraw_floor`` + ``audit`` (what ``curvicost audit`` runs) give the same cases and
the same ρ, interval and label in every cell, for the masks in any order, under any file names, on
threads or processes.

Oracle: curvicost 0.3.1 run in this process. The masks are small drawings made here (two facing
trees, so that every operator, bridge included, acts on every mask); a short ladder and 200
resamples keep it quick.
"""

from __future__ import annotations

import importlib
import math
import shutil
import warnings

import numpy as np
import pytest

from segscore.curvilinear.masks import save_mask
from tests.curvilinear.helpers import disk_line

cc = pytest.importorskip("curvicost.audit")
AUD = importlib.import_module("segscore.curvilinear.auditing")

SEVERITIES = {"break": (0.3, 0.6), "bridge": (0.3, 0.6), "truncate": (0.3, 0.6), "radius": (0.7, 1.3),
              "boundary": (0.05, 0.2)}
SEEDS = (0, 1)
N_BOOT = 200
FLOORS = dict(min_units=3, min_cases=5)  # lowered, so cells get verdicts (blind, tracks ...) to compare
PRUNE = 5
LADDER = dict(severities={op: list(v) for op, v in SEVERITIES.items()}, seeds=len(SEEDS), n_boot=N_BOOT)
N_MASKS = 5
CASE_KEYS = ("traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac", "dice", "iou",
             "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "erl_star", "node_recall", "apls",
             "junction_f1", "hd95")


def facing_trees(seed):
    """Two small trees (72 x 112) whose trunks end 5.5-8.5 px apart, tip to tip: break, truncate,
    radius and boundary act on them, and bridge has a pair of tips to join."""
    rng = np.random.default_rng(seed)

    def j(a):
        return float(rng.uniform(-a, a))

    m = np.zeros((72, 112), bool)
    y = 36 + j(3)
    gap = 7 + j(1.5)
    disk_line(m, (y, 3), (y, 52 - gap / 2), 2.5 + j(0.5))
    disk_line(m, (y, 16 + j(3)), (12 + j(3), 40 + j(4)), 2.0)
    disk_line(m, (y, 30 + j(3)), (62 + j(3), 44 + j(4)), 1.8)
    disk_line(m, (y + j(1), 52 + gap / 2), (y + j(3), 108), 2.5 + j(0.5))
    disk_line(m, (y, 88 + j(3)), (60 + j(3), 106), 2.0)
    disk_line(m, (y, 72 + j(3)), (10 + j(3), 80 + j(4)), 1.8)
    return m


@pytest.fixture(scope="module")
def masks(tmp_path_factory):
    """``[(path, array)]``; the file names sort in the order given."""
    d = tmp_path_factory.mktemp("audit_parity")
    out = []
    for i in range(N_MASKS):
        p = d / f"m{i}.png"
        m = facing_trees(i)
        save_mask(m, p)
        out.append((str(p), m))
    return out


@pytest.fixture(scope="module")
def theirs(masks):
    """curvicost's sweep and redraw-floor rows of each mask (they do not depend on the order)."""
    rows, floors = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path, m in masks:
            rows[path] = cc.sweep(m, severities=SEVERITIES, seeds=SEEDS, prune_px=PRUNE, unit=path)
            floors[path] = cc.redraw_floor(m, prune_px=PRUNE, unit=path)
    return rows, floors


def curvicost_audit(theirs, order):
    """What ``curvicost audit`` computes for the masks in ``order`` (its ``_cmd_audit``: the rows
    of each mask in turn, then ``audit``)."""
    rows, floors = theirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cc.audit([r for p in order for r in rows[p]], n_boot=N_BOOT, attempted=list(SEVERITIES),
                        floors=[floors[p] for p in order], **FLOORS)


def ours(order, **kw):
    return AUD.audit(list(order), prune_px=PRUNE, include_cases=True, **LADDER, **FLOORS, **kw)


def _num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def assert_same_cells(got, want, tol=1e-9):
    g = {(f["cost"], f["operator"], f["metric"]): f for f in got["findings"]}
    w = {(f["cost"], f["operator"], f["metric"]): f for f in want["findings"]}
    assert list(g) == list(w)  # the same cells, in the same order
    for k, f in g.items():
        c = w[k]
        assert (f["label"], f["n"], f["n_units"]) == (c["label"], c["n"], c["n_units"]), k
        for key in ("aligned_rho", "ci_lo", "ci_hi", "redraw_metric", "redraw_cost"):
            a, b = _num(f[key]), _num(c[key])
            assert (a is None) == (b is None), (k, key, a, b)
            if a is not None:
                assert abs(a - b) <= tol, (k, key, a, b)
    assert (got["n_cases"], got["n_units"]) == (want["n_cases"], want["n_units"])


def test_every_operator_acts_on_every_mask(theirs, masks):
    rows, _ = theirs
    for path, _ in masks:
        assert {r["operator"] for r in rows[path]} == set(SEVERITIES), path


def test_the_cases_are_curvicosts_copies(masks, theirs):
    """Every acting case is curvicost's (the same key, what the operator did, every cost and
    metric); the cases curvicost drops are those that did not act."""
    rows, floors = theirs
    got = ours([p for p, _ in masks], threads=2)
    acting = [c for c in got["cases"] if c["acted"]]
    want = [r for p, _ in masks for r in rows[p]]
    key = lambda r: (r["unit"], r["operator"], r["severity"], r["seed"])  # noqa: E731
    assert [key(c) for c in acting] == [key(r) for r in want]
    for a, b in zip(acting, want):
        if a["operator"] in ("break", "bridge", "truncate", "boundary"):
            assert a["realised"] == b["realised"], key(a)
        for k in CASE_KEYS:
            assert _num(a[k]) == pytest.approx(_num(b[k]), abs=1e-9), (key(a), k)
    assert len(got["cases"]) - len(acting) == got["n_declined"]


@pytest.mark.parametrize("order", ["given", "shuffled"])  # reversed: on processes, below
def test_every_cell_is_curvicosts_for_the_masks_in_any_order(order, masks, theirs):
    paths = [p for p, _ in masks]
    if order == "shuffled":
        paths = [paths[i] for i in (2, 0, 4, 1, 3)]
    want = curvicost_audit(theirs, paths)
    got = ours(paths, threads=2)
    assert_same_cells(got, want)
    labels = {f["label"] for f in got["findings"]}
    assert {"tracks", "undefined"} <= labels  # verdicts exist, so the labels are a real comparison


def test_on_processes_too(masks, theirs):
    pytest.importorskip("distributed")
    paths = [p for p, _ in masks][::-1]
    assert_same_cells(ours(paths, processes=2), curvicost_audit(theirs, paths))


def test_renaming_the_files_changes_nothing(masks, tmp_path):
    """The same masks under other names (that sort in another order), given in the same order:
    the same cases, ρ, intervals and labels."""
    paths = [p for p, _ in masks]
    renamed = []
    for i, p in enumerate(paths):
        q = tmp_path / "elsewhere" / f"{'zyxwv'[i]}_{i * 7 % 5}.png"
        q.parent.mkdir(exist_ok=True)
        shutil.copy(p, q)
        renamed.append(str(q))
    a = ours(paths, threads=2)
    b = ours(renamed, threads=2)
    back = dict(zip(renamed, paths))
    assert [dict(c, unit=back[c["unit"]]) for c in b["cases"]] == a["cases"]
    strip = lambda r: [{k: v for k, v in f.items() if k != "reason"} for f in r["findings"]]  # noqa: E731
    assert strip(a) == strip(b)  # reasons may name the files; every number and label is the same


def test_reordering_changes_only_the_intervals(masks):
    """The case table (mask by mask) and every ρ do not depend on the order of the masks; the
    intervals may, as curvicost's do (its units enter the bootstrap in the order given)."""
    paths = [p for p, _ in masks]
    a = ours(paths, threads=2)
    b = ours(paths[::-1], threads=2)
    per_unit = lambda r: {p: [c for c in r["cases"] if c["unit"] == p] for p in paths}  # noqa: E731
    assert per_unit(a) == per_unit(b)
    fixed = ("cost", "operator", "metric", "n", "n_units", "aligned_rho", "undefined", "cost_constant",
             "redraw_metric", "redraw_cost")
    assert [{k: f[k] for k in fixed} for f in a["findings"]] == [{k: f[k] for k in fixed} for f in b["findings"]]
    assert a["redraw_floor"] == {**b["redraw_floor"], "cases": a["redraw_floor"]["cases"]}
    moved = sum(f["ci_lo"] != g["ci_lo"] or f["ci_hi"] != g["ci_hi"] for f, g in zip(a["findings"], b["findings"]))
    assert moved > 0  # the units' order is the bootstrap's, as in curvicost
