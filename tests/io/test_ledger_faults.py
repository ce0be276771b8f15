"""The ledger under concurrent writers and SIGKILLs: nothing acknowledged is lost or doubled,
run.json always parses, and the temporary files of killed writers are cleaned up."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from segscore.errors import ScoreError
from segscore.io import ledger

WRITERS = 8
APPENDS = 100
MIN_KILLS = 50

#: one writer: appends checks (writer, seq) from where its last one in the ledger left off,
#: printing each seq once its append returned (the acknowledgement)
WRITER = r"""
import json, sys
from segscore.io import ledger
root, slug, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
run = ledger.read_run(slug, root)
done = [c["result"]["seq"] for c in run["checks"] if c["result"]["writer"] == me]
for seq in range((max(done) + 1) if done else 0, n):
    ledger.add_check(slug, f"w{me}", ["x"], {"writer": me, "seq": seq, "pad": "x" * 200}, root=root)
    print(seq, flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock and SIGKILL semantics of Linux")
def test_eight_writers_and_sigkills_lose_nothing(tmp_path):
    root, slug = tmp_path / "runs", "fault"
    path = ledger.init_run(slug, root)
    rng = random.Random(0)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                       os.environ.get("PYTHONPATH", "")]))
    acked = {w: set() for w in range(WRITERS)}

    def start(w):
        return subprocess.Popen([sys.executable, "-c", WRITER, str(root), slug, str(w), str(APPENDS)],
                                stdout=subprocess.PIPE, text=True, env=env)

    def collect(w, proc):
        if proc.stdout.closed:  # collected already
            return
        out = proc.stdout.read()
        proc.stdout.close()
        acked[w].update(int(x) for x in out.split())

    procs = {w: start(w) for w in range(WRITERS)}
    kills, deadline = 0, time.monotonic() + 45
    while time.monotonic() < deadline and (kills < MIN_KILLS or any(p.poll() is None for p in procs.values())):
        time.sleep(rng.uniform(0.01, 0.08))
        w = rng.randrange(WRITERS)
        p = procs[w]
        if p.poll() is None and kills < MIN_KILLS:
            p.send_signal(signal.SIGKILL)
            p.wait()
            kills += 1
            collect(w, p)
            procs[w] = start(w)  # resumes after its last append in the ledger
        elif p.poll() is not None:
            collect(w, p)
            if len(acked[w]) < APPENDS or kills < MIN_KILLS:
                procs[w] = start(w)
        json.loads(path.read_text())  # parses at any moment
    for w, p in procs.items():
        p.wait(timeout=30)
        collect(w, p)
    assert kills >= MIN_KILLS

    run = ledger.read_run(slug, root)
    seen = [(c["result"]["writer"], c["result"]["seq"]) for c in run["checks"]]
    assert len(seen) == len(set(seen)), "an append was written twice"
    present = set(seen)
    for w in range(WRITERS):
        assert acked[w] <= {s for x, s in present if x == w}, "an acknowledged append was lost"
        assert {s for x, s in present if x == w} == set(range(APPENDS))
    ledger.add_check(slug, "last", ["x"], {"writer": -1, "seq": 0}, root=root)  # cleans the dead writers' files
    assert not list(path.parent.glob(".run.json.*.tmp"))


def test_a_corrupt_run_json_is_refused_and_left_untouched(tmp_path):
    path = ledger.init_run("c", tmp_path)
    for text in ("{not json", "[1, 2]", '{"checks": 3}'):
        path.write_text(text)
        with pytest.raises(ScoreError, match="not a ledger") as err:
            ledger.add_check("c", "n", [], {}, root=tmp_path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)
        assert "Expecting" not in str(err.value)  # no internal exception text
        assert path.read_text() == text
