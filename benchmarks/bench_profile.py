"""`segscore profile` beside `curvicost profile` (0.3.1), whole processes, on the same predictions.

The case: FIVES 100_D (682², the shared data) and three predictions made by curvicost's own
operators (break 10 %, truncate 20 %, radius x0.85; seed 7), written once as PNGs under
benchmarks/_cache/profile. Both commands profile all three against the reference with their
defaults (--prune-px 5, --seed 0, --seeds 3) and write their JSON; the table gives the wall time
and the peak RSS of the whole process (segscore: median of --repeat runs after a warm-up, numba's
cache warm; curvicost: one run, about 45 s per prediction), segscore's first run with an empty
numba cache (compile included), and whether the two name the same nearest operator per prediction.

`segscore profile` runs as `python -m segscore profile` once main.py registers it, and until then
through a stand-in that does what ``segscore.cli.main.entry`` does for a registered command.

    PYTHONPATH=. python benchmarks/bench_profile.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import (CACHE, curvicost_exe, machine_note, measure, python_env, run_once, segscore_argv,  # noqa: E402
                                 shared_data, table)

HERE = CACHE / "profile"
RECIPES = (("break", 0.10), ("truncate", 0.20), ("radius", 0.85))

def segscore_profile_argv(*args) -> list[str]:
    return segscore_argv("profile", *args)


def make_case() -> tuple[Path, list[Path]]:
    from curvicost.perturb import perturb
    from PIL import Image

    HERE.mkdir(parents=True, exist_ok=True)
    gt_path = HERE / "fives_100_D_ds3.png"
    preds = [HERE / f"pred_{op}_{s:g}.png" for op, s in RECIPES]
    if gt_path.exists() and all(p.exists() for p in preds):
        return gt_path, preds
    gt = np.asarray(Image.open(shared_data("fives") / "fives_100_D_ds3.png")) > 0
    Image.fromarray(gt.astype(np.uint8) * 255).save(gt_path)
    for (op, s), path in zip(RECIPES, preds):
        out, _ = perturb(gt, op, s, seed=7, prune_px=5)
        Image.fromarray(np.asarray(out, bool).astype(np.uint8) * 255).save(path)
    return gt_path, preds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    gt, preds = make_case()
    out = Path(tempfile.mkdtemp(prefix="bench_profile_"))
    seg_json, cc_json = out / "segscore.json", out / "curvicost.json"
    seg = segscore_profile_argv(*preds, "--gt", gt, "--json-out", seg_json, "--quiet")
    cc = [curvicost_exe(), "profile", *preds, "--gt", gt, "--json", cc_json, "--quiet"]

    with tempfile.TemporaryDirectory() as numba_cache:  # segscore's first run: compile included
        env = dict(python_env(), NUMBA_CACHE_DIR=numba_cache)
        cold = run_once(seg, env=env)
    warm = measure(seg, repeat=args.repeat, warmup=1)
    peer = run_once(cc)

    ours = json.loads(seg_json.read_text())["predictions"]
    theirs = json.loads(cc_json.read_text())
    same = sum(a["nearest"] == b["nearest"] for a, b in zip(ours, theirs))
    shares = max(abs((a["shares"][op] or 0.0) - b["shares"].get(op, 0.0)) for a, b in zip(ours, theirs)
                 for op in a["shares"])
    rows = [
        {"what": "segscore profile (warm numba cache)", "s": warm["seconds"], "mb": warm["peak_mb"],
         "ratio": peer["seconds"] / warm["seconds"]},
        {"what": "segscore profile (empty numba cache: compile included)", "s": cold["seconds"],
         "mb": cold["peak_mb"], "ratio": peer["seconds"] / cold["seconds"]},
        {"what": "curvicost profile 0.3.1", "s": peer["seconds"], "mb": peer["peak_mb"], "ratio": 1.0},
    ]
    print(f"`profile` of 3 predictions (break 10 %, truncate 20 %, radius x0.85 by curvicost's operators, seed 7) "
          f"against FIVES 100_D (682²), --prune-px 5, --seeds 3; whole processes. {machine_note()}\n")
    print(table(rows, [("what", "command", None), ("s", "wall s", "{:.2f}"), ("mb", "peak RSS MB", "{:.0f}"),
                       ("ratio", "curvicost time / this", "{:.1f}x")]))
    print(f"\nnearest operator: the same in {same} of {len(ours)} predictions; largest share difference "
          f"{shares:.3f}. segscore: median of {args.repeat} runs after a warm-up; curvicost: one run.")
    for a, b in zip(ours, theirs):
        print(f"  {Path(a['prediction']).name}: segscore {a['nearest']} (unexplained {a['residual']:.2f}), "
              f"curvicost {b['nearest']} (unexplained {b['residual']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
