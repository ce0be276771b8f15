"""The experiment ledger: init, append, refusals, and concurrent writers."""

import json
import multiprocessing as mp

import pytest

from segscore.errors import ScoreError
from segscore.io import ledger


def test_init_and_append(tmp_path):
    p = ledger.init_run("x", tmp_path)
    assert json.loads(p.read_text())["checks"] == []
    with pytest.raises(ScoreError, match="exists already"):
        ledger.init_run("x", tmp_path)
    from segscore.io.results import NonFiniteError

    with pytest.raises(NonFiniteError, match=r"checks\.0\.result\.v is nan"):  # a NaN is a bug: refused
        ledger.add_check("x", "n", ["a"], {"v": float("nan")}, tmp_path)
    assert ledger.read_run("x", tmp_path)["checks"] == []  # and nothing was written
    ledger.add_check("x", "n", ["a"], {"v": None}, tmp_path)
    run = ledger.read_run("x", tmp_path)
    assert run["checks"][0]["result"] == {"v": None}
    with pytest.raises(ScoreError, match="no experiment at .*; start it with `segscore run init y"):
        ledger.add_check("y", "n", [], {}, tmp_path)
    with pytest.raises(ScoreError, match="plain name"):
        ledger.run_path("a/b", tmp_path)


def _writer(root, k, n):
    for i in range(n):
        ledger.add_check("c", f"w{k}-{i}", [], {"k": k, "i": i}, root)


def test_concurrent_writers_lose_nothing(tmp_path):
    ledger.init_run("c", tmp_path)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(tmp_path, k, 15)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    names = [c["name"] for c in ledger.read_run("c", tmp_path)["checks"]]
    assert len(names) == 60 and len(set(names)) == 60
    for k in range(4):  # each writer's checks in its own order
        mine = [n for n in names if n.startswith(f"w{k}-")]
        assert mine == [f"w{k}-{i}" for i in range(15)]
    assert not list(tmp_path.glob("c/.run.json.*.tmp"))


def test_a_killed_writer_leaves_the_file_whole(tmp_path):
    ledger.init_run("k", tmp_path)
    ledger.add_check("k", "before", [], {}, tmp_path)
    ctx = mp.get_context("fork")
    p = ctx.Process(target=_writer, args=(tmp_path, 9, 10_000))
    p.start()
    import time

    time.sleep(1.0)
    p.kill()
    p.join()
    run = ledger.read_run("k", tmp_path)  # parses: never torn
    assert run["checks"][0]["name"] == "before"
