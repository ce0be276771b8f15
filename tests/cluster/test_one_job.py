"""One `auc` or `objects` job spread over a dask.distributed cluster (issue 37): the JSON is the
one-process JSON, on 1 and 2 workers, with awkward tiles, a worker killed mid-job, a store served
over http; the client reads no voxel; an unreachable scheduler is one line, exit 2.

One LocalCluster on 127.0.0.1 serves the module (started here, closed at its end): its workers
load the kernels once, so the module stays within seconds of work."""

from __future__ import annotations

import functools
import http.server
import json
import logging
import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.cluster


def _volume(shape, seed, n_objects):
    """Instance labels: ``n_objects`` boxes of random sizes (later ones over earlier ones)."""
    rng = np.random.default_rng(seed)
    out = np.zeros(shape, np.uint16)
    for i in range(1, n_objects + 1):
        lo = [int(rng.integers(0, n - 2)) for n in shape]
        hi = [min(n, a + int(rng.integers(2, max(3, n // 3)))) for a, n in zip(lo, shape)]
        out[tuple(slice(a, b) for a, b in zip(lo, hi))] = i
    return out


def _zarr(path, data, chunks):
    import zarr

    arr = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, fill_value=0,
                            zarr_format=3)
    arr[...] = data
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small files: a 2D map (tif) with its labels and mask (zarr pyramids, 8 x 16 chunks) and a
    float control (npy); a 3D truth (zarr, 5 x 16 x 16 chunks, its last slices empty: absent chunks)
    and prediction (tif)."""
    import tifffile

    from tests.ink.helpers import segment, write_levels

    d = tmp_path_factory.mktemp("cluster")
    pred, ink, mask = segment((97, 61), seed=3)
    tifffile.imwrite(d / "map.tif", pred)
    np.save(d / "rev.npy", np.random.default_rng(4).random(pred.shape).astype(np.float32))
    write_levels(d / "ink.zarr", {"2": ink.astype(np.uint8)}, chunks=(8, 16))
    write_levels(d / "sup.zarr", {"2": mask.astype(np.uint8)}, chunks=(8, 16))
    truth = _volume((29, 40, 37), 5, 40)
    truth[22:] = 0  # whole chunks of fill value: not written, read as absent
    p = _volume((29, 40, 37), 6, 45)
    p[truth > 0] = truth[truth > 0] + 3 * (truth[truth > 0] % 2)  # overlaps, splits and merges
    _zarr(d / "truth.zarr", truth, (5, 16, 16))
    tifffile.imwrite(d / "pred.tif", p)
    return d


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of one worker process on 127.0.0.1 (scaled to two by a test)."""
    import dask

    from segscore.engine.executor import LOCAL_CLUSTER_CONFIG

    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                      host="127.0.0.1", silence_logs=logging.ERROR) as c:
            yield c


def _workers(cluster, n):
    with distributed.Client(cluster.scheduler_address, timeout="5s") as c:
        c.wait_for_workers(n, timeout=60)
        return sorted(c.scheduler_info()["workers"])


def _auc_args(d):
    return ("auc", d / "map.tif", "--labels", d / "ink.zarr", "--mask", d / "sup.zarr", "--control", d / "rev.npy",
            "--bootstrap", 40, "--block-px", 9, "--json")


def _objects_args(d, truth=None):
    return ("objects", truth or d / "truth.zarr", d / "pred.tif", "--json")


def _json(out):
    result = json.loads(out)
    for key in ("seconds", "elapsed", "timing"):  # timing fields aside (none today)
        result.pop(key, None)
    return result


@pytest.fixture
def client_reads(monkeypatch):
    """Count the windows this process reads from any source."""
    from segscore.io import sources

    counts = {"n": 0}
    for cls in (sources.ArraySource, sources.RawFileSource, sources.ZarrSource):
        def counted(self, window, _read=cls.read):
            counts["n"] += 1
            return _read(self, window)

        monkeypatch.setattr(cls, "read", counted)
    return counts


def test_auc_and_objects_on_one_then_two_workers_match_one_process(files, cluster, cli, client_reads):
    address = cluster.scheduler_address
    want = {}
    for name, args in (("auc", _auc_args(files)), ("objects", _objects_args(files))):
        code, out, err = cli(*args, "--tile-rows", 11)
        assert code == 0, err
        want[name] = _json(out)
    assert client_reads["n"] > 0  # the count sees one-process reads
    assert any("chunks absent" in w for w in want["objects"]["warnings"])  # reported from the reads
    _workers(cluster, 1)
    for n_workers, tiles in ((1, (7, 1)), (2, (5, 3))):
        if n_workers == 2:
            cluster.scale(2)
            assert len(_workers(cluster, 2)) == 2
        for tile in tiles:
            client_reads["n"] = 0
            for name, args in (("auc", _auc_args(files)), ("objects", _objects_args(files))):
                code, out, err = cli(*args, "--tile-rows", tile, "--scheduler", address)
                assert code == 0, err
                assert _json(out) == want[name], (name, n_workers, tile)
            assert client_reads["n"] == 0, "the client read windows itself"


def test_the_api_takes_a_client_processes_and_scheduler(files, cluster):
    from segscore import api

    want = api.objects(files / "truth.zarr", files / "pred.tif", tile_rows=4)
    with distributed.Client(cluster.scheduler_address, timeout="5s") as client:
        got = api.objects(files / "truth.zarr", files / "pred.tif", tile_rows=4, executor=client)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    got = api.objects(files / "truth.zarr", files / "pred.tif", tile_rows=13, scheduler=cluster.scheduler_address)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match="give one"):
        api.objects(files / "truth.zarr", files / "pred.tif", processes=1, scheduler=cluster.scheduler_address)


def test_a_worker_killed_mid_job_changes_no_number(files, cluster, cli):
    from segscore import api

    want = _json(cli(*_objects_args(files), "--tile-rows", 1)[1])
    address = cluster.scheduler_address
    workers = _workers(cluster, 2)
    with distributed.Client(address, timeout="5s") as watcher:
        pids = watcher.run(os.getpid)
        done = {}

        def job():
            try:
                done["result"] = api.objects(files / "truth.zarr", files / "pred.tif", tile_rows=1, scheduler=address)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                done["error"] = exc

        runner = threading.Thread(target=job)
        runner.start()
        deadline = time.monotonic() + 60
        while not any(watcher.processing().values()) and time.monotonic() < deadline and runner.is_alive():
            time.sleep(0.005)
        assert runner.is_alive(), "the job ended before a worker could be killed"
        os.kill(pids[workers[0]], signal.SIGKILL)
        runner.join(120)
    assert "error" not in done, done.get("error")
    assert json.loads(json.dumps(done["result"])) == want
    _workers(cluster, 2)  # the nanny restarted it


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_an_http_zarr_scored_on_the_cluster(files, cluster, cli):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(files)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/truth.zarr"
        code, out, err = cli(*_objects_args(files, url), "--tile-rows", 6)
        assert code == 0, err
        want = _json(out)
        assert any(url in w and "chunks absent" in w for w in want["warnings"])
        code, out, err = cli(*_objects_args(files, url), "--tile-rows", 7, "--scheduler", cluster.scheduler_address)
        assert code == 0, err
        assert _json(out) == want
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_scheduler_is_one_line_exit_2(files, cli):
    started = time.monotonic()
    code, out, err = cli(*_objects_args(files), "--scheduler", "tcp://127.0.0.1:9")
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "--scheduler tcp://127.0.0.1:9: cannot connect" in err, err
    assert time.monotonic() - started < 30


def test_what_runs_in_one_process_refuses_a_cluster_in_one_line(files, cli):
    code, out, err = cli(*_objects_args(files), "--surface", "--processes", 2)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and "--surface" in err, err
    code, out, err = cli("fibers", files / "pred.tif", files, "--scheduler", "tcp://127.0.0.1:9")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and "one process" in err, err


def test_help_says_which_runs_can_go_to_a_cluster(cli):
    for command, says in (("fibers", "not for this command"), ("objects", "not with --surface"),
                          ("auc", "the same numbers as one process")):
        code, out, err = cli(command, "--help")
        text = " ".join(out.split())
        assert code == 0 and "--scheduler ADDRESS" in text and says in text, command


@pytest.mark.parametrize("command", ["auc", "objects"])
def test_a_task_ships_no_numba_dispatcher(files, monkeypatch, command):
    """A dispatcher pickled with a task is rebuilt on the worker, and its kernels loaded again by
    every job (about 2 s a worker): tasks import their kernels instead."""
    import cloudpickle

    from segscore import api
    from segscore.engine import executor

    shipped = []

    def capture(fn, windows, merge, client):
        shipped.append(cloudpickle.dumps(fn))
        return executor._threads(fn, windows, merge, 1, None)

    monkeypatch.setattr(executor, "_dask", capture)

    class Client:  # what check_options takes for a distributed.Client
        def compute(self):
            pass

        submit = compute

    if command == "auc":
        api.auc(files / "ink.zarr", files / "map.tif", mask=files / "sup.zarr", bootstrap=40, block_px=9,
                executor=Client())
    else:
        api.objects(files / "truth.zarr", files / "pred.tif", executor=Client())
    assert shipped and all(b"numba" not in blob for blob in shipped)
    assert all(len(blob) < 100_000 for blob in shipped)  # paths and plans, not voxels
