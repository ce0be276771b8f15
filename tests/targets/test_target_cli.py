"""`segscore target` / `score` end to end: layout, refusals and overrides, --origin, real targets."""

import json

import numpy as np
import pytest

from segscore.ink import targets
from tests.cli_checks import one_line_error
from tests.targets.helpers import make_target, reading_map, write_png



@pytest.fixture
def tgt(tmp_path):
    folder, ink, mask = make_target(tmp_path / "t1")
    pred = reading_map(ink)
    write_png(tmp_path / "pred.png", pred)
    return {"dir": folder, "ink": ink, "mask": mask, "pred": pred, "png": tmp_path / "pred.png", "tmp": tmp_path}


def test_json_layout_and_alias(cli, tgt):
    code, out, err = cli("score", tgt["png"], tgt["dir"], "--json")
    assert code == 0, err
    r = json.loads(out)
    assert list(r)[:6] == ["target", "prediction", "registration", "scoring_enabled", "metrics", "floors"]
    assert set(r["registration"]) >= {"median_residual_voxels", "placement_offset_level2_px", "placement_mm",
                                      "placement_passed"}
    assert set(r["floors"]) == {"all_positive", "constant_0_5", "uniform_random"}
    assert r["floors"]["uniform_random"]["seed"] == 0
    assert r == json.loads(json.dumps(targets.score_target(tgt["png"], tgt["dir"])))
    card = targets.score_map(tgt["pred"], tgt["ink"], tgt["mask"])
    assert r["metrics"]["roc_auc"] == card["roc_auc"]
    code2, out2, _ = cli("target", tgt["png"], tgt["dir"], "--json", "--seed", "3")
    assert json.loads(out2)["floors"]["uniform_random"]["seed"] == 3


def test_text_is_a_markdown_scorecard(cli, tgt):
    code, out, err = cli("target", tgt["png"], tgt["dir"], "--json-out", tgt["tmp"] / "card.json")
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(rows) == 5 and "ap_prevalence_lift" in rows[0]
    assert rows[1].startswith("| pred.png vs t1 |")
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["floor: all_positive", "floor: constant_0_5",
                                                           "floor: uniform_random"]
    saved = json.loads((tgt["tmp"] / "card.json").read_text())
    assert saved["metrics"]["n_pixels"] == int(tgt["mask"].sum())


def test_without_mask_every_pixel_scores(cli, tmp_path):
    folder, ink, _ = make_target(tmp_path / "nomask", mask=False)
    np.save(tmp_path / "p.npy", reading_map(ink, dtype=np.float32))
    code, out, err = cli("target", tmp_path / "p.npy", folder, "--json")
    assert code == 0, err
    m = json.loads(out)["metrics"]
    assert m["n_pixels"] == ink.size and m["quantized"] is False


def test_non_scoring_refused_then_allowed(cli, tmp_path, tgt):
    folder, _, _ = make_target(tmp_path / "ns", meta={"scoring": {"enabled": False, "reason": "Record only. X"}})
    code, out, err = cli("score", tgt["png"], folder)
    one_line_error(code, out, err, "--allow-non-scoring")
    code, out, err = cli("score", tgt["png"], folder, "--allow-non-scoring", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["scoring_enabled"] is False and r["overrides"] == ["allow_non_scoring"]


def test_missing_scoring_key_means_enabled(cli, tgt):
    meta = json.loads((tgt["dir"] / "meta.json").read_text())
    assert "scoring" not in meta
    code, out, _ = cli("score", tgt["png"], tgt["dir"], "--json")
    assert json.loads(out)["scoring_enabled"] is True


def test_failing_placement_refused_then_allowed(cli, tmp_path, tgt):
    meta = {"registration": {"median_residual": 8.0, "placement": {"offset_level2_px": 53.3, "offset_mm": 0.51,
                                                                   "passed": False,
                                                                   "gate_threshold_level2_px": 48.0}}}
    folder, _, _ = make_target(tmp_path / "fp", meta=meta)
    code, out, err = cli("score", tgt["png"], folder)
    one_line_error(code, out, err, "--allow-failing-placement")
    assert "53.3" in err
    code, out, err = cli("score", tgt["png"], folder, "--allow-failing-placement", "--json")
    assert code == 0, err
    assert json.loads(out)["registration"]["placement_passed"] is False


def test_wrong_shape_names_the_region(cli, tgt):
    write_png(tgt["tmp"] / "small.png", tgt["pred"][:-1])
    code, out, err = cli("score", tgt["tmp"] / "small.png", tgt["dir"])
    one_line_error(code, out, err, "meta.json region y0=100 x0=200")


@pytest.mark.parametrize("bad,fragment", [(1.5, "outside [0, 1]"), (-0.2, "outside [0, 1]"), (np.nan, "NaN")])
def test_bad_values_refused(cli, tgt, bad, fragment):
    p = reading_map(tgt["ink"], dtype=np.float64)
    p[3, 4] = bad
    np.save(tgt["tmp"] / "bad.npy", p)
    code, out, err = cli("score", tgt["tmp"] / "bad.npy", tgt["dir"])
    one_line_error(code, out, err, fragment)


def test_slack_of_1e6_is_clipped(tgt):
    p = reading_map(tgt["ink"], dtype=np.float64)
    p[0, 0] = 1 + 5e-7
    p[0, 1] = -5e-7
    r = targets.score_target(p, tgt["dir"], floors=False)
    assert r["metrics"]["roc_auc"] is not None


def test_missing_inputs(cli, tgt, tmp_path):
    one_line_error(*cli("score", tgt["png"], tmp_path / "nope"), "no such target folder")
    (tmp_path / "empty").mkdir()
    one_line_error(*cli("score", tgt["png"], tmp_path / "empty"), "gt_ink.png")
    one_line_error(*cli("score", tmp_path / "missing.png", tgt["dir"]), "missing.png")


def test_origin_cuts_a_larger_map(cli, tgt):
    big = np.zeros((200, 300), np.uint8)
    oy, ox = 60, 150  # region y0=100 x0=200: the target starts at row 40, column 50 of the map
    big[40:40 + 48, 50:50 + 64] = tgt["pred"]
    write_png(tgt["tmp"] / "big.png", big)
    code, out, err = cli("score", tgt["tmp"] / "big.png", tgt["dir"], "--origin", oy, ox, "--json")
    assert code == 0, err
    r = json.loads(out)
    direct = targets.score_target(tgt["png"], tgt["dir"])
    assert r["metrics"] == direct["metrics"] and r["floors"] == direct["floors"]
    assert r["crop"] == {"y0": 40, "x0": 50, "h": 48, "w": 64}
    code, out, err = cli("score", tgt["tmp"] / "big.png", tgt["dir"], "--origin", 150, 0)
    one_line_error(code, out, err, "does not cover meta.json region")


def test_real_scoring_target(cli, shared_data, tmp_path):
    sk = pytest.importorskip("sklearn.metrics")
    d = shared_data / "scrollgt" / "scroll1_20231210121321"
    if not d.exists():
        pytest.skip("scrollgt scoring target absent")
    tgt = targets.load_target(d)
    ink = (tgt.codes & 1).astype(bool)
    rng = np.random.default_rng(0)
    pred = np.clip(np.roll(ink, (31, -8), axis=(0, 1)) * 0.4 + rng.random(ink.shape) * 0.6, 0, 1)
    pred8 = np.rint(pred * 255).astype(np.uint8)
    write_png(tmp_path / "p.png", pred8)
    code, out, err = cli("score", tmp_path / "p.png", d, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["scoring_enabled"] is True and r["registration"]["placement_passed"] is True
    m = r["metrics"]
    assert m["n_pixels"] == 4096 * 4096
    assert m["positive_rate"] == pytest.approx(0.1842939853668213, abs=1e-12)  # meta's registered_ink_fraction
    assert r["floors"]["all_positive"]["roc_auc"] == 0.5
    assert r["floors"]["all_positive"]["ap_prevalence_lift"] == 1.0
    p = m["positive_rate"]
    assert r["floors"]["all_positive"]["val_f1"] == pytest.approx(2 * p / (1 + p))
    assert abs(r["floors"]["uniform_random"]["roc_auc"] - 0.5) < 0.002
    # scikit-learn on a 1024 x 1024 corner of the same map and label
    sub = (slice(0, 1024), slice(0, 1024))
    card = targets.score_map(pred8[sub], ink[sub])
    y, s = ink[sub].ravel(), pred8[sub].ravel() / 255.0
    assert card["average_precision"] == pytest.approx(sk.average_precision_score(y, s), abs=1e-9)
    assert card["roc_auc"] == pytest.approx(sk.roc_auc_score(y, s), abs=1e-9)


def test_real_non_scoring_target_refused(cli, shared_data, tmp_path):
    d = shared_data / "scrollgt" / "scroll1_20230702185753"
    if not d.exists():
        pytest.skip("scrollgt non-scoring target absent")
    write_png(tmp_path / "p.png", np.zeros((4096, 4096), np.uint8))
    one_line_error(*cli("score", tmp_path / "p.png", d), "non-scoring")
    code, out, err = cli("score", tmp_path / "p.png", d, "--allow-non-scoring", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["metrics"]["roc_auc"] == 0.5 and r["scoring_enabled"] is False


def test_tiff_and_zarr_predictions(cli, tgt):
    import tifffile
    import zarr

    p16 = reading_map(tgt["ink"], dtype=np.uint16)
    tifffile.imwrite(tgt["tmp"] / "p16.tif", p16)
    pf = reading_map(tgt["ink"], dtype=np.float32)
    z = zarr.open_array(str(tgt["tmp"] / "p.zarr"), mode="w", shape=pf.shape, dtype=pf.dtype, chunks=(16, 16),
                        zarr_format=3)
    z[...] = pf
    for path, quantized in ((tgt["tmp"] / "p16.tif", False), (tgt["tmp"] / "p.zarr", False)):
        code, out, err = cli("target", path, tgt["dir"], "--json", "--no-floors")
        assert code == 0, err
        r = json.loads(out)
        assert r["metrics"]["quantized"] is quantized and "floors" not in r
    direct16 = targets.score_map(p16, tgt["ink"], tgt["mask"])
    code, out, _ = cli("target", tgt["tmp"] / "p16.tif", tgt["dir"], "--json", "--no-floors")
    assert json.loads(out)["metrics"]["average_precision"] == direct16["average_precision"]


@pytest.mark.parametrize("meta, needle", [
    ({"region": [1, 2]}, "region is [1, 2]; it should be an object"),
    ({"region": {"y0": "4000", "x0": 1, "size": 48}}, "region.y0 is '4000'; it should be a whole number"),
    ({"scoring": {"enabled": "no"}}, "scoring.enabled is 'no'; it should be true or false"),
    ({"registration": {"placement": {"passed": 1}}}, "registration.placement.passed is 1"),
    ({"registration": {"placement": {"offset_level2_px": "far"}}}, "registration.placement.offset_level2_px"),
])
def test_a_target_meta_field_of_the_wrong_type_is_named(cli, tmp_path, meta, needle):
    from tests.cli_checks import one_line_error
    from tests.targets.helpers import make_target, write_png

    folder, ink, _ = make_target(tmp_path / "t", meta=meta)
    write_png(tmp_path / "p.png", np.where(ink, 200, 20).astype(np.uint8))
    one_line_error(*cli("target", tmp_path / "p.png", folder), f"meta.json: {needle}")
