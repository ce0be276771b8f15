"""Write curvicost 0.3.1's audit of four small masks as test fixtures (tests/data/curvicost/).

Runs ``curvicost audit --include-cases --json`` (its own command, in a child process) on the two
FIVES masks of the shared data (682², CC BY 4.0) and two synthetic vessel trees
(``tests/curvilinear/helpers.py::vessel_tree``), with a short ladder, and keeps what
``tests/curvilinear/test_findings.py`` reads:

* ``audit_fixture.json``: the command's top-level fields (``n_cases``, ``n_units``, ``has_ci``,
  ``min_units``, ``min_cases``, ``findings``, ``notes``, ``ladder``, ``scale``) and ``cases``
  trimmed to the keys the audit reads (unit, operator, severity, seed, realised, population, the
  two costs, the metrics). Its findings are at the paper's floors (10 units, 12 cases).
* ``audit_fixture_floors_3_5.json``: ``curvicost.audit.audit`` called on those same cases with
  ``min_units=3, min_cases=5`` (and the command's ``n_boot``), so the tests see curvicost's
  labels on cells that clear a floor; curvicost's command has no way to re-read cases.

NaN is written as JSON ``NaN`` (curvicost's ``json.dump`` does so), which Python's reader accepts.
Takes about a minute on one core::

    PYTHONPATH=. python benchmarks/curvicost_audit_fixtures.py [--out tests/data/curvicost]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.curvilinear.helpers import vessel_tree  # noqa: E402

FIVES = ("fives_100_D_ds3.png", "fives_101_G_ds3.png")
#: The short ladder: three counting rungs, three radius factors, three boundary levels, one seed.
LADDER = ["--severities", "0.05,0.2,0.5", "--radius-scales", "0.7,0.85,1.3",
          "--boundary-fracs", "0.02,0.05,0.2", "--seeds", "1", "--n-boot", "1000"]
PRUNE_PX = 5
CASE_KEYS = ("unit", "operator", "severity", "seed", "realised", "population",
             "traceable_frac", "conductance_twosided",
             "dice", "iou", "cldice", "skeleton_recall", "cbdice_star", "betti0_error",
             "betti_matching", "erl_star", "node_recall", "apls", "junction_f1", "hd95")
TOP_KEYS = ("n_cases", "n_units", "has_ci", "min_units", "min_cases", "findings", "notes",
            "ladder", "scale")


def shared_data() -> Path:
    import os

    env = os.environ.get("SEGSCORE_SHARED_DATA")
    d = Path(env) if env else REPO.parent / "shared" / "data"
    if not (d / "fives").is_dir():
        raise SystemExit(f"{d / 'fives'}: not found; set SEGSCORE_SHARED_DATA")
    return d


def write_masks(folder: Path) -> list[str]:
    from PIL import Image

    names = []
    for n in FIVES:
        m = np.asarray(Image.open(shared_data() / "fives" / n)) > 0
        Image.fromarray((m * 255).astype(np.uint8)).save(folder / n)
        names.append(n)
    for seed in (0, 1):
        m = vessel_tree((192, 192), seed=seed, depth=5, r0=5.0)
        name = f"tree_192_s{seed}.png"
        Image.fromarray((m * 255).astype(np.uint8)).save(folder / name)
        names.append(name)
    return sorted(names)  # the order curvicost resamples its units in is the order given


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "tests" / "data" / "curvicost"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import curvicost
    from curvicost.audit import audit

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        names = write_masks(tmp)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-c", "import sys; from curvicost.cli import main; sys.exit(main())",
               "audit", *names, "--prune-px", str(PRUNE_PX), *LADDER, "--no-redraw-floor",
               "--include-cases", "--json", "audit.json", "--quiet"]
        subprocess.run(cmd, cwd=tmp, check=True)
        seconds = time.perf_counter() - t0
        full = json.loads((tmp / "audit.json").read_text())
    keep = {k: full[k] for k in TOP_KEYS if k in full}
    keep["cases"] = [{k: c[k] for k in CASE_KEYS if k in c} for c in full["cases"]]
    keep["source"] = (f"curvicost {curvicost.__version__} `curvicost audit {' '.join(names)} "
                      f"--prune-px {PRUNE_PX} {' '.join(LADDER)} --no-redraw-floor --include-cases`; "
                      "cases trimmed to the keys the audit reads (benchmarks/curvicost_audit_fixtures.py)")
    (out / "audit_fixture.json").write_text(json.dumps(keep, indent=1))

    attempted = [op for op, v in full["ladder"]["severities"].items() if v]
    low = audit(full["cases"], n_boot=full["ladder"]["n_boot"], attempted=attempted,
                min_units=3, min_cases=5)
    low = {k: low[k] for k in TOP_KEYS if k in low}
    low["source"] = ("curvicost.audit.audit(cases of audit_fixture.json, n_boot=%d, min_units=3, "
                     "min_cases=5)" % full["ladder"]["n_boot"])
    (out / "audit_fixture_floors_3_5.json").write_text(json.dumps(low, indent=1))
    labels = {}
    for f in low["findings"]:
        labels[f["label"]] = labels.get(f["label"], 0) + 1
    print(f"curvicost audit: {full['n_cases']} cases from {full['n_units']} masks in {seconds:.1f} s; "
          f"{len(full['findings'])} cells; labels at floors 3/5: {labels}")
    for p in ("audit_fixture.json", "audit_fixture_floors_3_5.json"):
        print(f"  wrote {out / p} ({(out / p).stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
