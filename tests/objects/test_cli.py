"""`segscore objects` and `segscore holdout` through the CLI, with their exit codes."""

import json

import numpy as np
import pytest

from segscore.objects import score_segmentation
from tests.objects.helpers import synthetic_pair
from tests.objects.test_holdout import write_set


@pytest.fixture
def pair(tmp_path):
    import tifffile

    t, p = synthetic_pair(seed=2, n=30, shape=(100, 90))
    tifffile.imwrite(tmp_path / "t.tif", t)
    np.save(tmp_path / "p.npy", p)
    return tmp_path, t, p


def test_objects_json_is_the_api_dict(cli, pair):
    d, t, p = pair
    code, out, err = cli("objects", d / "t.tif", d / "p.npy", "--json", "--tolerances", "1", "2")
    assert code == 0 and err == ""
    got = json.loads(out)
    ref = score_segmentation(t, p, boundary_tolerances=(1, 2))
    assert got.keys() == ref.keys() and got["f1"] == ref["f1"] and got["splits"] == ref["splits"]
    code, out, _ = cli("objects", d / "t.tif", d / "p.npy", "--iou", "0.7", "--json-out", d / "r.json")
    assert code == 0 and "at IoU 0.7" in out and json.loads((d / "r.json").read_text())["match_iou"] == 0.7


def test_objects_png_and_3d(cli, tmp_path):
    from PIL import Image

    t, p = synthetic_pair(seed=1, n=10, shape=(50, 60), dtype=np.uint8)
    Image.fromarray(t).save(tmp_path / "t.png")
    Image.fromarray(p).save(tmp_path / "p.png")
    code, out, _ = cli("objects", tmp_path / "t.png", tmp_path / "p.png", "--json")
    assert code == 0 and json.loads(out)["n_truth"] == score_segmentation(t, p)["n_truth"]
    t3, p3 = synthetic_pair(seed=1, n=8, shape=(20, 24, 22), r=(3, 5))
    np.save(tmp_path / "t3.npy", t3)
    np.save(tmp_path / "p3.npy", p3)
    code, out, _ = cli("objects", tmp_path / "t3.npy", tmp_path / "p3.npy", "--json")
    assert code == 0 and json.loads(out)["true_positives"] == score_segmentation(t3, p3)["true_positives"]


def test_objects_refusals(cli, pair):
    d, t, p = pair
    np.save(d / "small.npy", p[:10])
    np.save(d / "neg.npy", -np.ones((100, 90), np.int32))
    np.save(d / "prob.npy", np.full((100, 90), 0.5))
    for args, needle in [((d / "t.tif", d / "absent.npy"), "absent.npy"),
                         ((d / "t.tif", d / "small.npy"), "shape"),
                         ((d / "t.tif", d / "neg.npy"), "negative"),
                         ((d / "t.tif", d / "prob.npy"), "fractional"),
                         ((d / "t.tif", d / "p.npy", "--iou", "1.5"), "--iou: 1.5 must be at most 1"),
                         ((d / "t.tif", d / "p.npy", "--tolerances", "-1"), "tolerances")]:
        code, out, err = cli("objects", *args)
        assert code == 2, args
        assert err.startswith("segscore objects: ") and needle in err and err.count("\n") == 1, err


def test_holdout_scores_and_writes_csv(cli, tmp_path):
    m = write_set(tmp_path)
    code, out, err = cli("holdout", m, "--predictions", tmp_path / "pred", "--baseline", tmp_path / "base",
                         "--csv", tmp_path / "card.csv")
    assert code == 0 and err == ""
    assert out.startswith(f"manifest: {m}  predictions: {tmp_path / 'pred'}\nheld-out toy@2.1: 3 fields")
    assert "finetuned" in out and "delta" in out
    from segscore.objects import read_scorecard_csv

    card = read_scorecard_csv((tmp_path / "card.csv").read_text())
    assert card["holdout_version"] == "2.1" and "f1" in card and card["n_fields"]["finetuned"] == 3
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--json")
    res = json.loads(out)
    assert code == 0 and res["n_fields"] == 3 and len(res["per_field"]) == 3 and res["digest_problems"] == []
    assert "rows" not in res and res["finetuned"]["n_fields"] == 3


def test_holdout_surface_pools_distances_in_each_fields_spacing(cli, tmp_path):
    """``holdout --surface`` pools the per-object distances; ``--spacing`` scales them, and
    without it a field takes the spacing its files state (a truth TIFF's resolution here)."""
    import tifffile

    m = write_set(tmp_path)
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--surface", "--json")
    unit = json.loads(out)["finetuned"]
    assert code == 0 and unit["hd95_per_object"] is not None and unit["assd_per_object"] > 0
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--surface", "--spacing", "2", "2",
                       "--json")
    twice = json.loads(out)["finetuned"]
    assert twice["hd95_per_object"] == pytest.approx(2 * unit["hd95_per_object"], rel=1e-12)
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--json")
    assert "hd95_per_object" not in json.loads(out)["finetuned"]  # without --surface: the default card
    manifest = json.loads(m.read_text())
    for f in manifest["fields"]:  # every truth states 2 cm a pixel; its prediction states nothing
        t = tifffile.imread(tmp_path / f["truth"])
        tifffile.imwrite(tmp_path / f["truth"], t, resolution=(0.5, 0.5), resolutionunit="CENTIMETER")
        f["sha256"] = ""
    m.write_text(json.dumps(manifest))
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--surface", "--json")
    stated = json.loads(out)["finetuned"]
    assert code == 0 and stated["hd95_per_object"] == pytest.approx(twice["hd95_per_object"], rel=1e-12)
    # fields of different voxel sizes pool their distances (one unit); the pooled spacing is none
    t = tifffile.imread(tmp_path / manifest["fields"][0]["truth"])
    tifffile.imwrite(tmp_path / manifest["fields"][0]["truth"], t, resolution=(0.25, 0.25), resolutionunit="CENTIMETER")
    code, out, _ = cli("holdout", m, "--predictions", tmp_path / "pred", "--surface", "--json")
    res = json.loads(out)
    assert code == 0 and res["finetuned"]["spacing"] is None and "different voxel spacings" in res["notes"]["finetuned.spacing"]
    assert [r["spacing"] for r in res["per_field"]] == [[4.0, 4.0], [2.0, 2.0], [2.0, 2.0]]
    nib = pytest.importorskip("nibabel")
    img = nib.Nifti1Image(tifffile.imread(tmp_path / manifest["fields"][1]["truth"]), np.eye(4))
    img.header.set_zooms((2.0, 2.0))
    img.header.set_xyzt_units("mm")
    nib.save(img, tmp_path / "truth" / "sub" / "f1.nii")
    manifest["fields"][1]["truth"] = "truth/sub/f1.nii"  # its prediction keeps the name f1
    m.write_text(json.dumps(manifest))
    code, _, err = cli("holdout", m, "--predictions", tmp_path / "pred", "--surface", "--json")
    assert code == 2 and "pool in one unit" in err and err.count("\n") == 1


def test_holdout_verify_exit_codes(cli, tmp_path):
    m = write_set(tmp_path)
    code, out, _ = cli("holdout", m, "--verify")
    assert code == 0 and "all 3 truth masks match" in out
    (tmp_path / "truth/sub/f0.tif").write_bytes(b"x")
    code, out, err = cli("holdout", m, "--verify", "--json")
    assert code == 3 and len(json.loads(out)["problems"]) == 1 and "does not match its digest" in err and "m.json" in err
    code, out, err = cli("holdout", m, "--predictions", tmp_path / "pred")
    assert code == 2 and "f0.tif" in err  # the changed file is no longer a TIFF: refused, named


def test_holdout_without_digests_scores_with_warnings(cli, tmp_path):
    m = write_set(tmp_path, n=2, digests=False)
    code, out, err = cli("holdout", m, "--predictions", tmp_path / "pred", "--json")
    assert code == 0 and len(json.loads(out)["digest_problems"]) == 2
    assert err.count("warning: no digest published") == 2
    code, _, err = cli("holdout", m, "--verify")
    assert code == 3


def test_holdout_refusals(cli, tmp_path):
    m = write_set(tmp_path, n=1)
    code, _, err = cli("holdout", m)
    assert code == 2 and "--predictions" in err
    (tmp_path / "empty").mkdir()
    code, _, err = cli("holdout", m, "--predictions", tmp_path / "empty")
    assert code == 2 and "no prediction for truth truth/sub/f0.tif" in err
    (tmp_path / "bad.json").write_text(json.dumps({"name": "x", "fields": [{"image": "a", "truth": "b"}]}))
    code, _, err = cli("holdout", tmp_path / "bad.json", "--verify")
    assert code == 2 and "no version" in err
    code, _, err = cli("holdout", tmp_path / "nope.json", "--verify")
    assert code == 2 and "nope.json" in err


def test_objects_zarr_3d_tiff_and_big_endian(cli, tmp_path):
    import tifffile
    import zarr

    t, p = synthetic_pair(seed=6, n=8, shape=(16, 30, 28), r=(3, 5))
    z = zarr.open_array(str(tmp_path / "t.zarr"), mode="w", shape=t.shape, dtype=t.dtype, chunks=(8, 16, 16),
                        zarr_format=3)
    z[...] = t
    tifffile.imwrite(tmp_path / "p.tif", p.astype(">u2"), byteorder=">")
    code, out, err = cli("objects", tmp_path / "t.zarr", tmp_path / "p.tif", "--json")
    assert code == 0, err
    ref = score_segmentation(t, p)
    got = json.loads(out)
    assert got["true_positives"] == ref["true_positives"] and got["boundary_f1_1px"] == ref["boundary_f1_1px"]
    assert score_segmentation(t.astype(">i4"), p.astype(">u2"))["f1"] == ref["f1"]


def test_objects_csv_is_the_flat_scorecard(cli, pair, tmp_path):
    import csv

    d, t, p = pair
    code, out, err = cli("objects", d / "t.tif", d / "p.npy", "--json", "--csv", tmp_path / "s.csv")
    assert code == 0, err
    got = json.loads(out)
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert len(rows) == 1 and float(rows[0]["f1"]) == got["f1"] and int(rows[0]["splits"]) == got["splits"]


def test_perturb_says_json_out_and_keeps_info_json(cli, tmp_path):
    from segscore.curvilinear.masks import save_mask
    from tests.curvilinear.helpers import vessel_tree

    save_mask(vessel_tree((64, 64), seed=1), tmp_path / "m.png")
    for option in ("--json-out", "--info-json"):
        out = tmp_path / f"{option[2:]}.json"
        code, _, err = cli("perturb", tmp_path / "m.png", "--operator", "break", "--severity", "0.3", "-o",
                           tmp_path / "o.png", option, out)
        assert code == 0, err
        assert json.loads(out.read_text())["operator"] == "break"
