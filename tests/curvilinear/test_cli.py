"""`segscore curve` and `segscore perturb` through the CLI: formats, 3D, voxel size, refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segscore.curvilinear.masks import as_binary, load_mask
from segscore.curvilinear.scoring import OPTIONAL_KEYS, ROW_KEYS, score
from segscore.errors import ScoreError
from tests.curvilinear.helpers import FIVES, vessel_tree

KEYS = ["dice", "iou", "cldice", "betti0_gt", "betti0_pred", "betti0_error", "erl", "erl_frac", "merged_frac",
        "diadem_like", "traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac",
        "perfused_of_self", "traceable_length", "conductance", "traceable_length_ref", "conductance_ref",
        "prune_px", "prune_radii", "voxel_size"]


def test_fives_round_trip_png(cli, shared_data, tmp_path):
    gt = shared_data / "fives" / FIVES[0]
    out = tmp_path / "broken.png"
    code, text, err = cli("perturb", gt, "--operator", "break", "--severity", "0.1", "--prune-px", "17",
                          "-o", out, "--info-json", tmp_path / "info.json")
    assert code == 0, err
    info = json.loads((tmp_path / "info.json").read_text())
    assert info["operator"] == "break" and info["n_applied"] >= 1
    code, text, err = cli("curve", out, "--gt", gt, "--prune-px", "17")
    assert code == 0, err
    assert text.splitlines()[1].startswith("metric") and text.startswith("truth: ") and "traceable_frac" in text and "| " in text
    code, text, err = cli("curve", out, "--gt", gt, "--prune-px", "17", "--json", "--json-out", tmp_path / "r.json",
                          "--csv", tmp_path / "r.csv")
    row = json.loads(text)
    # curvicost's score computes its further metrics by default, and so does curve (--no-all-metrics: not)
    assert list(row)[: len(KEYS)] == KEYS and list(row) == list(ROW_KEYS) + list(OPTIONAL_KEYS)
    assert json.loads((tmp_path / "r.json").read_text()) == row
    assert (tmp_path / "r.csv").read_text().splitlines()[0].startswith("dice,iou,cldice")
    # --json prints exactly the API's dict
    api = score(load_mask(gt)[0], load_mask(out)[0], prune_px=17, all_metrics=True)
    assert row == json.loads(json.dumps(api))
    code, text, err = cli("curve", out, "--gt", gt, "--prune-px", "17", "--no-all-metrics", "--json")
    assert code == 0 and list(json.loads(text)) == list(ROW_KEYS)


def test_3d_tiff_and_nifti_voxel_size(cli, tmp_path):
    import nibabel
    import tifffile

    gt = vessel_tree((32, 32, 32), seed=1, depth=3, r0=3.0)
    tifffile.imwrite(tmp_path / "gt.tif", gt.astype(np.uint8) * 255)
    code, _, err = cli("perturb", tmp_path / "gt.tif", "--operator", "truncate", "--severity", "0.5",
                       "--prune-px", "3", "-o", tmp_path / "p.tif")
    assert code == 0, err
    code, text, err = cli("curve", tmp_path / "p.tif", "--gt", tmp_path / "gt.tif", "--prune-px", "3", "--json")
    assert code == 0, err
    row = json.loads(text)
    assert row["betti0_error"] == 0 and row["traceable_frac"] < 1 and row["voxel_size"] is None
    aff = np.diag([0.5, 0.5, 2.0, 1.0])
    nibabel.save(nibabel.Nifti1Image(gt.astype(np.uint8), aff), tmp_path / "gt.nii.gz")
    nibabel.save(nibabel.Nifti1Image(gt.astype(np.uint8), aff), tmp_path / "p.nii.gz")
    code, text, err = cli("curve", tmp_path / "p.nii.gz", "--gt", tmp_path / "gt.nii.gz", "--prune-px", "3", "--json")
    assert code == 0, err
    row = json.loads(text)
    assert row["voxel_size"] == [0.5, 0.5, 2.0]
    # the header's voxel size is applied (curvicost only records it and warns): a warning says so and how to
    # measure in voxels as curvicost does (tests/curvilinear/test_curvicost_lines.py)
    assert row["spacing"] == [0.5, 0.5, 2.0] and row["spacing_source"] == "nifti"
    assert err.count("anisotropic") == 1 and "--spacing 1 1 1" in err
    code, text, err = cli("curve", tmp_path / "p.nii.gz", "--gt", tmp_path / "gt.nii.gz", "--prune-px", "3",
                          "--spacing", "1", "1", "1", "--json")
    assert code == 0 and "anisotropic" in err  # told to measure in voxels: curvicost's warning
    # perturb keeps the voxel size
    code, _, err = cli("perturb", tmp_path / "gt.nii.gz", "--operator", "radius", "--severity", "0.8",
                       "-o", tmp_path / "r.nii.gz")
    assert code == 0, err
    assert load_mask(tmp_path / "r.nii.gz")[1] == (0.5, 0.5, 2.0)


def test_npy_and_prune_radius_warning(cli, tmp_path):
    gt = vessel_tree((96, 96), seed=0, r0=4.0)
    np.save(tmp_path / "gt.npy", gt)
    code, text, err = cli("curve", tmp_path / "gt.npy", "--gt", tmp_path / "gt.npy", "--prune-px", "40")
    assert code == 0
    assert "outside 1-4" in err and "traceable_frac" in text


@pytest.mark.parametrize("bad,msg", [
    (lambda g: g.astype(np.float32) * 0.7, "probability map"),
    (lambda g: g.astype(np.uint8) * 1 + (np.arange(g.size).reshape(g.shape) % 3 == 0), "distinct values"),
])
def test_refuses_probability_and_multilabel(cli, tmp_path, bad, msg):
    gt = vessel_tree((64, 64), seed=0)
    np.save(tmp_path / "gt.npy", gt)
    np.save(tmp_path / "bad.npy", bad(gt))
    code, _, err = cli("curve", tmp_path / "bad.npy", "--gt", tmp_path / "gt.npy")
    assert code == 2 and msg in err and err.count("\n") == 1 and err.startswith("segscore curve:")


def test_refusals_exit_2(cli, tmp_path):
    gt = vessel_tree((64, 64), seed=0)
    np.save(tmp_path / "gt.npy", gt)
    np.save(tmp_path / "empty.npy", np.zeros_like(gt))
    np.save(tmp_path / "small.npy", gt[:32])
    np.save(tmp_path / "four.npy", np.zeros((2, 2, 2, 2), bool))
    # empty reference refused, empty prediction scored
    code, _, err = cli("curve", tmp_path / "gt.npy", "--gt", tmp_path / "empty.npy")
    assert code == 2 and "empty" in err
    code, text, err = cli("curve", tmp_path / "empty.npy", "--gt", tmp_path / "gt.npy", "--json")
    row = json.loads(text)
    assert code == 0 and row["traceable_frac"] == 0.0 and row["dice"] == 0.0
    assert set(row["notes"]) == {"cbdice_star"}  # the further metrics' nulls only (betti_matching is computed)
    code, _, err = cli("curve", tmp_path / "small.npy", "--gt", tmp_path / "gt.npy")
    assert code == 2 and "shape" in err
    code, _, err = cli("curve", tmp_path / "four.npy", "--gt", tmp_path / "gt.npy")
    assert code == 2 and "2D or 3D" in err
    code, _, err = cli("curve", tmp_path / "missing.npy", "--gt", tmp_path / "gt.npy")
    assert code == 2 and "missing.npy" in err
    code, _, err = cli("perturb", tmp_path / "gt.npy", "--operator", "break", "--severity", "2", "-o", tmp_path / "o.npy")
    assert code == 2 and "fraction" in err
    code, _, err = cli("perturb", tmp_path / "gt.npy", "--operator", "break", "--severity", "0.1",
                       "-o", tmp_path / "nodir" / "o.npy")
    assert code == 2 and "does not exist" in err
    code, _, err = cli("perturb", tmp_path / "empty.npy", "--operator", "break", "--severity", "0.1", "-o", tmp_path / "o.npy")
    assert code == 2 and "empty" in err


def test_degenerate_reference_gives_null_with_note():
    gt = np.zeros((20, 20), bool)
    gt[10, 10:13] = True  # a 3-voxel stub: pruned away at prune_px 5
    row = score(gt, gt, prune_px=5)
    assert row["conductance_frac"] is None and row["traceable_single_frac"] is None
    assert {"conductance_frac", "traceable_single_frac", "conductance_twosided"} <= set(row["notes"])
    assert row["traceable_frac"] == 1.0
    json.dumps(row, allow_nan=False)


def test_as_binary_rules():
    assert as_binary(np.array([[0, 7], [7, 0]], np.uint16)).sum() == 2
    assert as_binary(np.array([[0.0, 1.0]])).sum() == 1
    assert as_binary(np.zeros((3, 3), np.int8)).sum() == 0
    with pytest.raises(ScoreError, match="NaN"):
        as_binary(np.array([[0.0, np.nan]]))
    with pytest.raises(ScoreError, match="2D or 3D"):
        as_binary(np.zeros(5))


@pytest.mark.parametrize("ext", [".tif", ".nii.gz", ".png", ".npy"])
def test_2d_formats_round_trip(cli, tmp_path, ext):
    from segscore.curvilinear.masks import save_mask

    gt = vessel_tree((96, 96), seed=2, r0=4.0)
    save_mask(gt, tmp_path / f"gt{ext}")
    assert np.array_equal(load_mask(tmp_path / f"gt{ext}")[0], gt)
    code, _, err = cli("perturb", tmp_path / f"gt{ext}", "--operator", "boundary", "--severity", "0.05",
                       "-o", tmp_path / f"p{ext}")
    assert code == 0, err
    code, text, err = cli("curve", tmp_path / f"p{ext}", "--gt", tmp_path / f"gt{ext}", "--json")
    assert code == 0, err
    row = json.loads(text)
    assert row["betti0_error"] == 0 and 0.9 < row["dice"] < 1.0


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64])
def test_integer_masks_are_binary_exactly_when_unique_says_so(dtype):
    rng = np.random.default_rng(np.dtype(dtype).num)
    info = np.iinfo(dtype)
    picks = [0, 1, -1, 7, 255, 256, info.max, info.min]
    for _ in range(60):
        vals = rng.choice([v for v in picks if info.min <= v <= info.max], size=rng.integers(1, 4))
        a = rng.choice(vals, size=(5, 6)).astype(dtype)
        nonzero = set(np.unique(a).tolist()) - {0}
        if len(nonzero) <= 1:
            assert np.array_equal(as_binary(a), a != 0)
        else:
            with pytest.raises(ScoreError, match="distinct values"):
                as_binary(a)


def test_all_metrics_by_default_adds_the_optional_keys(cli, tmp_path):
    from segscore.curvilinear.masks import save_mask
    from segscore.curvilinear.scoring import OPTIONAL_KEYS

    gt = vessel_tree((128, 128), seed=3)
    save_mask(gt, tmp_path / "gt.png")
    save_mask(np.roll(gt, 2, axis=1), tmp_path / "pred.png")
    code, text, err = cli("curve", tmp_path / "pred.png", "--gt", tmp_path / "gt.png", "--json")
    assert code == 0, err
    row = json.loads(text)
    assert list(row) == list(ROW_KEYS) + list(OPTIONAL_KEYS)
    assert 0 < row["skeleton_recall"] < 1 and 0 < row["cbdice_star"] < 1 and row["hd95"] >= 2
    code, text, err = cli("curve", tmp_path / "pred.png", "--gt", tmp_path / "gt.png", "--all-metrics")
    assert code == 0 and "hd95" in text and "skeleton_recall" in text
    code, text, err = cli("curve", tmp_path / "pred.png", "--gt", tmp_path / "gt.png", "--no-all-metrics")
    assert code == 0 and "hd95" not in text and "skeleton_recall" not in text
