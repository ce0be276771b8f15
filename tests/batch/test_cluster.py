"""`--processes 1` and `--processes 2` (distributed.LocalCluster on 127.0.0.1) give the rows threads give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.helpers import workspace, write_csv

pytest.importorskip("distributed")


def _by_id(out):
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["id"]: {k: r[k] for k in ("job", "family", "tags", "status", "result", "error", "inputs")} for r in rows}


def test_one_and_two_worker_processes_give_identical_rows(tmp_path, cli):
    import segscore

    jobs = workspace(tmp_path / "ws", n_curves=4)
    jobs["refused"] = "curve nothing.png --gt gt.png"
    manifest = write_csv(tmp_path / "ws" / "jobs.csv", jobs, {k: {"model": k[:3]} for k in jobs})
    segscore.warm()  # the numba cache is built before worker processes load it
    assert cli("batch", manifest, "--out", tmp_path / "threads", "--quiet")[0] == 2
    code, out, err = cli("batch", manifest, "--out", tmp_path / "p1", "--processes", 1, "--quiet")  # its own cluster
    assert (code, out) == (2, ""), err
    assert err.strip().splitlines()[-1] == f"segscore batch: 1 of {len(jobs)} jobs refused; their errors are " \
                                           f"in {tmp_path / 'p1'}/results.jsonl"
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                      silence_logs=logging.ERROR) as cluster:  # a running cluster, as --scheduler finds one
        code, out, err = cli("batch", manifest, "--out", tmp_path / "p2", "--scheduler", cluster.scheduler_address,
                             "--quiet")
        assert (code, out) == (2, ""), err
        from distributed import Client

        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2  # still running: --scheduler closes no cluster
    threads, one, two = (_by_id(tmp_path / d) for d in ("threads", "p1", "p2"))
    assert one == two == threads
    assert sum(r["status"] == "scored" for r in one.values()) == len(jobs) - 1


def test_our_local_clusters_run_without_the_task_profiler(monkeypatch):
    """distributed's profiler thread costs a single-threaded scoring task about a third of its
    time; its MALLOC_TRIM_THRESHOLD_ doubled an audit's page faults."""
    import os

    import dask

    from segscore.engine.executor import local_cluster

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)  # another cluster may have set it here
    client, cluster = local_cluster(1)
    try:
        assert set(client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values()) == {False}
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}
        assert "MALLOC_TRIM_THRESHOLD_" not in os.environ
        assert len(client.scheduler_info()["workers"]) == 1
    finally:
        client.close()
        cluster.close()
    assert dask.config.get("distributed.worker.profile.enabled") is True  # this process's config is left as it was


#: run in a fresh process (multiprocessing keeps one fork server per process, started with the
#: environment of that moment): a spawned and a forked cluster of ours, side by side
_SERVER_PROBE = r"""
import json, os, sys

def probe():
    import os, sys
    from segscore.kernels import rankstats
    parent = os.getppid()
    with open(f"/proc/{parent}/cmdline", "rb") as f:
        cmd = f.read().replace(b"\0", b" ").decode()
    with open(f"/proc/{parent}/environ", "rb") as f:  # the server's environment as it started
        penv = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    with open(f"/proc/{parent}/maps") as f:
        llvm = "libllvmlite" in f.read()
    keys = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED", "MALLOC_TRIM_THRESHOLD_")
    return {"parent": parent, "parent_threads": len(os.listdir(f"/proc/{parent}/task")),
            "forkserver": "forkserver" in cmd, "parent_has_llvm": llvm,
            "kernels_loaded": bool(rankstats.spearman.overloads), "scipy_linalg": "scipy.linalg" in sys.modules,
            "env": {k: os.environ.get(k) for k in keys},
            "parent_env": {k: (penv.get(k.encode()) or b"").decode() or None for k in keys},
            "hash": hash("segscore")}

if __name__ == "__main__":
    from segscore.curvilinear.workers import WORKER_PRELOAD
    from segscore.engine.executor import local_cluster, start_worker_server
    before = dict(os.environ)
    started = start_worker_server(WORKER_PRELOAD)
    same_env = dict(os.environ) == before
    out = {"started": started, "same_env": same_env}
    for name, pre in (("spawned", ()), ("forked", WORKER_PRELOAD)):
        client, cluster = local_cluster(2, preload=pre)
        try:
            out[name] = list(client.run(probe).values())
        finally:
            client.close()
            cluster.close()
    print(json.dumps(out))
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the worker server is Linux's forkserver")
@pytest.mark.parametrize("env", [{}, {"OPENBLAS_NUM_THREADS": "3", "PYTHONHASHSEED": "0"}])
def test_workers_are_forked_from_one_server_with_the_kernels_loaded(tmp_path, env):
    """local_cluster(preload=...) forks every worker from one single-threaded server that has
    imported the modules (the audit's: distributed and its kernels) and started in the
    environment a spawned worker of ours gets (a value set here wins, as distributed has it)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "probe.py"
    script.write_text(_SERVER_PROBE)
    run_env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                                 "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED",
                                                                 "MALLOC_TRIM_THRESHOLD_")}
    run_env.update(env, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                    run_env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=run_env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["started"] and got["same_env"]  # this process's environment is left as it was
    spawned, forked = got["spawned"], got["forked"]
    assert len(forked) == 2 and len({f["parent"] for f in forked}) == 1 and len({f["hash"] for f in forked}) == 1
    for f in forked:
        assert f["forkserver"] and f["parent_threads"] == 1  # forked by a process with one thread
        assert f["parent_has_llvm"] and f["kernels_loaded"]  # loaded there, before any task or warm-up
        assert not f["scipy_linalg"]  # numba started lean in the server
        assert f["parent_env"] == f["env"] == spawned[0]["env"]  # the server started as a spawned worker does
    assert not any(s["forkserver"] or s["kernels_loaded"] for s in spawned)
    assert spawned[0]["env"]["OPENBLAS_NUM_THREADS"] == env.get("OPENBLAS_NUM_THREADS", "1")
    assert spawned[0]["env"]["PYTHONHASHSEED"] == "6640" and spawned[0]["env"]["MALLOC_TRIM_THRESHOLD_"] is None

def test_the_worker_preload_never_raises(monkeypatch):
    """The server imports its preload before it serves: a module that raised there would take it
    down, and the cluster with it. The audit's leaves a failure to the workers' own warm-up."""
    import importlib

    import segscore.curvilinear._worker_preload as worker
    from segscore.curvilinear import auditing

    def broken():
        raise RuntimeError("no kernels here")

    monkeypatch.setattr(auditing, "_warm_worker", broken)
    importlib.reload(worker)  # no exception


_SERVER_EXIT_SCRIPT = r"""
import multiprocessing, os, sys

def parent_pid():
    print("SERVER", os.getppid(), flush=True)

if __name__ == "__main__":
    from segscore.engine.executor import start_worker_server
    assert start_worker_server(["marker_at_teardown"])
    p = multiprocessing.get_context("forkserver").Process(target=parent_pid)
    p.start()
    p.join()
"""


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the worker server is Linux's forkserver")
def test_the_worker_server_ends_at_once_with_its_process(tmp_path):
    """When the process that started it ends, the server ends at its atexit handler: the handlers
    registered before it (the preload's) and the interpreter's teardown (0.6 s with numba loaded,
    with the command's stdout and stderr held open) never run."""
    import os
    import subprocess
    import sys
    import time

    (tmp_path / "marker_at_teardown.py").write_text(
        "import atexit, os\n"
        "atexit.register(lambda: open(os.environ['SEGSCORE_TEST_MARK'], 'w').write('teardown ran'))\n")
    (tmp_path / "main.py").write_text(_SERVER_EXIT_SCRIPT)
    mark = tmp_path / "mark.txt"
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "SEGSCORE_TEST_MARK": str(mark),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    server = int(next(line for line in proc.stdout.splitlines() if line.startswith("SERVER")).split()[1])
    deadline = time.monotonic() + 60
    while os.path.exists(f"/proc/{server}") and time.monotonic() < deadline:  # the pipes closed: it is ending
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{server}")
    assert not mark.exists()  # its teardown never ran


def test_where_no_server_can_start_workers_are_spawned(monkeypatch):
    """An OSError starting the server (no socket or process allowed) leaves spawned workers and
    this process's environment as it was."""
    import multiprocessing.forkserver
    import os

    from segscore.curvilinear.workers import WORKER_PRELOAD
    from segscore.engine import executor

    def refused():
        raise PermissionError("socket: operation not permitted")

    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running", refused)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "5")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    before = dict(os.environ)
    assert executor.start_worker_server(WORKER_PRELOAD) is False  # the list every other test sets
    assert dict(os.environ) == before
