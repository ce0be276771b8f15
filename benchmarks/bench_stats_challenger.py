"""Ranking stability side by side with challengeR 1.0.5 (R), whole processes: issue 34's speed target
"12 models x 200 cases, 1,000 resamples on both sides: >= 10x challengeR's ``bootstrap(nboot=1000)`` +
its stability summaries".

Input: ``tests/data/challenger/single_12x200.csv`` (one task, 12 models x 200 cases, larger is
better; generated, see its README). Rows (each a whole process, imports and R's start-up included:
wall seconds, CPU seconds of the process tree and its own peak RSS; contenders in turns, median of
``--repeat``):

* challengeR: ``Rscript`` on a script this benchmark writes to a temporary folder: read the table,
  ``as.challenge``, the ranking (``--rankings``: ``atr_mean`` aggregateThenRank(mean), ``rta``
  rankThenAggregate(mean), ``ttr`` testThenRank; ties "min"), ``bootstrap(ranking, nboot=N)``, then
  its stability summaries as numbers (no figure drawn): the rank distributions of the blob plot
  (``rankdist.bootstrap.list``, counted per algorithm and rank, with each algorithm's median and
  2.5/97.5 % rank quantiles), ``winnerFrequencies``, Kendall's tau of every resample against the full
  ranking (``kendall.bootstrap.list``: median, IQR, count of resamples without one), and the
  rankingHeatmap's counts of per-case ranks; written as JSON.
  Skipped with a message when ``Rscript`` or the challengeR package is missing (R_LIBS is honoured).
* segscore, per ranking: ``segscore report --table CSV --case case --by algo --task task --metric value
  --rank --stability --stability-method M --resamples N --seed 0 --json-out OUT`` (issue 34's CLI;
  M: ``aggregate``, ``rank-aggregate`` or ``test-rank``, the same ranking's bootstrap and stability,
  cases drawn twice treated as challengeR's ``bootstrap`` treats them). Another command can be given
  with ``--segscore-cmd`` or ``$SEGSCORE_STATS_CMD``: a template with ``{python}``, ``{table}``,
  ``{method}``, ``{resamples}`` and ``{out}``; a command that fails is reported and its row left out.
  The first run of each is a warm-up (numba's cache), unmeasured. Each ranking's ratio is
  challengeR's row over segscore's row of the same ranking.

    PYTHONPATH=. R_LIBS=<challengeR's library> python benchmarks/bench_stats_challenger.py \
        [--repeat 3] [--resamples 1000] [--rankings atr_mean,rta,ttr] [--segscore-cmd '...']
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import REPO, machine_note, python_env, run_once, table  # noqa: E402

TABLE = REPO / "tests" / "data" / "challenger" / "single_12x200.csv"

SEGSCORE_CMD = ("{python} -m segscore report --table {table} --case case --by algo --task task --metric value "
                "--rank --stability --stability-method {method} --resamples {resamples} --seed 0 --json-out {out}")

#: each challengeR ranking's ``--stability-method`` (cases drawn twice treated as challengeR does: the default)
METHODS = {"atr_mean": "aggregate", "rta": "rank-aggregate", "ttr": "test-rank"}

RANKINGS = {
    "atr_mean": 'aggregateThenRank(ch, FUN = "mean", ties.method = "min")',
    "rta": 'rankThenAggregate(ch, FUN = "mean", ties.method = "min")',
    "ttr": 'testThenRank(ch, alpha = 0.05, p.adjust.method = "none", ties.method = "min")',
}

R_SCRIPT = r'''
args <- commandArgs(trailingOnly = TRUE)  # table, ranking expression, nboot, out
suppressPackageStartupMessages(library(challengeR))
d <- read.csv(args[1], colClasses = c("character", "character", "character", "numeric"))
ch <- as.challenge(d, by = "task", algorithm = "algo", case = "case", value = "value", smallBetter = FALSE)
ranking <- eval(parse(text = args[2]))
set.seed(1)
b <- bootstrap(ranking, nboot = as.integer(args[3]), progress = "none")
task <- names(b$bootsrappedRanks)[1]
# the blob plot's data (stabilityByTask): every resample's rank of every algorithm
rd <- challengeR:::rankdist.bootstrap.list(b)
counts <- table(rd$algorithm, rd$rank)
blob <- do.call(rbind, lapply(split(rd$rank, rd$algorithm), function(r)
  c(median = median(r), q025 = unname(quantile(r, .025)), q975 = unname(quantile(r, .975)))))
wf <- winnerFrequencies(b)[[task]]
ken <- kendall.bootstrap.list(b)[[task]]
# the rankingHeatmap's data: per-case ranks of the full table, counted
rr <- rank(ch, ties.method = "min")$matlist[[task]]
heat <- table(rr$algo, rr$rank)
out <- list(task = task, nboot = ncol(b$bootsrappedRanks[[task]]),
            full_rank = as.list(setNames(ranking$matlist[[task]]$rank, rownames(ranking$matlist[[task]]))),
            winner_frequency = as.list(setNames(wf$winnerFrequency, rownames(wf))),
            rank_counts = lapply(split(as.vector(counts), rownames(counts)[row(counts)]), unname),
            blob = lapply(split(blob, rownames(blob)[row(blob)]), unname),
            kendall = list(median = median(ken, na.rm = TRUE), q25 = unname(quantile(ken, .25, na.rm = TRUE)),
                           q75 = unname(quantile(ken, .75, na.rm = TRUE)), n_null = sum(is.na(ken))),
            heatmap_counts = lapply(split(as.vector(heat), rownames(heat)[row(heat)]), unname))
writeLines(jsonlite::toJSON(out, auto_unbox = TRUE, digits = NA), args[4])
'''


def rscript_ready(rscript: str | None) -> str | None:
    """Why challengeR cannot run here (None: it can)."""
    if not rscript:
        return "Rscript not found (install r-base-core, or pass --rscript)"
    probe = subprocess.run([rscript, "-e", "suppressPackageStartupMessages(library(challengeR)); library(jsonlite)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"challengeR (or jsonlite) not loadable by {rscript} (set R_LIBS): {probe.stderr.strip()[-300:]}"
    return None


def timed(argv) -> dict:
    """``run_once`` plus the CPU seconds (user + system) of the whole process tree: the machine is
    shared, and CPU time says what wall time under load does not."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run_once(argv)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r


def turns(cases: dict, repeat: int) -> dict:
    """Each command ``repeat`` times, in turns; the median wall time, CPU time and peak RSS of each.
    A command that fails is dropped with its error (the others go on)."""
    runs: dict = {name: [] for name in cases}
    failed: dict = {}
    for _ in range(repeat):
        for name, argv in cases.items():
            if name in failed:
                continue
            try:
                runs[name].append(timed(argv))
            except RuntimeError as e:
                failed[name] = str(e)
    res = {name: {"seconds": statistics.median(r["seconds"] for r in rs),
                  "peak_mb": statistics.median(r["peak_mb"] for r in rs),
                  "cpu": statistics.median(r["cpu"] for r in rs),
                  "all": [r["seconds"] for r in rs]}
           for name, rs in runs.items() if rs and name not in failed}
    return res, failed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--rankings", default="atr_mean", help="challengeR rankings bootstrapped, comma-separated: "
                    + ", ".join(RANKINGS) + " (default atr_mean)")
    ap.add_argument("--rscript", default=shutil.which("Rscript"))
    ap.add_argument("--segscore-cmd", default=os.environ.get("SEGSCORE_STATS_CMD", SEGSCORE_CMD),
                    help="the segscore command template ({python}, {table}, {method}, {resamples}, {out}); "
                         "default: $SEGSCORE_STATS_CMD or issue 34's `segscore report --table ... --rank --stability`")
    ap.add_argument("--skip-segscore", action="store_true")
    args = ap.parse_args(argv)
    rankings = [r for r in args.rankings.split(",") if r]
    unknown = [r for r in rankings if r not in RANKINGS]
    if unknown:
        ap.error(f"--rankings: unknown {unknown}; choose from {', '.join(RANKINGS)}")

    tmp = Path(tempfile.mkdtemp(prefix="bench_stats_challenger_"))
    cases: dict = {}
    notes = []
    why_not_r = rscript_ready(args.rscript)
    if why_not_r:
        notes.append(f"challengeR rows skipped: {why_not_r}")
    else:
        script = tmp / "challenger_bootstrap.R"
        script.write_text(R_SCRIPT)
        for r in rankings:
            cases[f"challengeR:{r}"] = [args.rscript, script, TABLE, RANKINGS[r], args.resamples, tmp / f"r_{r}.json"]
    for r in rankings if not args.skip_segscore else ():
        seg_out = tmp / f"segscore_{r}.json"
        seg = shlex.split(args.segscore_cmd.format(python=shlex.quote(sys.executable), table=shlex.quote(str(TABLE)),
                                                   method=METHODS[r], resamples=args.resamples,
                                                   out=shlex.quote(str(seg_out))))
        warm = subprocess.run(seg, env=python_env(), capture_output=True, text=True)  # numba's cache warm
        if warm.returncode != 0:
            notes.append(f"segscore {r} row skipped: `{' '.join(seg)}` exited {warm.returncode}: "
                         f"{warm.stderr.strip().splitlines()[-1] if warm.stderr.strip() else ''}")
        else:
            cases[f"segscore:{r}"] = seg
    if not cases:
        print("\n".join(notes))
        return 0

    res, failed = turns(cases, args.repeat)
    for name, err in failed.items():
        notes.append(f"{name} failed: {err.strip().splitlines()[-1] if err.strip() else err}")
    rows = []
    for name, m in res.items():
        tool, _, ranking = name.partition(":")
        seg_s = res.get(f"segscore:{ranking}", {}).get("seconds")
        seg_cpu = res.get(f"segscore:{ranking}", {}).get("cpu")
        rows.append(dict(tool="challengeR 1.0.5 bootstrap + stability (Rscript)" if tool == "challengeR"
                         else f"segscore report --rank --stability --stability-method {METHODS[ranking]}",
                         ranking=ranking, resamples=args.resamples, seconds=m["seconds"], cpu=m["cpu"],
                         peak_mb=m["peak_mb"], runs=" / ".join(f"{s:.1f}" for s in m["all"]),
                         ratio=(m["seconds"] / seg_s) if seg_s and tool == "challengeR" else None,
                         cpu_ratio=(m["cpu"] / seg_cpu) if seg_cpu and tool == "challengeR" else None))
    print(f"# ranking stability: segscore vs challengeR\n\n{machine_note()} · --repeat {args.repeat} (median) · "
          f"{TABLE.name}: 12 models x 200 cases, {args.resamples:,} resamples\n")
    print(table(rows, [("tool", "command", None), ("ranking", "ranking", None), ("resamples", "resamples", "{:,}"),
                       ("seconds", "wall s", "{:.2f}"), ("runs", "runs (s)", None), ("cpu", "CPU s", "{:.2f}"),
                       ("peak_mb", "peak RSS MB", "{:.0f}"), ("ratio", "challengeR / segscore (wall)", "{:.1f}x"),
                       ("cpu_ratio", "(CPU)", "{:.1f}x")]))
    for r in rankings:
        f = tmp / f"r_{r}.json"
        if f.exists():
            js = json.loads(f.read_text())
            top = sorted(js["winner_frequency"].items(), key=lambda kv: -kv[1])[:3]
            notes.append(f"challengeR {r}: winner frequencies (top 3) {top}; Kendall tau median "
                         f"{js['kendall']['median']:.3f} (IQR {js['kendall']['q25']:.3f}-{js['kendall']['q75']:.3f}, "
                         f"{js['kendall']['n_null']} resamples without one)")
    if any(name.startswith("segscore:") for name in res):
        target = [f"{row['ratio']:.1f}x ({row['ranking']})" for row in rows if row["ratio"] is not None]
        notes.append(f"target >= 10x challengeR: {', '.join(target) or 'no challengeR row'}")
    print()
    print("\n".join(f"- {n}" for n in notes))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
