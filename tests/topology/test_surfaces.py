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


# ---- issue 35/36: roles, topometrics' options, the prepared truth


def test_a_float_prediction_needs_a_threshold():
    p, g, _ = CASES["probability"]
    with pytest.raises(SurfacesInputError, match="segscore will not pick a threshold for you") as e:
        surfaces(truth=g, pred=p)
    assert "fg_threshold" in str(e.value) and "\n" not in str(e.value)
    # 0/1 floats (and NaN, background as topometrics reads it) need none
    f = g.astype(np.float32)
    f[0, 0, 0] = np.nan
    assert surfaces(truth=g, pred=f)["surface_dice"] == surfaces(truth=g, pred=np.nan_to_num(f))["surface_dice"]
    assert surfaces(truth=g, pred=p, fg_threshold=0.5)["leaderboard"] == \
        pytest.approx(FIXTURE["probability"]["result"]["leaderboard"], abs=1e-9)


def test_swapped_roles_warn_once():
    p, lab, _ = CASES["ignore_label"]
    swapped = surfaces(truth=p, pred=lab)  # the labels (with 2s) passed as the prediction
    hits = [w for w in swapped["warnings"] if "swapped" in w]
    assert len(hits) == 1 and "\n" not in hits[0]
    right = surfaces(truth=lab, pred=p)
    assert not any("swapped" in w for w in right["warnings"])
    assert not any("swapped" in w for w in surfaces(truth=p, pred=lab, ignore_label=None)["warnings"])


def test_dims_and_a_mapping_of_topo_weights():
    p, g, _ = CASES["cavity_whole"]
    full = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1))
    f1 = [full[f"topoF1_{k}"] for k in range(3)]
    only02 = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1), dims=(0, 2))
    assert only02["topoF1_1"] is None and "topoF1_1" in only02["notes"]
    defined = [k for k in (0, 2) if f1[k] is not None]
    w = {0: 0.34, 2: 0.33}
    want = sum(w[k] * f1[k] for k in defined) / sum(w[k] for k in defined)
    assert only02["toposcore"] == pytest.approx(want, abs=1e-15)
    assert only02["params"]["dims"] == [0, 2]
    # a mapping merges over the defaults; a sequence per dimension of dims lines up with it
    m = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1), topo_weights={1: 0.0})
    assert m["params"]["topo_weights"] == [0.34, 0.0, 0.33]
    s = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1), dims=(0, 2), topo_weights=(1.0, 3.0))
    assert s["params"]["topo_weights"] == [1.0, 0.0, 3.0]
    for bad in ({"dims": (3,)}, {"dims": ()}, {"topo_weights": {5: 1.0}}, {"topo_weights": (1.0, 2.0)},
                {"topo_weights": ("a", 1, 1)}):
        with pytest.raises(SurfacesInputError):
            surfaces(truth=g, pred=p, **bad)


def test_a_float_ignore_mask_ignores_nan_and_inf():
    p, g, _ = CASES["holes"]
    m = np.zeros(g.shape, np.float32)
    m[:, :, :5] = np.nan
    m[:, :, 5:8] = np.inf
    m[:, :, 8:10] = 0.5
    as_bool = surfaces(truth=g, pred=p, ignore_mask=m.astype(bool))
    got = surfaces(truth=g, pred=p, ignore_mask=m)
    assert got == as_bool and got["ignored_voxels"] == int(np.prod(g.shape[:2])) * 10


def test_a_perfect_leaderboard_is_one():
    _, g, _ = CASES["identical"]
    weights = (0.1, 0.35, 0.2)  # renormalised, their sum rounds to 1.0000000000000002
    r = surfaces(truth=g, pred=g.copy(), weights=weights)
    w = r["params"]["weights"]
    raw = w[0] * r["toposcore"] + w[1] * r["surface_dice"] + w[2] * r["voi_score"]
    assert raw > 1.0 and r["leaderboard"] == 1.0  # clipped to [0, 1], as the Kaggle wrapper clips
    assert surfaces(truth=g, pred=g.copy())["leaderboard"] == 1.0


@pytest.mark.parametrize("name", ["ignore_label", "anisotropic", "slice_2d", "cavity_whole", "empty_gt", "voi_6_exp"])
def test_a_prepared_truth_gives_the_same_result(name):
    from segscore.topology.score import prepare_surfaces

    p, g, opts = CASES[name]
    truth_opts = {k: v for k, v in opts.items() if k in ("spacing", "topo_tiles", "voi_connectivity", "fg_threshold")}
    prepared = prepare_surfaces(g, **truth_opts)
    assert "PreparedSurfaces(shape=" in repr(prepared)
    want = surfaces(truth=g, pred=p, **opts)
    assert surfaces(truth=prepared, pred=p, **opts) == want
    assert surfaces(truth=prepared, pred=p, **{k: v for k, v in opts.items() if k not in truth_opts}) == want
    assert surfaces(truth=prepared, pred=g if g.dtype == bool else (g == 1), **opts)["foreground_pred"] >= 0


def test_a_prepared_truth_refuses_other_truth_options():
    from segscore.topology.score import prepare_surfaces

    p, g, _ = CASES["holes"]
    prepared = prepare_surfaces(g, voi_connectivity=6)
    with pytest.raises(SurfacesInputError, match="prepared with voi_connectivity=6"):
        surfaces(truth=prepared, pred=p, voi_connectivity=18)
    with pytest.raises(SurfacesInputError, match="ignore_mask"):
        surfaces(truth=prepared, pred=p, ignore_mask=np.zeros(g.shape, bool))
    with pytest.raises(SurfacesInputError, match="differ"):
        surfaces(truth=prepared, pred=p[:-1])


def test_big_tiles_one_at_a_time_give_the_same_counts(monkeypatch):
    import segscore.topology.score as S

    p, g, opts = CASES["ignore_label"]
    want = surfaces(truth=g, pred=p, threads=2)
    monkeypatch.setattr(S, "MAX_PARALLEL_TILE_VOXELS", 10)  # every tile "big": the packed path
    import segscore.metrics.betti as B

    seen, real = [], B.betti_matching
    monkeypatch.setattr(B, "betti_matching", lambda a, b, threads=1: seen.append(threads) or real(a, b, threads=threads))
    assert surfaces(truth=g, pred=p, threads=2) == want
    assert seen and set(seen) == {2}  # one tile at a time, each matched on the two threads
    monkeypatch.setattr(B, "betti_matching", real)
    prepared = S.prepare_surfaces(g)
    assert surfaces(truth=prepared, pred=p) == want
    assert prepared.fg is not None and prepared.ignore is not None  # the caller's: never emptied
    assert surfaces(truth=prepared, pred=p) == want


def test_voi_sparse_and_dense_tables_agree():
    """Padding the truth's component areas with empty components pushes the overlap table past
    the dense size: the sorted (sparse) count must give the same VOI to the bit."""
    import segscore.topology.score as S

    rng = np.random.default_rng(7)
    p = rng.random((14, 15, 16)) < 0.3
    g = rng.random((14, 15, 16)) < 0.3
    t_at, t_area = S.truth_components(g, 6)
    dense = S._voi(t_at, t_area, p, g, 6, 0.3, "one_over_one_plus")
    padded = np.concatenate([t_area, np.zeros(1 << 22, np.int64)])
    sparse = S._voi(t_at, padded, p, g, 6, 0.3, "one_over_one_plus")
    assert dense == sparse and dense == voi(p, g, connectivity=6) and dense["voi_total"] > 0


def test_the_passes_run_on_the_engines_threads(monkeypatch):
    """No private thread pool: the tiles, VOI and surface Dice go through
    ``segscore.engine.executor.reduce_windows`` (so ``thread_budget`` caps them)."""
    import inspect

    import segscore.engine.executor as E
    import segscore.topology.score as S

    assert "ThreadPoolExecutor" not in inspect.getsource(S)
    seen = []
    real = E.reduce_windows

    def spy(fn, windows, merge, **kw):
        seen.append((len(list(windows)), kw.get("workers")))
        return real(fn, windows, merge, **kw)

    monkeypatch.setattr(E, "reduce_windows", spy)
    p, g, _ = CASES["specks"]
    with E.thread_budget(1):
        one = surfaces(truth=g, pred=p, threads=2)
    assert seen == [(10, 2)]  # 8 tiles, VOI, surface Dice
    assert one == surfaces(truth=g, pred=p, threads=2)
