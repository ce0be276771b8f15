"""Placement probe: planted shifts found exactly, aligned maps at 0, NCC against a numpy.roll
brute force, per-tile peaks, the CLI's exit codes and evidence picture."""

import json

import numpy as np
import pytest

from segscore.ink import placement
from tests.targets.helpers import make_target, write_png


def blobs(shape, seed=0, n=60, rad=4):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    lab = np.zeros(shape, bool)
    for _ in range(n):
        cy, cx = rng.integers(0, shape[0]), rng.integers(0, shape[1])
        lab |= (yy - cy) ** 2 + (xx - cx) ** 2 <= rad ** 2
    return lab


def noisy(lab, seed=1, noise=0.4):
    rng = np.random.default_rng(seed)
    return np.clip(lab * (1 - noise) + rng.random(lab.shape) * noise, 0, 1)


@pytest.mark.parametrize("shift", [(0, 0), (7, -3), (-12, 15), (20, 0)])
def test_planted_shift_is_found(shift):
    lab = blobs((160, 200))
    pred = noisy(np.roll(lab, shift, axis=(0, 1)))
    r = placement.probe(pred, lab, radius=30, gate_px=10, tile_px=80, tile_radius=25)
    assert (r["peak_dy"], r["peak_dx"]) == shift
    assert r["offset_px"] == pytest.approx(np.hypot(*shift))
    assert r["passed"] is bool(np.hypot(*shift) <= 10)
    assert r["n_tiles"] > 0 and r["worst_tile_px"] == pytest.approx(np.hypot(*shift), abs=1.5)
    assert r["tile_sd_dy"] <= 1.0 and r["tile_sd_dx"] <= 1.0


def test_ncc_matches_numpy_roll_brute_force():
    rng = np.random.default_rng(3)
    lab = rng.random((24, 30)) < 0.3
    mask = rng.random(lab.shape) < 0.85
    pred = noisy(np.roll(lab, (2, -1), axis=(0, 1)), noise=0.8).astype(np.float32)
    r = placement.probe(pred, lab, mask, radius=4, tiles=False)
    a = pred.astype(np.float64)
    a = np.where(mask, a - a[mask].mean(), 0)
    b = lab.astype(np.float64)
    b = np.where(mask, b - b[mask].mean(), 0)
    best, arg = -np.inf, None
    for dy in range(-4, 5):
        for dx in range(-4, 5):
            v = np.sum(a * np.roll(b, (dy, dx), axis=(0, 1))) / np.sqrt(np.sum(a * a) * np.sum(b * b))
            if v > best:
                best, arg = v, (dy, dx)
            if (dy, dx) == (0, 0):
                zero = v
    assert (r["peak_dy"], r["peak_dx"]) == arg
    assert r["peak_ncc"] == pytest.approx(best, abs=1e-5)
    assert r["ncc_at_zero"] == pytest.approx(zero, abs=1e-5)


def test_tile_peaks_follow_local_shifts():
    lab = blobs((128, 128), seed=4, n=80, rad=3)
    pred = np.zeros(lab.shape)
    shifts = {(0, 0): (3, 0), (0, 64): (0, -4), (64, 0): (-2, 2), (64, 64): (0, 0)}
    for (y0, x0), s in shifts.items():
        pred[y0:y0 + 64, x0:x0 + 64] = np.roll(lab, s, axis=(0, 1))[y0:y0 + 64, x0:x0 + 64]
    r = placement.probe(noisy(pred > 0.5, noise=0.2), lab, radius=8, tile_px=64, tile_radius=8)
    got = {(t["y0"], t["x0"]): (t["dy"], t["dx"]) for t in r["tiles"]}
    assert got == shifts
    dys = [s[0] for s in shifts.values()]
    dxs = [s[1] for s in shifts.values()]
    assert r["tile_sd_dy"] == pytest.approx(np.std(dys)) and r["tile_sd_dx"] == pytest.approx(np.std(dxs))
    assert r["worst_tile_px"] == pytest.approx(4.0)


def test_tiles_with_a_mask_and_without_ink():
    lab = blobs((96, 96), seed=5)
    lab[:, 48:] = False  # right half holds no ink: its tiles are skipped
    mask = np.ones(lab.shape, bool)
    mask[:10] = False
    pred = noisy(np.roll(lab, (2, 1), axis=(0, 1)))
    r = placement.probe(pred, lab, mask, radius=6, tile_px=48, tile_radius=6)
    assert {(t["y0"], t["x0"]) for t in r["tiles"]} <= {(0, 0), (48, 0)}
    assert all((t["dy"], t["dx"]) == (2, 1) for t in r["tiles"])


def test_constant_prediction_gives_null_with_note():
    lab = blobs((64, 64))
    r = placement.probe(np.full(lab.shape, 0.3), lab, radius=5, tiles=False)
    assert r["offset_px"] is None and r["passed"] is None and "constant" in r["notes"]["offset_px"]


def test_cli_exit_0_even_when_failing_and_evidence(cli, tmp_path):
    folder, ink, _ = make_target(tmp_path / "t", shape=(96, 128), mask=False, ink_rate=0.0)
    lab = blobs((96, 128), seed=2)
    write_png(folder / "gt_ink.png", np.where(lab, 255, 0).astype(np.uint8))
    pred = (noisy(np.roll(lab, (0, 50), axis=(0, 1))) * 255).astype(np.uint8)
    write_png(tmp_path / "p.png", pred)
    code, out, err = cli("placement", tmp_path / "p.png", folder, "--radius", 60, "--json",
                         "--evidence", tmp_path / "ev.png")
    assert code == 0, err
    r = json.loads(out)
    assert (r["peak_dy"], r["peak_dx"]) == (0, 50) and r["passed"] is False
    assert r["gate_px"] == 48.0 and r["gate_from"] == "meta.json"
    assert "median_residual" not in json.dumps(r)
    from PIL import Image

    img = np.asarray(Image.open(tmp_path / "ev.png"))
    assert img.ndim == 3 and img.shape[1] == 3 * 128 + 16 and img.shape[0] == 96 + 18
    panel3 = img[18:, 2 * 128 + 16:]
    assert (panel3[..., 0] > 0).any() and (panel3[..., 2] > 0).any()  # red and blue fringes of a shift
    code, out, err = cli("placement", tmp_path / "p.png", folder, "--radius", 60, "--gate", 50, "--json")
    r = json.loads(out)
    assert code == 0 and r["passed"] is True and r["gate_from"] == "--gate"
    code, out, err = cli("placement", tmp_path / "p.png", folder, "--radius", -1)
    assert code == 2 and "radius" in err
    code, out, err = cli("placement", tmp_path / "p.png", folder, "--radius", 60)
    assert code == 0 and "FAILED" in out and "(dy +0, dx +50)" in out


def test_evidence_colours():
    lab = np.zeros((10, 10), bool)
    lab[2:6, 2:6] = True
    pred = np.zeros((10, 10))
    pred[4:8, 2:6] = 1.0
    img = placement.evidence_image(pred, lab)
    p3 = img[:, 2 * 10 + 16:]
    assert tuple(p3[4, 3]) == (0, 255, 0)  # both
    assert tuple(p3[2, 3]) == (255, 0, 0)  # label only
    assert tuple(p3[7, 3]) == (0, 0, 255)  # prediction only
    assert tuple(p3[0, 0]) == (0, 0, 0)


def test_real_label_planted_shift(shared_data):
    d = shared_data / "scrollgt" / "scroll1_20231210121321"
    if not d.exists():
        pytest.skip("scrollgt scoring target absent")
    from segscore.ink.targets import load_target

    ink = (load_target(d).codes & 1).astype(bool)[1024:2048, 1024:2048]
    rng = np.random.default_rng(0)
    pred = np.clip(np.roll(ink, (31, -8), axis=(0, 1)) * 0.5 + rng.random(ink.shape) * 0.5, 0, 1)
    r = placement.probe(pred, ink, radius=64, tile_px=512, tile_radius=48)
    assert (r["peak_dy"], r["peak_dx"]) == (31, -8) and r["passed"] is True
    assert all(abs(t["dy"] - 31) <= 1 and abs(t["dx"] + 8) <= 1 for t in r["tiles"])
    aligned = placement.probe(np.roll(pred, (-31, 8), axis=(0, 1)), ink, radius=64, tiles=False)
    assert aligned["offset_px"] == 0.0
