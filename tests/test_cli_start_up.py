"""The command-line process rests the cyclic garbage collector while it starts
(:func:`segscore.cli.main.pause_collector_at_start_up`), then freezes what the start made and
collects as usual; a forked child collects at once."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_collector_rests_then_resumes_with_the_start_up_frozen():
    from segscore.cli.main import pause_collector_at_start_up

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        timer = pause_collector_at_start_up(0.05)
        assert not gc.isenabled()
        timer.join(10)
        assert not timer.is_alive()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # what existed at the end of the rest is frozen
    finally:
        gc.unfreeze()
        gc.enable()


_CHILD = """
import gc, os, sys
from segscore.cli.main import pause_collector_at_start_up
pause_collector_at_start_up(600)  # the timer would not fire during this test
assert not gc.isenabled()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b"1" if gc.isenabled() else b"0")
    os._exit(0)
os.waitpid(pid, 0)
sys.stdout.write(os.read(r, 1).decode() + ("1" if gc.isenabled() else "0"))
"""


def test_a_forked_child_collects_at_once():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "10"  # the child collects; the parent still rests (its timer has not fired)
