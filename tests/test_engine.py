"""The engine's one call shape (issue 28 item 4): reduce(read, fn, merge, windows=plan), read a
read(window) callable or sources of one shape; the plans of engine/plan.py; one options check."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.engine import check_options, reduce
from segscore.engine.plan import BANDS_MIN_VOXELS, TILE_PX, bands, ink_sub_bands, label_tiles, plan_bands
from segscore.errors import ScoreError
from segscore.io.sources import ArraySource

IMG = np.arange(23 * 5, dtype=np.int64).reshape(23, 5)


@pytest.mark.parametrize("executor", ["threads", "synchronous", "dask"])
def test_a_read_callable_and_sources_fold_the_same_windows_in_order(executor):
    windows = plan_bands(IMG.shape, tile_rows=4)
    seen = reduce(lambda w: (IMG[w], IMG[w] * 2), lambda tile, a, b: [(tile.index, int(a.sum()), int(b.sum()))],
                  lambda x, y: x + y, windows=windows, executor=executor, threads=3)
    assert [s[0] for s in seen] == list(range(6))  # window order, whatever ran it
    src = [ArraySource(IMG, "a"), ArraySource(IMG * 2, "b")]
    assert reduce(src, lambda tile, a, b: [(tile.index, int(a.sum()), int(b.sum()))], lambda x, y: x + y,
                  tile_rows=4, executor=executor) == seen
    assert sum(s[1] for s in seen) == IMG.sum()


def test_sources_are_read_with_a_clipped_halo_and_own_their_band():
    def fn(tile, a):
        assert a.shape[0] == tile.read_window[0].stop - tile.read_window[0].start
        assert np.array_equal(a[tile.own], IMG[tile.window])
        return [(tile.read_window[0].start, tile.read_window[0].stop)]

    got = reduce([ArraySource(IMG, "a")], fn, lambda x, y: x + y, tile_rows=10, halo=2)
    assert got == [(0, 12), (8, 22), (18, 23)]


def test_reduce_needs_sources_or_a_read_with_windows():
    with pytest.raises(ValueError, match="sources or a read"):
        reduce([], lambda tile: 0, lambda a, b: a + b, windows=[(slice(0, 1),)])
    with pytest.raises(ValueError, match="needs the windows"):
        reduce(lambda w: (IMG[w],), lambda tile, a: 0, lambda a, b: a + b)
    assert reduce(lambda w: (IMG[w],), lambda tile, a: 0, lambda a, b: a + b, windows=[]) is None


def test_one_options_check_resolves_the_old_names_and_refuses_like_the_cli():
    assert check_options(band_rows=7, workers=2) == {"tile_rows": 7, "executor": None, "threads": 2}
    assert check_options(threads=3, progress=print)["progress"] is print
    with pytest.raises(ScoreError, match="tile_rows 7 and its old name band_rows 8 disagree"):
        check_options(tile_rows=7, band_rows=8)
    with pytest.raises(ScoreError, match=r"threads 0: must be a whole number >= 1 \(--threads\)"):
        check_options(workers=0)
    with pytest.raises(ScoreError, match="halo -1"):
        check_options(halo=-1)
    with pytest.raises(ScoreError, match="executor 'processes'"):
        check_options(executor="processes")


def test_band_plans():
    region = (slice(3, 20), slice(0, 10))
    assert plan_bands(region, tile_rows=5) == bands(region, 5)
    assert plan_bands(region, target_px=60) == bands(region, 6)  # about 60 pixels of 10-pixel rows
    # chunk rows of the image, not of the region: bands end on multiples of 4
    assert [w[0].stop for w in plan_bands(region, chunk_rows=4, target_px=80)] == [8, 16, 20]
    assert plan_bands((0, 10)) == [] and plan_bands((slice(5, 5), slice(0, 3))) == []
    # an ink window's sub-bands end on the bootstrap's block rows
    window, width = (slice(5, 40), slice(0, 8)), 1 << 18  # rows of 2^18 pixels: sub-bands of 4 rows
    assert [w[0].stop for w in ink_sub_bands(window, width)] == [9, 13, 17, 21, 25, 29, 33, 37, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, block_px=10)] == [10, 20, 30, 40]
    assert [w[0].stop for w in ink_sub_bands(window, width, tile_rows=16, block_px=10)] == [21, 37, 40]


def test_label_tiles():
    whole = [(slice(0, 64), slice(0, 64))]
    assert label_tiles((64, 64), 3, in_memory=True) == whole
    assert label_tiles((64, 64), 3, in_memory=True, executor="dask") == whole  # a band of TILE_PX covers it
    assert label_tiles((64, 64), 3, tile_rows=30) == bands(whole[0], 30)
    assert label_tiles((64, 64), 3, in_memory=True, spread=True, threads=2) == bands(whole[0], 32)
    assert label_tiles((64, 64), 3, in_memory=True, spread=True, threads=4) == whole  # bands under 8 halos deep
    big = (BANDS_MIN_VOXELS // 64, 64)
    assert len(label_tiles(big, 1, in_memory=True, threads=4)) == 4
    rows = TILE_PX // 64
    assert label_tiles((3 * rows, 64), 1, executor="dask")[0][0] == slice(0, rows)
