"""First run of each command on an empty numba cache: wall time and what numba compiled.

Each command of the README and docs runs on the docs' sample inputs in a fresh process whose
``NUMBA_CACHE_DIR`` is a new empty folder, with numba's own compile events recorded
(``numba.core.event``, kind ``numba:compile``: raised only when a kernel is compiled, not when it
is loaded from the cache). Per command: wall time of the whole process, the number of kernels
and signatures compiled, the compile seconds (top-level events, nested ones are inside them),
and the most expensive kernels by exclusive time; where the command's first run is divided
between two processes (:mod:`segscore.engine.firstrun`), the compile events are this process's and
``2nd`` counts the functions of ours the second process compiled meanwhile. Then the same command
again on the now warm cache. ``SEGSCORE_COMPILE_PROCESSES=1`` measures the undivided first run.

    python -m benchmarks.bench_first_run [--only curve,objects] [--json-out first_run.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: the command lines of the README and docs, on the sample inputs (run from the prepared folder)
COMMANDS = {
    "demo": ["demo", "--bootstrap", "0"],
    "auc": ["auc", "seg/MAP.tif", "--control", "seg/MAP_reverse.tif", "--labels", "seg/labels/inklabels.zarr",
            "--mask", "seg/labels/supervision.zarr", "--bootstrap", "300"],
    "target": ["target", "data/ink_pred.png", "data/ink_target"],
    "columns": ["columns", "data/col_pred.npy", "data/col_target"],
    "placement": ["placement", "data/ink_pred.png", "data/ink_target"],
    "curve": ["curve", "data/pred.png", "--gt", "data/gt.png", "--prune-px", "3"],
    "perturb": ["perturb", "data/gt.png", "--operator", "break", "--severity", "0.35", "--seed", "0", "-o",
                "broken.png"],
    "profile": ["profile", "data/pred.png", "--gt", "data/gt.png", "--prune-px", "3", "--seeds", "1"],
    "fibers": ["fibers", "data/fiber_labels.npy", "data/fiber_target"],
    "fibers-target": ["fibers-target", "data/nml", "data/fiber_mask.npy", "--out", "my_target"],
    "objects": ["objects", "data/truth.tif", "data/pred.tif"],
    "holdout": ["holdout", "data/heldout/manifest.json", "--predictions", "data/preds"],
    "surfaces": ["surfaces", "data/surf_pred.tif", "data/surf_gt.tif"],
    "audit": ["audit", "data/gt.png", "data/gt2.png", "--prune-px", "3", "--severities", "0.2", "--radius-scales",
              "0.85", "--boundary-fracs", "0.05", "--n-boot", "20", "--include-cases", "--json-out", "audit.json",
              "--quiet"],
    # the README's "Batch and report": two tiny objects jobs, then the table (each run starts on an empty --out)
    "batch": ["batch", "jobs.csv", "--out", "results"],
    "report": ["report", "results", "--by", "model"],
}

#: what a command needs in the folder before each of its runs
JOBS = "id,job,model\na,objects data/truth.tif data/pred.tif,m1\nb,objects data/pred.tif data/truth.tif,m2\n"


def before(name: str, folder: Path) -> None:
    if name == "batch":
        (folder / "jobs.csv").write_text(JOBS)
        shutil.rmtree(folder / "results", ignore_errors=True)
    elif name == "report" and not (folder / "results" / "results.jsonl").is_file():
        raise SystemExit("report reads the batch's results: run --only batch,report")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from numba.core import event
rows = []
class Rec(event.Listener):
    def __init__(self):
        self.stack = []
    def on_start(self, ev):
        self.stack.append([ev.data["dispatcher"], ev.data["args"], time.perf_counter(), 0.0])
    def on_end(self, ev):
        disp, args, start, inner = self.stack.pop()
        total = time.perf_counter() - start
        if self.stack:
            self.stack[-1][3] += total
        name = getattr(disp, "py_func", disp).__module__ + "." + getattr(disp, "py_func", disp).__qualname__
        rows.append({"kernel": name, "args": str(args), "inclusive": total, "exclusive": total - inner,
                     "top": not self.stack})
event.register("numba:compile", Rec())
from segscore.cli.main import main
code = main(sys.argv[1:])
print("\n@@" + json.dumps({"code": code, "wall_inner": time.perf_counter() - t0, "compiles": rows}), file=sys.stderr)
"""


def run(argv, folder, cache):
    """One process of ``argv``; its compile events, and the functions of ours the second process of
    a first run compiled (``SEGSCORE_FIRST_RUN_LOG``, :mod:`segscore.engine.firstrun`)."""
    log = Path(cache) / "first-run-log.jsonl"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO), SEGSCORE_FIRST_RUN_LOG=str(log))
    log.unlink(missing_ok=True)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD, *argv], cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    tail = r.stderr.rsplit("\n@@", 1)
    if len(tail) != 2:
        raise SystemExit(f"{argv[0]} crashed:\n{r.stderr[-3000:]}")
    info = json.loads(tail[1])
    info["wall"] = wall
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    info["second_process"] = sorted({row["function"] for row in rows if row["phase"] == "there"})
    return info


WARM = "import sys; from segscore.families import warm_commands; warm_commands(sys.argv[1:], processes=1)"


def warm_first(name, cache) -> float:
    """Seconds of ``segscore warm NAME`` on ``cache`` (a fresh process)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", WARM, name], env=env, check=True)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated commands (default: all)")
    ap.add_argument("--json-out")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--after-warm", action="store_true",
                    help="warm each command's family first, then count what the command still compiles")
    args = ap.parse_args(argv)
    names = args.only.split(",") if args.only else list(COMMANDS)
    work = Path(tempfile.mkdtemp(prefix="segscore-first-run-"))
    sys.path.insert(0, str(REPO))
    from tests.test_docs import prepare  # the docs' sample inputs

    prepare(work)
    out = {}
    first = "1st s" if args.after_warm else "cold s"  # after --after-warm, the first run follows the warm-up
    print(f"{'command':14} {'warm-up s':>9} {first:>7} {'warm s':>7} {'compile s':>9} {'kernels':>7} {'sigs':>5} "
          f"{'2nd':>4}  slowest (exclusive s)")
    for name in names:
        cache = Path(tempfile.mkdtemp(prefix="nbcache-"))
        warmup = warm_first(name, cache) if args.after_warm else None
        before(name, work)
        cold = run(COMMANDS[name], work, cache)
        before(name, work)
        warm = run(COMMANDS[name], work, cache)
        comp = cold["compiles"]
        compile_s = sum(c["inclusive"] for c in comp if c["top"])
        by = {}
        for c in comp:
            k = by.setdefault(c["kernel"], [0.0, 0, []])
            k[0] += c["exclusive"]
            k[1] += 1
            k[2].append(c["args"])
        slow = sorted(by.items(), key=lambda kv: -kv[1][0])[: args.top]
        print(f"{name:14} {warmup or 0:9.1f} {cold['wall']:7.1f} {warm['wall']:7.1f} {compile_s:9.1f} {len(by):7d} {len(comp):5d} "
              f"{len(cold['second_process']):4d}  "
              + ", ".join(f"{k.rsplit('.', 1)[-1]}x{n} {s:.1f}" for k, (s, n, _) in slow))
        out[name] = {"warm_up": warmup, "cold": cold["wall"], "warm": warm["wall"], "compile": compile_s, "code": cold["code"],
                     "second_process": cold["second_process"],
                     "kernels": {k: {"seconds": s, "signatures": n, "args": a} for k, (s, n, a) in by.items()}}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
