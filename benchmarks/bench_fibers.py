"""Benchmark of `segscore fibers` on the three shipped ScrollGT fiber cubes, in one run.

For each cube (two 256^3, one 512^3): scoring the connected-components labelling (an int32
.npy, memory-mapped, made once under benchmarks/_cache) and the full floor recomputation
(`--floor connected_components --recompute-floors`: all four floors and the oracle). Beside
them, on the 256^3 cubes, the ScrollGT algorithm written plainly with a whole-volume scipy
EDT (`fibers_reference_scipy.py`); ScrollGT itself is not on PyPI, so its own figures on this
machine class are quoted from the issue. Every row is a whole process: wall time and peak
RSS, medians of --repeat runs after a warm-up (JIT cache warm); first-call compile is a
separate row with an empty numba cache.

    PYTHONPATH=. python benchmarks/bench_fibers.py [--repeat 3] [--no-reference]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import (CACHE, machine_note, measure, python_env, run_once, segscore_argv,  # noqa: E402
                                 shared_data, table)

CUBES = ["fibers_s1_00497_01497_03997_256", "fibers_s5_03997_01497_03997_256", "fibers_s5_06494_01994_03994_512"]
SCROLLGT = {256: ("10.2 s / 1.15 GB", "48.8 s"), 512: ("107 s / 7.9 GB", "several minutes (~8 GB)")}


def cc_labels(target: Path) -> Path:
    out = CACHE / "fibers" / f"{target.name}_cc.npy"
    if not out.exists():
        from segscore.fibers.floors import connected_components
        from segscore.fibers.target import load_target

        out.parent.mkdir(parents=True, exist_ok=True)
        np.save(out, connected_components(load_target(target).mask))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-reference", action="store_true", help="skip the scipy-EDT reference rows")
    args = ap.parse_args(argv)
    root = shared_data("scrollgt")
    rows, checks = [], []

    first = root / CUBES[0]
    with tempfile.TemporaryDirectory() as nb:
        env = dict(python_env(), NUMBA_CACHE_DIR=nb)
        cold = run_once(segscore_argv("fibers", cc_labels(first), first, "--json"), env=env)
        cold_f = run_once(segscore_argv("fibers", "--floor", "connected_components", "--recompute-floors", first,
                                        "--json"), env=env)
    rows.append({"case": f"first call, empty JIT cache: score ({first.name})", "s": cold["seconds"],
                 "mb": cold["peak_mb"]})
    rows.append({"case": "first call, JIT cache of the score only: floors recomputed", "s": cold_f["seconds"],
                 "mb": cold_f["peak_mb"]})

    for name in CUBES:
        target = root / name
        size = 512 if name.endswith("512") else 256
        labels = cc_labels(target)
        score = measure(segscore_argv("fibers", labels, target, "--json"), repeat=args.repeat)
        rows.append({"case": f"segscore fibers CC.npy ({name})", "s": score["seconds"], "mb": score["peak_mb"],
                     "scrollgt": SCROLLGT[size][0]})
        fl = measure(segscore_argv("fibers", "--floor", "connected_components", "--recompute-floors", target,
                                   "--json"), repeat=args.repeat)
        rows.append({"case": f"segscore fibers --recompute-floors ({name})", "s": fl["seconds"], "mb": fl["peak_mb"],
                     "scrollgt": SCROLLGT[size][1]})
        card = json.loads(subprocess.run(segscore_argv("fibers", labels, target, "--json"), env=python_env(),
                                         capture_output=True, text=True, check=True).stdout)
        if size == 256 and not args.no_reference:
            ref_argv = [sys.executable, str(Path(__file__).with_name("fibers_reference_scipy.py")), labels, target]
            ref = measure(ref_argv, repeat=1, warmup=0)
            rows.append({"case": f"scipy-EDT reference (ScrollGT's algorithm) CC.npy ({name})", "s": ref["seconds"],
                         "mb": ref["peak_mb"]})
            rrow = json.loads(subprocess.run(ref_argv, env=python_env(), capture_output=True, text=True,
                                             check=True).stdout)
            same = all(card["metrics"][k] == (round(v, {"erl": 2, "erl_merge_penalized": 2, "coverage": 4,
                                                         "precision": 4, "gt_length": 1}.get(k, 12))
                                              if v is not None else None) for k, v in rrow.items())
            checks.append(f"- {name}: segscore's CC score equals the scipy-EDT reference's (rounded): "
                          f"{'yes' if same else 'NO'}")
        pub = json.load(open(target / "meta.json"))["floors"]["floor_connected_components"]
        ok = all(card["metrics"][k] == v for k, v in pub.items())
        checks.append(f"- {name}: CC score equals the published floor_connected_components row: "
                      f"{'yes' if ok else 'NO'}")
        for r in rows[-3:]:
            r.setdefault("size", size)

    print(f"segscore fibers benchmark — {machine_note()} — medians of {args.repeat}, JIT cache warm\n")
    print(table(rows, [("case", "case", None), ("s", "wall s", "{:.2f}"), ("mb", "peak RSS MB", "{:.0f}"),
                       ("scrollgt", "ScrollGT (quoted, same machine class)", None)]))
    print("\ntargets (whole process, medians, JIT warm):")
    for r in rows:
        c = r["case"]
        if c.startswith("segscore fibers CC.npy") and "256" in c:
            print(f"- 256^3 score <= 2 s: {r['s']:.2f} s -> {'met' if r['s'] <= 2 else 'MISSED'} ({c})")
        if c.startswith("segscore fibers --recompute") and "256" in c:
            print(f"- 256^3 floors recomputed <= 6 s: {r['s']:.2f} s -> {'met' if r['s'] <= 6 else 'MISSED'} ({c})")
        if c.startswith("segscore fibers CC.npy") and "512" in c:
            ok = r["s"] <= 10 and r["mb"] <= 1536
            print(f"- 512^3 score <= 10 s at <= 1.5 GB: {r['s']:.2f} s, {r['mb']:.0f} MB -> {'met' if ok else 'MISSED'}")
    print("\nchecks:")
    print("\n".join(checks))


if __name__ == "__main__":
    main()
