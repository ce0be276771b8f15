"""One `surfaces` job on a dask.distributed cluster (issue 37): TopoScore's tiles are one task each,
read by the workers from the files; the JSON is the one-process JSON for any tiling on 1 and 2
workers; a tile over the workers' memory limit is refused with the numbers; an unreachable
scheduler is one line, exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from tests.cluster.test_one_job import _json, _workers, _zarr, cluster  # noqa: E402,F401 - the module's cluster

pytestmark = pytest.mark.cluster

SHAPE = (24, 30, 28)


def _blobs(seed, share):
    """A binary volume with components, tunnels and cavities: a smoothed random field, thresholded."""
    rng = np.random.default_rng(seed)
    f = rng.random(SHAPE)
    for axis in range(3):
        f = (f + np.roll(f, 1, axis) + np.roll(f, -1, axis)) / 3
    return f > np.quantile(f, 1 - share)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Labels (npy: 0/1 with an ignore band of 2), a prediction (zarr, 7 x 11 x 9 chunks) and an
    ignore mask (tif)."""
    import tifffile

    d = tmp_path_factory.mktemp("surfaces_cluster")
    truth = _blobs(1, 0.4).astype(np.uint8)
    truth[:, :3, :] = np.where(truth[:, :3, :] > 0, 2, 0)  # ignored voxels
    pred = _blobs(1, 0.38) ^ (np.random.default_rng(2).random(SHAPE) < 0.03)
    np.save(d / "truth.npy", truth)
    _zarr(d / "pred.zarr", pred.astype(np.uint8), (7, 11, 9))
    mask = np.zeros(SHAPE, np.uint8)
    mask[5:9, 4:20, 2:26] = 1
    tifffile.imwrite(d / "mask.tif", mask)
    return d


def _args(d, tiles, *extra):
    return ("surfaces", d / "pred.zarr", d / "truth.npy", "--topo-tiles", *tiles, "--json", *extra)


@pytest.fixture
def reads(monkeypatch):
    """The windows this process reads: ``reads["tiles"]`` those that are not a whole volume (a
    tile's window), ``reads["all"]`` every one."""
    from segscore.io import sources

    seen = {"tiles": [], "all": []}
    for cls in (sources.ArraySource, sources.RawFileSource, sources.ZarrSource):
        def counted(self, window, _read=cls.read):
            seen["all"].append(window)
            if tuple((w.start, w.stop) for w in window) != tuple((0, n) for n in self.shape):
                seen["tiles"].append(window)
            return _read(self, window)

        monkeypatch.setattr(cls, "read", counted)
    return seen


def test_surfaces_on_one_then_two_workers_match_one_process(files, cluster, cli, reads):
    address = cluster.scheduler_address
    cases = [((1, 1, 1), ()), ((2, 2, 2), ()), ((3, 2, 1), ()), ((2, 2, 2), ("--ignore-mask", files / "mask.tif"))]
    want = {}
    for tiles, extra in cases:
        code, out, err = cli(*_args(files, tiles, *extra))
        assert code == 0, err
        want[tiles, extra] = _json(out)
    assert want[(2, 2, 2), ()]["tiles"] == 8 and want[(3, 2, 1), ()]["tiles"] == 6
    assert want[(1, 1, 1), ()]["topology"] != want[(2, 2, 2), ()]["topology"]  # the tiling is part of the metric
    assert want[(2, 2, 2), ()] != want[(2, 2, 2), ("--ignore-mask", files / "mask.tif")]
    assert any(want[k]["topology"]["dim1"]["gt"] > 0 for k in want)  # tunnels to match
    from segscore.io.sources import reopen_count

    _workers(cluster, 1)
    for n_workers in (1, 2):
        if n_workers == 2:
            cluster.scale(2)
            assert len(_workers(cluster, 2)) == 2
        for tiles, extra in cases:
            reads["tiles"].clear()
            reads["all"].clear()
            with distributed.Client(address, timeout="5s") as watcher:
                before = sum(watcher.run(reopen_count).values())
                code, out, err = cli(*_args(files, tiles, *extra), "--scheduler", address)
                opened = sum(watcher.run(reopen_count).values()) - before
            assert code == 0, err
            assert _json(out) == want[tiles, extra], (n_workers, tiles, extra)
            assert reads["all"] == [], "the client read voxels itself"
            assert opened >= 2 + bool(extra), "the workers did not open the files by path"
    for rows in (1, 5):  # engine windows of one slice and of a prime number of slices: the same JSON
        reads["all"].clear()
        code, out, err = cli(*_args(files, (2, 2, 2)), "--tile-rows", rows, "--scheduler", address)
        assert code == 0, err
        assert _json(out) == want[(2, 2, 2), ()], rows
        assert reads["all"] == [], "the client read voxels itself"


def test_a_tile_task_ships_paths_not_voxels_nor_a_dispatcher(files, monkeypatch):
    import cloudpickle

    from segscore import api
    from segscore.engine import executor

    shipped = []

    def capture(fn, windows, merge, client):
        shipped.append(cloudpickle.dumps((fn, windows, merge)))
        return executor._threads(fn, windows, merge, 1, None)

    monkeypatch.setattr(executor, "_dask", capture)

    class Client:  # what the engine takes for a distributed.Client
        def scheduler_info(self):
            return {"workers": {"w": {"memory_limit": 10**9}}}

        def compute(self, *args, **kwargs):  # never called: _dask is replaced
            raise AssertionError

        submit = compute

    got = api.surfaces(files / "truth.npy", files / "pred.zarr", executor=Client())
    assert json.dumps(got, sort_keys=True) == json.dumps(api.surfaces(files / "truth.npy", files / "pred.zarr"),
                                                         sort_keys=True)
    # the counts pass, the components of each volume (blockwise_labels' own tasks, whose closure
    # holds a kernel), the contingency pass and the 8 tiles
    own = [s for s in shipped if b"blockwise_labels.<locals>" not in s]
    assert len(shipped) == 5 and len(own) == 3 and not any(b"numba" in s for s in own)
    assert all(len(s) < 20_000 for s in shipped), [len(s) for s in shipped]  # the volumes: 2 x 20,160 voxels


def test_the_api_takes_a_client_with_arrays_and_a_prepared_truth(files, cluster):
    from segscore import api

    truth = np.load(files / "truth.npy")
    pred = truth == 1
    pred[10] = ~pred[10]  # a slab flipped: a different topology
    want = api.surfaces(truth, pred, topo_tiles=(3, 2, 1))
    with distributed.Client(cluster.scheduler_address, timeout="5s") as client:
        got = api.surfaces(truth, pred, topo_tiles=(3, 2, 1), executor=client)  # tiles shipped with the tasks
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
        prepared = api.prepare_surfaces(truth, topo_tiles=(3, 2, 1))
        got = api.surfaces(prepared, pred, topo_tiles=(3, 2, 1), executor=client)
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    got = api.surfaces(files / "truth.npy", files / "pred.zarr", scheduler=cluster.scheduler_address)
    assert json.dumps(got, sort_keys=True) == json.dumps(api.surfaces(files / "truth.npy", files / "pred.zarr"),
                                                         sort_keys=True)


def test_a_tile_over_the_workers_memory_limit_is_refused_with_the_numbers(files, cluster, cli, monkeypatch, reads):
    from segscore.engine.executor import WORKER_BASELINE_BYTES
    from segscore.topology import score

    with distributed.Client(cluster.scheduler_address, timeout="5s") as client:
        budget, limit = score.worker_budget(client)
    assert limit > 10**8  # the LocalCluster's share of this machine
    assert budget == int(0.8 * limit) - WORKER_BASELINE_BYTES  # up to the pause threshold, less the worker
    # a 12 x 15 x 14 octant of 2,520 voxels needs 120 x 2,520 = 302,400 bytes
    monkeypatch.setattr(score, "worker_budget", lambda client: (100_000, 10**6))
    code, out, err = cli(*_args(files, (2, 2, 2)), "--scheduler", cluster.scheduler_address)
    assert (code, out) == (2, "")
    assert reads["all"] == [], "refused after reading voxels"
    assert len(err.strip().splitlines()) == 1, err
    for said in ("2520 voxels", "302400 bytes", "120 B/voxel", "budget of 100000 bytes", "memory limit of 1000000",
                 "more --topo-tiles"):
        assert said in err, (said, err)
    fix = [int(t) for t in err.split("(e.g. ")[1].split(")")[0].split()]
    score.check_tile_budget(SHAPE, fix, (100_000, 10**6))  # the suggested tiling fits
    with pytest.raises(score.SurfacesInputError):
        score.check_tile_budget(SHAPE, (2, 2, 2), (302_399, 10**6))
    score.check_tile_budget(SHAPE, (2, 2, 2), (302_400, 10**6))
    score.check_tile_budget(SHAPE, (1, 1, 1), None)  # no limit: nothing refused


def test_streamed_windows_over_the_budget_are_refused_and_the_fix_runs(files, cluster, cli, monkeypatch, reads):
    """The tiles fit (6 x 8 x 7 = 336 voxels, 40,320 bytes) but the one default window of the
    whole 24 x 30 x 28 volume (20,160 voxels x 32 B) does not: refused before a voxel is read,
    naming the --tile-rows that fit (100,000 // (32 x 840) = 3), which then score as one process."""
    from segscore.topology import score

    monkeypatch.setattr(score, "worker_budget", lambda client: (100_000, 10**6))
    code, out, err = cli(*_args(files, (4, 4, 4)), "--scheduler", cluster.scheduler_address)
    assert (code, out) == (2, "")
    assert reads["all"] == [], "refused after reading voxels"
    assert len(err.strip().splitlines()) == 1, err
    for said in ("windows of 20160 voxels", "645120 bytes", "32 B/voxel", "budget of 100000 bytes", "--tile-rows 3"):
        assert said in err, (said, err)
    code, out, _ = cli(*_args(files, (4, 4, 4)), "--scheduler", cluster.scheduler_address, "--tile-rows", "3")
    assert code == 0
    code1, one, _ = cli(*_args(files, (4, 4, 4)))
    assert code1 == 0 and _json(out) == _json(one)


def test_an_unreachable_scheduler_and_folder_mode_are_one_line_exit_2(files, cli, tmp_path):
    code, out, err = cli(*_args(files, (2, 2, 2)), "--scheduler", "tcp://127.0.0.1:9")
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "--scheduler tcp://127.0.0.1:9: cannot connect" in err, err
    code, out, err = cli("surfaces", "--gt-dir", files, "--pred-dir", files, "--out", tmp_path, "--processes", 2)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and "folder mode" in err, err


def test_help_says_what_runs_where(cli):
    code, out, err = cli("surfaces", "--help")
    text = " ".join(out.split())
    assert code == 0 and "--scheduler ADDRESS" in text and "--processes N" in text
    assert "every term is distributed and the client reads no voxel" in text and "--tile-rows" in text
    assert "halo ceil(tolerance/spacing)+1" in text and "surface Dice and VOI are computed in the client" in text


def test_a_2d_pair_of_files_on_the_cluster(files, cluster, tmp_path):
    """A 2D image is one slice: a tile's window on the file drops the slice axis."""
    from segscore import api

    truth = _blobs(3, 0.45)[7].astype(np.uint8)
    truth[:4] = 2
    np.save(tmp_path / "t.npy", truth)
    np.save(tmp_path / "p.npy", _blobs(4, 0.45)[7].astype(np.uint8))
    want = api.surfaces(tmp_path / "t.npy", tmp_path / "p.npy", topo_tiles=(1, 2, 3))
    assert want["tiles"] == 6 and want["ignored_voxels"] > 0
    got = api.surfaces(tmp_path / "t.npy", tmp_path / "p.npy", topo_tiles=(1, 2, 3),
                       scheduler=cluster.scheduler_address)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_an_http_zarr_prediction_is_streamed(files, cluster, cli, reads):
    """The prediction read over http by the workers: the JSON of the local files, no voxel here."""
    import functools
    import http.server
    import threading

    from tests.cluster.test_one_job import _Quiet

    code, out, err = cli(*_args(files, (2, 2, 2)), "--tolerance", "1.5")
    assert code == 0, err
    want = _json(out)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(files)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/pred.zarr"
        reads["all"].clear()
        code, out, err = cli("surfaces", url, files / "truth.npy", "--topo-tiles", 2, 2, 2, "--json",
                             "--tolerance", "1.5", "--tile-rows", 4, "--scheduler", cluster.scheduler_address)
        assert code == 0, err
        assert _json(out) == want and reads["all"] == []
    finally:
        server.shutdown()
        server.server_close()
