"""A batch killed with SIGKILL at random moments loses no finished row and duplicates none; the
rerun scores only the rest."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
N_JOBS = 40
KILLS = 3


def _lines(path):
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_sigkill_mid_batch_then_resume(tmp_path):
    import segscore
    from segscore.curvilinear.masks import save_mask
    from tests.curvilinear.helpers import vessel_tree

    segscore.warm(["curvilinear"])  # the numba cache exists before any batch process starts
    gt = vessel_tree((128, 128), seed=2)
    save_mask(gt, tmp_path / "gt.png")
    lines = ["id,job"]
    for i in range(N_JOBS):
        pred = gt.copy()
        pred[(3 * i) % 120:(3 * i) % 120 + 3] = False
        save_mask(pred, tmp_path / f"p{i:02d}.png")
        lines.append(f"j{i:02d},curve p{i:02d}.png --gt gt.png")
    (tmp_path / "jobs.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    results = out / "results.jsonl"
    cmd = [sys.executable, "-m", "segscore", "batch", str(tmp_path / "jobs.csv"), "--out", str(out), "--threads", "1"]
    rng = random.Random(13)
    report = []
    for kill in range(KILLS):
        before = _lines(results)
        target = before + rng.randint(1, 6)  # kill once a few more jobs have finished, mid-batch
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _lines(results) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.0, 0.02))
        assert proc.poll() is None, proc.stderr.read().decode()  # still running: a kill mid-batch
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        after = _lines(results)
        assert after >= target  # nothing written is lost
        report.append((kill, before, after))
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    scored = [r["id"] for r in rows if r["status"] == "scored"]
    assert len(scored) == len(set(scored)) == len(rows)  # no duplicate, no torn line
    assert len(scored) < N_JOBS
    done = subprocess.run(cmd + ["--quiet"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    final = [json.loads(line) for line in results.read_text().splitlines()]
    rerun = [r["id"] for r in final[len(rows):]]
    assert sorted(rerun) == sorted(set(f"j{i:02d}" for i in range(N_JOBS)) - set(scored))  # only the rest
    ids = [r["id"] for r in final]
    assert sorted(ids) == [f"j{i:02d}" for i in range(N_JOBS)] and all(r["status"] == "scored" for r in final)
    # every row is the one an uninterrupted run gives
    want = {r["id"]: r["result"] for r in final}
    from segscore.batch import run

    clean = run(tmp_path / "jobs.csv", threads=2)
    assert clean.results == want
    sys.stderr.write(f"\nresume after SIGKILL: {N_JOBS} jobs, {KILLS} kills (rows before, after each): {report}; "
                     f"{len(scored)} scored before the rerun, {len(rerun)} by it; 0 lost, 0 duplicated\n")
    assert np.all([len(r["inputs"]) == 2 for r in final])
