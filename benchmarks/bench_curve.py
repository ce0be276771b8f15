"""`segscore curve` / `perturb` beside curvicost 0.3.1, side by side in one run.

Cases (made once, cached under benchmarks/_cache/curve, outside git):

* FIVES 100_D upsampled 3x by nearest neighbour (2046^2) and a synthetic 2048^2 vessel tree,
  each with a prediction made by curvicost's own break operator (10 %, --prune-px 17);
* the two FIVES masks at 682^2 (break 10 %, --prune-px 6);
* a synthetic 256^3 vessel tree with a 20 % break (segscore's operator), --prune-px 5.

Rows: whole processes (`python -m segscore curve` vs the `curvicost score` console script;
median wall time and peak RSS of --repeat runs after a warm-up, so numba's cache is warm);
in-process warm scoring (median of --repeat after one warm call; curvicost's in-process time
is one call where it takes more than 10 s; curvicost's default also computes its optional metrics,
which segscore does not, so its time without them is in the note); 20 predictions against one prepared reference
(curvicost: 3, per prediction); each operator at 2048^2; the one-off costs separately: compile
(empty NUMBA_CACHE_DIR) and measuring scikit-image's thinning table (empty SEGSCORE_CACHE_DIR).

    PYTHONPATH=. python benchmarks/bench_curve.py [--repeat 3] [--skip-3d]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import CACHE, curvicost_exe, machine_note, measure, run_once, segscore_argv, shared_data, table  # noqa: E402

FIVES = shared_data("fives", required=False)
HERE = CACHE / "curve"


def vessel_tree(shape, seed=0, depth=6, r0=None):
    """The tests' random branching tree, at benchmark size (radius from the shape)."""
    from tests.curvilinear.helpers import vessel_tree as tree

    return tree(shape, seed=seed, depth=depth, r0=r0 or max(min(shape) / 100.0, 3.0), reach=0.3)


def _png(path, m):
    from PIL import Image

    Image.fromarray(m.astype(np.uint8) * 255).save(path)


def make_cases() -> dict:
    import curvicost
    from PIL import Image

    HERE.mkdir(parents=True, exist_ok=True)
    cases = {}
    g100 = np.asarray(Image.open(FIVES / "fives_100_D_ds3.png")) > 0
    g101 = np.asarray(Image.open(FIVES / "fives_101_G_ds3.png")) > 0
    specs = [("fives100_3x", lambda: np.repeat(np.repeat(g100, 3, 0), 3, 1), 17),
             ("tree2048", lambda: vessel_tree((2048, 2048), seed=0, depth=7, r0=14.0), 17),
             ("fives100_682", lambda: g100, 6), ("fives101_682", lambda: g101, 6)]
    for name, make, pp in specs:
        gt, pred = HERE / f"{name}_gt.png", HERE / f"{name}_break.png"
        if not (gt.exists() and pred.exists()):
            m = make()
            _png(gt, m)
            _png(pred, curvicost.perturb(m, "break", 0.10, seed=0, prune_px=pp)[0])
        cases[name] = (gt, pred, pp)
    return cases


def make_3d() -> tuple:
    from segscore.curvilinear.operators import perturb

    gt, pred = HERE / "tree256_gt.npy", HERE / "tree256_break.npy"
    if not (gt.exists() and pred.exists()):
        m = vessel_tree((256, 256, 256), seed=1, depth=5, r0=6.0)
        np.save(gt, m)
        np.save(pred, perturb(m, "break", 0.2, seed=0, prune_px=5)[0])
    return gt, pred, 5


def curvicost_argv(pred, gt, pp, out):
    return [curvicost_exe(), "score", str(pred), "--gt", str(gt), "--prune-px", str(pp), "--json", str(out)]


def load(p):
    from segscore.curvilinear.masks import load_mask

    return load_mask(p)[0]


def timed(fn, repeat, warm=True):
    if warm:
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _case_paths(skip_3d):
    cases = {}
    for name, pp in (("fives100_3x", 17), ("tree2048", 17), ("fives100_682", 6), ("fives101_682", 6)):
        cases[name] = (HERE / f"{name}_gt.png", HERE / f"{name}_break.png", pp)
    if not skip_3d:
        cases["tree256_3d"] = (HERE / "tree256_gt.npy", HERE / "tree256_break.npy", 5)
    return cases


PARITY_KEYS = ("dice", "iou", "cldice", "betti0_gt", "betti0_pred", "betti0_error", "erl", "erl_frac",
               "merged_frac", "diadem_like", "traceable_frac", "traceable_single_frac", "conductance_twosided",
               "conductance_frac", "perfused_of_self", "traceable_length", "conductance", "traceable_length_ref",
               "conductance_ref")


def inprocess_rows(cases, repeat):
    import curvicost

    from segscore.curvilinear.operators import perturb
    from segscore import api
    from segscore.curvilinear.scoring import prepare_reference

    rows = []
    args = argparse.Namespace(repeat=repeat)
    for name, (gt, pred, pp) in cases.items():
        g, p = load(gt), load(pred)
        t_ours = timed(lambda: api.curve(g, p, prune_px=pp, all_metrics=False), args.repeat)
        t0 = time.perf_counter()
        theirs = curvicost.score(g, p, prune_px=pp)
        t_c = time.perf_counter() - t0
        if t_c < 10:
            t_c = timed(lambda: curvicost.score(g, p, prune_px=pp), args.repeat, warm=False)
        t0 = time.perf_counter()
        curvicost.score(g, p, prune_px=pp, all_metrics=False)
        t_core = time.perf_counter() - t0
        ours = api.curve(g, p, prune_px=pp, all_metrics=False)
        diff = max(abs(float(theirs[k]) - float(ours[k])) for k in PARITY_KEYS)
        rows.append({"case": f"{name}: in-process warm", "ours": t_ours, "theirs": t_c, "ratio": t_c / t_ours,
                     "note": f"max |diff| over the row {diff:.1e}; curvicost without its optional metrics "
                             f"(all_metrics=False, one call) {t_core:.2f} s = {t_core / t_ours:.1f}x"})
        print(rows[-1], flush=True)
    # ---- 20 predictions against one prepared reference (2048^2)
    gt, _, pp = cases["fives100_3x"]
    g = load(gt)
    preds = [perturb(g, op, 0.1, seed=s, prune_px=pp)[0] for s in range(10) for op in ("break", "truncate")]
    t0 = time.perf_counter()
    ref = prepare_reference(g, prune_px=pp)
    t_prep = time.perf_counter() - t0
    per = []
    for p in preds:
        t0 = time.perf_counter()
        api.curve(g, p, reference=ref, prune_px=pp, all_metrics=False)
        per.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    cref = curvicost.prepare_reference(g, prune_px=pp)
    c_prep = time.perf_counter() - t0
    cper = []
    for p in preds[:3]:
        t0 = time.perf_counter()
        curvicost.score(g, p, prune_px=pp, reference=cref)
        cper.append(time.perf_counter() - t0)
    rows.append({"case": "fives100_3x: prepare_reference", "ours": t_prep, "theirs": c_prep, "ratio": c_prep / t_prep})
    rows.append({"case": "fives100_3x: each further prediction (ours 20, curvicost 3; median)",
                 "ours": statistics.median(per), "theirs": statistics.median(cper),
                 "ratio": statistics.median(cper) / statistics.median(per)})
    print(rows[-2:], flush=True)
    # ---- operators at 2048^2 (curvicost: one call each)
    for op, sev in (("break", 0.1), ("bridge", 1.0), ("truncate", 0.2), ("radius", 0.7), ("boundary", 0.05)):
        t_ours = timed(lambda: perturb(g, op, sev, seed=0, prune_px=pp), args.repeat)
        t0 = time.perf_counter()
        curvicost.perturb(g, op, sev, seed=0, prune_px=pp)
        t_c = time.perf_counter() - t0
        rows.append({"case": f"perturb {op} {sev:g} at 2046^2", "ours": t_ours, "theirs": t_c, "ratio": t_c / t_ours})
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-3d", action="store_true")
    args = ap.parse_args(argv)
    make_cases()
    if not args.skip_3d:
        make_3d()
    cases = _case_paths(args.skip_3d)
    tmp = Path(tempfile.mkdtemp())
    rows = []
    # ---- whole process
    for name, (gt, pred, pp) in cases.items():
        ours = measure(segscore_argv("curve", pred, "--gt", gt, "--prune-px", pp, "--json-out", tmp / "s.json"),
                       repeat=args.repeat)
        rep_c = args.repeat if "3d" not in name else 1
        theirs = measure(curvicost_argv(pred, gt, pp, tmp / "c.json"), repeat=rep_c, warmup=0)
        rows.append({"case": f"{name}: whole process", "ours": ours["seconds"], "theirs": theirs["seconds"],
                     "ratio": theirs["seconds"] / ours["seconds"], "mem_ours": ours["peak_mb"],
                     "mem_theirs": theirs["peak_mb"]})
        print(rows[-1], flush=True)
    for r in inprocess_rows(cases, args.repeat):
        rows.append(r)
        print(r, flush=True)
    # ---- first calls: empty numba cache (compile), then no measured thinning table (measurement)
    gt, pred, pp = cases["fives100_682"]
    argv = segscore_argv("curve", pred, "--gt", gt, "--prune-px", pp, "--json-out", tmp / "s.json")
    warm = measure(argv, repeat=args.repeat)
    for what, var in (("empty numba cache", "NUMBA_CACHE_DIR"), ("no measured thinning table", "SEGSCORE_CACHE_DIR")):
        with tempfile.TemporaryDirectory() as empty:
            env = dict(os.environ, **{var: empty})
            env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
            cold = run_once(argv, env=env)
        rows.append({"case": f"fives100_682: first call, {what}", "ours": cold["seconds"], "theirs": None,
                     "ratio": None, "mem_ours": cold["peak_mb"],
                     "note": f"once: {cold['seconds'] - warm['seconds']:.1f} s over a warm run"})
    cols = [("case", "case", None), ("ours", "segscore s", "{:.3f}"), ("theirs", "curvicost 0.3.1 s", "{:.2f}"),
            ("ratio", "speed-up", "{:.1f}x"), ("mem_ours", "segscore peak MB", "{:.0f}"),
            ("mem_theirs", "curvicost peak MB", "{:.0f}"), ("note", "note", None)]
    print()
    print(machine_note())
    print(table(rows, cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
