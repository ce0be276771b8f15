"""The tiles a pair of label images is read in (the objects family's plan, built on the
engine's generic planners): their element budget and when to share the bands among threads."""

from __future__ import annotations

import numpy as np

from segscore.engine.executor import default_workers
from segscore.engine.plan import plan_bands, spread_rows

#: elements of an object tile's owned band when a label image is read from a file (~64 MB of uint32;
#: a thread holds both images' blocks with their halos and one block of boundary marks: 16 slices
#: of 1024 x 1024 uint32 keep a 2 GB-per-volume zarr pair near 700 MB peak RSS on two threads)
TILE_PX = 1 << 24
#: label images of at least this many voxels are cut into a band per thread even when one tile
#: would do, so the threads share the work; smaller ones stay one tile (the halos would cost more)
BANDS_MIN_VOXELS = 1 << 23


def label_tiles(shape, halo: int, *, tile_rows=None, in_memory=False, spread=False, executor=None,
                threads=None) -> list[tuple]:
    """The tiles of a pair of label images: ``tile_rows`` rows each; else one tile for arrays
    ``in_memory`` on this process's threads, bands of about :data:`TILE_PX` elements (at least 4
    halos deep) for files; and, with ``spread`` (surface distances) or an image of
    :data:`BANDS_MIN_VOXELS`, at least a band per thread where the bands stay 8 halos deep."""
    whole = [tuple(slice(0, int(n)) for n in shape)]
    auto = tile_rows is None
    if auto and not (in_memory and executor in (None, "threads", "synchronous")):
        tile_rows = max(4 * halo, TILE_PX // max(int(np.prod(shape[1:], dtype=np.int64)), 1), 1)
    big = int(np.prod(shape, dtype=np.int64)) >= BANDS_MIN_VOXELS
    if (spread or big) and auto and executor in (None, "threads"):
        shared = spread_rows(int(shape[0]), 8 * halo, int(threads or default_workers()))
        if shared:  # (results do not depend on the bands)
            tile_rows = min(tile_rows or shape[0], shared)
    return plan_bands(shape, tile_rows=tile_rows) if tile_rows else whole
