"""Parity with curvicost 0.3.1: equal to 1e-6 on every shared key, on the FIVES masks under
curvicost's own operators, on synthetic 2D/3D trees and random blobs. Where segscore
deliberately differs, a test below pins the difference."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.curvilinear.scoring import prepare_reference, score
from tests.curvilinear.helpers import FIVES, load_fives, vessel_tree

cc = pytest.importorskip("curvicost")

SHARED = ("dice", "iou", "cldice", "betti0_gt", "betti0_pred", "betti0_error", "erl", "erl_frac", "merged_frac",
          "diadem_like", "traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac",
          "perfused_of_self", "traceable_length", "conductance", "traceable_length_ref", "conductance_ref")


def assert_parity(theirs, ours, tol=1e-6):
    bad = {k: (theirs[k], ours[k]) for k in SHARED
           if ours[k] is None or not np.isclose(theirs[k], ours[k], rtol=0, atol=tol)}
    assert not bad, bad


def test_curvicost_version():
    assert cc.__version__ == "0.3.1"


@pytest.fixture(scope="module")
def fives_cases(shared_data):
    out = []
    gt = load_fives(shared_data, FIVES[0])
    red1, _ = cc.perturb(gt, "radius", 1.0)
    for op, sev in [("break", 0.2), ("bridge", 1.0), ("truncate", 0.35), ("boundary", 0.1)]:
        out.append((f"100_D {op}", gt, cc.perturb(gt, op, sev, seed=2, prune_px=17)[0]))
    out.append(("100_D radius", red1, cc.perturb(gt, "radius", 0.7)[0]))
    gt2 = load_fives(shared_data, FIVES[1])
    out.append(("101_G break", gt2, cc.perturb(gt2, "break", 0.1, seed=0, prune_px=17)[0]))
    return out


def test_fives_parity_under_curvicost_operators(fives_cases):
    for name, gt, pred in fives_cases:
        theirs = cc.score(gt, pred, prune_px=17, all_metrics=False)
        ours = score(gt, pred, prune_px=17)
        assert_parity(theirs, ours), name


def test_fives_parity_default_prune_and_prepared_reference(shared_data):
    gt = load_fives(shared_data, FIVES[1])
    ref = prepare_reference(gt, prune_px=5)
    for op in ("break", "truncate"):
        pred = cc.perturb(gt, op, 0.1, seed=4, prune_px=5)[0]
        assert_parity(cc.score(gt, pred, prune_px=5, all_metrics=False), score(None, pred, reference=ref))


@pytest.mark.parametrize("seed", [0, 1])
def test_synthetic_tree_2d_every_operator(seed):
    gt = vessel_tree((160, 160), seed=seed, depth=4, r0=4.0)
    red1, _ = cc.perturb(gt, "radius", 1.0)
    for op, sev in [("break", 0.3), ("bridge", 1.0), ("truncate", 0.5), ("boundary", 0.05), ("radius", 1.3)]:
        pred = cc.perturb(gt, op, sev, seed=seed, prune_px=6)[0]
        ref = red1 if op == "radius" else gt
        assert_parity(cc.score(ref, pred, prune_px=6, all_metrics=False), score(ref, pred, prune_px=6))


def test_synthetic_tree_3d():
    gt = vessel_tree((40, 40, 40), seed=3, depth=3, r0=3.0)
    for op, sev in [("break", 0.3), ("truncate", 0.5)]:
        pred = cc.perturb(gt, op, sev, seed=1, prune_px=4)[0]
        assert_parity(cc.score(gt, pred, prune_px=4, all_metrics=False), score(gt, pred, prune_px=4))


def _blob_cases():
    """The random-blob sweep (2D 64^2 pairs, then 3D 24^3) used for the pinned tie case."""
    from scipy import ndimage

    rng = np.random.default_rng(0)
    for trial in range(32):
        nd = 2 if trial < 28 else 3
        shp = (64, 64) if nd == 2 else (24, 24, 24)
        f = ndimage.gaussian_filter(rng.random(shp), 1.5 if nd == 2 else 1.2)
        gt = f > np.quantile(f, 0.6)
        f2 = ndimage.gaussian_filter(rng.random(shp), 1.5)
        pred = gt ^ (f2 > np.quantile(f2, 0.93))
        yield trial, gt, pred, [0, 3, 5, 8][trial % 4]


TIE_CASES = {12, 13, 19}  # sink equidistant from two skeleton voxels, next to numbered loops
SCORED = set(range(8)) | TIE_CASES | {28, 30}  # a subset keeps the suite fast; the sweep passes whole


def test_random_blobs_parity_and_pinned_ties():
    for trial, gt, pred, pp in _blob_cases():
        if trial not in SCORED:
            continue
        theirs = cc.score(gt, pred, prune_px=pp, all_metrics=False)
        ours = score(gt, pred, prune_px=pp)
        if trial in TIE_CASES:
            # curvicost numbers its loop components in set-iteration order and breaks sink
            # attachment ties by its k-d tree's layout; segscore numbers loops in C order, so
            # the tie goes another way: only the conductance keys may move, nothing else.
            diff = {k for k in SHARED if not np.isclose(theirs[k], ours[k], rtol=0, atol=1e-6)}
            assert diff and diff <= {"conductance", "conductance_frac", "conductance_twosided"}, (trial, diff)
        else:
            assert_parity(theirs, ours)


def test_pinned_empty_prediction_diadem():
    """curvicost 0.3.1 returns diadem_like 1.0 for an empty prediction (its graph is None);
    no predicted node matches any reference node, so segscore reports 0.0."""
    gt = vessel_tree((96, 96), seed=1, depth=3)
    pred = np.zeros_like(gt)
    theirs = cc.score(gt, pred, prune_px=5, all_metrics=False)
    ours = score(gt, pred, prune_px=5)
    assert theirs["diadem_like"] == 1.0 and ours["diadem_like"] == 0.0
    for k in SHARED:
        if k != "diadem_like":
            assert np.isclose(theirs[k], ours[k], atol=1e-9), k
    assert ours["notes"] == {} and ours["betti0_pred"] == 0  # costs of nothing are 0: values, not nulls


OPTIONAL = ("skeleton_recall", "cbdice_star", "hd95")


def assert_optional_parity(theirs, ours):
    bad = {k: (theirs[k], ours[k]) for k in OPTIONAL
           if ours[k] is None or not np.isclose(theirs[k], ours[k], rtol=0, atol=1e-9)}
    assert not bad, bad


def test_optional_metrics_equal_curvicost_on_fives(fives_cases):
    for name, gt, pred in fives_cases[:3] + fives_cases[-1:]:
        theirs = cc.score(gt, pred, prune_px=17)
        assert_optional_parity(theirs, score(gt, pred, prune_px=17, all_metrics=True)), name


@pytest.mark.parametrize("shape,op", [((160, 160), "break"), ((160, 160), "boundary"), ((48, 48, 48), "truncate"),
                                      ((48, 48, 48), "radius")])
def test_optional_metrics_equal_curvicost_on_trees(shape, op):
    gt = vessel_tree(shape, seed=1, depth=4, r0=3.0)
    pred = cc.perturb(gt, op, 0.3 if op != "radius" else 0.7, seed=1, prune_px=5)[0]
    theirs = cc.score(gt, pred, prune_px=5)
    ours = score(gt, pred, prune_px=5, all_metrics=True)
    assert_optional_parity(theirs, ours)
    assert_parity(theirs, ours)


def test_optional_metrics_on_request_only_and_null_where_curvicost_gives_nan():
    gt = vessel_tree((96, 96), seed=2)
    assert not set(OPTIONAL) & set(score(gt, gt, prune_px=5))
    empty = score(gt, np.zeros_like(gt), prune_px=5, all_metrics=True)
    theirs = cc.score(gt, np.zeros_like(gt), prune_px=5)
    assert empty["skeleton_recall"] == theirs["skeleton_recall"] == 0.0
    assert empty["hd95"] == theirs["hd95"] == pytest.approx(np.hypot(96, 96))
    assert empty["cbdice_star"] is None and np.isnan(theirs["cbdice_star"])
    assert "cbdice_star" in empty["notes"]
