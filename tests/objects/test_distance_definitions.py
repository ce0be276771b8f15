"""Named surface-distance definitions (``distance_definition=`` / ``--distance-definition``):
MONAI's (the default), panoptica's and DeepMind surface-distance's HD95, ASSD (and HD, NSD), per
object and of the whole foregrounds, against the peers' own values recorded by
benchmarks/panoptica_fixtures.py (tests/data/panoptica, tests/data/surface_distance), an
all-pairs oracle, and a brute-force oracle of the corner scan."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from segscore.errors import ScoreError
from segscore.objects import score_segmentation, surface_distances
from tests.objects.helpers import synthetic_pair
from tests.objects.test_surface import all_pairs, oracle_surface, random_masks

DATA = Path(__file__).resolve().parents[1] / "data"
TOL = 1e-9


def panoptica_doc():
    return json.loads((DATA / "panoptica" / "panoptica_2.1.7.json").read_text())


def pair_of(case):
    from benchmarks.panoptica_fixtures import panoptica_pair

    return panoptica_pair(case)


# ---------------------------------------------------------------- panoptica

def test_per_instance_values_equal_panoptica_under_its_definition():
    n = 0
    for case in panoptica_doc()["cases"]:
        t, p = pair_of(case)
        pan, sp = case["result"], case["spacing"]
        s = score_segmentation(t, p, surface=True, spacing=sp, per_object=True, distance_definition="panoptica")
        assert s["distance_definition"] == "panoptica"
        rows = [r for r in s["per_object"] if r["iou"] is not None]
        assert len(rows) == len(pan["instances"]) > 0
        for r, q in zip(rows, pan["instances"]):
            assert r["voxels_truth"] == q["voxel_count"]
            assert abs(r["hd95"] - q["hd95"]) <= TOL and abs(r["assd"] - q["assd"]) <= TOL
            n += 1
        assert abs(s["hd95_per_object"] - pan["sq_hd95"]) <= TOL and abs(s["assd_per_object"] - pan["sq_assd"]) <= TOL
        assert abs(s["hd95_per_object_sd"] - pan["sq_hd95_std"]) <= TOL
        assert abs(s["assd_per_object_sd"] - pan["sq_assd_std"]) <= TOL
        # panoptica 2.1.7's global binary values are computed without the spacing it was given
        u = score_segmentation(t, p, surface=True, distance_definition="panoptica")
        assert abs(u["hd95_pixel"] - pan["global_bin_hd95"]) <= TOL
        assert abs(u["assd_pixel"] - pan["global_bin_assd"]) <= TOL
        # the default (MONAI's) differs where the directions disagree, and never lies below
        m = score_segmentation(t, p, surface=True, spacing=sp, per_object=True)
        assert m["distance_definition"] == "monai"
        mrows = [r for r in m["per_object"] if r["iou"] is not None]
        assert all(a["hd95"] >= b["hd95"] - TOL for a, b in zip(mrows, rows))
    assert n >= 50


@pytest.mark.parametrize("nd", [2, 3])
def test_panoptica_and_monai_equal_an_all_pairs_oracle(nd):
    rng = np.random.default_rng(40 + nd)
    checked = 0
    for _ in range(40):
        a, b = random_masks(rng, nd)
        if not (a.any() and b.any()):
            continue
        sp = tuple(float(v) for v in rng.uniform(0.3, 3.0, nd))
        tol = float(rng.uniform(0, 3))
        D = all_pairs(np.argwhere(oracle_surface(a)), np.argwhere(oracle_surface(b)), sp)
        dab, dba = D.min(1), D.min(0)
        both = np.concatenate([dab, dba])
        pan = surface_distances(a, b, spacing=sp, tolerance=tol, distance_definition="panoptica")
        assert pan["hd95"] == np.percentile(both, 95) and pan["hd"] == both.max()
        assert pan["assd"] == pytest.approx(np.mean((dab.mean(), dba.mean())), rel=1e-12)
        assert pan["nsd"] == (both <= tol).mean()
        mon = surface_distances(a, b, spacing=sp, tolerance=tol, distance_definition="monai")
        assert mon == surface_distances(a, b, spacing=sp, tolerance=tol)  # the default
        assert mon["hd95"] == max(np.percentile(dab, 95), np.percentile(dba, 95))
        assert mon["assd"] == pytest.approx(both.mean(), rel=1e-12)
        checked += 1
    assert checked > 20


def test_per_pair_kernel_pooled_percentile_equals_numpy():
    """The per-object kernel's pooled 95th percentile (panoptica) against NumPy on each pair."""
    from segscore.objects import directed_distances

    t, p = synthetic_pair(shape=(70, 80), n=25, seed=13, p_split=0.2, p_merge=0.2)
    sp = (0.6, 1.7)
    s = score_segmentation(t, p, surface=True, spacing=sp, per_object=True, distance_definition="panoptica",
                           threads=2)
    rows = [r for r in s["per_object"] if r["iou"] is not None]
    assert rows
    for r in rows:
        dab, dba = directed_distances(t == r["truth_id"], p == r["pred_id"], spacing=sp)
        assert r["hd95"] == np.percentile(np.concatenate([dab, dba]), 95)


# ---------------------------------------------------------------- DeepMind surface-distance

def test_whole_masks_equal_deepmind_surface_distance():
    from benchmarks.panoptica_fixtures import balls

    doc = json.loads((DATA / "panoptica" / "surface_distance_0.1.json").read_text())
    for c in doc["cases"]:
        a, b = balls(c["shape"], c["a"]), balls(c["shape"], c["b"])
        r = surface_distances(a, b, spacing=c["spacing"], tolerance=c["tolerance"], distance_definition="deepmind")
        dm = c["result"]
        assert r["distance_definition"] == "deepmind"
        for key in ("hd", "hd95", "nsd"):
            assert abs(r[key] - dm[key]) <= TOL, key
        assert abs(r["assd"] - 0.5 * (dm["asd"][0] + dm["asd"][1])) <= TOL
    assert len(doc["cases"]) == 24


def test_per_instance_values_equal_deepmind_surface_distance():
    doc = json.loads((DATA / "surface_distance" / "objects_0.1.json").read_text())
    n = 0
    for case in doc["cases"]:
        t, p = pair_of(case)
        dm = case["result"]
        s = score_segmentation(t, p, surface=True, spacing=case["spacing"], nsd_tolerance=case["tolerance"],
                               per_object=True, distance_definition="deepmind")
        rows = [r for r in s["per_object"] if r["iou"] is not None]
        assert [(r["truth_id"], r["pred_id"]) for r in rows] == [(q["truth_id"], q["pred_id"]) for q in dm["instances"]]
        for r, q in zip(rows, dm["instances"]):
            assert abs(r["hd95"] - q["hd95"]) <= TOL and abs(r["assd"] - 0.5 * sum(q["asd"])) <= TOL
            n += 1
        for key in ("hd95", "assd", "nsd"):
            want = [q[key] if key != "assd" else 0.5 * sum(q["asd"]) for q in dm["instances"]]
            assert abs(s[f"{key}_per_object"] - np.mean(want)) <= TOL, key
        fg = dm["foreground"]
        for key in ("hd", "hd95", "nsd"):
            assert abs(s[f"{key}_pixel"] - fg[key]) <= TOL, key
        assert abs(s["assd_pixel"] - 0.5 * sum(fg["asd"])) <= TOL
        json.dumps(s, allow_nan=False)
    assert n >= 50


def oracle_corners(lab):
    """Border corners of each object by brute force: DeepMind's neighbour codes of ``lab == v``
    (scipy's correlate with its encoding kernel, the image padded by zeros)."""
    nd = lab.ndim
    kernel = (np.array([[8, 4], [2, 1]]) if nd == 2 else np.array([[[128, 64], [32, 16]], [[8, 4], [2, 1]]]))
    full = 15 if nd == 2 else 255
    rows = []
    for v in np.unique(lab[lab > 0]):
        m = np.pad((lab == v).astype(np.int64), [(0, 1)] * nd)
        code = ndimage.correlate(m, kernel, mode="constant", cval=0)
        for idx in np.argwhere((code != 0) & (code != full)):
            rows.append((tuple(int(i) for i in idx), int(v), int(code[tuple(idx)])))
    return sorted(rows)


@pytest.mark.parametrize("nd", [2, 3])
def test_corner_scan_equals_a_brute_force_oracle(nd):
    from segscore.metrics.surface import corner_surfels

    rng = np.random.default_rng(50 + nd)
    cases = [np.zeros((3,) * nd, np.int32), np.ones((1,) * nd, np.int32), np.full((4,) * nd, 7, np.uint16)]
    for _ in range(30):
        shape = tuple(int(x) for x in rng.integers(1, 9 if nd == 2 else 6, nd))
        cases.append((rng.integers(0, 4, shape) * (rng.random(shape) < 0.7)).astype(np.int32))
    cases.append(cases[-1][::-1])  # not contiguous
    big = np.zeros((40, 50) if nd == 2 else (12, 14, 16), np.int32)  # outputs grown while scanning
    big[1::2, 1::2] = np.arange(1, big[1::2, 1::2].size + 1).reshape(big[1::2, 1::2].shape)
    cases.append(big)
    for lab in cases:
        (coords, ids, codes), (fg_coords, fg_codes) = corner_surfels(lab)
        pos = coords[:, 1:] if nd == 2 else coords
        got = sorted((tuple(int(i) for i in c), int(v), int(k)) for c, v, k in zip(pos, ids, codes))
        assert got == oracle_corners(lab)
        fpos = fg_coords[:, 1:] if nd == 2 else fg_coords
        got = sorted((tuple(int(i) for i in c), 1, int(k)) for c, k in zip(fpos, fg_codes))
        assert got == oracle_corners((lab != 0).astype(np.int32))
        if nd == 2:
            assert not coords[:, 0].any() and not fg_coords[:, 0].any()


def test_surfel_table_is_complement_symmetric_and_scales_with_spacing():
    from segscore.metrics.surface import surfel_table

    t3 = surfel_table((1.0, 1.0, 1.0))
    assert t3[0] == t3[255] == 0 and np.allclose(t3, t3[::-1], rtol=0, atol=1e-15)
    assert t3[1] == pytest.approx(np.sqrt(3) / 8, rel=1e-15)  # one corner: a triangle of legs sqrt(1/2)
    assert t3[int("00001111", 2)] == pytest.approx(1.0, rel=1e-15)  # half the cell: a unit square
    assert np.allclose(surfel_table((2.0, 2.0, 2.0)), 4 * t3, rtol=1e-15)
    t2 = surfel_table((2.0, 3.0))
    diag = 0.5 * np.hypot(2.0, 3.0)
    assert t2.tolist() == pytest.approx([0, diag, diag, 3.0, diag, 2.0, 2 * diag, diag, diag, 2 * diag, 2.0, diag,
                                         3.0, diag, diag, 0], rel=1e-15)


# ---------------------------------------------------------------- options, pooling, CLI

def test_names_and_refusals():
    a = np.zeros((10, 10), bool)
    a[2:6, 2:6] = True
    for name, want in (("MONAI", "monai"), ("Panoptica", "panoptica"), ("surface-distance", "deepmind"),
                       ("DeepMind", "deepmind"), (None, "monai")):
        assert surface_distances(a, a, distance_definition=name)["distance_definition"] == want
    with pytest.raises(ScoreError, match="monai, panoptica, deepmind"):
        surface_distances(a, a, distance_definition="nnunet")
    e = np.zeros_like(a)
    for name in ("panoptica", "deepmind"):
        r = surface_distances(a, e, distance_definition=name)
        assert r["hd95"] is None and "empty" in r["notes"]["hd95"]
        s = score_segmentation(a.astype(np.int32), e.astype(np.int32), surface=True, distance_definition=name)
        assert s["hd95_pixel"] is None and s["hd95_per_object"] is None and "empty" in s["notes"]["hd95_pixel"]
        json.dumps(s, allow_nan=False)


@pytest.mark.parametrize("definition", ["panoptica", "deepmind"])
def test_tiles_and_paths_change_nothing(definition, tmp_path):
    t, p = synthetic_pair(shape=(18, 20, 22), n=10, r=(3, 5), seed=7)
    whole = score_segmentation(t, p, surface=True, per_object=True, spacing=(2.0, 1.0, 0.5),
                               distance_definition=definition)
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    tiled = score_segmentation(str(tmp_path / "t.npy"), str(tmp_path / "p.npy"), surface=True, per_object=True,
                               spacing=(2.0, 1.0, 0.5), tile_rows=3, distance_definition=definition)
    tiled.pop("spacing_source")
    whole.pop("spacing_source")
    assert tiled == whole


def test_holdout_pools_one_definition_and_refuses_a_mix():
    from segscore.objects.holdout import score_holdout
    from segscore.objects.metrics import add_sums, field_sums

    a = synthetic_pair(shape=(60, 60), n=15, seed=21)
    b = synthetic_pair(shape=(50, 70), n=20, seed=22)
    res = score_holdout([a, b], name="h", version="1", surface=True, distance_definition="panoptica")
    one = [score_segmentation(*x, surface=True, per_object=True, distance_definition="panoptica") for x in (a, b)]
    vals = [r["hd95"] for s in one for r in s["per_object"] if r["iou"] is not None]
    assert res.metrics["distance_definition"] == "panoptica"
    assert res.metrics["hd95_per_object"] == pytest.approx(np.mean(vals), rel=1e-12)
    pooled = add_sums(field_sums(*a, surface=True, distance_definition="panoptica"),
                      field_sums(*b, surface=True, distance_definition="panoptica"))
    from segscore.objects.metrics import metrics_from_sums

    m = metrics_from_sums(pooled)
    assert m["distance_definition"] == "panoptica" and m["hd95_per_object"] == pytest.approx(np.mean(vals), rel=1e-12)
    with pytest.raises(ScoreError, match="different surface-distance definitions"):
        add_sums(field_sums(*a, surface=True, distance_definition="panoptica"), field_sums(*b, surface=True))


def test_cli_option(cli, tmp_path):
    t, p = synthetic_pair(shape=(40, 44), n=12, seed=5)
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    want = score_segmentation(t, p, surface=True, distance_definition="deepmind")
    code, out, err = cli("objects", tmp_path / "t.npy", tmp_path / "p.npy", "--surface", "--distance-definition",
                         "deepmind", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["distance_definition"] == "deepmind"
    assert got["hd95_per_object"] == want["hd95_per_object"] and got["assd_pixel"] == want["assd_pixel"]
    code, out, err = cli("objects", tmp_path / "t.npy", tmp_path / "p.npy", "--surface", "--json")
    assert code == 0 and json.loads(out)["distance_definition"] == "monai"
    code, out, err = cli("objects", tmp_path / "t.npy", tmp_path / "p.npy", "--surface", "--distance-definition",
                         "nnunet")
    assert code == 2 and "--distance-definition" in err
