"""Benchmark statistics (issue 34): ``segscore report --table`` beside scipy + NumPy, whole processes.

The suite: 40 models x 2,000 cases, one metric (a Dice-like score), as a long CSV. Both sides read
the CSV, then compute per model the mean with its 95 % percentile bootstrap interval over 10,000
resamples (``default_rng(0)``, the same draws for every model), and the rank stability over the
same draws (each draw's ranks, ties "min"; each model's rank counts and share ranked first;
Kendall's tau-b of the full-data ranking against each draw's, its median and IQR):

- ours: ``python -m segscore report --table T.csv --case case --by model --metric score
  --intervals --stability --resamples R`` (imports and the numba cache load count);
- the peer: a script calling ``scipy.stats.bootstrap((x,), np.mean, method="percentile",
  rng=default_rng(0))`` per model (it keeps the bootstrap distribution, so the stability is the
  same draws' ranks), the stability in vectorised NumPy (:func:`peer`).

Both sides' intervals and stability are checked equal (1e-12) before the timings. Peak RSS at 1,000,
10,000, 30,000 and 100,000 resamples shows whether memory is flat in the resamples. ``--small`` adds the 12 x 200,
1,000-resample suite (the size challengeR's ``bootstrap(nboot=1000)`` is compared at).

    PYTHONPATH=. python benchmarks/bench_stats.py            # 3 interleaved runs each, a minute or two
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import CACHE, measure_interleaved, python_env, run_once, table  # noqa: E402


def make_table(path: Path, models: int, cases: int, seed: int = 0) -> Path:
    """A long CSV: ``case,model,score``; model skill spread so that neighbours overlap."""
    if path.is_file():
        return path
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.70, 0.80, models)
    hard = rng.normal(0, 0.08, cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write("case,model,score\n")
        for m in range(models):
            v = np.clip(skill[m] + hard + rng.normal(0, 0.06, cases), 0, 1)
            for c in range(cases):
                f.write(f"case{c + 1},model{m + 1},{float(v[c])!r}\n")
    return path


PEER = r'''
import csv, json, sys
import numpy as np
from scipy import stats

path, resamples, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cols = {}
with open(path, newline="") as f:
    for row in csv.DictReader(f):
        cols.setdefault(row["model"], {})[row["case"]] = float(row["score"])
models = sorted(cols, key=lambda m: int(m[5:]))
cases = sorted(next(iter(cols.values())), key=lambda c: int(c[4:]))
x = np.array([[cols[m][c] for c in cases] for m in models])
theta_b, intervals = [], []
for i in range(len(models)):
    res = stats.bootstrap((x[i],), np.mean, n_resamples=resamples, method="percentile",
                          rng=np.random.default_rng(0))
    intervals.append([float(np.mean(x[i])), float(res.confidence_interval.low), float(res.confidence_interval.high)])
    theta_b.append(res.bootstrap_distribution)
theta_b = np.array(theta_b).T                              # (resamples, models)
full = stats.rankdata(-x.mean(axis=1), method="min")
ranks = stats.rankdata(-theta_b, method="min", axis=1)
m = len(models)
counts = np.stack([(ranks == r).sum(axis=0) for r in range(1, m + 1)], axis=1)
a, b = np.triu_indices(m, 1)
sf = np.sign(full[a] - full[b])
sd = np.sign(ranks[:, a] - ranks[:, b])
num = (sf * sd).sum(axis=1)
den = np.sqrt(np.count_nonzero(sf) * np.count_nonzero(sd, axis=1).astype(float))
with np.errstate(invalid="ignore", divide="ignore"):
    tau = np.where(den > 0, num / den, np.nan)
ok = tau[~np.isnan(tau)]
json.dump({"intervals": intervals, "rank_counts": counts.tolist(), "share_first": (counts[:, 0] / resamples).tolist(),
           "tau": [float(np.percentile(ok, 25)), float(np.median(ok)), float(np.percentile(ok, 75))]}, open(out, "w"))
'''


def ours_argv(path, resamples, out):
    return [sys.executable, "-m", "segscore", "report", "--table", str(path), "--case", "case", "--by", "model",
            "--metric", "score", "--intervals", "--stability", "--resamples", str(resamples), "--json-out", str(out)]


def check_equal(ours_json: Path, peer_json: Path) -> float:
    """The largest absolute difference between the two sides' intervals, shares and tau quartiles;
    raises where a rank count differs."""
    o = json.loads(ours_json.read_text())
    p = json.loads(peer_json.read_text())
    worst = 0.0
    for row, (est, lo, hi) in zip(o["intervals"]["rows"], p["intervals"]):
        worst = max(worst, abs(row["estimate"] - est), abs(row["low"] - lo), abs(row["high"] - hi))
    for row, counts, share in zip(o["stability"]["rows"], p["rank_counts"], p["share_first"]):
        if row["rank_counts"] != counts:
            raise SystemExit(f"rank counts differ for {row['model']}")
        worst = max(worst, abs(row["share_first"] - share))
    k = o["stability"]["kendall"][0]
    worst = max(worst, *(abs(a - b) for a, b in zip((k["tau_q1"], k["tau_median"], k["tau_q3"]), p["tau"])))
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="also the 12 x 200, 1,000-resample suite")
    args = ap.parse_args(argv)
    folder = CACHE / "stats"
    folder.mkdir(parents=True, exist_ok=True)
    peer_py = folder / "peer_scipy.py"
    peer_py.write_text(PEER)
    suites = [("40 x 2,000", make_table(folder / "suite_40x2000.csv", 40, 2000), 10_000)]
    if args.small:
        suites.append(("12 x 200", make_table(folder / "suite_12x200.csv", 12, 200), 1_000))
    env = python_env()
    # warm numba's cache once, unmeasured
    run_once(ours_argv(suites[0][1], 10, folder / "warm.json"), env=env)
    rows = []
    for name, path, resamples in suites:
        o, p = folder / "ours.json", folder / "peer.json"
        cases = {"segscore": ours_argv(path, resamples, o),
                 "scipy+numpy": [sys.executable, str(peer_py), str(path), str(resamples), str(p)]}
        got = measure_interleaved(cases, repeat=args.repeat, warmup=0, env=env)
        diff = check_equal(o, p)
        rows.append({"suite": name, "resamples": resamples, "ours_s": got["segscore"]["seconds"],
                     "peer_s": got["scipy+numpy"]["seconds"],
                     "ratio": got["scipy+numpy"]["seconds"] / got["segscore"]["seconds"],
                     "ours_mb": got["segscore"]["peak_mb"], "peer_mb": got["scipy+numpy"]["peak_mb"],
                     "diff": diff})
    print(table(rows, [("suite", "suite", None), ("resamples", "resamples", "{:,}"),
                       ("ours_s", "segscore s", "{:.2f}"), ("peer_s", "scipy+numpy s", "{:.2f}"),
                       ("ratio", "ratio", "{:.1f}x"), ("ours_mb", "segscore peak MB", "{:.0f}"),
                       ("peer_mb", "scipy+numpy peak MB", "{:.0f}"), ("diff", "max |diff|", "{:.1e}")]))
    mem = []
    for resamples in (1_000, 10_000, 30_000, 100_000):
        r = run_once(ours_argv(suites[0][1], resamples, folder / "mem.json"), env=env)
        mem.append({"resamples": resamples, "mb": r["peak_mb"], "s": r["seconds"]})
    print()
    print(table(mem, [("resamples", "resamples (40 x 2,000)", "{:,}"), ("s", "segscore s", "{:.2f}"),
                      ("mb", "segscore peak MB", "{:.0f}")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
