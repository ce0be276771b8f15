"""Held-out sets: manifests, digests, pooling, the scorecard table, CSV, headline and chart."""

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.objects import (CHART_METRICS, HoldoutScore, headline, load_holdout, read_scorecard_csv,
                              score_holdout, score_model_on_holdout, score_segmentation, scorecard_csv,
                              scorecard_figure, scorecard_is_present, scorecard_rows, verify_holdout)
from tests.objects.helpers import disk, synthetic_pair


def write_set(tmp_path, n=3, digests=True):
    import tifffile

    (tmp_path / "truth" / "sub").mkdir(parents=True)
    (tmp_path / "pred").mkdir()
    (tmp_path / "base").mkdir()
    fields = []
    for k in range(n):
        t, p = synthetic_pair(seed=k, n=25, shape=(96, 100))
        _, b = synthetic_pair(seed=k, n=25, shape=(96, 100), jitter=5, p_miss=0.3)
        rel = f"truth/sub/f{k}.tif"
        tifffile.imwrite(tmp_path / rel, t)
        [lambda: np.save(tmp_path / "pred" / f"f{k}.npy", p),
         lambda: tifffile.imwrite(tmp_path / "pred" / f"f{k}.tif", p),
         lambda: tifffile.imwrite(tmp_path / "pred" / f"f{k}.tiff", p)][k % 3]()
        np.save(tmp_path / "base" / f"f{k}.npy", b)
        sha = hashlib.sha256((tmp_path / rel).read_bytes()).hexdigest() if digests else ""
        fields.append({"image": f"img/f{k}.tif", "truth": rel, "sha256": sha})
    (tmp_path / "m.json").write_text(json.dumps({"name": "toy", "version": "2.1", "fields": fields}))
    return tmp_path / "m.json"


@pytest.mark.parametrize("drop,msg", [("name", "no name"), ("version", "no version"), ("fields", "no fields")])
def test_manifest_refusals(tmp_path, drop, msg):
    d = {"name": "x", "version": "1", "fields": [{"image": "a.tif", "truth": "b.tif"}]}
    d.pop(drop)
    (tmp_path / "m.json").write_text(json.dumps(d))
    with pytest.raises(ScoreError, match=msg):
        load_holdout(tmp_path / "m.json")


def test_manifest_field_and_json_refusals(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"name": "x", "version": "1", "fields": [{"image": "a.tif"}]}))
    with pytest.raises(ScoreError, match="truth"):
        load_holdout(tmp_path / "m.json")
    (tmp_path / "m.json").write_text("{not json")
    with pytest.raises(ScoreError, match="not a JSON"):
        load_holdout(tmp_path / "m.json")
    with pytest.raises(FileNotFoundError):
        load_holdout(tmp_path / "absent.json")


def test_paths_resolve_against_the_manifest_and_verify(tmp_path):
    m = write_set(tmp_path)
    hs = load_holdout(m)
    assert hs.name == "toy" and hs.version == "2.1" and len(hs.fields) == 3
    assert hs.path_to(hs.fields[0].truth) == tmp_path / "truth/sub/f0.tif"
    assert verify_holdout(hs) == []
    (tmp_path / "truth/sub/f1.tif").write_bytes(b"changed")
    (tmp_path / "truth/sub/f2.tif").unlink()
    problems = verify_holdout(hs)
    assert len(problems) == 2 and "f1.tif does not match its digest" in problems[0] and "missing" in problems[1]


def test_missing_digest_is_a_finding(tmp_path):
    hs = load_holdout(write_set(tmp_path, n=1, digests=False))
    assert verify_holdout(hs) == ["no digest published for truth/sub/f0.tif"]


def test_pooled_not_averaged_on_a_sparse_and_a_dense_field():
    # dense field: 100 objects all found; sparse field: 3 objects all missed
    dense = np.zeros((200, 200), np.int32)
    k = 0
    for y in range(10, 200, 20):
        for x in range(10, 200, 20):
            k += 1
            dense[disk(dense.shape, (y, x), 6)] = k
    sparse = np.zeros((60, 60), np.int32)
    for j, c in enumerate([(10, 10), (30, 30), (50, 50)]):
        sparse[disk(sparse.shape, c, 5)] = j + 1
    score = score_holdout([(dense, dense), (sparse, np.zeros_like(sparse))], name="s", version="1")
    m = score.metrics
    assert score.n_fields == 2 and m["n_fields"] == 2
    assert m["true_positives"] == 100 and m["false_negatives"] == 3 and m["n_truth"] == 103
    assert m["recall"] == pytest.approx(100 / 103)  # a mean of per-field recalls would say 0.5
    assert np.mean([f["recall"] for f in score.per_field]) == 0.5
    assert m["precision"] == 1.0 and m["f1"] == pytest.approx(200 / 203)
    assert m["ap_0.5"] == pytest.approx(100 / 103) and m["ap_mean"] == pytest.approx(100 / 103)
    assert m["iou_mean"] == 1.0 and m["dice_per_object"] == 1.0  # weighted by matched pairs
    fg_d, fg_s = (dense > 0).sum(), (sparse > 0).sum()
    assert m["dice_pixel"] == pytest.approx(2 * fg_d / (2 * fg_d + fg_s))
    assert score.per_field[1]["precision"] is None and "precision" in score.per_field[1]["notes"]


def test_pooled_equals_one_field_when_fields_are_tiles_side_by_side():
    # a background margin so no object touches an image edge (an edge is not a boundary)
    t1, p1 = (np.pad(a, 4) for a in synthetic_pair(seed=4, n=20, shape=(64, 64)))
    t2, p2 = (np.pad(a, 4) for a in synthetic_pair(seed=5, n=20, shape=(64, 64)))
    off = np.int32(10_000)
    whole_t = np.hstack([t1, np.where(t2 > 0, t2 + off, 0)])
    whole_p = np.hstack([p1, np.where(p2 > 0, p2 + off, 0)])
    pooled = score_holdout([(t1, p1), (t2, p2)], name="a", version="1").metrics
    whole = score_segmentation(whole_t, whole_p)
    for k, v in whole.items():
        if k in ("notes", "warnings", "shape"):  # shape: the one field's grid, not pooled
            continue
        if isinstance(v, float):
            assert pooled[k] == pytest.approx(v, rel=1e-12), k
        else:
            assert pooled[k] == v, k


def test_score_model_on_holdout_with_injected_predict(tmp_path):
    m = write_set(tmp_path)
    hs = load_holdout(m)
    seen = []

    def predict(image_path):
        seen.append(image_path.name)
        k = int(image_path.stem[1:])
        return synthetic_pair(seed=k, n=25, shape=(96, 100))[1]

    s = score_model_on_holdout(hs, predict)
    assert seen == ["f0.tif", "f1.tif", "f2.tif"] and s.name == "toy" and s.version == "2.1"
    ref = score_holdout([synthetic_pair(seed=k, n=25, shape=(96, 100)) for k in range(3)], name="toy", version="2.1")
    assert s.metrics == ref.metrics


def scores():
    pairs = [synthetic_pair(seed=k, n=20, shape=(80, 80)) for k in range(2)]
    fine = score_holdout(pairs, name="toy", version="1")
    van = score_holdout([(t, np.zeros_like(p)) if i else (t, p[::-1]) for i, (t, p) in enumerate(pairs)],
                        name="toy", version="1")
    return fine, van


def test_rows_csv_round_trip_and_refusal():
    fine, van = scores()
    rows = scorecard_rows(fine, van)
    assert list(rows[0]) == ["metric", "finetuned", "vanilla", "delta", "holdout", "holdout_version", "reason"]
    byname = {r["metric"]: r for r in rows}
    assert byname["n_truth"]["delta"] is None and byname["match_iou"]["delta"] is None
    assert byname["f1"]["delta"] == pytest.approx(fine.metrics["f1"] - van.metrics["f1"])
    text = scorecard_csv(rows)
    back = read_scorecard_csv(text)
    assert back["holdout"] == "toy" and back["holdout_version"] == "1"
    for r in rows:
        got = back[r["metric"]]
        for col in ("finetuned", "vanilla", "delta"):
            v = r[col]
            if v is None:
                assert got[col] is None
            elif isinstance(v, int):
                assert got[col] == v and isinstance(got[col], int)
            else:
                assert got[col] == pytest.approx(v, rel=1e-15)
    assert isinstance(back["n_truth"]["finetuned"], int)
    assert scorecard_csv([]) == "" and read_scorecard_csv("") == {}
    other = HoldoutScore("toy", "2", van.metrics, van.per_field)
    with pytest.raises(ScoreError, match="different held-out sets"):
        scorecard_rows(fine, other)


def test_headline_present_and_figure(tmp_path):
    fine, van = scores()
    parsed = read_scorecard_csv(scorecard_csv(scorecard_rows(fine, van)))
    assert scorecard_is_present(parsed) and not scorecard_is_present({"note": "hi"}) and not scorecard_is_present({})
    lines = headline(parsed)
    assert len(lines) == 4 and lines[0].startswith("f1 ") and "vanilla" in lines[0] and "delta" in lines[0]
    assert lines[1].startswith("ap_mean") and lines[2].startswith("dice_per_object") and "scorecard" in lines[3]
    assert len(headline(parsed, limit=1)) == 2
    flat = headline(fine.metrics, baseline=van.metrics, limit=2)
    assert flat[0] == f"f1 {fine.metrics['f1']:.3f} (vanilla {van.metrics['f1']:.3f}, " \
                      f"delta {fine.metrics['f1'] - van.metrics['f1']:+.3f})"
    assert headline({"comment": "free text"}) == []
    pytest.importorskip("matplotlib")
    out = scorecard_figure(parsed, tmp_path / "card.png", title="model")
    assert out.stat().st_size > 1000
    with pytest.raises(ScoreError, match="none of the chart"):
        scorecard_figure({"comment": {"finetuned": 1}}, tmp_path / "x.png")
    assert "boundary_f1_2px" in CHART_METRICS


def test_import_is_light():
    code = ("import sys, numpy as np, segscore.objects as o; from segscore.objects import holdout, metrics, classifier; "
            "t = np.zeros((20, 20), np.int32); t[2:8, 2:8] = 1; o.score_segmentation(t, t); "
            "print([m for m in ('torch', 'matplotlib', 'dask', 'tensorflow') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("bad, why", [("/etc/passwd", "is absolute"), ("../../x.tif", "leads out of"),
                                      ("sub/../../x.tif", "leads out of"), ("~/x.tif", "is absolute")])
def test_manifest_paths_must_stay_inside_the_set(tmp_path, bad, why):
    import json as _json

    from segscore.errors import ScoreError
    from segscore.objects.holdout import load_holdout

    m = tmp_path / "set" / "manifest.json"
    m.parent.mkdir()
    for key in ("image", "truth"):
        entry = {"image": "a.tif", "truth": "a_mask.tif", "sha256": "0" * 64, key: bad}
        m.write_text(_json.dumps({"name": "s", "version": "1", "fields": [entry]}))
        with pytest.raises(ScoreError, match=why) as err:
            load_holdout(m)
        assert f"field 0 {key} path" in str(err.value) and "\n" not in str(err.value)


def test_a_link_out_of_the_set_and_a_link_loop_are_refused(tmp_path):
    import json as _json

    from segscore.errors import ScoreError
    from segscore.objects.holdout import load_holdout

    (tmp_path / "outside.tif").write_bytes(b"x")
    d = tmp_path / "set"
    d.mkdir()
    (d / "out.tif").symlink_to(tmp_path / "outside.tif")
    (d / "loop.tif").symlink_to(d / "loop.tif")
    from segscore.objects.holdout import verify_holdout

    def manifest(truth):
        (d / "m.json").write_text(_json.dumps({"name": "s", "version": "1", "fields": [
            {"image": "a.tif", "truth": truth, "sha256": "0" * 64}]}))
        return d / "m.json"

    with pytest.raises(ScoreError, match="leads out of the manifest's folder"):
        load_holdout(manifest("out.tif"))
    try:  # a link loop stays inside the folder: refused, or found missing by --verify
        problems = verify_holdout(load_holdout(manifest("loop.tif")))
        assert problems == ["missing truth mask: loop.tif"]
    except ScoreError as exc:
        assert "link loop" in str(exc)
    (d / "deep.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ScoreError, match="not a JSON manifest"):
        load_holdout(d / "deep.json")
