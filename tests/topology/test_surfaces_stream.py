"""``surfaces`` streamed window by window on a cluster (segscore.topology.stream, issue 37): the
JSON is the whole-volume run's for awkward windows (one slice, a prime, fewer slices than the
halo, 3D boxes), tolerances, spacings, ignore label and mask, 2D input and empty volumes; the halo
ceil(tau / s) + 1 holds at the tolerance's edge and one voxel less does not; the per-code counting
kernel against a NumPy oracle."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from segscore.topology import score as S
from segscore.topology import stream
from segscore.topology.surface import corner_grid, surfel_histograms, tolerance_offsets

SHAPE = (20, 23, 17)


def _field(seed, shape=SHAPE):
    f = np.random.default_rng(seed).random(shape)
    for axis in range(len(shape)):
        f = (f + np.roll(f, 1, axis) + np.roll(f, -1, axis)) / 3
    return f


def _blobs(seed, share, shape=SHAPE):
    f = _field(seed, shape)
    return f > np.quantile(f, 1 - share)


def _sheets(seed):
    """Two wavy sheets two or three voxels thick, with holes."""
    rng = np.random.default_rng(seed)
    z = np.arange(SHAPE[0])[:, None, None]
    y, x = np.meshgrid(np.arange(SHAPE[1]), np.arange(SHAPE[2]), indexing="ij")
    out = np.zeros(SHAPE, bool)
    for c in (5 + seed % 3, 13):
        h = c + 1.5 * np.sin(y / 3.0 + seed) + np.cos(x / 4.0)
        out |= (np.abs(z - h[None]) <= 1.2)
    out &= rng.random(SHAPE) > 0.04
    return out


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import tifffile

    d = tmp_path_factory.mktemp("stream")
    truth = _blobs(1, 0.4).astype(np.uint8)
    truth[:, :3] = np.where(truth[:, :3] > 0, 2, 0)  # ignored voxels
    np.save(d / "blobs_t.npy", truth)
    np.save(d / "blobs_p.npy", (_blobs(1, 0.37) ^ (np.random.default_rng(2).random(SHAPE) < 0.03)).astype(np.uint8))
    np.save(d / "sheets_t.npy", _sheets(0).astype(np.uint8))
    tifffile.imwrite(d / "sheets_p.tif", _sheets(1).astype(np.uint8))
    mask = np.zeros(SHAPE, np.float32)
    mask[4:9, 2:20, 1:15] = 1
    mask[15, 5, 5] = np.nan  # ignored too, as topometrics reads a float mask (astype(bool))
    np.save(d / "mask.npy", mask)
    np.save(d / "zeros.npy", np.zeros(SHAPE, np.uint8))
    prob = _field(5).astype(np.float32)
    np.save(d / "prob.npy", prob)
    np.save(d / "t2d.npy", truth[9])
    np.save(d / "p2d.npy", _blobs(7, 0.4)[9].astype(np.uint8))
    return d


def _same(d, t, p, client, tile_rows=None, **kw):
    """The streamed result (on ``client``) and the whole-volume one, as JSON text."""
    whole = S.surfaces(np.load(d / t) if t.endswith(".npy") else d / t,
                       np.load(d / p) if p.endswith(".npy") else _read(d / p),
                       **{k: (np.load(d / v) if k == "ignore_mask" else v) for k, v in kw.items()})
    kw = {k: (d / v if k == "ignore_mask" else v) for k, v in kw.items()}
    streamed = S.surfaces(d / t, d / p, executor=client, tile_rows=tile_rows, **kw)
    return json.dumps(streamed), json.dumps(whole)


def _read(path):
    import tifffile

    return tifffile.imread(path)


@pytest.mark.parametrize("pair", [("blobs_t.npy", "blobs_p.npy"), ("sheets_t.npy", "sheets_p.tif")])
@pytest.mark.parametrize("tile_rows", [1, 2, 7, None])
@pytest.mark.parametrize("tolerance,spacing",
                         [(0.0, None), (2.0, None), (3.7, (2.0, 0.7, 1.3)), (1.5, (1.0, 1.0, 0.5))])
def test_streamed_json_is_the_whole_volume_json(files, client, pair, tile_rows, tolerance, spacing):
    got, want = _same(files, *pair, client, tile_rows=tile_rows, tolerance=tolerance, spacing=spacing,
                      topo_tiles=(2, 1, 2))
    assert got == want
    r = json.loads(want)
    assert 0 < r["surface_dice"] <= 1 and 0 < r["voi_total"] and r["foreground_pred"] > 0
    assert r["surface_dice"] < 1 or tolerance > 2  # something to miss within the smaller tolerances


@pytest.mark.parametrize("tile_rows", [1, 3, 11])
def test_ignore_mask_threshold_connectivity_and_transform(files, client, tile_rows):
    got, want = _same(files, "blobs_t.npy", "blobs_p.npy", client, tile_rows=tile_rows, ignore_mask="mask.npy",
                      voi_connectivity=6, voi_transform="exp")
    assert got == want and json.loads(want)["ignored_voxels"] == 5 * 18 * 14 + 1
    got, want = _same(files, "sheets_t.npy", "prob.npy", client, tile_rows=tile_rows, fg_threshold=0.52,
                      voi_connectivity=18, ignore_label=None)
    assert got == want


def test_2d_empty_volumes_and_warnings(files, client):
    for t, p in (("t2d.npy", "p2d.npy"), ("zeros.npy", "blobs_p.npy"), ("blobs_t.npy", "zeros.npy"),
                 ("zeros.npy", "zeros.npy")):
        for rows in (1, None):
            got, want = _same(files, t, p, client, tile_rows=rows, topo_tiles=(1, 2, 3))
            assert got == want, (t, p, rows)
    r = json.loads(want)
    assert r["surface_dice"] == 1.0 and r["voi_score"] == 1.0
    assert json.loads(_same(files, "zeros.npy", "blobs_p.npy", client)[0])["surface_dice"] == 0.0
    # the prediction holds the ignore value and the labels hold none: the swapped-roles warning
    got, want = _same(files, "sheets_t.npy", "blobs_t.npy", client, tile_rows=4)
    assert got == want and "are truth and pred swapped?" in got


def test_a_probability_map_without_threshold_is_refused_with_the_same_line(files, client):
    with pytest.raises(S.SurfacesInputError) as whole:
        S.surfaces(np.load(files / "blobs_t.npy"), np.load(files / "prob.npy"))
    for rows in (1, 6):
        with pytest.raises(S.SurfacesInputError) as streamed:
            S.surfaces(files / "blobs_t.npy", files / "prob.npy", executor=client, tile_rows=rows)
        assert str(streamed.value) == str(whole.value)


def test_3d_boxes_as_windows(files):
    """Windows that cut every axis (5 x 7 x 4 voxels, the last ones shorter): the same JSON."""
    cuts = [list(range(0, n, s)) + [n] for n, s in zip(SHAPE, (5, 7, 4))]
    windows = [(slice(a, b), slice(c, e), slice(f, g)) for a, b in zip(cuts[0], cuts[0][1:])
               for c, e in zip(cuts[1], cuts[1][1:]) for f, g in zip(cuts[2], cuts[2][1:])]
    want = S.surfaces(np.load(files / "blobs_t.npy"), np.load(files / "blobs_p.npy"), tolerance=2.5,
                      spacing=(1.0, 0.8, 1.2))
    got = S._score_streamed(files / "blobs_t.npy", files / "blobs_p.npy", None, ignore_label=2, fg_threshold=None,
                            spacing=(1.0, 0.8, 1.2), voi_connectivity=26, topo_tiles=(2, 2, 2), tolerance=2.5,
                            voi_alpha=0.3, voi_transform="one_over_one_plus", weights=S.DEFAULT_WEIGHTS,
                            topo_weights=S.DEFAULT_TOPO_WEIGHTS, dims=(0, 1, 2), threads=2, executor="synchronous",
                            windows=windows)
    assert json.dumps(got) == json.dumps(want)


# ---- the halo at the tolerance's edge


def _slabs(gap, shape=(24, 16, 15)):
    """Truth: the slices below 10; prediction: the slices below 10 + gap (surfaces ``gap`` apart
    along axis 0, crossing window faces)."""
    t = np.zeros(shape, np.uint8)
    t[:10] = 1
    p = np.zeros(shape, np.uint8)
    p[:10 + gap] = 1
    return t, p


def _counts(tmp_path, t, p, tolerance, spacing, rows, halo=None):
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    with stream.opened(tmp_path / "t.npy", tmp_path / "p.npy", None) as (ts, ps, _):
        inputs = stream.Inputs(ts, ps, None, None, None, False, t.shape)
        c = stream.streamed_counts(inputs, stream.bands3(t.shape, rows), tolerance=tolerance, spacing=spacing,
                                   executor="synchronous", halo=halo)
    return c["hist"]


@pytest.mark.parametrize("rows", [1, 2, 3, 10, 11, 13])
@pytest.mark.parametrize("gap,spacing", [(3, (1.0, 1.0, 1.0)), (3, (1.5, 1.0, 1.0)), (4, (0.75, 2.0, 1.0))])
def test_a_surface_at_exactly_tau_across_a_window_face(tmp_path, rows, gap, spacing):
    t, p = _slabs(gap)
    tau = gap * spacing[0]  # exactly the distance of the two surfaces along axis 0
    g_codes, p_codes = corner_grid(t.astype(bool)), corner_grid(p.astype(bool))
    for tolerance in (tau, tau + 1e-9, tau - 1e-9):
        whole = surfel_histograms(g_codes, p_codes, tolerance=tolerance, spacing=spacing)
        assert np.array_equal(_counts(tmp_path, t, p, tolerance, spacing, rows), whole), (tolerance, rows)
    at = surfel_histograms(g_codes, p_codes, tolerance=tau, spacing=spacing)
    below = surfel_histograms(g_codes, p_codes, tolerance=tau - 1e-9, spacing=spacing)
    # at tau, the truth's sheet (slice 10) finds the prediction's (slice 10 + gap); just below it does not
    assert at[1].sum() > below[1].sum() and at[3].sum() > below[3].sum()
    assert stream.halo_of(tau, spacing)[0] == gap + 1 > rows or rows >= gap + 1  # windows thinner than the halo too


def test_one_voxel_less_of_halo_is_not_enough(tmp_path):
    """floor(tau / s) + 1 voxels are needed (h = ceil(tau / s) + 1 gives them): with floor(tau / s),
    windows of one slice count a surface the cut made up."""
    t, p = _slabs(5)
    whole = surfel_histograms(corner_grid(t.astype(bool)), corner_grid(p.astype(bool)), tolerance=3.0)
    assert np.array_equal(_counts(tmp_path, t, p, 3.0, (1.0, 1.0, 1.0), 1, halo=(4, 4, 4)), whole)
    assert not np.array_equal(_counts(tmp_path, t, p, 3.0, (1.0, 1.0, 1.0), 1, halo=(3, 3, 3)), whole)
    assert stream.halo_of(3.0, (1.0, 1.0, 1.0)) == (4, 4, 4) and stream.halo_of(2.5, (0.5, 1, 2)) == (6, 4, 3)


# ---- the kernel


def _oracle(codes_a, codes_b, offsets, lo, hi):
    total = np.zeros(256, np.int64)
    within = np.zeros(256, np.int64)
    surf_b = (codes_b != 0) & (codes_b != 255)
    for a in range(lo[0], hi[0]):
        for b in range(lo[1], hi[1]):
            for c in range(lo[2], hi[2]):
                code = codes_a[a, b, c]
                if code in (0, 255):
                    continue
                total[code] += 1
                q = offsets + np.array([a, b, c])
                ok = np.all((q >= 0) & (q < np.array(codes_b.shape)), axis=1)
                q = q[ok]
                within[code] += bool(surf_b[q[:, 0], q[:, 1], q[:, 2]].any())
    return total, within


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_surfel_counts_matches_a_numpy_oracle(seed):
    from segscore.kernels.surfels import surfel_counts

    rng = np.random.default_rng(seed)
    a = corner_grid(rng.random((9, 8, 7)) > 0.93)
    b = corner_grid(rng.random((9, 8, 7)) > 0.93)
    offsets = tolerance_offsets(1.6, (1.0, 0.9, 1.3))
    lo, hi = (1, 0, 2), (9, 9, 6)
    total = np.zeros(256, np.int64)
    within = np.zeros(256, np.int64)
    surfel_counts(a, b, offsets, *lo, *hi, total, within)
    want_t, want_w = _oracle(a, b, offsets, lo, hi)
    assert np.array_equal(total, want_t) and np.array_equal(within, want_w)
    assert 0 < within.sum() < total.sum()


def test_sources_on_disk_are_streamed_and_left_open(files, client, monkeypatch):
    """A zarr or file source given from Python streams like its path (the workers reopen it)."""
    import zarr

    from segscore.io.readers import open_labels

    z = zarr.create_array(str(files / "p.zarr"), shape=SHAPE, dtype=np.uint8, chunks=(6, 8, 8), zarr_format=3)
    z[...] = np.load(files / "blobs_p.npy")
    want = S.surfaces(np.load(files / "blobs_t.npy"), np.load(files / "blobs_p.npy"))
    seen = []
    monkeypatch.setattr(S, "_as_volume", lambda *a: seen.append(a) or pytest.fail("read whole"))
    with open_labels(files / "blobs_t.npy") as ts, open_labels(files / "p.zarr") as ps:
        got = S.surfaces(ts, ps, executor=client, tile_rows=3)
        assert ts.read((slice(0, 1), slice(0, 1), slice(0, 1))).shape == (1, 1, 1)  # still open
    assert json.dumps(got) == json.dumps(want) and not seen


@pytest.mark.parametrize("kw", [dict(tile_rows=1), dict(tile_rows=6), dict(tile_shape=(5, 7, 4)),
                                dict(tile_shape=(20, 1, 17)), dict(tile_shape=(3, 23, 2))])
def test_files_with_tile_rows_or_shape_stream_on_threads_without_reading_the_volumes(files, kw, monkeypatch,
                                                                                      capsys):
    """``--tile-rows`` or ``--tile-shape`` (boxes cutting every axis: a slice too large for one
    worker) on files and no cluster: the streamed path on this process's threads (a pair larger
    than memory is never read whole), the same JSON as the whole-volume run, from the API and the
    command line."""
    from segscore.api import surfaces
    from segscore.cli.main import main

    want = json.dumps(S.surfaces(np.load(files / "blobs_t.npy"), np.load(files / "blobs_p.npy"),
                                 topo_tiles=(2, 1, 2)))

    def whole(*a, **k):
        raise AssertionError("the whole volume was read")

    monkeypatch.setattr(S, "_as_volume", whole)
    got = surfaces(files / "blobs_t.npy", files / "blobs_p.npy", topo_tiles=(2, 1, 2), **kw)
    assert json.dumps({k: got[k] for k in json.loads(want)}) == want
    capsys.readouterr()
    (key, value), = kw.items()
    code = main(["surfaces", str(files / "blobs_p.npy"), str(files / "blobs_t.npy"), "--topo-tiles", "2", "1", "2",
                 "--" + key.replace("_", "-"), *map(str, np.atleast_1d(value)), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 0 and json.dumps({k: got[k] for k in json.loads(want)}) == want


@pytest.mark.parametrize("kw,said", [
    (dict(tile_shape=(5, 7)), "tile_shape 5 7: give 3 whole numbers >= 1, one per axis of the 3D inputs"),
    (dict(tile_shape=(5, 0, 4)), "tile_shape 5 0 4: give 3 whole numbers"),
    (dict(tile_shape=(5, 7, 4), tile_rows=3), "tile_rows 3 and tile_shape 5 7 4: give one"),
])
def test_a_bad_tile_shape_is_refused_in_one_line(files, kw, said):
    with pytest.raises(S.SurfacesInputError) as e:
        S.surfaces(files / "blobs_t.npy", files / "blobs_p.npy", **kw)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_window_budget_names_rows_or_boxes_that_fit():
    from segscore.topology import stream

    shape3 = (24, 30, 28)  # 840 voxels a slice
    stream.check_window_budget(stream.bands3(shape3, 3), shape3, (80_640, 10**6))  # 3 slices x 840 x 32 B: fits
    stream.check_window_budget(stream.bands3(shape3), shape3, None)  # no limit
    with pytest.raises(S.SurfacesInputError) as e:
        stream.check_window_budget(stream.bands3(shape3, 4), shape3, (80_640, 10**6))
    assert "windows of 3360 voxels" in str(e.value) and "--tile-rows 3 (tile_rows=3) or fewer" in str(e.value)
    with pytest.raises(S.SurfacesInputError) as e:  # not one slice fits: boxes do
        stream.check_window_budget(stream.bands3(shape3, 1), shape3, (10_000, 10**6))
    assert "--tile-shape 6 6 6 (windows as boxes)" in str(e.value)
    stream.check_window_budget(stream.boxes3(shape3, (6, 6, 6), 3), shape3, (10_000, 10**6))  # the fix fits


def test_streamed_on_threads_matches_big_tiles_one_at_a_time(files, monkeypatch):
    """Tiles above MAX_PARALLEL_TILE_VOXELS are matched one at a time on the streamed threads path
    too (as on the whole-volume path); the JSON does not change."""
    from segscore.engine import executor as E

    want = json.dumps(S.surfaces(files / "blobs_t.npy", files / "blobs_p.npy", tile_rows=3, topo_tiles=(2, 1, 2)))
    seen = []
    real = E.reduce_windows

    def spy(fn, windows, merge, **kw):
        seen.append(kw.get("workers"))
        return real(fn, windows, merge, **kw)

    monkeypatch.setattr(E, "reduce_windows", spy)
    monkeypatch.setattr(S, "MAX_PARALLEL_TILE_VOXELS", 10)
    got = json.dumps(S.surfaces(files / "blobs_t.npy", files / "blobs_p.npy", tile_rows=3, topo_tiles=(2, 1, 2)))
    assert got == want and 1 in seen


def test_a_volume_of_no_slices_streams_as_it_scores_whole(tmp_path):
    np.save(tmp_path / "g.npy", np.zeros((0, 4, 4), np.uint8))
    np.save(tmp_path / "p.npy", np.zeros((0, 4, 4), np.uint8))
    whole = S.surfaces(np.zeros((0, 4, 4), np.uint8), np.zeros((0, 4, 4), np.uint8))
    streamed = S.surfaces(tmp_path / "g.npy", tmp_path / "p.npy", tile_rows=1)
    assert json.dumps(streamed) == json.dumps(whole) and streamed["surface_dice"] == 1.0


@pytest.mark.parametrize("flag", [["--tile-rows", "2"], ["--tile-shape", "2", "2", "2"]])
def test_folder_mode_refuses_tile_rows(tmp_path, flag):
    from segscore.cli.main import main

    for d in ("gt", "pred"):
        (tmp_path / d).mkdir()
        np.save(tmp_path / d / "a.npy", np.zeros((3, 4, 4), np.uint8))
    code = main(["surfaces", "--gt-dir", str(tmp_path / "gt"), "--pred-dir", str(tmp_path / "pred"), "--out",
                 str(tmp_path / "o"), *flag])
    assert code == 2 and not (tmp_path / "o").exists()
