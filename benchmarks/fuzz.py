"""Malformed invocations of every command, each in its own process, with a table of outcomes.

Every case is one valid call with one input damaged (``tests/fuzz/corpus.py``). An outcome is
``refused`` (exit 2, one line on stderr naming the damaged file), ``scored`` (exit 0, JSON
without NaN) or wrong: a traceback (exit 1), a signal, more than 60 s, a refusal of several
lines or without the file, JSON with NaN.

    PYTHONPATH=. python benchmarks/fuzz.py --cases 1000 [--seed 0] [--show 20]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import machine_note, python_env  # noqa: E402
from tests.fuzz.corpus import cases  # noqa: E402
from tests.fuzz.test_fuzz import classify  # noqa: E402


def run(argv, timeout=60.0):
    try:
        p = subprocess.run([sys.executable, "-m", "segscore", *argv], capture_output=True, text=True,
                           timeout=timeout, env=python_env())
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if p.returncode < 0:
        return f"signal {-p.returncode}", p.stderr[-300:]
    kind = classify(p.returncode, p.stdout, p.stderr, argv)
    return kind, (p.stderr.strip().splitlines() or [""])[-1][:200]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=20, help="wrong outcomes to print")
    args = ap.parse_args(argv)
    table = collections.defaultdict(collections.Counter)
    wrong = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="segscore-fuzz-") as tmp:
        for label, call in cases(Path(tmp), args.cases, args.seed):
            kind, msg = run(call)
            key = kind if kind in ("refused", "scored") else "wrong"
            table[call[0]][key] += 1
            if key == "wrong":
                wrong.append(f"{label}: {kind}: {msg}")
    print(f"segscore fuzz — {machine_note()} — {args.cases} invocations, seed {args.seed}, "
          f"{time.perf_counter() - t0:.0f} s\n")
    print("| command | invocations | refused | scored | wrong |")
    print("|---|---|---|---|---|")
    total = collections.Counter()
    for command in sorted(table):
        c = table[command]
        total.update(c)
        print(f"| {command} | {sum(c.values())} | {c['refused']} | {c['scored']} | {c['wrong']} |")
    print(f"| all | {sum(total.values())} | {total['refused']} | {total['scored']} | {total['wrong']} |")
    for w in wrong[: args.show]:
        print("- " + w)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
