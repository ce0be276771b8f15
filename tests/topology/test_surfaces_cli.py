"""``segscore surfaces``: the CLI prints exactly the API's dict, folder mode, exit codes."""

import json

import numpy as np
import pytest
import tifffile

from segscore.cli.main import main
from segscore.topology.score import surfaces


def _pair(seed=0, shape=(10, 12, 14)):
    rng = np.random.default_rng(seed)
    g = np.zeros(shape, np.uint8)
    g[3:5] = 1
    g[7, :, :] = 1
    g[:, :, 12:] = np.where(g[:, :, 12:] == 1, 2, 0)
    p = (g == 1).astype(np.uint8)
    p[rng.random(shape) < 0.02] ^= 1
    return p, g


def test_json_is_the_api_dict(tmp_path, capsys):
    p, g = _pair()
    np.save(tmp_path / "p.npy", p)
    tifffile.imwrite(tmp_path / "g.tif", g)
    code = main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.tif"), "--json", "--json-out",
                 str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")])
    out = capsys.readouterr()
    assert code == 0
    got = json.loads(out.out)
    want = json.loads(json.dumps(surfaces(truth=g, pred=p, threads=1)))
    assert got == want
    assert json.loads((tmp_path / "r.json").read_text()) == want
    assert "warning: " in out.err and "ignored" in out.err
    assert "leaderboard" in (tmp_path / "r.csv").read_text().splitlines()[0]


def test_options_reach_the_score(tmp_path, capsys):
    p, g = _pair(1)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "g.npy", g)
    code = main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--json", "--topo-tiles", "1", "1",
                 "1", "--tolerance", "1", "--spacing", "2", "1", "1", "--voi-connectivity", "6", "--voi-alpha", "1",
                 "--voi-transform", "exp", "--weights", "1", "1", "1", "--topo-weights", "1", "0", "0",
                 "--no-ignore-label"])
    assert code == 0
    got = json.loads(capsys.readouterr().out)
    want = surfaces(truth=g, pred=p, topo_tiles=(1, 1, 1), tolerance=1.0, spacing=(2, 1, 1), voi_connectivity=6,
                    voi_alpha=1.0, voi_transform="exp", weights=(1, 1, 1), topo_weights=(1, 0, 0),
                    ignore_label=None)
    assert got["leaderboard"] == pytest.approx(want["leaderboard"], abs=1e-15)
    assert got["params"]["topo_tiles"] == [1, 1, 1] and got["tiles"] == 1


def test_each_warning_is_printed_once(tmp_path, capsys):
    p, g = _pair(1)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "g.npy", g)
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--spacing", "2", "1", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(set(err)) == 2, err  # the spacing applied, the voxels ignored: each once
    assert err[0].startswith("segscore surfaces: warning: spacing (2.0, 1.0, 1.0) applied"), err


def test_ignore_mask_file(tmp_path, capsys):
    p, g = _pair(2)
    m = np.zeros(g.shape, np.uint8)
    m[:, :4] = 1
    for name, a in (("p", p), ("g", g), ("m", m)):
        np.save(tmp_path / f"{name}.npy", a)
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--ignore-mask",
                 str(tmp_path / "m.npy"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["ignored_voxels"] == int(m.sum())
    assert got["leaderboard"] == pytest.approx(surfaces(truth=g, pred=p, ignore_mask=m)["leaderboard"], abs=1e-15)


def test_folder_mode(tmp_path, capsys):
    for d in ("gt", "pred"):
        (tmp_path / d).mkdir()
    for i in range(3):
        p, g = _pair(i)
        tifffile.imwrite(tmp_path / "gt" / f"case{i}.tif", g)
        np.save(tmp_path / "pred" / f"case{i}.npy", p)
    np.save(tmp_path / "pred" / "orphan.npy", p)
    code = main(["surfaces", "--gt-dir", str(tmp_path / "gt"), "--pred-dir", str(tmp_path / "pred"), "--out",
                 str(tmp_path / "out"), "--json"])
    out = capsys.readouterr()
    assert code == 0
    summary = json.loads(out.out)
    assert summary["cases"] == 3 and "orphan" in out.err
    rows = (tmp_path / "out" / "metrics_per_case.csv").read_text().splitlines()
    assert len(rows) == 4 and rows[0].startswith("case,leaderboard")
    boards = [surfaces(truth=_pair(i)[1], pred=_pair(i)[0])["leaderboard"] for i in range(3)]
    s = summary["summary"]["leaderboard"]
    assert s["mean"] == pytest.approx(np.mean(boards)) and s["median"] == pytest.approx(np.median(boards))
    vt = summary["summary"]["voi_total"]
    assert vt["var_lower_5"] <= vt["var_upper_5"] and vt["cvar_upper_5"] >= vt["var_upper_5"]
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary


@pytest.mark.parametrize("argv", [
    ["surfaces"],
    ["surfaces", "nope.npy", "nope2.npy"],
    ["surfaces", "--gt-dir", "x"],
    ["surfaces", "a.npy", "b.npy", "--voi-connectivity", "8"],
    ["surfaces", "a.npy", "b.npy", "--topo-tiles", "0", "1", "1"],
])
def test_bad_input_exits_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("segscore")


def test_shape_mismatch_exits_2(tmp_path, capsys):
    np.save(tmp_path / "p.npy", np.zeros((4, 4, 4), np.uint8))
    np.save(tmp_path / "g.npy", np.zeros((4, 4, 5), np.uint8))
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy")]) == 2
    assert "differs" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["nifti", "zarr"])
def test_nifti_and_zarr_inputs_give_the_npy_numbers(tmp_path, capsys, fmt):
    """Issue 30: surfaces reads TIFF, npy, NIfTI and zarr; the same arrays in NIfTI or zarr give
    exactly the npy input's result."""
    p, g = _pair(5)
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "g.npy", g)
    if fmt == "nifti":
        import nibabel

        for name, a in (("p", p), ("g", g)):
            nibabel.save(nibabel.Nifti1Image(a, np.eye(4)), tmp_path / f"{name}.nii.gz")
        paths = [tmp_path / "p.nii.gz", tmp_path / "g.nii.gz"]
    else:
        import zarr

        for name, a in (("p", p), ("g", g)):
            z = zarr.create_array(str(tmp_path / f"{name}.zarr"), shape=a.shape, dtype=a.dtype, chunks=(4, 5, 6),
                                  zarr_format=3)
            z[:] = a
        paths = [tmp_path / "p.zarr", tmp_path / "g.zarr"]
    assert main(["surfaces", str(tmp_path / "p.npy"), str(tmp_path / "g.npy"), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["surfaces", *map(str, paths), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == want
    assert want["ignored_voxels"] > 0 and 0 < want["leaderboard"] < 1 and want["voi_total"] > 0
