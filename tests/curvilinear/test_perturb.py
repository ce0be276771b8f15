"""Error operators: each moves its own kind of error and not the others (leak tests), plus
oracles for their raster kernels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from segscore.curvilinear.operators import perturb
from segscore.curvilinear.scoring import prepare_reference, score
from segscore.errors import ScoreError
from segscore.kernels.operators import erode_surface, paint_balls
from segscore.kernels.skelgraph import neighbour_offsets
from tests.curvilinear.helpers import FIVES, disk_line, load_fives, vessel_tree

FULL2 = np.ones((3, 3))


def nlab(m):
    return ndimage.label(m, np.ones((3,) * m.ndim))[1]


@pytest.fixture(scope="module")
def fives(shared_data):
    gt = load_fives(shared_data, FIVES[0])
    return gt, prepare_reference(gt, prune_px=6)


def test_break_leaks_nothing_but_connectivity(fives):
    gt, ref = fives
    out, info = perturb(gt, "break", 0.2, seed=1, prune_px=6)
    assert not (out & ~gt).any()  # nothing added
    assert info["n_applied"] == round(0.2 * info["population"]) and info["unsevered"] == 0
    row = score(None, out, reference=ref)
    assert row["betti0_pred"] > row["betti0_gt"]
    assert row["traceable_frac"] < 0.9 and row["merged_frac"] == 0.0
    assert row["dice"] > 0.95  # few voxels moved


def test_bridge_only_adds_connections():
    # two separate trees whose tips face each other 8 px apart
    m = np.zeros((80, 120), bool)
    disk_line(m, (40, 5), (40, 50), 2.5)
    disk_line(m, (40, 20), (15, 40), 2.0)
    disk_line(m, (40, 58), (40, 110), 2.5)
    disk_line(m, (40, 90), (65, 110), 2.0)
    ref = prepare_reference(m, prune_px=5)
    out, info = perturb(m, "bridge", 1.0, seed=0, prune_px=5)
    assert info["n_applied"] >= 1 and info["voxels"] > 0
    assert not (m & ~out).any()  # nothing removed
    row = score(None, out, reference=ref)
    assert row["betti0_pred"] == row["betti0_gt"] - 1
    assert row["traceable_frac"] == 1.0 and row["merged_frac"] == 1.0 and row["erl_frac"] == 0.0


def test_bridge_on_fives_never_removes(fives):
    gt, ref = fives
    out, info = perturb(gt, "bridge", 1.0, seed=0, prune_px=6)
    assert not (gt & ~out).any()
    assert score(None, out, reference=ref)["traceable_frac"] == 1.0


def test_truncate_keeps_components(fives):
    gt, ref = fives
    out, info = perturb(gt, "truncate", 0.5, seed=0, prune_px=6)
    assert not (out & ~gt).any() and info["n_applied"] > 0
    row = score(None, out, reference=ref)
    assert row["betti0_pred"] == row["betti0_gt"] and row["merged_frac"] == 0.0
    assert row["traceable_frac"] < 1.0


@pytest.mark.parametrize("scale", [0.7, 0.85, 1.15, 1.3])
def test_radius_keeps_topology_moves_conductance(fives, scale):
    gt, _ = fives
    base, _ = perturb(gt, "radius", 1.0)
    out, info = perturb(gt, "radius", scale)
    assert nlab(out) == nlab(base)
    row = score(base, out, prune_px=6)
    assert row["traceable_frac"] > 0.99 and row["merged_frac"] == 0.0
    assert (row["conductance_frac"] < 1.0) == (scale < 1.0)
    assert (info["voxels"] < perturb(gt, "radius", 1.0)[1]["voxels"]) == (scale < 1.0)


def test_radius_one_is_its_own_reference(fives):
    gt, _ = fives
    base, _ = perturb(gt, "radius", 1.0)
    row = score(base, base, prune_px=6)
    assert row["conductance_frac"] == 1.0 and row["traceable_frac"] == 1.0


@pytest.mark.parametrize("frac", [0.02, 0.2])
def test_boundary_moves_voxels_not_structure(fives, frac):
    gt, ref = fives
    out, info = perturb(gt, "boundary", frac, seed=3)
    assert not (out & ~gt).any()
    assert info["voxels_moved"] == int(frac * gt.sum())
    row = score(None, out, reference=ref)
    assert row["betti0_pred"] == row["betti0_gt"] and row["merged_frac"] == 0.0
    assert row["traceable_frac"] > 0.9


def test_operators_3d_leak_free():
    gt = vessel_tree((36, 36, 36), seed=2, depth=3, r0=3.0)
    n0 = nlab(gt)
    br, info = perturb(gt, "break", 0.3, seed=0, prune_px=3)
    assert not (br & ~gt).any() and nlab(br) > n0
    tr, _ = perturb(gt, "truncate", 0.5, seed=0, prune_px=3)
    assert not (tr & ~gt).any() and nlab(tr) == n0
    bd, _ = perturb(gt, "boundary", 0.1, seed=0)
    assert not (bd & ~gt).any() and nlab(bd) == n0
    r1, _ = perturb(gt, "radius", 1.0)
    r7, _ = perturb(gt, "radius", 0.7)
    assert nlab(r7) == nlab(r1) and r7.sum() < r1.sum()
    bg, _ = perturb(gt, "bridge", 1.0, seed=0, prune_px=3)
    assert not (gt & ~bg).any() and nlab(bg) <= n0


def test_seeded_and_deterministic():
    gt = vessel_tree((128, 128), seed=0)
    a, _ = perturb(gt, "break", 0.3, seed=5)
    b, _ = perturb(gt, "break", 0.3, seed=5)
    c, _ = perturb(gt, "break", 0.3, seed=6)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_refusals():
    gt = vessel_tree((64, 64), seed=0)
    with pytest.raises(ScoreError, match="not one of"):
        perturb(gt, "smudge", 0.1)
    with pytest.raises(ScoreError, match="fraction"):
        perturb(gt, "break", 1.5)
    with pytest.raises(ScoreError, match="scale"):
        perturb(gt, "radius", 0.0)
    with pytest.raises(ScoreError, match="empty"):
        perturb(np.zeros((8, 8), bool), "break", 0.1)
    with pytest.raises(ScoreError, match="probability"):
        perturb(gt * 0.5, "break", 0.1)


# ------------------------------------------------------------------ kernel oracles
def _erode_oracle(mask, order_coords, n_target):
    out = mask.copy()
    done = 0
    for p in order_coords:
        if done >= n_target:
            break
        p = tuple(p)
        if not out[p]:
            continue
        out[p] = False
        sl = tuple(slice(max(c - 1, 0), c + 2) for c in p)
        patch = out[sl]
        if patch.sum() == 0 or ndimage.label(patch, np.ones((3,) * out.ndim))[1] > 1:
            out[p] = True
            continue
        done += 1
    return out, done


@pytest.mark.parametrize("shape", [(3, 4), (20, 17), (8, 9, 7)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_erode_surface_matches_oracle(shape, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < 0.6
    coords = np.argwhere(mask)
    coords = coords[rng.permutation(len(coords))]
    target = len(coords) // 2
    pad = np.pad(mask.astype(np.uint8), 2)
    off, _ = neighbour_offsets(pad.shape)
    order = np.ravel_multi_index(tuple((coords + 2).T), pad.shape).astype(np.int64)
    flat = pad.ravel()
    done = erode_surface(flat, order, off, target)
    exp, exp_done = _erode_oracle(mask, coords, target)
    assert done == exp_done
    np.testing.assert_array_equal(flat.reshape(pad.shape)[(slice(2, -2),) * mask.ndim].astype(bool), exp)


@pytest.mark.parametrize("seed", [0, 1])
def test_paint_balls_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    for shape in [(1, 30, 25), (12, 10, 14)]:
        K = 15
        centres = np.stack([rng.integers(0, s, K) for s in shape], 1).astype(np.int64)
        radii = rng.uniform(0.5, 5, K)
        comp = rng.integers(1, 3, K).astype(np.int64)
        near_comp = rng.integers(0, 3, 20).astype(np.int64)
        nearest = rng.integers(0, 20, int(np.prod(shape))).astype(np.int32)
        owner = near_comp[nearest]
        out = np.zeros(int(np.prod(shape)), bool)
        paint_balls(np.array(shape, np.int64), centres, radii, comp, nearest, near_comp, out)
        zz, yy, xx = np.indices(shape)
        exp = np.zeros(shape, bool)
        for c, r, k in zip(centres, radii, comp):
            exp |= ((zz - c[0]) ** 2 + (yy - c[1]) ** 2 + (xx - c[2]) ** 2 <= r * r) & (owner.reshape(shape) == k)
        np.testing.assert_array_equal(out.reshape(shape), exp)
