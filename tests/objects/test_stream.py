"""The objects scorecard reduced tile by tile equals the in-memory one, bit for bit."""

import json

import numpy as np
import pytest

from segscore.objects.metrics import score_segmentation, stream_pair


def blobs(shape, n, seed, *, big_ids=False):
    """A label image of ``n`` random boxes (later boxes overwrite earlier ones)."""
    rng = np.random.default_rng(seed)
    out = np.zeros(shape, np.uint64 if big_ids else np.uint32)
    ids = rng.choice(2 ** 62, n, replace=False) + 1 if big_ids else np.arange(1, n + 1)
    for i in range(n):
        lo = [int(rng.integers(0, s)) for s in shape]
        size = [int(rng.integers(1, max(2, s // 3))) for s in shape]
        out[tuple(slice(a, a + b) for a, b in zip(lo, size))] = ids[i]
    return out


def pair(shape, seed, **kw):
    t = blobs(shape, 12, seed, **kw)
    p = t.copy()
    rng = np.random.default_rng(seed + 1)
    p[rng.random(shape) < 0.05] = 0  # holes
    p = np.roll(p, 1, axis=-1)  # a one-pixel shift: boundaries disagree a little
    return t, p


CASES = [
    ("2D", (37, 41), {}),
    ("3D", (11, 17, 19), {}),
    ("huge ids", (23, 29), {"big_ids": True}),
]


@pytest.mark.parametrize("name, shape, kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("tile_rows", [1, 2, 7, 1000])
def test_tiles_change_nothing(name, shape, kw, tile_rows):
    t, p = pair(shape, seed=len(name), **kw)
    whole = score_segmentation(t, p, boundary_tolerances=(0, 1, 3))
    tiled = score_segmentation(t, p, boundary_tolerances=(0, 1, 3), tile_rows=tile_rows, executor="synchronous")
    assert tiled == whole


def test_empty_single_object_and_one_pixel_images():
    for t, p in [(np.zeros((9, 9), np.uint8), np.zeros((9, 9), np.uint8)),
                 (np.pad(np.ones((3, 3), np.uint16), 3), np.zeros((9, 9), np.uint16)),
                 (np.ones((1, 1), np.int32), np.ones((1, 1), np.int32)),
                 (np.pad(np.ones((2, 3, 3), np.uint8), 1), np.pad(np.ones((2, 3, 3), np.uint8), 1))]:
        whole = score_segmentation(t, p)
        for rows in (1, 2, 5):
            assert score_segmentation(t, p, tile_rows=rows) == whole
    assert score_segmentation(np.ones((1, 1), np.int32), np.ones((1, 1), np.int32))["f1"] == 1.0


def test_threads_and_dask_give_the_same_result():
    pytest.importorskip("dask")
    t, p = pair((13, 24, 20), seed=3)
    want = score_segmentation(t, p)
    assert score_segmentation(t, p, tile_rows=3, threads=2) == want
    assert score_segmentation(t, p, tile_rows=3, executor="dask") == want
    import dask.array as da

    assert score_segmentation(da.from_array(t, chunks=(4, 24, 20)), da.from_array(p, chunks=(5, 24, 20))) == want


def test_files_are_read_tile_by_tile(tmp_path):
    import tifffile
    import zarr

    t, p = pair((9, 30, 31), seed=5)
    want = score_segmentation(t, p)
    np.save(tmp_path / "t.npy", t)
    tifffile.imwrite(tmp_path / "p.tif", p)
    z = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    z.create_array("truth", data=t, chunks=(2, 30, 31))
    z.create_array("pred", data=p, chunks=(3, 16, 16))
    assert score_segmentation(tmp_path / "t.npy", tmp_path / "p.tif", tile_rows=2) == want
    got = score_segmentation(str(tmp_path / "g.zarr/truth"), str(tmp_path / "g.zarr/pred"))
    # zarr-python wrote no chunk equal to the fill value: the result says how many were absent
    assert got.pop("warnings") == [f"{tmp_path / 'g.zarr/pred'}: 2 of 12 chunks absent, read as the fill value 0"]
    assert want.pop("warnings") == [] and got == want
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError, match=r"is a zarr group, not an array; name one inside it.*keys: \['pred', 'truth'\]"):
        score_segmentation(str(tmp_path / "g.zarr"), tmp_path / "t.npy")


def test_the_command_takes_zarr_and_engine_options(tmp_path, cli):
    import zarr

    t, p = pair((6, 20, 22), seed=8)
    z = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    z.create_array("truth", data=t, chunks=(2, 20, 22))
    z.create_array("pred", data=p, chunks=(2, 20, 22))
    code, out, err = cli("objects", tmp_path / "g.zarr/truth", tmp_path / "g.zarr/pred", "--tile-rows", "1",
                         "--threads", "2", "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(score_segmentation(t, p)))
    code, out, err = cli("objects", tmp_path / "g.zarr/truth", tmp_path / "g.zarr/pred", "--tile-rows", "0")
    assert code == 2 and "--tile-rows" in err and "must be at least 1" in err


def test_boundary_counts_are_exact_in_every_tile():
    t, p = pair((40, 33), seed=11)
    _, whole = stream_pair(t, p, boundary_tolerances=(1, 2, 4))
    for rows in (1, 3, 5, 13):
        _, tiled = stream_pair(t, p, boundary_tolerances=(1, 2, 4), tile_rows=rows, contingency=False)
        assert tiled == whole


def test_bad_engine_options_are_refused():
    from segscore.errors import ScoreError

    t, p = pair((8, 8), seed=1)
    for kw, msg in [({"tile_rows": 0}, "tile_rows 0"), ({"tile_rows": -3}, "tile_rows -3"),
                    ({"threads": 0}, "threads 0"), ({"executor": "bogus"}, "executor 'bogus'")]:
        with pytest.raises(ScoreError, match=msg):
            score_segmentation(t, p, **kw)


def test_a_tile_owning_marks_of_one_image_only_still_measures_them():
    # the prediction's boundary rows lie 2 rows from the truth's: with 1-row tiles each tile
    # owns marks of one image only, and the other's are in its halo
    t = np.zeros((12, 10), np.uint8)
    p = np.zeros_like(t)
    t[2:5, 2:8] = 1
    p[4:9, 2:8] = 3
    _, whole = stream_pair(t, p, boundary_tolerances=(1, 2, 3))
    for rows in (1, 2, 3):
        assert stream_pair(t, p, boundary_tolerances=(1, 2, 3), tile_rows=rows)[1] == whole
    assert whole["pred_matched"][-1] > 0
