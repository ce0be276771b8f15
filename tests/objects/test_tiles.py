"""The objects family's tile plan (moved from engine/plan.py by issue 35: the engine knows no family)."""

from __future__ import annotations

from segscore.engine.plan import bands
from segscore.objects.tiles import BANDS_MIN_VOXELS, TILE_PX, label_tiles


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
