"""The objects family's warm-up: the contingency, matching and surface kernels on tiny 2D and 3D
label images. The tile kernels see two dtypes only (:func:`segscore.objects.metrics.canonical_tile`:
uint32 for ids of up to 32 bits, uint64 for 64-bit ids), so one image of each covers them all.
The registry (:mod:`segscore.families`) points at :func:`warm`."""

from __future__ import annotations

import numpy as np


def warm() -> None:
    from segscore.metrics.surface import warm_nearest
    from segscore.objects.metrics import _score_segmentation as score_segmentation

    rng = np.random.default_rng(0)
    for shape in ((8, 8), (3, 8, 8)):
        for dtype in (np.uint16, np.int64):  # tiles of uint32 and of uint64
            t = rng.integers(0, 4, shape).astype(dtype)
            score_segmentation(t, t)
        score_segmentation(t, t, surface=True, per_object=True)  # the surface kernels (--surface)
    warm_nearest()  # the k-d tree step of the distances, which tiny masks never reach
    # components built block by block (--components on files or a cluster; surfaces' streamed VOI)
    from segscore.objects.blocklabel import blockwise_components

    m = (rng.random((4, 6, 6)) < 0.5).astype(np.uint8)
    blockwise_components(m, m, 26, tile_rows=2, threads=1)
