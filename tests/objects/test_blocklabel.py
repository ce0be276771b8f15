"""Components built from blocks joined on faces (objects.blocklabel) equal the whole-volume labels
(metrics.masks.components, itself pinned to scipy.ndimage.label) exactly: 2D and 3D, every
connectivity, awkward block grids (1, prime, smaller than the halo), a component snaking through
many blocks, any thread count, and a distributed LocalCluster; and the objects scorecard of
``--components`` is the same JSON whether its inputs are labelled whole or by blocks."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import ndimage

from segscore import api
from segscore.errors import ScoreError
from segscore.io.computed import ComputedSource
from segscore.io.sources import ArraySource, as_source
from segscore.metrics.masks import components
from segscore.objects.blocklabel import blockwise_labels, wants_blockwise

CONN = {4: 2, 8: 2, 6: 3, 18: 3, 26: 3}  # connectivity -> ndim


def _grid(shape, block):
    return [tuple(slice(s, min(s + b, n)) for s, b, n in zip(start, block, shape))
            for start in itertools.product(*(range(0, n, b) for n, b in zip(shape, block)))]


def _mask(rng, shape, classes):
    f = ndimage.uniform_filter(rng.random(shape), 2)
    cut = np.quantile(f, np.linspace(0.45, 1, classes + 1)[:-1])
    return np.digitize(f, cut).astype(np.uint8)


def _check(mask, connectivity, block, **kw):
    want = components(mask, connectivity)
    got = blockwise_labels(ArraySource(mask), connectivity=connectivity, windows=_grid(mask.shape, block), **kw)
    labels = got.read_all()
    assert labels.dtype == want.dtype
    np.testing.assert_array_equal(labels, want)
    assert got.count == int(want.max(initial=0))
    return got


@pytest.mark.parametrize("connectivity", sorted(CONN))
@pytest.mark.parametrize("seed", range(4))
def test_blockwise_equals_whole_volume_on_awkward_grids(connectivity, seed):
    rng = np.random.default_rng(100 * connectivity + seed)
    ndim = CONN[connectivity]
    shape = (23, 29) if ndim == 2 else (7, 8, 9)
    mask = _mask(rng, shape, 1 + seed % 3)  # binary and semantic (touching classes stay apart)
    for block in [(1,) * ndim, (3,) * ndim, (2, 7, 5)[:ndim], (7, 1, 3)[:ndim], shape]:
        # halo 4: blocks of 1, 2 and 3 voxels are smaller than the rim a reader keeps
        _check(mask, connectivity, block, halo=4, threads=1 + seed % 3)


@pytest.mark.parametrize("ndim", [2, 3])
def test_a_component_snaking_through_every_block_is_one(ndim):
    shape = (17, 19) if ndim == 2 else (5, 9, 11)
    mask = np.zeros(shape, np.uint8)
    if ndim == 2:
        mask[::2] = 1
        for r in range(1, shape[0], 2):  # a serpentine: rows joined at alternating ends
            mask[r, -1 if r % 4 == 1 else 0] = 1
    else:
        mask[:, ::2, :] = 1
        for r in range(1, shape[1], 2):
            mask[:, r, -1 if r % 4 == 1 else 0] = 1
        mask[1:4, :, 1:-1] = 0  # planes 0 and 4 joined only through the ends of the rows
    for conn in ([4, 8] if ndim == 2 else [6, 18, 26]):
        got = _check(mask, conn, (2,) * ndim)
        assert got.count == 1 and len(got.face_pairs) > 10
    diag = np.eye(13, dtype=np.uint8)  # joined across block corners only: one 8-component, 13 4-components
    assert _check(diag, 8, (2, 3)).count == 1
    assert _check(diag, 4, (2, 3)).count == 13
    cube = np.zeros((6, 6, 6), np.uint8)
    cube[[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]] = 1
    assert _check(cube, 26, (2, 2, 2)).count == 1  # through block corners
    assert _check(cube, 18, (2, 2, 2)).count == 6


def test_empty_constant_and_one_voxel_images():
    for mask in (np.zeros((4, 5), np.uint8), np.ones((4, 5), np.uint8), np.ones((1, 1, 1), bool),
                 np.zeros((3, 1, 2), np.uint16)):
        conn = 4 if mask.ndim == 2 else 6
        _check(mask, conn, (1,) * mask.ndim)
        _check(mask, conn, mask.shape)


def test_labels_do_not_depend_on_threads_or_executor():
    rng = np.random.default_rng(7)
    mask = _mask(rng, (12, 14, 10), 2)
    runs = [blockwise_labels(ArraySource(mask), connectivity=26, windows=_grid(mask.shape, (5, 3, 4)),
                             executor=ex, threads=t).read_all()
            for ex, t in (("synchronous", None), ("threads", 1), ("threads", 4), ("dask", None))]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])


def test_refusals():
    with pytest.raises(ScoreError, match="connectivity"):
        blockwise_labels(ArraySource(np.zeros((4, 4), np.uint8)), connectivity=6)
    with pytest.raises(ScoreError, match="grid"):  # blocks cut at different places in different rows
        blockwise_labels(ArraySource(np.zeros((4, 4), np.uint8)), connectivity=4,
                         windows=[(slice(0, 2), slice(0, 4)), (slice(2, 4), slice(0, 1)), (slice(2, 4), slice(1, 4))])


def test_computed_source_keeps_rims_and_reads_any_window():
    rng = np.random.default_rng(3)
    mask = _mask(rng, (40, 9), 1)
    want = components(mask, 8)
    got = blockwise_labels(ArraySource(mask), connectivity=8, tile_rows=10, halo=3)
    src = got.source
    assert isinstance(src, ComputedSource) and src.shape == mask.shape
    calls = []
    inner = src.compute
    src.compute = lambda index: calls.append(index) or inner(index)
    for a, b in ((0, 13), (7, 23), (17, 33), (27, 40)):  # bands of 10 with a halo of 3, in order
        np.testing.assert_array_equal(src.read((slice(a, b), slice(0, 9))), want[a:b])
    assert calls == [(0, 0), (1, 0), (2, 0), (3, 0)]  # each block computed once: kept whole or its rim kept
    np.testing.assert_array_equal(src.read((slice(5, 38), slice(2, 7))), want[5:38, 2:7])
    assert src.read((slice(4, 4), slice(0, 9))).shape == (0, 9)
    assert src._blocks and src._rims  # this process's source keeps its blocks for the next window


def test_an_unpickled_computed_source_keeps_no_block_after_its_read():
    """A task's copy (what a dask worker unpickles, and keeps until the task is forgotten) reads the
    same labels and holds no block afterwards."""
    import pickle

    mask = _mask(np.random.default_rng(4), (40, 9), 1)
    src = blockwise_labels(ArraySource(mask), connectivity=8, tile_rows=10, halo=3).source
    copy = pickle.loads(pickle.dumps(src))
    for a, b in ((0, 13), (7, 23), (27, 40)):
        np.testing.assert_array_equal(copy.read((slice(a, b), slice(0, 9))), components(mask, 8)[a:b])
    assert not copy._blocks and not copy._rims


def test_wants_blockwise():
    a = np.zeros((3, 3), np.uint8)
    assert not wants_blockwise(a, a, None)
    assert wants_blockwise("t.npy", a, None)
    assert wants_blockwise(a, as_source(a), "threads")

    class Client:  # anything that is not a name: a distributed.Client
        pass

    assert wants_blockwise(a, a, Client())


def _json(result):
    d = {k: v for k, v in dict(result).items() if k not in ("timing", "elapsed_s")}
    return json.dumps(d, sort_keys=True)


@pytest.mark.parametrize("connectivity", sorted(CONN))
def test_objects_components_json_identical_blockwise_and_whole(tmp_path, connectivity):
    rng = np.random.default_rng(connectivity)
    ndim = CONN[connectivity]
    shape = (31, 37) if ndim == 2 else (11, 13, 12)
    t, p = _mask(rng, shape, 2), _mask(rng, shape, 2)
    p[: shape[0] // 3] = t[: shape[0] // 3]
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    whole = api.objects(t, p, components=connectivity)
    assert whole["true_positives"] > 0 and whole["voi_split"] > 0
    for tile_rows in (1, 3, None):  # bands of 1 and 3 rows: smaller than the boundary halo of 4
        blocks = api.objects(str(tmp_path / "t.npy"), str(tmp_path / "p.npy"), components=connectivity,
                             tile_rows=tile_rows)
        assert _json(blocks) == _json(whole)


def test_objects_components_on_a_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    from segscore.engine.executor import local_cluster

    rng = np.random.default_rng(5)
    t, p = _mask(rng, (14, 15, 16), 2), _mask(rng, (14, 15, 16), 1)
    np.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "p.npy", p)
    whole = api.objects(t, p, components=18)
    client, cluster = local_cluster(2)
    try:
        assert isinstance(client, distributed.Client)
        got = blockwise_labels(as_source(np.load(tmp_path / "t.npy", mmap_mode="r")), connectivity=18,
                               windows=_grid(t.shape, (5, 4, 16)), executor=client)
        np.testing.assert_array_equal(got.read_all(), components(t, 18))
        blocks = api.objects(str(tmp_path / "t.npy"), str(tmp_path / "p.npy"), components=18, tile_rows=4,
                             executor=client)
    finally:
        client.close()
        cluster.close()
    assert _json(blocks) == _json(whole)
