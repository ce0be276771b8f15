"""``segscore.topology.score.surfaces``: every field equal, to 1e-9, to the definition computed
with the peers' own code (recorded in tests/data/surfaces/cases.json by
benchmarks/surfaces_peer.py), and the parts against brute force."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from segscore.topology.score import SurfacesInputError, axis_cuts, binarize, surfaces, tile_slices, voi
from segscore.topology.surface import area_table, surface_dice, tolerance_offsets

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((ROOT / "tests" / "data" / "surfaces" / "cases.json").read_text())
_spec = importlib.util.spec_from_file_location("surfaces_peer", ROOT / "benchmarks" / "surfaces_peer.py")
peer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peer)
CASES = {name: (p, g, opts) for name, p, g, opts in peer.cases()}

FIELDS = ("leaderboard", "toposcore", "topoF1_0", "topoF1_1", "topoF1_2", "surface_dice", "voi_score",
          "voi_total", "voi_split", "voi_merge")


def test_fixture_names_every_case():
    assert set(FIXTURE) == set(CASES)
    kinds = {"split", "merge", "holes", "cavity", "cavity_whole", "specks", "empty_both", "empty_pred",
             "ignore_label", "anisotropic", "probability", "whole_volume", "slice_2d"}
    assert kinds <= set(CASES)
    # the cases reach every dimension, matched and not
    res = [v["result"]["topology"] for v in FIXTURE.values()]
    for k in range(3):
        assert any(r[f"dim{k}"]["matched"] for r in res)
        assert any(r[f"dim{k}"]["gt"] > r[f"dim{k}"]["matched"] for r in res)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_field_equals_the_peers(name):
    p, g, opts = CASES[name]
    ours = surfaces(truth=g, pred=p, **opts)
    ref = FIXTURE[name]["result"]
    for key in FIELDS:
        if ref[key] is None:
            assert ours[key] is None, key
            assert key in ours["notes"]
        else:
            assert ours[key] == pytest.approx(ref[key], abs=1e-9, rel=0), key
    assert ours["topology"] == ref["topology"]
    assert isinstance(ours["warnings"], list) and isinstance(ours["notes"], dict)


def test_tiled_and_whole_differ_where_the_definition_says():
    p, g, _ = CASES["holes"]
    tiled = surfaces(truth=g, pred=p)
    whole = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))
    assert tiled["tiles"] == 8 and whole["tiles"] == 1
    assert tiled["topology"] != whole["topology"]
    assert tiled["surface_dice"] == whole["surface_dice"] and tiled["voi_total"] == whole["voi_total"]


def test_threads_change_nothing():
    p, g, _ = CASES["specks"]
    assert surfaces(truth=g, pred=p, threads=2) == surfaces(truth=g, pred=p)


def test_axis_cuts_and_tiles():
    assert axis_cuts(5, 2) == [(0, 3), (3, 5)]
    assert axis_cuts(1, 2) == [(0, 1)]
    assert axis_cuts(0, 2) == [(0, 0)]
    assert len(tile_slices((1, 4, 5), (2, 2, 2))) == 4


def test_binarize_and_ignore():
    x = np.array([0, 1, 2, np.nan, -1.0])
    assert binarize(x).tolist() == [False, True, True, False, True]
    assert binarize(x, threshold=0.5).tolist() == [False, True, True, False, False]
    assert binarize(x, threshold=-0.5, ignore=np.array([1, 0, 0, 0, 0], bool)).tolist() == \
        [True, True, True, True, False]


def test_surface_area_table_is_complement_symmetric_and_scales():
    t1 = area_table((1.0, 1.0, 1.0))
    assert t1[0] == 0 and t1[255] == 0
    assert np.allclose(t1, t1[::-1])
    assert t1[1] == pytest.approx(np.sqrt(3) / 8)  # one corner: a triangle of side sqrt(2)/2
    assert t1[0b11110000] == pytest.approx(1.0)  # half the cube: a unit square
    t2 = area_table((2.0, 2.0, 2.0))
    assert np.allclose(t2, 4 * t1)


def test_tolerance_offsets_are_a_ball():
    o = tolerance_offsets(2.0, (1.0, 1.0, 1.0))
    assert len(o) == 33 and (o[0] == 0).all()
    o = tolerance_offsets(1.0, (2.0, 1.0, 1.0))
    assert len(o) == 5


def _brute_surface_dice(g, p, tol, sp):
    """All-pairs distances between the surface corner positions."""
    from segscore.kernels.surfels import corner_codes

    lo = [int(np.flatnonzero((g | p).any(axis=tuple(j for j in range(3) if j != ax)))[0]) for ax in range(3)]
    hi = [int(np.flatnonzero((g | p).any(axis=tuple(j for j in range(3) if j != ax)))[-1]) for ax in range(3)]
    shape = tuple(h - l + 2 for l, h in zip(lo, hi))
    cg, cp = np.empty(shape, np.uint8), np.empty(shape, np.uint8)
    corner_codes(g, *lo, cg)
    corner_codes(p, *lo, cp)
    table = area_table(tuple(sp))
    sg = np.argwhere((cg != 0) & (cg != 255))
    spp = np.argwhere((cp != 0) & (cp != 255))
    d = np.sqrt((((sg[:, None, :] - spp[None, :, :]) * np.asarray(sp)) ** 2).sum(-1))
    ag = table[cg[tuple(sg.T)]]
    ap = table[cp[tuple(spp.T)]]
    return (ag[d.min(1) <= tol].sum() + ap[d.min(0) <= tol].sum()) / (ag.sum() + ap.sum())


@pytest.mark.parametrize("seed", range(4))
def test_surface_dice_against_all_pairs(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(3, 10, 3))
    g = rng.random(shape) < 0.3
    p = rng.random(shape) < 0.3
    g[0, 0, 0] = p[-1, -1, -1] = True
    sp = [(1.0, 1.0, 1.0), (2.0, 0.5, 1.0)][seed % 2]
    tol = [1.0, 2.0, 0.7, 3.0][seed]
    assert surface_dice(g, p, tolerance=tol, spacing=sp) == pytest.approx(_brute_surface_dice(g, p, tol, sp), abs=1e-12)


def test_voi_against_scikit_image():
    from scipy import ndimage
    from skimage.metrics import variation_of_information

    rng = np.random.default_rng(4)
    p = rng.random((12, 13, 14)) < 0.3
    g = rng.random((12, 13, 14)) < 0.3
    for conn, rank in ((6, 1), (18, 2), (26, 3)):
        s = ndimage.generate_binary_structure(3, rank)
        gl = ndimage.label(g, s)[0]
        pl = ndimage.label(p, s)[0]
        m = (gl > 0) | (pl > 0)
        split, merge = variation_of_information(gl[m], pl[m])
        v = voi(p, g, connectivity=conn)
        assert v["voi_split"] == pytest.approx(split, abs=1e-12)
        assert v["voi_merge"] == pytest.approx(merge, abs=1e-12)


def test_refusals():
    g = np.zeros((4, 4, 4))
    with pytest.raises(SurfacesInputError):
        surfaces(truth=g, pred=np.zeros((4, 4, 5)))
    with pytest.raises(SurfacesInputError):
        surfaces(truth=g, pred=g, voi_connectivity=8)
    with pytest.raises(SurfacesInputError):
        surfaces(truth=g, pred=g, topo_tiles=(0, 1, 1))
    with pytest.raises(SurfacesInputError):
        surfaces(truth=g, pred=g, spacing=(1, 1))
    with pytest.raises(SurfacesInputError):
        surfaces(truth=np.zeros(4), pred=np.zeros(4))


def test_empty_volumes_note_the_null_dimensions():
    r = surfaces(truth=np.zeros((4, 4, 4)), pred=np.zeros((4, 4, 4)))
    assert r["leaderboard"] == pytest.approx(1.0) and r["toposcore"] == 1.0
    assert set(r["notes"]) == {"topoF1_0", "topoF1_1", "topoF1_2"}
