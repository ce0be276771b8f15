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



# ------------------------------------------------------------------------------------------
# the worker server (segscore.engine.executor.start_worker_server): each test in a fresh process,
# since multiprocessing keeps one fork server per process, started with that moment's environment
# ------------------------------------------------------------------------------------------

linux_only = pytest.mark.skipif(not __import__("sys").platform.startswith("linux"),
                                reason="the worker server is Linux's forkserver")


def _run_script(tmp_path, code, *, env=None, extra_path=()):
    """Run ``code`` as a script in a fresh Python with this checkout (and ``extra_path``) on its
    path; its last line of output, parsed as JSON."""
    import os
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(code)
    keys = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED", "MALLOC_TRIM_THRESHOLD_",
            "SEGSCORE_WORKER_SERVER", "PYTHONSAFEPATH")
    run_env = {k: v for k, v in os.environ.items() if k not in keys}
    root = str(Path(__file__).resolve().parents[2])
    run_env.update(env or {}, PYTHONPATH=os.pathsep.join([*map(str, extra_path), root,
                                                          run_env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=run_env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_SERVER_PROBE = r"""
import json, os, sys

KEYS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED", "MALLOC_TRIM_THRESHOLD_",
        "PYTHONSAFEPATH", "SEGSCORE_WORKER_SERVER", "PYTHONPATH")

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
    return {"parent": parent, "parent_threads": len(os.listdir(f"/proc/{parent}/task")),
            "forkserver": "forkserver" in cmd, "parent_has_llvm": llvm,
            "kernels_loaded": bool(rankstats.spearman.overloads), "scipy_linalg": "scipy.linalg" in sys.modules,
            "env": {k: os.environ.get(k) for k in KEYS},
            "parent_env": {k: (penv.get(k.encode()) or b"").decode() or None for k in KEYS},
            "hash": hash("segscore")}

if __name__ == "__main__":
    from segscore.curvilinear.workers import WORKER_PRELOAD
    from segscore.engine.executor import local_cluster, start_worker_server
    out = {}
    client, cluster = local_cluster(2)  # no server started yet: spawned
    out["spawned"] = list(client.run(probe).values())
    client.close(); cluster.close()
    before = dict(os.environ)
    out["started"] = start_worker_server(WORKER_PRELOAD)
    out["same_env"] = dict(os.environ) == before
    out["again"] = start_worker_server(WORKER_PRELOAD)
    client, cluster = local_cluster(2)
    out["forked"] = list(client.run(probe).values())
    client.close(); cluster.close()
    out["here"] = {k: os.environ.get(k) for k in KEYS}
    print(json.dumps(out))
"""


@linux_only
@pytest.mark.parametrize("env", [{}, {"OPENBLAS_NUM_THREADS": "3", "PYTHONHASHSEED": "0"}])
def test_workers_are_forked_from_one_server_with_the_kernels_loaded(tmp_path, env):
    """Once this process started the worker server, local_cluster forks every worker from that
    one single-threaded server, which imported the audit's preload (distributed and the kernels)
    and started in the environment a spawned worker of ours gets (a value set here wins, as
    distributed has it). The server's own start variables do not reach the workers."""
    from segscore.engine.executor import WORKER_SERVER_ENVIRON

    got = _run_script(tmp_path, _SERVER_PROBE, env=env)
    assert got["started"] and got["again"] and got["same_env"]  # this process's environment is left as it was
    spawned, forked = got["spawned"], got["forked"]
    assert len(forked) == 2 and len({f["parent"] for f in forked}) == 1 and len({f["hash"] for f in forked}) == 1
    keys = list(WORKER_SERVER_ENVIRON)
    for f in forked:
        assert f["forkserver"] and f["parent_threads"] == 1  # forked by a process with one thread
        assert f["parent_has_llvm"] and f["kernels_loaded"]  # loaded there, before any task or warm-up
        assert not f["scipy_linalg"]  # numba started lean in the server
        assert {k: f["parent_env"][k] for k in keys} == {k: spawned[0]["env"][k] for k in keys}
        assert f["parent_env"]["PYTHONSAFEPATH"] == "1" and f["parent_env"]["SEGSCORE_WORKER_SERVER"]
        for k in ("PYTHONSAFEPATH", "SEGSCORE_WORKER_SERVER", "PYTHONPATH"):  # put back before the fork
            assert f["env"][k] == spawned[0]["env"][k] == got["here"][k], k
    assert not any(s["forkserver"] or s["kernels_loaded"] for s in spawned)
    assert spawned[0]["env"]["OPENBLAS_NUM_THREADS"] == env.get("OPENBLAS_NUM_THREADS", "1")
    assert spawned[0]["env"]["PYTHONHASHSEED"] == "6640" and spawned[0]["env"]["MALLOC_TRIM_THRESHOLD_"] is None


_FOREIGN_SERVER = r"""
import json, multiprocessing, os

def parent():
    return os.getppid()

if __name__ == "__main__":
    from segscore.engine.executor import local_cluster, start_worker_server, worker_server_started
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Pool(1) as pool:  # this process's own use of a fork server, before segscore's
        theirs = pool.apply(parent)
    started = start_worker_server(["json"])
    client, cluster = local_cluster(1)
    spawned = not any("forkserver" in open(f"/proc/{p}/cmdline").read()
                      for p in client.run(parent).values())
    client.close(); cluster.close()
    print(json.dumps({"started": started, "flag": worker_server_started(), "spawned": spawned}))
"""


@linux_only
def test_a_fork_server_started_before_is_left_alone(tmp_path):
    """Where this process runs a fork server of its own already, segscore does not take it over
    (its preload, environment and exit stay the owner's) and spawns its workers."""
    got = _run_script(tmp_path, _FOREIGN_SERVER)
    assert got == {"started": False, "flag": False, "spawned": True}


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
import json, multiprocessing, os

def parent_pid():
    return os.getppid()

if __name__ == "__main__":
    from segscore.engine.executor import start_worker_server
    assert start_worker_server(["marker_at_teardown"])
    with multiprocessing.get_context("forkserver").Pool(1) as pool:
        print(json.dumps({"server": pool.apply(parent_pid)}))
"""


@linux_only
def test_the_worker_server_ends_at_once_with_its_process(tmp_path):
    """When the process that started it ends, the server ends at its atexit handler: the handlers
    registered before it (the preload's) and the interpreter's teardown (0.6 s with numba loaded,
    with the command's stdout and stderr held open) never run."""
    import os
    import time

    (tmp_path / "marker_at_teardown.py").write_text(
        "import atexit, os\n"
        "open(os.environ['SEGSCORE_TEST_MARK'] + '.imported', 'w').write('imported')\n"
        "atexit.register(lambda: open(os.environ['SEGSCORE_TEST_MARK'], 'w').write('teardown ran'))\n")
    mark = tmp_path / "mark.txt"
    got = _run_script(tmp_path, _SERVER_EXIT_SCRIPT, env={"SEGSCORE_TEST_MARK": str(mark)}, extra_path=[tmp_path])
    server = got["server"]

    def ended():
        try:
            with open(f"/proc/{server}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie nobody reaps has ended
        except OSError:
            return True

    deadline = time.monotonic() + 60
    while not ended() and time.monotonic() < deadline:  # its parent has gone: it is ending
        time.sleep(0.05)
    assert ended()
    assert (tmp_path / "mark.txt.imported").exists()  # the preload ran in the server
    assert not mark.exists()  # its teardown never did


def test_the_server_exit_does_nothing_elsewhere(tmp_path):
    """Imported in any other process (a test collecting every module, a user's import), the exit
    module arms nothing: the process keeps its exit code and its own atexit handlers."""
    import subprocess
    import sys

    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('handler ran'))\n"
            "import segscore.engine._server_start, segscore.engine._server_exit\n"
            "sys.exit(3)\n")
    root = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert proc.returncode == 3 and proc.stdout.strip() == "handler ran"


_NO_SERVER = r"""
import json, multiprocessing.forkserver, os

def parent():
    return os.getppid()

def refused():
    raise PermissionError("socket: operation not permitted")

if __name__ == "__main__":
    multiprocessing.forkserver.ensure_running = refused
    from segscore.curvilinear.workers import WORKER_PRELOAD
    from segscore.engine.executor import local_cluster, start_worker_server, worker_server_started
    before = dict(os.environ)
    started = start_worker_server(WORKER_PRELOAD)
    same_env = dict(os.environ) == before
    client, cluster = local_cluster(1)
    spawned = not any("forkserver" in open(f"/proc/{p}/cmdline").read() for p in client.run(parent).values())
    client.close(); cluster.close()
    print(json.dumps({"started": started, "flag": worker_server_started(), "same_env": same_env,
                      "spawned": spawned}))
"""


@linux_only
def test_where_no_server_can_start_workers_are_spawned(tmp_path):
    """An OSError starting the server (no socket or process allowed) leaves spawned workers and
    this process's environment as it was."""
    got = _run_script(tmp_path, _NO_SERVER)
    assert got == {"started": False, "flag": False, "same_env": True, "spawned": True}
