"""`segscore audit` beside `curvicost audit` (0.3.1), whole processes, side by side in one run.

Cases (made once, cached under benchmarks/_cache/audit, outside git):

* the default ladder (break/bridge/truncate at 5 rungs, radius at 4 factors, boundary at 5 levels,
  1 seed, 1,000 resamples, the redraw floor) on four 682² masks: the two FIVES masks of the shared
  data (CC BY 4.0) and two synthetic vessel trees; `segscore audit` (default thread pool) against
  `curvicost audit`, the same options, each writing its JSON and CSV;
* the study ladder (7 rungs, 5 radius factors, 7 boundary levels, 3 seeds, 2,000 resamples) on 12
  masks (the two FIVES masks and ten trees), segscore only (curvicost would take about an hour):
  `--processes 1` and `--processes 2` (a LocalCluster each), then `--cases` re-reading the second
  run's JSON (statistics only, no scoring).

Rows: median wall seconds of --repeat runs (default 1; the commands of a group in turns), the
command's own peak RSS (its ``ru_maxrss``, under a bare parent) and the peaks of the summed RSS and
summed PSS of its whole process tree (:class:`benchmarks._harness.TreeMemory`: RSS every 0.1 s,
the tree and PSS every 0.5 s). With --processes the workers are forked from segscore's worker
server, a child of the command: the RSS sum counts the pages they share with it once per process,
the PSS sum once. numba's cache is warm (the measured segscore command run once, unmeasured,
first). Below the table: how the two default-ladder results agree (each case is seeded as
curvicost seeds it and the operators draw curvicost's copies, so every cell's ρ, interval and label
must agree), and curvicost's own case table (its ``--include-cases`` JSON) re-analysed by ``segscore
audit --cases``: every cell's ρ, interval and label against curvicost's findings from those cases.

    PYTHONPATH=. python benchmarks/bench_audit.py [--repeat N] [--skip-study | --study-only]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import (_WRAPPER, CACHE, TreeMemory, curvicost_exe, machine_note, python_env,  # noqa: E402
                                 segscore_argv, shared_data, table)

FIVES = shared_data("fives", required=False)
HERE = CACHE / "audit"
PRUNE = "5"


def vessel_tree(shape, seed):
    from tests.curvilinear.helpers import vessel_tree as tree

    return tree(shape, seed=seed, depth=6, r0=max(min(shape) / 100.0, 3.0), reach=0.3)


def inputs() -> tuple[list[Path], list[Path]]:
    """(the four default-ladder masks, the twelve study masks)."""
    from PIL import Image

    HERE.mkdir(parents=True, exist_ok=True)
    fives = []
    for name in ("fives_100_D_ds3.png", "fives_101_G_ds3.png"):
        src = FIVES / name
        if not src.is_file():
            sys.exit(f"{src}: not found; set SEGSCORE_SHARED_DATA")
        dst = HERE / name
        if not dst.exists():
            shutil.copy(src, dst)
        fives.append(dst)
    trees = []
    for seed in range(10):
        p = HERE / f"tree_682_s{seed}.png"
        if not p.exists():
            Image.fromarray(vessel_tree((682, 682), seed).astype(np.uint8) * 255).save(p)
        trees.append(p)
    return fives + trees[:2], fives + trees


def run_tree(argv, *, cwd=None) -> dict:
    """Run ``argv`` once under a bare parent: wall seconds, the command's own peak RSS (MB), and
    the peaks of the summed RSS and PSS of its process tree (sampled:
    :class:`benchmarks._harness.TreeMemory`). The own peak is ``getrusage``'s, exact, for a
    command that started no process; for one that did, whose ``getrusage`` peak is the highest of
    it and every process it reaped, it is the command's own high-water mark as last read (every
    0.1 s)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-S", "-c", _WRAPPER, rss.name, *map(str, argv)], env=python_env(),
                                cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        tree = TreeMemory(proc.pid, include_root=False, interval=0.1)
        _, err = proc.communicate()
        tree.stop()
        wall = time.perf_counter() - t0
        reaped = int(rss.read() or 0) / 1024.0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{err.decode(errors='replace')[-2000:]}")
    command = min(tree.direct) if tree.direct else None  # the bare parent's one child
    own = reaped if len(tree.peaks) <= 1 else tree.peaks.get(command, reaped)
    return {"seconds": wall, "peak_mb": own, "tree_mb": tree.tree_rss, "tree_pss_mb": tree.tree_pss}


def measure(cases: dict, repeat: int) -> dict:
    """Each command ``repeat`` times, in turns; medians (and each command's wall seconds per turn,
    ``turns``)."""
    runs = {k: [] for k in cases}
    for _ in range(repeat):
        for name, argv in cases.items():
            runs[name].append(run_tree(argv))
    return {k: {**{m: statistics.median(r[m] for r in rs) for m in ("seconds", "peak_mb", "tree_mb", "tree_pss_mb")},
                "turns": [r["seconds"] for r in rs]} for k, rs in runs.items()}


def curvicost_argv(*args) -> list[str]:
    return [curvicost_exe(), *map(str, args)]


def agreement(ours_path: Path, theirs_path: Path) -> list[str]:
    ours = json.loads(ours_path.read_text())
    theirs = json.loads(theirs_path.read_text())  # NaN allowed
    cells = {(f["cost"], f["operator"], f["metric"]): f for f in theirs["findings"]}
    same = total = differ = 0
    worst = {"aligned_rho": 0.0, "ci": 0.0}
    nulls_agree = True
    for f in ours["findings"]:
        g = cells.get((f["cost"], f["operator"], f["metric"]))
        if g is None:
            continue
        total += 1
        same += f["label"] == g["label"]
        off = False
        for k in ("aligned_rho", "ci_lo", "ci_hi"):
            a, b = f[k], g[k]
            b = None if isinstance(b, float) and math.isnan(b) else b
            if (a is None) != (b is None):
                nulls_agree = False
                off = True
            elif a is not None:
                d = abs(a - b)
                w = "aligned_rho" if k == "aligned_rho" else "ci"
                worst[w] = max(worst[w], d)
                off = off or d > 1e-9
        differ += off
    fl_worst = 0.0
    ov, tv = ours["redraw_floor"]["values"], theirs["redraw_floor"]["values"]
    for k, v in ov.items():
        if k in tv and v["median"] is not None and not math.isnan(tv[k]["median"]):
            fl_worst = max(fl_worst, abs(v["median"] - tv[k]["median"]), abs(v["min"] - tv[k]["min"]),
                           abs(v["max"] - tv[k]["max"]))
    return [f"- cells in both: {total} ({len(ours['findings'])} segscore cells, {len(theirs['findings'])} curvicost "
            f"cells); same label: {same}; ρ or an interval end off by more than 1e-9 (or null on one side only): "
            f"{differ}; largest |Δρ| {worst['aligned_rho']:.1e}, largest |Δ| of an interval end {worst['ci']:.1e}; "
            f"null where curvicost has NaN: {'yes' if nulls_agree else 'NO'}",
            f"- redraw floor (median/min/max of {len(ov)} quantities and metrics over 4 masks): largest |Δ| "
            f"{fl_worst:.1e}",
            f"- cases: segscore {ours['n_cases']} acting (+{ours['n_declined']} declined), curvicost {theirs['n_cases']}"]


def reanalysis(theirs_path: Path, again_path: Path) -> list[str]:
    """curvicost's own case table (its ``--include-cases`` JSON) through ``segscore audit --cases``:
    every cell's ρ and interval against curvicost's findings from the same cases."""
    subprocess.run(segscore_argv("audit", "--cases", theirs_path, "--quiet", "--json-out", again_path),
                   env=python_env(), stdout=subprocess.DEVNULL, check=True)
    theirs = {(f["cost"], f["operator"], f["metric"]): f for f in json.loads(theirs_path.read_text())["findings"]}
    ours = json.loads(again_path.read_text())["findings"]
    same = total = worst_rho = worst_ci = 0
    nulls_agree = True
    for f in ours:
        g = theirs.get((f["cost"], f["operator"], f["metric"]))
        if g is None:
            continue
        total += 1
        same += f["label"] == g["label"]
        for k in ("aligned_rho", "ci_lo", "ci_hi"):
            a, b = f[k], g[k]
            b = None if isinstance(b, float) and math.isnan(b) else b
            if (a is None) != (b is None):
                nulls_agree = False
            elif a is not None:
                d = abs(a - b)
                if k == "aligned_rho":
                    worst_rho = max(worst_rho, d)
                else:
                    worst_ci = max(worst_ci, d)
    return [f"- curvicost's own case table through `segscore audit --cases`: {total} cells in both "
            f"({len(theirs)} curvicost cells), same label {same}, largest |Δρ| {worst_rho:.1e}, largest |Δ| of the "
            f"interval ends {worst_ci:.1e}, null where curvicost has NaN: {'yes' if nulls_agree else 'NO'}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--skip-study", action="store_true", help="only the default-ladder comparison")
    which.add_argument("--study-only", action="store_true", help="only the study-ladder rows (--processes 1 and 2, "
                       "--cases)")
    args = ap.parse_args(argv)
    four, twelve = inputs()
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    rows = []
    ss = segscore_argv("audit", *four, "--prune-px", PRUNE, "--quiet", "--json-out", out / "seg_default.json",
                       "--csv", out / "seg_default.csv")
    # numba's cache warm: the measured command once, unmeasured (a smaller run leaves kernels of the
    # full one to compile inside the first measured run: 8.6 s instead of 3.9 s, seen 2026-12-01)
    run_tree(ss)
    if not args.study_only:
        cc = curvicost_argv("audit", *four, "--prune-px", PRUNE, "--quiet", "--json", out / "cc_default.json",
                            "--csv", out / "cc_default.csv", "--include-cases")
        res = measure({"segscore": ss, "curvicost": cc}, args.repeat)
        n = json.loads((out / "seg_default.json").read_text())["n_cases"]
        base = res["curvicost"]["seconds"]
        rows.append(dict(case="default ladder, 4 masks 682² (2 FIVES + 2 trees)", tool="curvicost audit 0.3.1",
                         cases=json.loads((out / "cc_default.json").read_text())["n_cases"], **res["curvicost"],
                         ratio=1.0))
        rows.append(dict(case="", tool="segscore audit (threads)", cases=n, **res["segscore"],
                         ratio=base / res["segscore"]["seconds"]))
    if not args.skip_study:
        study = {}
        for p in (1, 2):
            study[f"p{p}"] = segscore_argv("audit", *twelve, "--prune-px", PRUNE, "--study-ladder", "--processes", p,
                                           "--quiet", "--include-cases", "--json-out", out / f"seg_study_p{p}.json")
        res = measure(study, args.repeat)
        js = json.loads((out / "seg_study_p2.json").read_text())
        p1 = res["p1"]["seconds"]
        turns = [a / b for a, b in zip(res["p1"]["turns"], res["p2"]["turns"])]
        rows.append(dict(case="study ladder, 12 masks 682² (2 FIVES + 10 trees)", tool="segscore audit --processes 1",
                         cases=js["n_cases"], **res["p1"], ratio=1.0))
        rows.append(dict(case="", tool="segscore audit --processes 2", cases=js["n_cases"], **res["p2"],
                         ratio=p1 / res["p2"]["seconds"]))
        same = json.loads((out / "seg_study_p1.json").read_text())["cases"] == js["cases"]
        re_ = measure({"cases": segscore_argv("audit", "--cases", out / "seg_study_p2.json", "--quiet",
                                              "--json-out", out / "seg_study_again.json")}, args.repeat)
        again = json.loads((out / "seg_study_again.json").read_text())
        rows.append(dict(case="", tool="segscore audit --cases (re-analysis, 2,000 resamples)", cases=again["n_cases"],
                         **re_["cases"], ratio=p1 / re_["cases"]["seconds"]))
    print(f"# segscore audit vs curvicost audit\n\n{machine_note()} · --repeat {args.repeat} (median) · "
          f"--prune-px {PRUNE}\n")
    print(table(rows, [("case", "case", None), ("tool", "command", None), ("cases", "acting cases", "{:,}"),
                       ("seconds", "wall s", "{:.1f}"), ("peak_mb", "peak RSS MB (own)", "{:.0f}"),
                       ("tree_mb", "peak RSS MB (process tree)", "{:.0f}"),
                       ("tree_pss_mb", "peak PSS MB (process tree)", "{:.0f}"), ("ratio", "speed-up", "{:.2f}x")]))
    print()
    if not args.study_only:
        print("Default ladder, segscore against curvicost:")
        print("\n".join(agreement(out / "seg_default.json", out / "cc_default.json")))
        print("\n".join(reanalysis(out / "cc_default.json", out / "seg_from_cc_cases.json")))
    if not args.skip_study:
        js1 = json.loads((out / "seg_study_p1.json").read_text())
        print(f"- study ladder: the case tables of --processes 1 and 2 are {'identical' if same else 'DIFFERENT'}; "
              f"--cases gives the same findings: {again['findings'] == js1['findings']}")
        print(f"- --processes 1 / --processes 2, turn by turn: {', '.join(f'{t:.2f}x' for t in turns)}")
        print("- speed-up: against curvicost for the default ladder; against --processes 1 for the study rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
