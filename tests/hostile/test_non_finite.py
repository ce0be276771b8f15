"""Non-finite values, in inputs and in intermediate results: refused in one line naming the
file, or a null metric with a note; never nan/inf printed, never NonFiniteError (exit 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.hostile import bombs
from tests.hostile.bombs import one_line as _one_line




@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_every_map_reader_refuses_a_non_finite_map_naming_the_file(cli, inputs, tmp_path, value):
    """+-inf is refused like NaN, by every command that reads a map or a mask, naming the file."""
    p = {k: str(v) for k, v in inputs.items()}

    def spoiled(name, base):
        a = np.asarray(base, np.float64).copy()
        a.reshape(-1)[:: 7] = value
        path = tmp_path / f"{name}.npy"
        np.save(path, a)
        return path

    from PIL import Image

    from segscore.io.readers import read_image

    ink_pred = spoiled("ink_pred", np.asarray(Image.open(p["ink_pred"]), np.float64) / 255)
    cases = {
        "auc": (["auc", spoiled("map", read_image(p["map"])), "--labels", p["labels"], "--mask", p["mask"]], 0),
        "auc control": (["auc", p["map"], "--labels", p["labels"], "--mask", p["mask"], "--control",
                         spoiled("control", read_image(p["rev"]))], 0),
        "target": (["target", ink_pred, p["ink_target"], "--no-floors"], 0),
        "placement": (["placement", ink_pred, p["ink_target"]], 0),
        "columns": (["columns", spoiled("col", np.load(p["col_pred"])), p["col_target"], "--no-floors"], 0),
        "curve": (["curve", spoiled("curve", read_image(p["pred"]) > 0), "--gt", p["gt"]], 0),
        "objects": (["objects", p["truth"], spoiled("objects", np.load(p["objpred"]))], 0),
    }
    wrong = []
    for label, (argv, _) in cases.items():
        bad = next(a for a in argv if str(a).startswith(str(tmp_path)))
        before = bombs.digests([bad])
        try:
            line = _one_line(cli, argv, bad)
            assert "NaN" in line or "inf" in line.lower(), line
            assert bombs.digests([bad]) == before
        except AssertionError as exc:
            wrong.append(f"{label}: {exc}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("spacing", [["1e-300", "1e-300"], ["1e-100", "1e-100"], ["1e-160", "1"], ["1e13", "1"]])
def test_a_spacing_that_underflows_is_refused_up_front(cli, inputs, spacing):
    line = _one_line(cli, ["curve", inputs["pred"], "--gt", inputs["gt"], "--spacing", *spacing], "--spacing")
    assert "1e-12" in line or "1e+12" in line or "1000000000000" in line


def test_a_spacing_that_underflows_is_refused_in_the_api(inputs):
    from segscore.curvilinear.scoring import check_geometry
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match="from 1e-12 to 1e\\+12"):
        check_geometry((1e-300, 1e-300), None, 2)
    rec, vals, _ = check_geometry((1e-12, 1e12), None, 2)
    assert vals == (1e-12, 1e12)


def test_a_file_stating_an_absurd_spacing_is_refused_naming_it(cli, tmp_path, inputs):
    import nibabel

    from segscore.io.readers import read_image

    gt = (read_image(inputs["gt"]) > 0).astype(np.uint8)
    path = tmp_path / "gt.nii"
    nibabel.save(nibabel.Nifti1Image(gt, np.eye(4)), path)
    raw = bytearray(path.read_bytes())  # pixdim[1], pixdim[2] (bytes 80-88): 1e-20, a float32 above 0
    raw[80:88] = np.array([1e-20, 1e-20], "<f4").tobytes()
    path.write_bytes(bytes(raw))
    line = _one_line(cli, ["curve", path, "--gt", path], path)
    assert "outside 1e-12 to 1e+12" in line


def _store(folder, lines):
    folder.mkdir()
    row = {"id": "a", "job": "curve p.png --gt g.png", "family": "curvilinear", "tags": {}, "status": "scored",
           "result": {"dice": 0.5, "notes": {}, "warnings": []}, "error": None, "inputs": {}, "version": "0",
           "seconds": 1.0, "finished": "2026-12-03T10:00:00"}
    text = json.dumps(row) + "\n" + "".join(line + "\n" for line in lines)
    (folder / "results.jsonl").write_text(text)
    return folder / "results.jsonl"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
def test_report_refuses_a_non_finite_value_in_a_results_line(cli, tmp_path, value):
    bad = ('{"id": "b", "job": "curve p.png --gt g.png", "family": "curvilinear", "tags": {}, "status": "scored", '
           '"result": {"dice": ' + value + ', "notes": {}}, "error": null, "inputs": {}, "version": "0", '
           '"seconds": 1.0, "finished": "2026-12-03T10:00:00"}')
    jsonl = _store(tmp_path / "r", [bad])
    before = bombs.digests([jsonl])
    code, out, err = cli("report", tmp_path / "r")
    assert code == 2 and out == "", (code, out, err)
    assert "nan" not in out.lower() and "inf" not in out.lower()
    line = err.strip()
    assert "\n" not in line and f"{jsonl}: line 2 holds {value}" in line, line
    assert bombs.digests([jsonl]) == before


def test_report_of_rows_in_memory_refuses_nan(tmp_path):
    from segscore.batch.report import ReportError, read_rows

    row = {"id": "a", "job": "curve p --gt g", "family": "curvilinear", "tags": {}, "status": "scored",
           "result": {"dice": float("nan"), "notes": {}}}
    with pytest.raises(ReportError, match="row 0: result.dice is not a finite number"):
        read_rows([row])


def test_placement_with_an_all_ink_label_is_null_with_a_note():
    from segscore.ink.placement import probe
    from segscore.io.results import dumps

    rng = np.random.default_rng(0)
    pred = rng.random((200, 200)).astype(np.float32)
    out = probe(pred, np.ones((200, 200), bool), radius=16, tile_px=64, tile_radius=8)
    json.loads(dumps(out))  # no NonFiniteError
    for key in ("peak_ncc", "tile_sd_dy", "worst_tile_px"):
        assert out[key] is None and out["notes"][key]
    assert out["tiles"] and all(t["ncc"] is None and t["reason"] for t in out["tiles"])
    # inside a mask that leaves some background, the label is not constant: defined again
    mask = np.ones((200, 200), bool)
    lab = np.ones((200, 200), bool)
    lab[:, :100] = False
    out = probe(pred, lab, mask, radius=16, tile_px=64, tile_radius=8)
    assert out["peak_ncc"] is not None and all(t["ncc"] is not None for t in out["tiles"])


def test_placement_cli_with_an_all_255_label(cli, tmp_path):
    """The command line, on an ink target whose label is all ink: exit 0, nulls with notes."""
    from tests.targets.helpers import make_target, reading_map, write_png

    tgt, ink, _ = make_target(tmp_path / "t", shape=(96, 128), ink_rate=1.0, mask=False)
    write_png(tmp_path / "p.png", reading_map(ink))
    code, out, err = cli("placement", tmp_path / "p.png", tmp_path / "t", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["peak_ncc"] is None and res["notes"]["peak_ncc"]


def test_the_spacing_range_is_one_range():
    from segscore.io import spacing
    from segscore.metrics import surface

    assert (surface.SPACING_MIN, surface.SPACING_MAX) == (spacing.SPACING_MIN, spacing.SPACING_MAX)
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match="from 1e-12 to 1e\\+12"):
        surface.check_spacing((1e-300, 1.0), 2)
