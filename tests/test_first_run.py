"""The first run of a command divided between two processes (:mod:`segscore.engine.firstrun`).

The mechanism on parts that write files (no numba compile: fast), then every family plan on an
empty numba cache in a fresh process: after the prelude no function of ours is compiled by both
sides with different signatures (the one case numba's cache index cannot take from two processes
at once), the plan leaves nothing for its warm call or for the command itself on the docs' inputs,
and the second process ended cleanly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from segscore.engine import firstrun
from segscore.engine.firstrun import Plan

PARTS = '''
import os, time
from pathlib import Path
def D():
    return Path(os.environ["FIRST_RUN_TEST_DIR"])

def prelude():
    (D() / "prelude").write_text(str(os.getpid()))

def here():
    (D() / "here").write_text(str(os.getpid()))

def slow_here():
    time.sleep(1.0)
    here()

def there1():
    assert (D() / "prelude").exists()  # the second process starts after the prelude
    time.sleep(0.5)
    (D() / "there1").write_text(str(os.getpid()))

def there2():
    (D() / "there2").write_text(str(os.getpid()))

def then():
    assert (D() / "there2").exists()  # after the second process ended
    (D() / "then").write_text(str(os.getpid()))

def broken():
    raise RuntimeError("a broken part")
'''


@pytest.fixture
def parts(tmp_path, monkeypatch):
    """A module of parts in ``tmp_path`` the second process imports too; numba's cache (and so the
    stamps) in ``tmp_path``."""
    (tmp_path / "fr_parts.py").write_text(PARTS)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setenv("FIRST_RUN_TEST_DIR", str(out))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(Path(__file__).resolve().parents[1]),
                                                      os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SEGSCORE_COMPILE_PROCESSES", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    return out


def _plan(here=("slow_here",), there=("there1", "there2"), then=("then",)):
    return Plan(prelude=("fr_parts:prelude",), here=tuple(f"fr_parts:{p}" for p in here),
                there=tuple(f"fr_parts:{p}" for p in there), then=tuple(f"fr_parts:{p}" for p in then))


def test_the_order_two_processes_and_the_stamp(parts, monkeypatch):
    monkeypatch.setattr(firstrun, "processes", lambda: 2)
    assert not firstrun.is_done("cmd")
    out = firstrun.compile_first("cmd", _plan())
    assert out is not None and out["second_process"] == 0
    pids = {name: (parts / name).read_text() for name in ("prelude", "here", "there1", "there2", "then")}
    assert pids["prelude"] == pids["here"] == pids["then"] == str(os.getpid())
    assert pids["there1"] == pids["there2"] != str(os.getpid())
    assert firstrun.is_done("cmd")
    (parts / "then").unlink()
    assert firstrun.compile_first("cmd", _plan()) is None  # stamped: nothing runs again
    assert not (parts / "then").exists()


def test_one_process_or_no_plan_does_nothing(parts, monkeypatch):
    monkeypatch.setenv("SEGSCORE_COMPILE_PROCESSES", "1")
    assert firstrun.processes() == 1
    assert firstrun.compile_first("cmd", _plan()) is None
    assert list(parts.iterdir()) == []
    monkeypatch.setenv("SEGSCORE_COMPILE_PROCESSES", "2")
    assert firstrun.compile_first("cmd", None) is None
    assert list(parts.iterdir()) == []


def test_an_error_here_is_raised_and_the_second_process_stops(parts, monkeypatch):
    monkeypatch.setattr(firstrun, "processes", lambda: 2)
    with pytest.raises(RuntimeError, match="a broken part"):
        firstrun.compile_first("cmd", _plan(here=("broken",)))
    assert not firstrun.is_done("cmd")
    time.sleep(3.0)  # the second process sees the closed pipe before its next part (there1 takes 0.5 s)
    assert not (parts / "there2").exists()


def test_a_broken_second_process_leaves_the_rest_to_this_one(parts, monkeypatch):
    monkeypatch.setattr(firstrun, "processes", lambda: 2)
    out = firstrun.compile_first("cmd", _plan(here=("here",), there=("broken", "there2"), then=("there2",)))
    assert out["second_process"] == 1  # its traceback went nowhere: the command still runs
    assert (parts / "there2").read_text() == str(os.getpid())  # ``then``, here, did what it did not
    assert firstrun.is_done("cmd")


def test_warm_stamps_its_families_commands(parts):
    from segscore.families import REGISTRY, _mark_first_runs

    _mark_first_runs(["topology", "objects"])
    assert firstrun.is_done("surfaces") and firstrun.is_done("objects") and firstrun.is_done("holdout")
    assert not firstrun.is_done("curve")
    assert {c.family for c in REGISTRY.values() if firstrun.is_done(c.name)} == {"topology", "objects"}


def _plans():
    import importlib

    from segscore.families import FAMILIES

    for f in FAMILIES.values():
        module = importlib.import_module(f.warm.split(":")[0])
        for command, plan in getattr(module, "FIRST_RUN", {}).items():
            yield command, plan


#: the docs' sample command line of each planned command (the inputs of ``segscore.io.samples.write_data``)
ARGV = {"audit": ["audit", "{data}/gt.png", "{data}/gt2.png", "--prune-px", "3", "--severities", "0.2",
                  "--radius-scales", "0.85", "--boundary-fracs", "0.05", "--n-boot", "20", "--include-cases", "--quiet"],
        "objects": ["objects", "{data}/truth.tif", "{data}/pred.tif"],
        "holdout": ["holdout", "{data}/heldout/manifest.json", "--predictions", "{data}/preds"],
        "curve": ["curve", "{data}/pred.png", "--gt", "{data}/gt.png", "--prune-px", "3"],
        "profile": ["profile", "{data}/pred.png", "--gt", "{data}/gt.png", "--prune-px", "3", "--seeds", "1"],
        "surfaces": ["surfaces", "{data}/surf_pred.tif", "{data}/surf_gt.tif"]}

DRIVER = r"""
import json, sys
from segscore.families import first_run
info = first_run(sys.argv[1])
from numba.core import event
seen = []
class L(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev):
        f = ev.data['dispatcher'].py_func
        if f.__module__.startswith('segscore.'):
            seen.append(f.__module__ + '.' + f.__qualname__)
event.register('numba:compile', L())
from segscore.cli.main import main
code = main(json.loads(sys.argv[2]))
print('@@' + json.dumps({'info': info, 'after': seen, 'code': code}), file=sys.stderr)
"""


def test_every_plan_names_a_sample_command():
    assert {command for command, _ in _plans()} == set(ARGV)


@pytest.mark.parametrize("command", sorted(ARGV))
def test_a_plan_on_an_empty_cache(tmp_path, command):
    """In a fresh process on an empty numba cache: the plan runs on two processes; the functions of
    ours both sides compile, they compile with the same signatures; its warm call and then the command
    on the docs' sample compile nothing of ours."""
    from segscore.io.samples import write_data

    data = write_data(tmp_path / "data")
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), SEGSCORE_FIRST_RUN_LOG=str(log),
               SEGSCORE_COMPILE_PROCESSES="2")
    argv = [a.format(data=data) for a in ARGV[command]] + ["--json-out", str(tmp_path / "out.json")]
    r = subprocess.run([sys.executable, "-c", DRIVER, command, json.dumps(argv)], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stderr.rsplit("@@", 1)[1])
    assert out["code"] == 0
    assert out["info"] is not None and out["info"]["second_process"] == 0, out["info"]
    assert out["after"] == [], out["after"]  # the command compiled nothing of ours
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    sides = {"here": {}, "there": {}}
    for row in rows:
        if row["phase"] in sides:
            sides[row["phase"]].setdefault(row["function"], set()).add(row["args"])
    assert sides["here"] and sides["there"], "each side compiles something"
    assert [row for row in rows if row["phase"] == "then"] == []  # the warm call loaded everything
    shared = set(sides["here"]) & set(sides["there"])
    differ = {f: (sorted(sides["here"][f]), sorted(sides["there"][f])) for f in shared
              if sides["here"][f] != sides["there"][f]}
    assert differ == {}, f"compiled with different signatures on the two sides (add them to the prelude): {differ}"
    if command in DISJOINT:  # divided so that no kernel of ours is compiled twice
        assert shared == set(), sorted(shared)
    if command == "audit":  # an audit computes no Betti matching: its first run compiles none of it
        assert not [row for row in rows if ".betti." in row["function"]], "the audit compiled the Betti matching"


#: the plans whose two sides call no kernel of ours in common
DISJOINT = {"profile", "audit"}


def test_a_stamped_command_imports_no_numba(parts):
    """A warm run asks for its stamp without importing numba (a command that loads numba on a
    thread beside its reads keeps that overlap)."""
    firstrun.mark_done("curve")
    code = ("import sys\nfrom segscore.families import first_run\n"
            "assert first_run('curve') is None\nprint('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
