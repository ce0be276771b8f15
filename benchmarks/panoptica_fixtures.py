"""Write panoptica 2.1.7's and DeepMind surface-distance 0.1's results on small pairs as test fixtures.

Neither peer can join the test extra: panoptica 2.1.7 pins numpy < 2.3 and pandas < 3, and
surface-distance 0.1 calls ``np.Inf`` (gone in numpy 2). Each runs in its own scratch venv under
``/tmp`` (made on first use, reused after; never /work/venv), and the tests compare segscore with
the JSON files this script writes under ``tests/data/panoptica/``:

* ``panoptica_2.1.7.json``: for each case, a label pair rebuilt by the test from ``pair`` (the
  arguments of ``tests/objects/helpers.py::synthetic_pair``, 2D and 3D) and its ``spacing``;
  panoptica's ``Panoptica_Evaluator(expected_input=UNMATCHED_INSTANCE,
  instance_matcher=NaiveThresholdMatching(0.5), instance_metrics=[DSC, IOU, ASSD, HD95],
  global_metrics=[DSC, ASSD, HD95])`` evaluated with ``voxelspacing=spacing``: ``pq, sq, rq,
  sq_dsc, pq_dsc, sq_assd, sq_hd95`` (and their ``_std``), ``tp, fp, fn``, the global binary
  ``global_bin_dsc, global_bin_assd, global_bin_hd95`` and one row per matched reference instance
  (``voxel_count, dsc, iou, assd, hd95``; panoptica lists them by ascending reference id).
* ``surface_distance_0.1.json``: pairs of binary masks (unions of balls, parameters stored),
  spacing and tolerance, with DeepMind's ``compute_surface_dice_at_tolerance`` (``nsd``),
  ``compute_robust_hausdorff`` at 100 and 95 (``hd``, ``hd95``: surfel-area-weighted) and
  ``compute_average_surface_distance`` (``asd``: the two directed means).
* ``../surface_distance/objects_0.1.json`` (``--objects-out``): per matched instance of the
  panoptica cases' label pairs (matched by segscore at IoU 0.5, listed by ascending truth id with
  their ``truth_id`` and ``pred_id``) and of their whole foregrounds (``labels != 0``), DeepMind's
  ``hd``, ``hd95``, ``asd`` and ``nsd`` at tolerance 1.5 with the case's spacing, as above.

    PYTHONPATH=. python benchmarks/panoptica_fixtures.py [--out tests/data/panoptica]
        [--objects-out tests/data/surface_distance]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PANOPTICA_VENV = Path(os.environ.get("SEGSCORE_PANOPTICA_VENV", "/tmp/segscore-panoptica-2.1.7"))
SURFACE_DISTANCE_VENV = Path(os.environ.get("SEGSCORE_SURFACE_DISTANCE_VENV", "/tmp/segscore-surface-distance-0.1"))
PANOPTICA_REQ = ["panoptica==2.1.7"]
SURFACE_DISTANCE_REQ = ["numpy<2", "scipy", "absl-py", "surface-distance==0.1"]

PANOPTICA_CASES = (
    {"name": "2d_unit", "pair": {"seed": 1, "shape": [120, 130], "n": 40}, "spacing": [1.0, 1.0]},
    {"name": "2d_anisotropic", "pair": {"seed": 3, "shape": [150, 150], "n": 60, "p_split": 0.15, "p_merge": 0.15,
                                        "jitter": 2}, "spacing": [0.5, 1.25]},
    {"name": "3d_unit", "pair": {"seed": 2, "shape": [40, 48, 48], "n": 20, "r": [4, 8], "jitter": 1},
     "spacing": [1.0, 1.0, 1.0]},
    {"name": "3d_anisotropic", "pair": {"seed": 4, "shape": [32, 48, 48], "n": 24, "r": [4, 8], "jitter": 1},
     "spacing": [2.0, 0.8, 0.8]},
)

#: the panoptica child: reads t.npy/p.npy and the case from argv, prints one JSON line
PANOPTICA_CHILD = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
from panoptica import InputType, NaiveThresholdMatching, Panoptica_Evaluator
from panoptica.metrics import Metric

t = np.load(sys.argv[1]); p = np.load(sys.argv[2]); spacing = tuple(json.loads(sys.argv[3]))
ev = Panoptica_Evaluator(expected_input=InputType.UNMATCHED_INSTANCE,
                         instance_matcher=NaiveThresholdMatching(matching_threshold=0.5),
                         instance_metrics=[Metric.DSC, Metric.IOU, Metric.ASSD, Metric.HD95],
                         global_metrics=[Metric.DSC, Metric.ASSD, Metric.HD95], decision_metric=None)
res = ev.evaluate(p, t, voxelspacing=spacing, verbose=False)["ungrouped"]
d = res.to_dict(output_individual_instance_metrics=True)
keys = ("pq", "sq", "rq", "sq_dsc", "pq_dsc", "sq_std", "sq_dsc_std", "sq_assd", "sq_assd_std", "sq_hd95",
        "sq_hd95_std", "tp", "fp", "fn", "global_bin_dsc", "global_bin_assd", "global_bin_hd95")
out = {k: float(d[k]) for k in keys}
out["instances"] = [{"voxel_count": int(r["voxel_count"]), "dsc": float(r["sq_dsc"]), "iou": float(r["sq"]),
                     "assd": float(r["sq_assd"]), "hd95": float(r["sq_hd95"])}
                    for r in d["reference_instances"] if r["is_matched"]]
import panoptica, importlib.metadata as md
out["version"] = md.version("panoptica")
print(json.dumps(out))
'''

SURFACE_DISTANCE_CHILD = r'''
import json, sys
import numpy as np
import surface_distance as sd

out = []
for case in json.load(open(sys.argv[1])):
    a = np.load(case["a_path"]); b = np.load(case["b_path"])
    d = sd.compute_surface_distances(a, b, case["spacing"])
    out.append({"nsd": float(sd.compute_surface_dice_at_tolerance(d, case["tolerance"])),
                "hd": float(sd.compute_robust_hausdorff(d, 100)), "hd95": float(sd.compute_robust_hausdorff(d, 95)),
                "asd": [float(x) for x in sd.compute_average_surface_distance(d)]})
print(json.dumps(out))
'''


def ensure_venv(path: Path, requirements: list, probe: str) -> Path:
    """The python of a scratch venv at ``path`` holding ``requirements`` (made once, reused)."""
    py = path / "bin" / "python"
    if py.exists() and subprocess.run([py, "-c", probe], capture_output=True).returncode == 0:
        return py
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", *requirements], check=True)
    return py


def panoptica_python() -> Path:
    return ensure_venv(PANOPTICA_VENV, PANOPTICA_REQ, "import panoptica")


def surface_distance_python() -> Path:
    return ensure_venv(SURFACE_DISTANCE_VENV, SURFACE_DISTANCE_REQ, "import surface_distance")


def panoptica_pair(case):
    """The case's (truth, pred) label images (int32, as panoptica reads them)."""
    from tests.objects.helpers import synthetic_pair

    kw = dict(case["pair"])
    kw["shape"] = tuple(kw["shape"])
    if "r" in kw:
        kw["r"] = tuple(kw["r"])
    t, p = synthetic_pair(**kw)
    return t.astype(np.int32), p.astype(np.int32)


def surface_distance_cases():
    """Pairs of ball unions, 2D and 3D, anisotropic, tolerances of 0.5 to 3 spacing units."""
    rng = np.random.default_rng(2024)
    cases = []
    for k in range(24):
        nd = 2 if k < 12 else 3
        shape = [int(v) for v in ((rng.integers(64, 129, 2)) if nd == 2 else rng.integers(28, 49, 3))]
        c = np.array(shape) / 2
        r = float(min(shape) * rng.uniform(0.2, 0.33))
        a = [[c.tolist(), r]]
        b = [[(c + rng.integers(-2, 3, nd)).tolist(), r + float(rng.uniform(-2, 2))]]
        if k % 3 == 0:  # a bump on one side: a far tail of distances
            b.append([(c + 0.8 * r).tolist(), r / 3])
        if k % 4 == 1:
            a.append([(c - 0.7 * r).tolist(), r / 2.5])
        if k % 2:  # anisotropic
            spacing = [float(v) for v in rng.choice([0.5, 0.8, 1.0, 1.5, 2.0], nd)]
        else:
            spacing = [float(rng.choice([0.5, 1.0, 2.0]))] * nd
        cases.append({"shape": shape, "a": a, "b": b, "spacing": spacing,
                      "tolerance": float(rng.choice([0.5, 1.0, 1.5, 2.0, 3.0]))})
    return cases


def balls(shape, spec):
    """Union of the balls ``[[center, radius], ...]`` (tests/objects/helpers.py::disk)."""
    from tests.objects.helpers import disk

    m = np.zeros(tuple(shape), bool)
    for center, radius in spec:
        m |= disk(tuple(shape), center, radius)
    return m


def run_panoptica(out_dir: Path) -> None:
    py = panoptica_python()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in PANOPTICA_CASES:
            t, p = panoptica_pair(case)
            tp, pp = Path(tmp) / "t.npy", Path(tmp) / "p.npy"
            np.save(tp, t)
            np.save(pp, p)
            res = subprocess.run([py, "-c", PANOPTICA_CHILD, tp, pp, json.dumps(case["spacing"])], check=True,
                                 capture_output=True, text=True)
            rows.append({**case, "result": json.loads(res.stdout.strip().splitlines()[-1])})
            print(f"panoptica {case['name']}: {len(rows[-1]['result']['instances'])} matched", file=sys.stderr)
    doc = {"source": "panoptica 2.1.7 (PyPI), run by benchmarks/panoptica_fixtures.py in a scratch venv",
           "cases": rows}
    (out_dir / "panoptica_2.1.7.json").write_text(json.dumps(doc, indent=1) + "\n")


def run_surface_distance(out_dir: Path) -> None:
    py = surface_distance_python()
    cases = surface_distance_cases()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for k, case in enumerate(cases):
            a, b = balls(case["shape"], case["a"]), balls(case["shape"], case["b"])
            ap, bp = Path(tmp) / f"a{k}.npy", Path(tmp) / f"b{k}.npy"
            np.save(ap, a)
            np.save(bp, b)
            jobs.append({"a_path": str(ap), "b_path": str(bp), "spacing": case["spacing"],
                         "tolerance": case["tolerance"]})
        (Path(tmp) / "jobs.json").write_text(json.dumps(jobs))
        res = subprocess.run([py, "-c", SURFACE_DISTANCE_CHILD, Path(tmp) / "jobs.json"], check=True,
                             capture_output=True, text=True)
    results = json.loads(res.stdout.strip().splitlines()[-1])
    doc = {"source": "DeepMind surface-distance 0.1 (PyPI), run by benchmarks/panoptica_fixtures.py in a scratch venv",
           "cases": [{**c, "result": r} for c, r in zip(cases, results)]}
    (out_dir / "surface_distance_0.1.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"surface-distance: {len(cases)} cases", file=sys.stderr)


OBJECTS_CHILD = r'''
import json, sys
import numpy as np
import surface_distance as sd
import importlib.metadata as md

out = []
for case in json.load(open(sys.argv[1])):
    t = np.load(case["t_path"]); p = np.load(case["p_path"]); sp = case["spacing"]; tol = case["tolerance"]

    def measure(a, b):
        d = sd.compute_surface_distances(a, b, sp)
        return {"hd": float(sd.compute_robust_hausdorff(d, 100)), "hd95": float(sd.compute_robust_hausdorff(d, 95)),
                "asd": [float(x) for x in sd.compute_average_surface_distance(d)],
                "nsd": float(sd.compute_surface_dice_at_tolerance(d, tol))}

    rows = [dict(truth_id=i, pred_id=j, **measure(t == i, p == j)) for i, j in case["pairs"]]
    out.append({"instances": rows, "foreground": measure(t != 0, p != 0), "version": md.version("surface-distance")})
print(json.dumps(out))
'''

OBJECTS_TOLERANCE = 1.5


def run_surface_distance_objects(out_dir: Path) -> None:
    """DeepMind's values per matched instance of the panoptica cases (``objects_0.1.json``)."""
    import csv

    from segscore import api

    py = surface_distance_python()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for k, case in enumerate(PANOPTICA_CASES):
            t, p = panoptica_pair(case)
            rows_csv = Path(tmp) / f"rows{k}.csv"
            api.objects(t, p, per_object=rows_csv)  # the per-object rows, as --per-object writes them
            with open(rows_csv, newline="") as f:
                rows = list(csv.DictReader(f))
            pairs = [[int(r["truth_id"]), int(r["pred_id"])] for r in rows if r["truth_id"] not in ("", None)
                     and r["pred_id"] not in ("", None) and r["iou"] not in ("", None)]
            tp, pp = Path(tmp) / f"t{k}.npy", Path(tmp) / f"p{k}.npy"
            np.save(tp, t)
            np.save(pp, p)
            jobs.append({"t_path": str(tp), "p_path": str(pp), "spacing": case["spacing"], "pairs": pairs,
                         "tolerance": OBJECTS_TOLERANCE})
            cases.append({**case, "tolerance": OBJECTS_TOLERANCE})
        (Path(tmp) / "jobs.json").write_text(json.dumps(jobs))
        res = subprocess.run([py, "-c", OBJECTS_CHILD, Path(tmp) / "jobs.json"], check=True, capture_output=True,
                             text=True)
    results = json.loads(res.stdout.strip().splitlines()[-1])
    doc = {"source": "DeepMind surface-distance 0.1 (PyPI) per matched instance of the panoptica cases, run by "
                     "benchmarks/panoptica_fixtures.py in a scratch venv",
           "cases": [{**c, "result": r} for c, r in zip(cases, results)]}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "objects_0.1.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"surface-distance objects: {sum(len(r['instances']) for r in results)} instances", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "panoptica")
    ap.add_argument("--skip-panoptica", action="store_true")
    ap.add_argument("--skip-surface-distance", action="store_true")
    ap.add_argument("--objects-out", type=Path, default=REPO / "tests" / "data" / "surface_distance")
    ap.add_argument("--skip-objects", action="store_true")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.skip_panoptica:
        run_panoptica(args.out)
    if not args.skip_surface_distance:
        run_surface_distance(args.out)
    if not args.skip_objects:
        run_surface_distance_objects(args.objects_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
