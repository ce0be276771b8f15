"""Every streamed score is the same, bit for bit, whatever the tile size, the number of threads,
the executor (threads, synchronous, dask), on a rerun, and (for label images) under any
relabelling of the ids: the result dicts are compared as canonical JSON text, not to a
tolerance."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

ENGINES = [dict(tile_rows=t, executor=e, threads=n)
           for t, e, n in itertools.product((1, 7, None), ("threads", "synchronous", "dask"), (1, 2))
           if not (e == "synchronous" and n == 2)]


def canon(result) -> str:
    return json.dumps(result, sort_keys=True, allow_nan=False)


def same_everywhere(fn, engines=ENGINES):
    """``fn(**engine)`` for every engine: one canonical text, twice over (a rerun)."""
    texts = {canon(fn(**e)) for e in engines}
    texts.add(canon(fn(**engines[0])))
    assert len(texts) == 1, f"{len(texts)} different results over {len(engines)} engine settings"
    return json.loads(texts.pop())


@pytest.fixture(scope="module")
def ink_files(tmp_path_factory):
    import tifffile

    from tests.ink.helpers import segment, write_levels

    f = tmp_path_factory.mktemp("ink")
    pred, ink, mask = segment((61, 53), seed=3)
    other, _, _ = segment((61, 53), seed=4)
    tifffile.imwrite(f / "map.tif", pred)
    tifffile.imwrite(f / "other.tif", other)
    tifffile.imwrite(f / "rev.tif", pred[::-1].copy())
    write_levels(f / "labels.zarr", {"2": ink.astype(np.uint8)}, chunks=(16, 16))
    write_levels(f / "mask.zarr", {"2": mask.astype(np.uint8)}, chunks=(16, 16))
    return f


def test_auc_with_bootstrap_and_compare(ink_files):
    from segscore.ink.auc import score_files

    f = ink_files
    r = same_everywhere(lambda **e: score_files(f / "map.tif", f / "labels.zarr", f / "mask.zarr",
                                                control=f / "rev.tif", compare=f / "other.tif", bootstrap=40,
                                                block_px=9, seed=5, **e))
    assert r["forward"]["auc"] is not None and r["bootstrap"]


def test_ink_target_with_floors(tmp_path):
    from segscore.ink.targets import score_target
    from tests.targets.helpers import make_target, reading_map, write_png

    tgt, ink, _ = make_target(tmp_path / "t", shape=(48, 64), seed=2)
    write_png(tmp_path / "p.png", reading_map(ink))
    r = same_everywhere(lambda **e: score_target(tmp_path / "p.png", tgt, seed=3, **e))
    assert r["metrics"]["roc_auc"] is not None


def test_columns(tmp_path):
    from segscore.columns.score import score_columns
    from tests.columns.helpers import make_column_target

    tgt, _ = make_column_target(tmp_path / "c")
    np.save(tmp_path / "p.npy", np.random.default_rng(1).random((260, 700)).astype(np.float32))
    engines = [e for e in ENGINES if e["tile_rows"] != 1]  # 260 one-row tiles add nothing but time
    r = same_everywhere(lambda **e: score_columns(tmp_path / "p.npy", tgt, **e), engines)
    assert r["metrics"]["col_gutter_auc"] is not None


def _relabel(a, rng):
    ids = np.unique(a)
    ids = ids[ids != 0]
    new = rng.choice(np.arange(1, 10 * len(ids) + 10, dtype=np.int64), size=len(ids), replace=False) * 7919
    lut = dict(zip(ids.tolist(), new.tolist()))
    out = np.zeros(a.shape, np.int64)
    for old, n in lut.items():
        out[a == old] = n
    return out


@pytest.mark.parametrize("shape", [(64, 72), (14, 20, 18)])
def test_objects_over_engines_and_relabellings(shape):
    from segscore.objects import score_segmentation
    from tests.objects.helpers import synthetic_pair

    truth, pred = synthetic_pair(shape=shape, n=10, seed=7, r=(2, 5))
    base = same_everywhere(lambda **e: score_segmentation(truth, pred, **e))
    rng = np.random.default_rng(0)
    for _ in range(3):  # other ids, same objects: the same text
        t2, p2 = _relabel(truth, rng), _relabel(pred, rng)
        assert canon(score_segmentation(t2, p2, tile_rows=3, executor="threads", threads=2)) == canon(base)


def test_fibers_under_relabelling(tmp_path):
    from segscore.fibers import score_fibers
    from tests.fibers.helpers import random_fibers, write_target

    rng = np.random.default_rng(3)
    shape = (16, 18, 20)
    mask = rng.random(shape) < 0.3
    target = write_target(tmp_path / "t", random_fibers(rng, shape, 4), mask)
    labels = (rng.integers(0, 5, shape) * mask).astype(np.int32)
    np.save(tmp_path / "a.npy", labels)
    np.save(tmp_path / "b.npy", _relabel(labels, rng))
    cards = [score_fibers(target, tmp_path / n, prediction_name="p") for n in ("a.npy", "b.npy", "a.npy")]
    assert len({canon(c) for c in cards}) == 1


def test_curve_rerun_and_files(tmp_path, cli):
    from tests.curvilinear.helpers import vessel_tree

    gt = vessel_tree((72, 80), seed=2)
    np.save(tmp_path / "gt.npy", gt)
    np.save(tmp_path / "p.npy", np.roll(gt, 2, axis=0))
    outs = {cli("curve", tmp_path / "p.npy", "--gt", tmp_path / "gt.npy", "--all-metrics", "--json")[1]
            for _ in range(3)}
    assert len(outs) == 1 and json.loads(outs.pop())["dice"] is not None
