"""Malformed invocations of every command, each in its own process, with a table of outcomes.

Every case is one valid call with one input damaged, or one numeric option given a bad value
(``tests/fuzz/corpus.py``). An outcome is ``refused`` (exit 2, one line on stderr naming the
damaged file), ``scored`` (exit 0, or 3 for a `check` violation, JSON without NaN) or wrong: a
traceback (exit 1), a signal, more than 60 s, a refusal of several lines or without the file,
JSON with NaN.

Each case runs in a process of its own. By default that process is forked from this one after
the kernels are loaded (``--fork``: a case costs its own work, not the ~1 s of start-up, so
10,000 cases fit in well under an hour); ``--spawn`` starts ``python -m segscore`` afresh for
every case instead (the user's exact process, much slower). A child that outlives ``--timeout``
is killed and counted as wrong.

    PYTHONPATH=. python benchmarks/fuzz.py --cases 10000 [--seed 0] [--jobs 2] [--show 20]
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._harness import machine_note, python_env  # noqa: E402
from tests.fuzz.corpus import cases  # noqa: E402
from tests.fuzz.test_fuzz import classify  # noqa: E402


def spawn(argv, folder, timeout):
    try:
        p = subprocess.run([sys.executable, "-m", "segscore", *argv], capture_output=True, text=True,
                           timeout=timeout, env=python_env())
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if p.returncode < 0:
        return f"signal {-p.returncode}", p.stderr[-300:]
    return classify(p.returncode, p.stdout, p.stderr, folder), _last(p.stderr)


def _last(text: str) -> str:
    return (text.strip().splitlines() or [""])[-1][:200]


class Forked:
    """Run cases in children forked from this (warm) process, ``jobs`` at a time."""

    def __init__(self, jobs: int, timeout: float, scratch: Path):
        self.jobs, self.timeout, self.scratch = jobs, timeout, scratch
        self.running = {}  # pid -> (label, folder, out path, err path, started)

    def start(self, label, argv, folder, n):
        out, err = self.scratch / f"{n}.out", self.scratch / f"{n}.err"
        pid = os.fork()
        if pid == 0:  # the child: one command, its own stdout and stderr, then out
            code = 1
            try:
                signal.alarm(int(self.timeout) + 1)
                fo, fe = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fo, 1)
                os.dup2(fe, 2)
                from segscore.cli.main import main

                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - an escaped exception is a crash: show it
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        self.running[pid] = (label, folder, out, err, time.perf_counter())

    def wait_one(self):
        while True:
            for pid, (label, folder, out, err, t0) in list(self.running.items()):
                if time.perf_counter() - t0 > self.timeout + 5:
                    os.kill(pid, signal.SIGKILL)
            pid, status = os.wait()
            if pid in self.running:
                break
        label, folder, out, err, _ = self.running.pop(pid)
        text_out = out.read_text(errors="replace")
        text_err = err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            kind = "timeout" if sig in (signal.SIGALRM, signal.SIGKILL) else f"signal {sig}"
            return label, folder, kind, text_err[-300:]
        kind = classify(os.WEXITSTATUS(status), text_out, text_err, folder)
        return label, folder, kind, _last(text_err)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (forked mode)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take")
    ap.add_argument("--spawn", action="store_true", help="a fresh `python -m segscore` per case (slow)")
    ap.add_argument("--show", type=int, default=20, help="wrong outcomes to print")
    ap.add_argument("--show-scored", type=int, default=0, help="scored cases to list (to review what was accepted)")
    args = ap.parse_args(argv)
    table = collections.defaultdict(collections.Counter)
    wrong, scored = [], []
    t0 = time.perf_counter()

    def record(label, folder, kind, msg):
        key = kind if kind in ("refused", "scored") else "wrong"
        table[label.split(":")[0]][key] += 1
        if key == "wrong":
            wrong.append(f"{label}: {kind}: {msg}")
        elif key == "scored":
            scored.append(label)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)

    with tempfile.TemporaryDirectory(prefix="segscore-fuzz-") as tmp:
        tmp = Path(tmp)
        generated = cases(tmp / "cases", args.cases, args.seed)
        if args.spawn:
            for label, call, folder in generated:
                record(label, folder, *spawn(call, folder, args.timeout))
        else:
            import segscore

            segscore.warm()  # the children inherit loaded kernels
            (tmp / "io").mkdir()
            pool = Forked(max(1, args.jobs), args.timeout, tmp / "io")
            for n, (label, call, folder) in enumerate(generated):
                if len(pool.running) >= pool.jobs:
                    record(*pool.wait_one())
                pool.start(label, call, folder, n)
            while pool.running:
                record(*pool.wait_one())
    mode = "spawned" if args.spawn else f"forked, {max(1, args.jobs)} at a time"
    print(f"segscore fuzz — {machine_note()} — {args.cases} invocations ({mode}), seed {args.seed}, "
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
    if args.show_scored:
        print("\nscored:")
        for label in sorted(set(scored))[: args.show_scored]:
            print("- " + label)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
