"""Full-size benchmark of the ScrollGT parity commands (`target`, `columns`, `placement`), in one run.

Cases (made once, cached under benchmarks/_cache, outside git):

- a 4,096 x 4,096 8-bit PNG prediction against the real scoring target
  ``scroll1_20231210121321`` (a blurred, shifted copy of its label plus noise);
- a float32 ``.npy`` over the full 2,061 x 30,097 PHerc 1667 column grid (248 MB);
- the same 4,096^2 prediction for the placement probe at radius 512.

Every row but the in-process ones is a whole process (wall time and peak RSS, medians of
--repeat runs after a warm-up, JIT cache warm); first-call compile runs with an empty numba
cache. The reference computes the prediction's card the way ScrollGT does (float64 pixels,
scikit-learn's AP and ROC-AUC, 19 thresholded F1 passes) in its own process, in the same run.

    PYTHONPATH=. python benchmarks/bench_targets.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import (CACHE, machine_note, measure, python_env, run_once, segscore_argv,  # noqa: E402
                                 shared_data, table, time_call)


def make_cases(data: Path) -> dict:
    from PIL import Image

    CACHE.mkdir(parents=True, exist_ok=True)
    png = CACHE / "targets_pred4096_u8.png"
    cols = CACHE / "targets_columns_full_f32.npy"
    target = data / "scroll1_20231210121321"
    ctarget = data / "pherc1667_merged_columns"
    if not png.exists():
        from scipy import ndimage

        g = np.asarray(Image.open(target / "gt_ink.png")) > 127
        g = np.roll(g, (31, -8), axis=(0, 1))
        rng = np.random.default_rng(0)
        f = ndimage.gaussian_filter(g.astype(np.float32), 6) * 0.6 + rng.random(g.shape, dtype=np.float32) * 0.4
        Image.fromarray(np.clip(f * 255, 0, 255).astype(np.uint8)).save(png)
    if not cols.exists():
        Image.MAX_IMAGE_PIXELS = None
        m = np.asarray(Image.open(ctarget / "valid_mask.png")) > 127
        rng = np.random.default_rng(0)
        p = rng.random(m.shape, dtype=np.float32) * 0.5 + np.float32(0.3) * m
        np.save(cols, p.astype(np.float32))
    return {"png": str(png), "target": str(target), "cols": str(cols), "ctarget": str(ctarget)}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    data = shared_data("scrollgt", required=False)
    if not (data / "scroll1_20231210121321").exists():
        sys.exit(f"real targets not found under {data}: set SEGSCORE_SHARED_DATA")
    case = make_cases(data)  # the harness measures each child under a bare parent: this one may grow
    out_json = os.path.join(tempfile.gettempdir(), "segscore_bench_card.json")
    target_argv = segscore_argv("target", case["png"], case["target"], "--json-out", out_json)
    ref_argv = [sys.executable, str(Path(__file__).with_name("targets_reference_sklearn.py")), case["png"],
                case["target"]]
    cols_argv = segscore_argv("columns", case["cols"], case["ctarget"], "--json-out", out_json + ".cols")
    place_argv = segscore_argv("placement", case["png"], case["target"], "--radius", "512", "--json-out",
                               out_json + ".place")
    rows = []
    with tempfile.TemporaryDirectory() as nb:
        env = dict(python_env(), NUMBA_CACHE_DIR=nb)
        cold = run_once(target_argv, env=env)
        cold_cols = run_once(cols_argv, env=env)
    rows.append({"case": "segscore target, first call (empty JIT cache), with floors", "s": cold["seconds"],
                 "mb": cold["peak_mb"]})
    rows.append({"case": "segscore columns, first call (empty JIT cache), with floors", "s": cold_cols["seconds"],
                 "mb": cold_cols["peak_mb"]})

    def add(name, argv):
        m = measure(argv, repeat=args.repeat)
        rows.append({"case": name, "s": m["seconds"], "mb": m["peak_mb"]})
        return m

    ref = add("reference: ScrollGT's way (float64, sklearn AP + ROC-AUC, 19 F1 passes), card only", ref_argv)
    tgt = add("segscore target: 4096^2 8-bit PNG, card + 3 floors (whole process)", target_argv)
    tgt_nf = add("segscore target --no-floors (whole process)", target_argv + ["--no-floors"])
    col = add("segscore columns: full 2061 x 30097 float32 .npy, + 3 floors (whole process)", cols_argv)
    col_nf = add("segscore columns --no-floors (whole process)", cols_argv + ["--no-floors"])
    plc = add("segscore placement: 4096^2, radius 512, 768 px tiles (whole process)", place_argv)

    # in process, warm (segscore.api.target): the card with floors (the target folder and, on the first
    # row, the prediction PNG read each call)
    from segscore import api
    from segscore.ink.targets import read_png

    warm = time_call(lambda: api.target(case["target"], case["png"]), repeat=args.repeat)
    rows.append({"case": "in process, warm: card + 3 floors (PNG decode included)", "s": warm, "mb": None})
    arr = read_png(case["png"])
    warm_arr = time_call(lambda: api.target(case["target"], arr), repeat=args.repeat)
    rows.append({"case": "in process, warm: card + 3 floors (map already in memory)", "s": warm_arr, "mb": None})

    for r in rows:  # the reference computes an ink card: the ratio means something for those rows only
        ink = "target" in r["case"] or r["case"].startswith(("in process", "reference"))
        r["ratio"] = ref["seconds"] / r["s"] if ink and r["s"] else None
    print(f"segscore target/columns/placement benchmark — {machine_note()} — medians of {args.repeat}, "
          f"JIT cache warm\n")
    print(table(rows, [("case", "case", None), ("s", "wall s", "{:.2f}"), ("mb", "peak RSS MB", "{:.0f}"),
                       ("ratio", "reference s / this s", "{:.1f}")]))

    # agreement with the reference on the same card
    ref_card = json.loads(subprocess.run(ref_argv, capture_output=True, text=True, check=True).stdout)
    card = api.target(case["target"], case["png"], no_floors=True)["metrics"]
    diff = max(abs(card[k] - ref_card[k]) for k in ("val_f1", "average_precision", "roc_auc", "ap_prevalence_lift"))

    def verdict(ok):
        return "met" if ok else "MISSED"

    print("\ntargets:")
    print(f"- target process with floors <= 1.5 s: {tgt['seconds']:.2f} s -> {verdict(tgt['seconds'] <= 1.5)}")
    print(f"- >= 8x faster than the reference: {ref['seconds'] / tgt['seconds']:.1f}x -> "
          f"{verdict(ref['seconds'] / tgt['seconds'] >= 8)}")
    print(f"- peak <= 300 MB: {tgt['peak_mb']:.0f} MB -> {verdict(tgt['peak_mb'] <= 300)}")
    print(f"- card with floors in process, warm <= 0.3 s: {warm:.3f} s (map in memory {warm_arr:.3f} s) -> "
          f"{verdict(warm <= 0.3)}")
    print(f"- columns full grid <= 3 s at <= 600 MB: {col['seconds']:.2f} s, {col['peak_mb']:.0f} MB -> "
          f"{verdict(col['seconds'] <= 3 and col['peak_mb'] <= 600)}")
    print(f"- placement 4096^2 radius 512 <= 5 s (and <= 1 GB): {plc['seconds']:.2f} s, {plc['peak_mb']:.0f} MB -> "
          f"{verdict(plc['seconds'] <= 5 and plc['peak_mb'] <= 1024)}")
    print(f"- card agrees with the reference: max |difference| {diff:.2e} (8-bit map: exact to 1e-9) -> "
          f"{verdict(diff <= 1e-9)}")
    print(f"(no-floors rows: target {tgt_nf['seconds']:.2f} s, columns {col_nf['seconds']:.2f} s)")


if __name__ == "__main__":
    main()
