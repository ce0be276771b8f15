"""Parity table: segscore's curve row against curvicost 0.3.1's on the same masks.

For each case (a FIVES mask under each of curvicost's operators, synthetic trees in 2D and 3D)
prints the largest |difference| over the 19 shared keys and the keys that differ by more than
1e-6.

    PYTHONPATH=. python benchmarks/parity_curve.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.bench_curve import FIVES, vessel_tree  # noqa: E402
from benchmarks._harness import table  # noqa: E402

KEYS = ("dice", "iou", "cldice", "betti0_gt", "betti0_pred", "betti0_error", "erl", "erl_frac", "merged_frac",
        "diadem_like", "traceable_frac", "traceable_single_frac", "conductance_twosided", "conductance_frac",
        "perfused_of_self", "traceable_length", "conductance", "traceable_length_ref", "conductance_ref")
OPS = (("break", 0.1), ("break", 0.35), ("bridge", 1.0), ("truncate", 0.2), ("truncate", 0.5),
       ("boundary", 0.02), ("boundary", 0.2), ("radius", 0.7), ("radius", 1.3))


def main() -> int:
    import curvicost
    from PIL import Image

    from segscore import api

    masks = [(n, np.asarray(Image.open(FIVES / f"fives_{n}_ds3.png")) > 0, pp)
             for n in ("100_D", "101_G") for pp in (6, 17)]
    masks.append(("tree 512^2", vessel_tree((512, 512), seed=3, depth=6, r0=6.0), 8))
    masks.append(("tree 64^3", vessel_tree((64, 64, 64), seed=2, depth=4, r0=3.0), 4))
    rows = []
    for name, gt, pp in masks:
        red1 = curvicost.perturb(gt, "radius", 1.0)[0]
        for op, sev in OPS:
            pred = curvicost.perturb(gt, op, sev, seed=0, prune_px=pp)[0]
            ref = red1 if op == "radius" else gt
            a = curvicost.score(ref, pred, prune_px=pp, all_metrics=False)
            b = api.curve(ref, pred, prune_px=pp, all_metrics=False)
            d = {k: abs(float(a[k]) - float(b[k])) if b[k] is not None else float("inf") for k in KEYS}
            worst = max(d.values())
            rows.append({"case": f"{name} --prune-px {pp}", "op": f"{op} {sev:g}", "max": worst,
                         "trace": b["traceable_frac"], "cond": b["conductance_frac"],
                         "differ": ", ".join(k for k, v in d.items() if v > 1e-6) or "none"})
            print(rows[-1], flush=True)
    print(table(rows, [("case", "mask", None), ("op", "curvicost operator", None), ("max", "max |diff|", "{:.1e}"),
                       ("trace", "traceable_frac", "{:.4f}"), ("cond", "conductance_frac", "{:.4f}"),
                       ("differ", "keys > 1e-6", None)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
