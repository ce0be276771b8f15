"""`--processes 1` and `--processes 2` (distributed.LocalCluster on 127.0.0.1) give the rows threads give."""

from __future__ import annotations

import json


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
    time. distributed's MALLOC_TRIM_THRESHOLD_ is kept (a worker's memory falls back between
    windows), except for the audit's small tasks, where it doubled the page faults."""
    import os

    import dask

    from segscore.engine.executor import local_cluster

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)  # another cluster may have set it here
    # (small tasks first: distributed's nanny leaves its pre-spawn environment in this process's
    # os.environ, where it then wins over the config for any later cluster: only a speed matter)
    for small, want in ((True, None), (False, "65536")):
        client, cluster = local_cluster(1, small_tasks=small)
        try:
            assert set(client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values()) == {False}
            assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {want}
            assert len(client.scheduler_info()["workers"]) == 1
        finally:
            client.close()
            cluster.close()
    assert dask.config.get("distributed.worker.profile.enabled") is True  # this process's config is left as it was


def _kill_one_worker(client, when, killed_at, rows):
    """SIGKILL one worker's process (its nanny starts another) once ``when()`` is true; the jobs
    done by then go to ``killed_at``."""
    import os
    import signal
    import time

    deadline = time.monotonic() + 60
    while not when() and time.monotonic() < deadline:
        time.sleep(0.02)
    pids = client.run(os.getpid)
    killed_at.append(len(rows))
    os.kill(sorted(pids.values())[0], signal.SIGKILL)


@pytest.mark.parametrize("moment", ["warm-up", "scoring"])
def test_a_worker_killed_during_the_run_loses_no_job(tmp_path, moment):
    """`segscore batch --scheduler`: a worker killed while the kernels are warmed, or while jobs
    score, is restarted by its nanny (and warmed by the plugin); distributed reruns its jobs, and
    the batch ends with every job scored."""
    import logging
    import threading

    from distributed import Client, LocalCluster

    from segscore.batch.runner import run

    jobs = workspace(tmp_path / "ws", n_curves=8)
    manifest = write_csv(tmp_path / "ws" / "jobs.csv", jobs, {k: {} for k in jobs})
    rows = []

    class Counter:  # the progress stream: one write per finished job (and a newline at the end)
        def write(self, text):
            rows.extend([text] if text.startswith("\r") else [])

        def flush(self):
            pass

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        started = threading.Event()
        when = started.is_set if moment == "warm-up" else (lambda: len(rows) >= 1)
        killed_at = []
        killer = threading.Thread(target=_kill_one_worker, args=(client, when, killed_at, rows), daemon=True)
        killer.start()
        started.set()
        result = run(manifest, client=client, out=tmp_path / "out", progress=Counter())
        killer.join(60)
    assert not killer.is_alive()
    assert killed_at and killed_at[0] < len(jobs) - 1, "the worker was killed after the jobs were done"
    assert result.counts()["scored"] == len(jobs), result.rows
