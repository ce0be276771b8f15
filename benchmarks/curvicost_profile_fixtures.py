"""Write curvicost 0.3.1's ``profile`` of single-operator and mixed predictions as test fixtures.

For each reference (the two FIVES masks of the shared data, 682², CC BY 4.0, and two synthetic
vessel trees, ``tests/curvilinear/helpers.py::vessel_tree((192, 192), seed, depth=5, r0=5.0)``)
it makes predictions with curvicost's own operators (:data:`RECIPES`: break, truncate, radius
and boundary at two severities each, one break-then-boundary mixture, and the reference dilated by
one pixel, which only over-traces) and runs ``curvicost.profile.profile(gt, pred, prune_px=5,
seed=0, seeds=3)`` on each, as ``curvicost profile`` does. It writes, per reference,
``tests/data/curvicost/profile_<reference>.json``:

* ``reference``: the mask's name and shape (a FIVES mask is read from the shared data by the
  test; a tree is rebuilt from ``tree`` = the arguments of ``vessel_tree``);
* ``predictions``: per prediction its ``name``, its ``recipe`` (``[operator, severity, seed]``
  steps applied in turn, or ``["dilate", 1, null]``), ``xor`` (the pixels where it differs from
  the reference: ``np.packbits`` of the C-order difference mask, zlib-compressed, base64) and
  ``n_changed``, ``seconds`` (curvicost's time) and ``result``: curvicost's dict (``shares``,
  ``residual``, ``nearest``, ``observed``, ``basis``, ``severities``).

curvicost's operators draw with its own random streams, so the predictions can only be carried as
data; segscore's profile of the same pixels must then reproduce ``observed`` exactly (it does not
depend on any draw), and ``shares`` within a tolerance (its basis is drawn by segscore's operators).

curvicost takes about 45 s per prediction on a 682² FIVES mask (its basis is rebuilt for every
prediction), so the FIVES references take about 8 minutes each; ``--jobs 2`` runs two references at
once::

    PYTHONPATH=. python benchmarks/curvicost_profile_fixtures.py [--out tests/data/curvicost] [--jobs 2]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIVES = ("fives_100_D_ds3.png", "fives_101_G_ds3.png")
TREES = ({"shape": [192, 192], "seed": 0, "depth": 5, "r0": 5.0},
         {"shape": [192, 192], "seed": 1, "depth": 5, "r0": 5.0})
PRUNE_PX = 5
SEED = 0
SEEDS = 3
#: (name, steps); a step is (operator, severity, seed) applied to the previous step's mask. The
#: seeds (7, 8) are outside the calibration's (0, 1, 2), so no prediction is a basis draw; the
#: severities sit between the calibration rungs.
RECIPES = (
    ("break_0.15", (("break", 0.15, 7),)),
    ("break_0.35", (("break", 0.35, 7),)),
    ("truncate_0.15", (("truncate", 0.15, 7),)),
    ("truncate_0.35", (("truncate", 0.35, 7),)),
    ("radius_0.8", (("radius", 0.8, 7),)),
    ("radius_1.2", (("radius", 1.2, 7),)),
    ("boundary_0.03", (("boundary", 0.03, 7),)),
    ("boundary_0.1", (("boundary", 0.1, 7),)),
    ("break_0.1+boundary_0.05", (("break", 0.1, 8), ("boundary", 0.05, 8))),
    ("dilate_1", (("dilate", 1, None),)),
)


def shared_data() -> Path:
    env = os.environ.get("SEGSCORE_SHARED_DATA")
    d = Path(env) if env else REPO.parent / "shared" / "data"
    if not (d / "fives").is_dir():
        raise SystemExit(f"{d / 'fives'}: not found; set SEGSCORE_SHARED_DATA")
    return d


def encode_xor(gt: np.ndarray, pred: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(np.packbits((gt != pred).ravel()).tobytes(), 9)).decode("ascii")


def decode_xor(gt: np.ndarray, text: str) -> np.ndarray:
    """The prediction a fixture's ``xor`` field describes, given its reference ``gt``."""
    bits = np.unpackbits(np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint8))
    return gt ^ bits[: gt.size].reshape(gt.shape).astype(bool)


def make_prediction(gt: np.ndarray, steps) -> np.ndarray:
    from curvicost.perturb import perturb
    from scipy import ndimage

    out = gt
    for op, sev, seed in steps:
        if op == "dilate":
            out = ndimage.binary_dilation(out, structure=np.ones((3,) * out.ndim), iterations=int(sev))
        else:
            out, _ = perturb(out, op, sev, seed=seed, prune_px=PRUNE_PX)
    return np.asarray(out, dtype=bool)


def reference(spec) -> tuple[str, np.ndarray, dict]:
    if isinstance(spec, str):
        from PIL import Image

        gt = np.asarray(Image.open(shared_data() / "fives" / spec)) > 0
        return spec, gt, {"name": spec, "shape": list(gt.shape), "fives": spec}
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree(tuple(spec["shape"]), seed=spec["seed"], depth=spec["depth"], r0=spec["r0"])
    name = f"tree_{spec['shape'][0]}_s{spec['seed']}"
    return name, gt, {"name": name, "shape": list(gt.shape), "tree": spec}


def run_reference(spec) -> tuple[str, list]:
    import curvicost
    from curvicost.profile import profile

    name, gt, ref = reference(spec)
    rows = []
    for pname, steps in RECIPES:
        pred = make_prediction(gt, steps)
        t0 = time.perf_counter()
        r = profile(gt, pred, prune_px=PRUNE_PX, seed=SEED, seeds=SEEDS)
        seconds = time.perf_counter() - t0
        r = json.loads(json.dumps(r, default=float))  # numpy scalars as floats, as curvicost's CLI writes them
        rows.append({"name": pname, "recipe": [list(s) for s in steps], "xor": encode_xor(gt, pred),
                     "n_changed": int((gt != pred).sum()), "seconds": round(seconds, 2), "result": r})
        print(f"{name} {pname}: nearest {r['nearest']}, residual {r['residual']:.3f} ({seconds:.1f} s)",
              file=sys.stderr, flush=True)
    doc = {"source": (f"curvicost {curvicost.__version__} curvicost.profile.profile(gt, pred, prune_px={PRUNE_PX}, "
                      f"seed={SEED}, seeds={SEEDS}) on predictions made by curvicost.perturb.perturb "
                      "(benchmarks/curvicost_profile_fixtures.py)"),
           "curvicost_version": curvicost.__version__, "reference": ref, "prune_px": PRUNE_PX, "seed": SEED,
           "seeds": SEEDS, "predictions": rows}
    return name, doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "curvicost"))
    ap.add_argument("--jobs", type=int, default=1, help="references profiled at once (processes)")
    ap.add_argument("--only", action="append", help="reference name(s) to redo (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = list(FIVES) + list(TREES)
    if args.only:
        specs = [s for s in specs if reference_name(s) in args.only]
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:
            done = list(pool.map(run_reference, specs))
    else:
        done = [run_reference(s) for s in specs]
    trees = [doc for name, doc in done if "tree" in doc["reference"]]
    for name, doc in done:
        if "tree" in doc["reference"]:
            continue
        stem = name.replace("fives_", "").replace("_ds3.png", "")
        write(out / f"profile_fives_{stem}.json", doc)
    if trees:
        first = dict(trees[0])
        write(out / "profile_trees.json", {k: v for k, v in first.items() if k not in ("reference", "predictions")}
              | {"references": [{"reference": d["reference"], "predictions": d["predictions"]} for d in trees]})
    return 0


def reference_name(spec) -> str:
    return spec if isinstance(spec, str) else f"tree_{spec['shape'][0]}_s{spec['seed']}"


def write(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=1))
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
