"""Write curvicost 0.3.1's metric values on small cases as test fixtures (tests/data/curvicost/).

For ``tests/curvilinear/test_graph_metrics.py``: each case is a reference and a prediction, and
the fixture keeps curvicost's ``score(reference, prediction, prune_px=..., all_metrics=True)``
values of the metrics its audit correlates (:data:`KEYS`; NaN written as ``null``) beside the
masks, so the tests compare segscore against curvicost without running it (it takes seconds per
682^2 case).

* ``metric_fixtures_fives_100_D.json``, ``metric_fixtures_fives_101_G.json``: the two FIVES masks
  of the shared data (682^2, CC BY 4.0; not copied: a case names its mask), under curvicost's
  operators and segscore's (:mod:`segscore.curvilinear.operators`), at ``--prune-px`` 17 (two
  101_G cases at 5), plus the identity and an empty prediction.
* ``metric_fixtures_trees.json``: synthetic 2D and 3D vessel trees
  (``tests/curvilinear/helpers.py::vessel_tree``, named by their arguments) under both
  operator sets, and hand-made masks without junctions or without control points (a ring).

A case's reference is its base mask (the FIVES mask, the tree) or, for a radius case, the base's
redraw at scale 1.0 by that operator set (``redraws``, stored once per base); its prediction is
stored as its difference from the reference (``numpy.packbits`` of the XOR, zlib, base64), or
``null`` for an empty prediction.
Prints segscore's largest |difference| per key beside. About two minutes on one core::

    PYTHONPATH=. python benchmarks/curvicost_metric_fixtures.py [--out tests/data/curvicost]
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.curvilinear.helpers import disk_line, vessel_tree  # noqa: E402

#: curvicost's audit metrics (its order) and the further columns this fixture checks
KEYS = ("dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error", "betti_matching", "erl_star",
        "node_recall", "apls", "junction_f1", "hd95", "erl_frac", "erl_split", "diadem_like", "conductance_frac",
        "conductance_excess", "conductance_deficit")
FIVES = ("fives_100_D_ds3.png", "fives_101_G_ds3.png")
TREES = {  # name -> vessel_tree arguments
    "tree2d_s0": dict(shape=(160, 160), seed=0, depth=4, r0=4.0),
    "tree2d_s1": dict(shape=(160, 160), seed=1, depth=4, r0=4.0),
    "tree2d_s2": dict(shape=(128, 128), seed=2, depth=4, r0=3.0),
    "tree3d_s3": dict(shape=(40, 40, 40), seed=3, depth=3, r0=3.0),
    "tree3d_s1": dict(shape=(48, 48, 48), seed=1, depth=4, r0=3.0),
}


def encode(mask: np.ndarray, base: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(np.packbits((mask ^ base).ravel()).tobytes(), 9)).decode("ascii")


def decode(text: str, base: np.ndarray) -> np.ndarray:
    """The mask stored by :func:`encode` against ``base`` (the tests call this)."""
    bits = np.frombuffer(zlib.decompress(base64.b64decode(text)), np.uint8)
    return np.unpackbits(bits, count=base.size).reshape(base.shape).astype(bool) ^ base


def degenerate(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Hand-made (reference, prediction) pairs without junctions or control points."""
    if name == "line_vs_line":  # no junction on either side: junction F1 is 0/0
        g = disk_line(np.zeros((64, 64), bool), (32, 6), (32, 58), 2.0)
        p = disk_line(np.zeros((64, 64), bool), (33, 8), (33, 56), 2.0)
        return g, p
    if name == "ring_vs_ring":  # a one-voxel ring against itself: no end point, junction or control point
        yy, xx = np.mgrid[:48, :48]
        g = np.abs(np.hypot(yy - 24, xx - 24) - 12) < 0.75
        return g, g.copy()
    if name == "line_vs_tree":  # junctions on the prediction only
        g = disk_line(np.zeros((96, 96), bool), (4, 48), (90, 48), 3.0)
        return g, vessel_tree((96, 96), seed=4, depth=3, r0=3.0)
    raise KeyError(name)


DEGENERATE = ("line_vs_line", "ring_vs_ring", "line_vs_tree")


def _clean(v):
    v = float(v)
    return None if not math.isfinite(v) else v


def cases_for(base_name, gt, pp, ops, redraws):
    """(name, reference, redraw key or None, prediction, prune_px) for one base mask; ``redraws``
    (who -> mask) collects the radius references."""
    import curvicost

    from segscore.curvilinear.operators import perturb as ss_perturb

    out = [(f"{base_name} identity", gt, None, gt.copy(), pp),
           (f"{base_name} empty", gt, None, np.zeros_like(gt), pp)]
    for who, op, sev, seed in ops:
        fn = curvicost.perturb if who == "cc" else ss_perturb
        ref, key = gt, None
        if op == "radius":
            if who not in redraws:
                redraws[who] = np.asarray(fn(gt, "radius", 1.0, prune_px=pp)[0], bool)
            ref, key = redraws[who], who
        pred = np.asarray(fn(gt, op, sev, seed=seed, prune_px=pp)[0], bool)
        out.append((f"{base_name} {who}:{op} {sev:g} seed {seed} prune {pp}", ref, key, pred, pp))
    return out


FIVES_OPS = [("cc", "break", 0.1, 0), ("cc", "break", 0.35, 1), ("cc", "bridge", 1.0, 0), ("cc", "truncate", 0.2, 0),
             ("cc", "truncate", 0.5, 1), ("cc", "boundary", 0.02, 0), ("cc", "boundary", 0.2, 1),
             ("cc", "radius", 0.7, 0), ("cc", "radius", 1.3, 0),
             ("ss", "break", 0.2, 0), ("ss", "bridge", 1.0, 0), ("ss", "truncate", 0.35, 0), ("ss", "boundary", 0.1, 0),
             ("ss", "radius", 0.8, 0)]
TREE_OPS = [("cc", "break", 0.3, 0), ("cc", "bridge", 1.0, 0), ("cc", "truncate", 0.5, 0), ("cc", "boundary", 0.05, 0),
            ("cc", "radius", 1.3, 0), ("ss", "break", 0.3, 0), ("ss", "truncate", 0.5, 0), ("ss", "radius", 0.7, 0)]
TREE3_OPS = [("cc", "break", 0.3, 1), ("cc", "truncate", 0.5, 1), ("cc", "radius", 0.7, 0), ("cc", "boundary", 0.1, 0),
             ("ss", "break", 0.3, 0), ("ss", "bridge", 1.0, 0)]


def record(cases, base_key):
    import curvicost

    from segscore import api

    rows, worst, n = [], {}, {}
    for name, ref, key, pred, pp in cases:
        t0 = time.perf_counter()
        theirs = curvicost.score(ref, pred, prune_px=pp, all_metrics=True)
        t_cc = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours = api.curve(ref, pred, prune_px=pp, all_metrics=True)
        t_ss = time.perf_counter() - t0
        row = {"name": name, "base": base_key, "prune_px": pp, "reference": key,
               "prediction": encode(pred, ref) if pred.any() else None,
               "curvicost": {k: _clean(theirs[k]) for k in KEYS}}
        rows.append(row)
        diffs = []
        for k in KEYS:
            a, b = row["curvicost"][k], ours.get(k)
            if a is None or b is None:
                if (a is None) != (b is None):
                    diffs.append(f"{k}: {a} vs {b}")
                continue
            d = abs(a - b)
            worst[k] = max(worst.get(k, 0.0), d)
            n[k] = n.get(k, 0) + 1
            if d > 1e-6:
                diffs.append(f"{k}: {a} vs {b}")
        print(f"{name:<48} curvicost {t_cc:5.2f} s  segscore {t_ss:5.2f} s  {'; '.join(diffs) or 'equal'}", flush=True)
    return rows, worst, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "curvicost"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import curvicost
    from PIL import Image

    from tests.conftest import shared_data_dir

    shared = shared_data_dir()
    if shared is None or not (shared / "fives").is_dir():
        raise SystemExit("FIVES masks not found: set SEGSCORE_SHARED_DATA or place them at ../shared/data/fives")
    source = (f"curvicost {curvicost.__version__} score(reference, prediction, prune_px=..., all_metrics=True); "
              "written by benchmarks/curvicost_metric_fixtures.py")
    worst, count = {}, {}

    def merge(w, c):
        for k, v in w.items():
            worst[k] = max(worst.get(k, 0.0), v)
            count[k] = count.get(k, 0) + c[k]

    docs = {}
    for i, fname in enumerate(FIVES):
        gt = np.asarray(Image.open(shared / "fives" / fname)) > 0
        short = fname.split("_ds")[0].replace("fives_", "")
        key = f"fives:{fname}"
        red = {}
        cases = cases_for(short, gt, 17, FIVES_OPS, red)
        if i == 1:
            cases += cases_for(short, gt, 5, [("cc", "break", 0.1, 4), ("ss", "truncate", 0.2, 1)], {})[2:]
        rows, w, c = record(cases, key)
        merge(w, c)
        docs[f"metric_fixtures_fives_{short}.json"] = ({key: fname}, {key: {k: encode(m, gt) for k, m in red.items()}},
                                                       rows)
    bases, redraws, tree_rows = {}, {}, []
    for tname, kw in TREES.items():
        gt = vessel_tree(**kw)
        pp = 6 if gt.ndim == 2 else 4
        red = {}
        rows, w, c = record(cases_for(tname, gt, pp, TREE_OPS if gt.ndim == 2 else TREE3_OPS, red), f"tree:{tname}")
        bases[f"tree:{tname}"] = {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}
        redraws[f"tree:{tname}"] = {k: encode(m, gt) for k, m in red.items()}
        tree_rows += rows
        merge(w, c)
    for dname in DEGENERATE:
        g, p = degenerate(dname)
        rows, w, c = record([(dname, g, None, p, 5)], f"degenerate:{dname}")
        bases[f"degenerate:{dname}"] = dname
        tree_rows += rows
        merge(w, c)
    docs["metric_fixtures_trees.json"] = (bases, redraws, tree_rows)

    for fname, (bases, redraws, rows) in docs.items():
        doc = {"source": source, "keys": list(KEYS), "bases": bases, "redraws": redraws, "cases": rows}
        path = out / fname
        path.write_text(json.dumps(doc, indent=0, allow_nan=False) + "\n")
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB, {len(rows)} cases)")
    print("max |segscore - curvicost| per key (cases where both are numbers):")
    for k in KEYS:
        if k in worst:
            print(f"  {k:<22} {worst[k]:.2e}  ({count[k]} cases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
