"""Column targets: against a per-pixel NumPy/scikit-learn oracle of ScrollGT's definitions,
planted structure, floors, band independence, --origin, refusals, the real PHerc 1667 target."""

import json

import numpy as np
import pytest

from segscore import columns
from tests.cli_checks import one_line_error
from tests.columns.helpers import GRID, make_column_target, reading_prediction

sk = pytest.importorskip("sklearn.metrics")


def oracle(prob, valid, cols, meta, origin=(0, 0)):
    """ScrollGT's column metrics per pixel (float64 maps, scikit-learn AUCs)."""
    oy, ox = origin
    lo, hi = meta.get("line_pitch_range", [60, 220])
    scored = []
    for c in cols:
        y0, y1 = c["text_band"]
        x0, x1 = c["gx0"], c["gx1"]
        if not (y0 >= oy and x0 >= ox and y1 <= oy + prob.shape[0] and x1 <= ox + prob.shape[1]):
            continue
        sub = prob[y0 - oy:y1 - oy, x0 - ox:x1 - ox]
        v = valid[y0:y1, x0:x1] if valid is not None else np.ones(sub.shape, bool)
        if not v.any():
            continue
        peak = None
        if c["transcription"] == "text":
            with np.errstate(invalid="ignore"):
                prof = np.where(v.any(1), (sub * v).sum(1) / v.sum(1), np.nan)
            good = np.isfinite(prof)
            if good.sum() >= 3 * lo:
                p = np.where(good, prof, np.nanmean(prof))
                p = p - p.mean()
                d = (p * p).sum()
                peak = 0.0 if d <= 0 else max([0.0] + [(p[:-g] * p[g:]).sum() / d
                                                       for g in range(lo, min(hi + 1, len(p) - 1))])
        scored.append(dict(c=c, px=sub[v], peak=peak, y=(y0, y1), x=(x0, x1)))
    gut = []
    for a, b in zip(scored, scored[1:]):
        if b["x"][0] - a["x"][1] < 2:
            continue
        if a["c"].get("cross_strip") or b["c"].get("cross_strip"):
            continue
        y0, y1 = max(a["y"][0], b["y"][0]), min(a["y"][1], b["y"][1])
        if y1 - y0 < 8:
            continue
        sub = prob[y0 - oy:y1 - oy, a["x"][1] - ox:b["x"][0] - ox]
        v = valid[y0:y1, a["x"][1]:b["x"][0]] if valid is not None else np.ones(sub.shape, bool)
        if v.any():
            gut.append(sub[v])
    text = [s for s in scored if s["c"]["transcription"] == "text"]
    out = {"cols_scored": [s["c"]["col"] for s in scored], "n_gutters": len(gut), "n_text_cols": len(text)}
    tm = [s["px"].mean() for s in text]
    gm = [g.mean() for g in gut]
    out["col_gutter_auc"] = sk.roc_auc_score([1] * len(tm) + [0] * len(gm), tm + gm)
    ypx = np.concatenate([np.ones(s["px"].size) for s in text] + [np.zeros(g.size) for g in gut])
    spx = np.concatenate([s["px"] for s in text] + gut)
    out["col_gutter_pixel_auc"] = sk.roc_auc_score(ypx, spx)
    peaks = [s["peak"] for s in text if s["peak"] is not None]
    out["line_period_peak_mean"] = float(np.mean(peaks))
    trm = [s["px"].mean() for s in scored if s["c"]["transcription"] == "traces"]
    out["traces_mean_ratio"] = np.mean(trm) / np.mean(tm) if trm else None
    out["means"] = [float(s["px"].mean()) for s in scored]
    return out


@pytest.fixture
def target(tmp_path):
    folder, valid = make_column_target(tmp_path / "cols")
    return folder, valid, columns.load_column_target(folder)


@pytest.mark.parametrize("seed", range(3))
def test_matches_oracle_uint8_and_float_exactly(target, seed):
    folder, valid, tgt = target
    p = reading_prediction(seed=seed, strength=0.05 * seed)
    p8 = np.rint(p * 255).astype(np.uint8)
    for pred, prob, tol in ((p8, p8 / 255.0, 1e-9), (p, p, 1e-12), (p.astype(np.float32), p.astype(np.float32), 1e-12)):
        r = columns.score_columns(pred, tgt, floors=False)
        m = r["metrics"]
        want = oracle(prob.astype(np.float64), valid, tgt.columns, tgt.meta)
        assert m["cols_scored"] == want["cols_scored"]
        assert m["n_gutters"] == want["n_gutters"] and m["excluded_gutters"] == 2
        assert m["col_gutter_auc"] == pytest.approx(want["col_gutter_auc"], abs=1e-12)
        assert m["col_gutter_pixel_auc"] == pytest.approx(want["col_gutter_pixel_auc"], abs=tol)
        assert m["line_period_peak_mean"] == pytest.approx(want["line_period_peak_mean"], abs=1e-9)
        assert m["traces_mean_ratio"] == pytest.approx(want["traces_mean_ratio"], abs=1e-9)
        np.testing.assert_allclose([c["mean"] for c in r["per_column"]], want["means"], rtol=1e-12)


def test_planted_structure_scores_high_and_floors_are_chance(target):
    _, _, tgt = target
    r = columns.score_columns(reading_prediction(strength=0.4), tgt, seed=0)
    m = r["metrics"]
    assert m["col_gutter_auc"] == 1.0
    assert m["col_gutter_pixel_auc"] > 0.7
    assert m["line_period_peak_mean"] > 0.8
    assert m["n_text_cols"] == 5 and m["n_traces_cols"] == 2
    f = r["floors"]
    assert set(f) == {"constant_0_5", "papyrus_mask", "uniform_random"}
    for name in ("constant_0_5", "papyrus_mask"):
        assert f[name]["col_gutter_auc"] == 0.5 and f[name]["col_gutter_pixel_auc"] == 0.5
        assert f[name]["line_period_peak_mean"] == 0.0
    assert f["uniform_random"]["seed"] == 0
    assert f["uniform_random"]["line_period_peak_mean"] < 0.5
    rnd = np.random.default_rng(0).random(GRID).astype(np.float32)
    direct = columns.score_columns(rnd, tgt, floors=False)["metrics"]
    assert direct["col_gutter_auc"] == f["uniform_random"]["col_gutter_auc"]
    assert direct["col_gutter_pixel_auc"] == f["uniform_random"]["col_gutter_pixel_auc"]
    assert direct["line_period_peak_mean"] == f["uniform_random"]["line_period_peak_mean"]


def test_bands_never_change_the_result(target):
    _, _, tgt = target
    p = reading_prediction(strength=0.2).astype(np.float32)
    ref = columns.score_columns(p, tgt, band_rows=1000)
    for rows in (1, 7, 33):
        assert columns.score_columns(p, tgt, band_rows=rows, workers=3) == ref


def test_origin_sub_extent(target):
    _, valid, tgt = target
    full = reading_prediction(strength=0.2)
    oy, ox = 10, 220
    sub = full[oy:250, ox:650]
    r = columns.score_columns(sub, tgt, origin=(oy, ox), floors=True)
    want = oracle(sub, valid, tgt.columns, tgt.meta, origin=(oy, ox))
    assert r["metrics"]["cols_scored"] == want["cols_scored"] == [3, 4, 5, 6]
    assert r["metrics"]["col_gutter_pixel_auc"] == pytest.approx(want["col_gutter_pixel_auc"], abs=1e-12)
    assert r["floors"]["papyrus_mask"]["col_gutter_auc"] == 0.5
    assert r["origin"] == [oy, ox] and r["extent_shape"] == list(sub.shape)


def test_too_few_columns_gives_nulls_and_note(target):
    _, _, tgt = target
    r = columns.score_columns(np.full((220, 100), 0.3), tgt, origin=(20, 220))
    m = r["metrics"]
    assert m["cols_scored"] == [3] and m["col_gutter_auc"] is None and "too few" in r["notes"]["metrics.col_gutter_auc"]
    assert m["line_period_peak_mean"] is not None


def test_without_valid_mask(tmp_path):
    folder, _ = make_column_target(tmp_path / "nomask", with_mask=False)
    tgt = columns.load_column_target(folder)
    p = reading_prediction(strength=0.3)
    r = columns.score_columns(p, tgt)
    want = oracle(p, None, tgt.columns, tgt.meta)
    assert r["metrics"]["col_gutter_pixel_auc"] == pytest.approx(want["col_gutter_pixel_auc"], abs=1e-12)
    assert r["floors"]["papyrus_mask"]["col_gutter_auc"] == 0.5



def test_cli_alias_json_and_refusals(cli, target, tmp_path):
    folder, _, _ = target
    p = reading_prediction(strength=0.3).astype(np.float32)
    np.save(tmp_path / "p.npy", p)
    code, out, err = cli("score-columns", tmp_path / "p.npy", folder, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert list(r)[:2] == ["target", "prediction"] and {"metrics", "per_column", "gutters", "floors"} <= set(r)
    code, out, err = cli("columns", tmp_path / "p.npy", folder)
    assert code == 0 and out.split("\n", 1)[1].startswith("| model / target | col_gutter_auc")
    assert out.count("| floor: ") == 3
    one_line_error(*cli("columns", tmp_path / "p.npy", folder, "--origin", 5, 5), "runs past the target's grid")
    bad = p.copy()
    bad[100, 150] = 2.0
    np.save(tmp_path / "bad.npy", bad)
    one_line_error(*cli("columns", tmp_path / "bad.npy", folder), "outside [0, 1]")
    bad[100, 150] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    one_line_error(*cli("columns", tmp_path / "nan.npy", folder), "NaN")
    one_line_error(*cli("columns", tmp_path / "p.npy", tmp_path / "nothing"), "no such target folder")
    (tmp_path / "ink").mkdir()
    (tmp_path / "ink" / "gt_ink.png").write_bytes(b"")
    one_line_error(*cli("columns", tmp_path / "p.npy", tmp_path / "ink"), "segscore target")


def test_real_pherc1667_target(shared_data):
    d = shared_data / "scrollgt" / "pherc1667_merged_columns"
    if not d.exists():
        pytest.skip("scrollgt column target absent")
    tgt = columns.load_column_target(d)
    assert tgt.grid_shape == (2061, 30097) and len(tgt.columns) == 22
    # a sub-extent over columns 5-6 (text) and the gutter between them
    oy, ox = 300, 4800
    h, w = 1700, 2500
    rng = np.random.default_rng(0)
    pred = (rng.random((h, w)) * 0.5).astype(np.float32)
    for c in tgt.columns:
        y0, y1 = c["text_band"]
        x0, x1 = c["gx0"], c["gx1"]
        if y0 >= oy and x0 >= ox and y1 <= oy + h and x1 <= ox + w:
            pred[y0 - oy:y1 - oy, x0 - ox:x1 - ox] += 0.3
    r = columns.score_columns(pred, tgt, origin=(oy, ox))
    m = r["metrics"]
    assert m["cols_scored"] == [5, 6]
    assert m["n_gutters"] == 1 and m["excluded_gutters"] == 0
    assert m["col_gutter_auc"] == 1.0 and m["col_gutter_pixel_auc"] > 0.9
    assert r["floors"]["constant_0_5"]["col_gutter_auc"] == 0.5
    assert r["floors"]["papyrus_mask"]["col_gutter_auc"] == 0.5
    want = oracle(pred.astype(np.float64), tgt.valid.astype(bool), tgt.columns, tgt.meta, origin=(oy, ox))
    assert m["col_gutter_pixel_auc"] == pytest.approx(want["col_gutter_pixel_auc"], abs=1e-12)
    assert m["line_period_peak_mean"] == pytest.approx(want["line_period_peak_mean"], abs=1e-9)


@pytest.mark.parametrize("origin", [(0, 0), (10, 220)])
def test_constant_floors_equal_scoring_the_constant_maps(target, origin):
    """The constant floors come from row counts, not a pass over the map: they must equal the
    cards of the maps themselves (0.5 everywhere; the papyrus mask, 1 on every scored pixel)."""
    _, valid, tgt = target
    oy, ox = origin
    h, w = GRID[0] - oy, GRID[1] - ox
    f = columns.score_columns(np.zeros((h, w), np.float32), tgt, origin=origin)["floors"]
    maps = {"constant_0_5": np.full((h, w), 0.5, np.float32),
            "papyrus_mask": (valid[oy:, ox:] if valid is not None else np.ones((h, w))).astype(np.float32)}
    for name, m in maps.items():
        direct = columns.score_columns(m, tgt, origin=origin, floors=False)["metrics"]
        assert {k: v for k, v in f[name].items() if k != "what"} == direct, name


@pytest.mark.parametrize("where, value, needle", [
    ("meta", {"geometry": {"grid_shape": [0, 5]}}, "geometry.grid_shape is [0, 5]"),
    ("meta", {"line_pitch_range": "85-160"}, "line_pitch_range is '85-160'"),
    ("column", {"gx0": "42"}, "columns.0: gx0 is '42'; it should be a whole number"),
    ("column", {"text_band": [1]}, "columns.0: text_band is [1]"),
])
def test_a_column_target_field_of_the_wrong_type_is_named(tmp_path, where, value, needle):
    import json

    from segscore.errors import ScoreError

    folder, _ = make_column_target(tmp_path / "cols")
    name = "meta.json" if where == "meta" else "columns.json"
    doc = json.loads((folder / name).read_text())
    (doc if where == "meta" else doc["columns"][0]).update(value)
    (folder / name).write_text(json.dumps(doc))
    with pytest.raises(ScoreError) as err:
        columns.load_column_target(folder)
    assert needle in str(err.value) and "\n" not in str(err.value)
