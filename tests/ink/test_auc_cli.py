"""`segscore auc` end to end: outputs, exit codes and every failure-mode row of the spec."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tifffile

from tests.cli_checks import one_line_error
from tests.ink.helpers import segment, write_levels


@pytest.fixture
def seg(tmp_path):
    pred, ink, mask = segment((50, 70), seed=21)
    rev = np.random.default_rng(22).integers(0, 256, pred.shape).astype(np.uint8)
    tifffile.imwrite(tmp_path / "MAP.tif", pred)
    tifffile.imwrite(tmp_path / "REV.tif", rev)
    d = {"map": tmp_path / "MAP.tif", "rev": tmp_path / "REV.tif", "dir": tmp_path,
         "labels": write_levels(tmp_path / "inklabels.zarr", {"2": ink.astype(np.uint8)}),
         "mask": write_levels(tmp_path / "supervision.zarr", {"2": mask.astype(np.uint8)}),
         "arrays": (pred, ink, mask)}
    return d


def base(seg, *extra):
    return ["auc", seg["map"], "--labels", seg["labels"], "--mask", seg["mask"], *extra]



def test_text_and_json_outputs(cli, seg):
    code, out, err = cli(*base(seg, "--control", seg["rev"], "--bootstrap", "30", "--block-px", "9"))
    assert code == 0, err
    roles, *lines = out.splitlines()  # the first line names the inputs' roles
    assert roles == f"truth: {seg['labels']}  pred: {seg['map']}  mask: {seg['mask']}"
    assert lines[0].startswith("map    : AUC ") and lines[1].startswith("control: AUC ")
    assert lines[2].startswith("map minus control: ")
    assert lines[3].startswith("map AUC 95 % interval ") and "(30 draws of " in lines[3] and "blocks of 9 px)" in lines[3]
    code, out, _ = cli(*base(seg, "--control", seg["rev"], "--bootstrap", "30", "--json"))
    r = json.loads(out)
    for key in ("auc", "ink_px", "background_px", "zero_px_in_mask", "zero_px_counted", "inner"):
        assert key in r["forward"] and key in r["control"]
    assert r["files"] == {"prediction": str(seg["map"]), "labels": seg["labels"], "mask": seg["mask"],
                          "control": str(seg["rev"])}
    assert r["level"] == "2" and r["crop"] is None
    b = r["bootstrap"]
    assert set(b) >= {"draws", "block_px", "blocks", "seed", "ci95", "half_width"} and b["draws"] == 30


def test_compare_line_and_fields(cli, seg):
    code, out, _ = cli(*base(seg, "--compare", seg["rev"]))
    assert code == 0
    line = out.splitlines()[-1]
    assert line.startswith(f"compare: map minus {seg['rev']} ")
    assert "(95 % interval " in line and "% of 300 draws, " in line and line.endswith("shared px)")
    code, out, _ = cli(*base(seg, "--compare", seg["rev"], "--json"))
    c = json.loads(out)["bootstrap"]["compare"]
    assert set(c) == {"auc_map", "auc_other", "difference", "ci95", "share_draws_map_not_ahead", "pixels"}
    assert json.loads(out)["files"]["compare"] == str(seg["rev"])


def test_json_out_and_csv_files(cli, seg, tmp_path):
    code, out, _ = cli(*base(seg, "--json-out", tmp_path / "r.json", "--csv", tmp_path / "r.csv"))
    assert code == 0 and out.split("\n", 1)[1].startswith("map    : AUC")
    r = json.loads((tmp_path / "r.json").read_text())
    header, row = (tmp_path / "r.csv").read_text().splitlines()
    assert "forward.auc" in header.split(",") and str(r["forward"]["auc"]) in row


def test_no_auc_is_exit_0_with_a_null(cli, seg, tmp_path):
    pred, ink, mask = seg["arrays"]
    L = write_levels(tmp_path / "empty.zarr", {"2": np.zeros(ink.shape, np.uint8)})
    code, out, _ = cli("auc", seg["map"], "--labels", L, "--mask", seg["mask"])
    assert code == 0 and out.split("\n", 1)[1].startswith("map    : no AUC (ink 0 px, background ")
    code, out, _ = cli("auc", seg["map"], "--labels", L, "--mask", seg["mask"], "--json")
    assert code == 0 and json.loads(out)["forward"]["auc"] is None


def test_usage_error_is_exit_2(cli, seg):
    code, out, err = cli("auc", seg["map"], "--mask", seg["mask"])
    assert code == 2 and "--labels" in err and "--help" in err and len(err.strip().splitlines()) == 1


def test_nan_in_a_map(cli, seg):
    pred = seg["arrays"][0].astype(np.float32)
    pred[1, 1] = np.nan
    pred[2, 2] = np.inf
    np.save(seg["dir"] / "nan.npy", pred)
    one_line_error(*cli("auc", seg["dir"] / "nan.npy", "--labels", seg["labels"], "--mask", seg["mask"]),
                   "the map holds 2 NaN or infinite values; replace them (with 0 for no prediction) before scoring")
    one_line_error(*cli(*base(seg, "--control", seg["dir"] / "nan.npy")), "holds 2 NaN or infinite values")


def test_control_is_the_map_itself_through_any_path(cli, seg):
    one_line_error(*cli(*base(seg, "--control", seg["map"])), "is the map itself; give the reverse-depth map as the control")
    other_spelling = os.path.join(seg["dir"], ".", "MAP.tif")
    one_line_error(*cli(*base(seg, "--control", other_spelling)), "is the map itself")
    link = seg["dir"] / "link.tif"
    link.symlink_to(seg["map"])
    one_line_error(*cli(*base(seg, "--control", link)), "is the map itself")
    copy = seg["dir"] / "copy.tif"
    copy.write_bytes(seg["map"].read_bytes())
    code, out, _ = cli(*base(seg, "--control", copy))
    assert code == 0 and "map minus control: +0.0000" in out


def test_unreadable_tiff(cli, seg):
    bad = seg["dir"] / "bad.tif"
    bad.write_bytes(b"II*\x00 not really a tiff")
    one_line_error(*cli("auc", bad, "--labels", seg["labels"], "--mask", seg["mask"]), f"{bad}: ")


def test_not_2d(cli, seg):
    np.save(seg["dir"] / "stack.npy", np.zeros((3, 50, 70), np.uint8))
    one_line_error(*cli("auc", seg["dir"] / "stack.npy", "--labels", seg["labels"], "--mask", seg["mask"]),
                   "expected a 2D map, got shape (3, 50, 70)")
    np.save(seg["dir"] / "squeeze.npy", seg["arrays"][0][None, :, :, None])
    code, _, _ = cli("auc", seg["dir"] / "squeeze.npy", "--labels", seg["labels"], "--mask", seg["mask"])
    assert code == 0


def test_missing_npy_is_exit_2_not_a_traceback(cli, seg):
    one_line_error(*cli("auc", seg["dir"] / "nope.npy", "--labels", seg["labels"], "--mask", seg["mask"]),
                   "nope.npy: no such file")


def test_bad_stores(cli, seg):
    one_line_error(*cli(*["auc", seg["map"], "--labels", seg["dir"] / "missing.zarr", "--mask", seg["mask"]]),
                   "cannot open")
    (seg["dir"] / "junk.zarr").mkdir()
    one_line_error(*cli(*["auc", seg["map"], "--labels", seg["dir"] / "junk.zarr", "--mask", seg["mask"]]),
                   "cannot open")
    one_line_error(*cli(*base(seg, "--level", "0")), "no level '0'; levels: ['2']")


def test_labels_and_mask_differ_in_shape(cli, seg, tmp_path):
    M = write_levels(tmp_path / "m2.zarr", {"2": np.ones((49, 70), np.uint8)})
    one_line_error(*cli("auc", seg["map"], "--labels", seg["labels"], "--mask", M),
                   "labels (50, 70) and mask (49, 70) differ in shape at level 2")


def test_scale_differs_between_axes(cli, seg, tmp_path):
    L = write_levels(tmp_path / "l.zarr", {"2": np.ones((50, 60), np.uint8)})
    M = write_levels(tmp_path / "m.zarr", {"2": np.ones((50, 60), np.uint8)})
    one_line_error(*cli("auc", seg["map"], "--labels", L, "--mask", M), "differ in scale between axes")


def test_crop_rows(cli, seg):
    one_line_error(*cli(*base(seg, "--crop", 0, 50, 0, 70)), "a cropped map needs the full surface shape (surface_shape)")
    one_line_error(*cli(*base(seg, "--crop", 0, 50, 0, 70, "--surface-shape", 40, 70)), "is outside the 40 x 70 surface")
    one_line_error(*cli(*base(seg, "--crop", 0, 40, 0, 70, "--surface-shape", 100, 140)),
                   "map shape (50, 70) does not match the window 40 x 70")


@pytest.mark.parametrize("shape", [(100, 140), (25, 35), (50, 71), (49, 70)])
def test_surface_shape_without_crop_must_be_the_map(cli, seg, shape):
    # a larger surface read the labels at the wrong place (a wrong AUC, exit 0); a smaller one
    # sent label indices outside the grid to a kernel (SIGSEGV)
    code, out, err = cli(*base(seg, "--surface-shape", *shape))
    one_line_error(code, out, err, f"{seg['map']}: the map is 50 x 70 but the surface shape is "
                                   f"{shape[0]} x {shape[1]}; a map cut from a larger surface needs --crop")


def test_surface_shape_equal_to_the_map_scores_as_without_it(cli, seg):
    plain = json.loads(cli(*base(seg, "--json"))[1])
    same = json.loads(cli(*base(seg, "--surface-shape", 50, 70, "--json"))[1])
    assert same["forward"] == plain["forward"]


def test_labels_on_map_and_the_engine_refuse_a_grid_of_another_size(seg):
    from segscore.io.grid import IndexedView
    from segscore.io.sources import as_source
    from segscore.errors import ScoreError
    from segscore.ink import auc

    _, ink, mask = seg["arrays"]
    with pytest.raises(ScoreError, match="the map is 50 x 70 but the surface shape is 25 x 35"):
        auc.labels_on_map(ink, mask, None, (25, 35), None, (50, 70))
    planes = [as_source(ink.astype(np.uint8)), as_source(mask.astype(np.uint8))]
    with pytest.raises(ValueError, match="row indices"):
        IndexedView(planes, np.arange(51), np.arange(70))
    with pytest.raises(ValueError, match="column indices"):
        IndexedView(planes, np.arange(50), np.arange(-1, 69))
    view = IndexedView(planes, np.arange(25), np.arange(70))
    with pytest.raises(ValueError, match="cannot serve a"):
        view.check_map((50, 70))


def test_shapes_of_control_and_compare(cli, seg):
    np.save(seg["dir"] / "small.npy", np.ones((5, 5), np.uint8))
    one_line_error(*cli(*base(seg, "--control", seg["dir"] / "small.npy")), "control shape (5, 5) differs from the map's (50, 70)")
    one_line_error(*cli(*base(seg, "--compare", seg["dir"] / "small.npy")), "compared map shape (5, 5) differs from the map's (50, 70)")


def test_inner_draws_and_blocks(cli, seg):
    one_line_error(*cli(*base(seg, "--inner", 25)), "inner 25 leaves nothing of a (50, 70) map")
    one_line_error(*cli(*base(seg, "--bootstrap", 19)), "use at least 20 bootstrap draws")
    one_line_error(*cli(*base(seg, "--block-px", 0)), "block size must be at least 1 px")


def test_nothing_to_resample(cli, seg, tmp_path):
    M = write_levels(tmp_path / "none.zarr", {"2": np.zeros((50, 70), np.uint8)})
    one_line_error(*cli("auc", seg["map"], "--labels", seg["labels"], "--mask", M, "--bootstrap", 20),
                   "no supervised pixels to resample")
    L = write_levels(tmp_path / "noink.zarr", {"2": np.zeros((50, 70), np.uint8)})
    one_line_error(*cli("auc", seg["map"], "--labels", L, "--mask", seg["mask"], "--bootstrap", 20),
                   "the mask holds only one class; no AUC to resample")


def test_ledger(cli, seg, tmp_path):
    root = tmp_path / "exp"
    one_line_error(*cli(*base(seg, "--slug", "e1", "--root", root)),
                   f"no experiment at {root}/e1/run.json; start it with `segscore run init e1")
    code, out, _ = cli("run", "init", "e1", "--root", root)
    assert code == 0 and "run.json" in out
    one_line_error(*cli("run", "init", "e1", "--root", root), "exists already")
    code, _, _ = cli(*base(seg, "--slug", "e1", "--root", root, "--name", "first"))
    assert code == 0
    code, _, _ = cli(*base(seg, "--slug", "e1", "--root", root))
    run = json.loads((root / "e1" / "run.json").read_text())
    assert run["slug"] == "e1" and "created" in run
    assert [c["name"] for c in run["checks"]] == ["first", "label-auc"]
    assert set(run["checks"][0]) == {"name", "time", "argv", "result"}
    assert run["checks"][0]["result"]["forward"]["auc"] is not None


def test_python_dash_m_and_exit_codes_in_a_real_process(seg):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    ok = subprocess.run([sys.executable, "-m", "segscore", *map(str, base(seg, "--json"))], capture_output=True,
                        text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["forward"]["auc"] is not None
    bad = subprocess.run([sys.executable, "-m", "segscore", "auc", str(seg["dir"] / "x.npy"), "--labels",
                          seg["labels"], "--mask", seg["mask"]], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_demo_runs_offline(cli):
    code, out, err = cli("demo", "--bootstrap", "20")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("map    : AUC ") and lines[1].startswith("control: AUC ")
    assert "unpredicted px in the mask left out" in lines[0]
    assert lines[3].startswith("map AUC 95 % interval")


def test_demo_says_how_to_rerun_its_command(cli, tmp_path):
    """Without --keep the sample is gone when the demo ends, so it says to use --keep; with
    --keep the printed command, run in the kept folder, scores the same AUC."""
    import shlex
    import subprocess

    code, out, err = cli("demo", "--bootstrap", "0")
    assert code == 0 and "--keep DIR" in err
    keep = tmp_path / "seg"
    code, out, err = cli("demo", "--bootstrap", "0", "--keep", str(keep))
    assert code == 0 and "--keep DIR" not in err
    line = [x for x in err.splitlines() if x.startswith("$ cd ")][0][2:]
    assert line.startswith(f"cd {shlex.quote(str(keep))} && segscore auc seg/MAP.tif")
    again = subprocess.run(line, shell=True, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[1] == out.splitlines()[0]  # after its roles line, the demo's AUC
