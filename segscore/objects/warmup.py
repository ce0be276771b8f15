"""The objects family's warm-up: the contingency, matching and surface kernels on tiny 2D and 3D
label images. The tile kernels see two dtypes only (:func:`segscore.objects.metrics.canonical_tile`:
uint32 for ids of up to 32 bits, uint64 for 64-bit ids), so one image of each covers them all.
The registry (:mod:`segscore.families`) points at :func:`warm`.

:data:`FIRST_RUN` divides ``objects``' and ``holdout``'s first runs between two processes
(:mod:`segscore.engine.firstrun`): the other process compiles the boundary marks and their
distance counts while this one compiles the contingency pass."""

from __future__ import annotations

import numpy as np

from segscore.engine.firstrun import Plan


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


def _pair():
    """A tiny 2D pair of uint16 labels (the docs' sample is uint16)."""
    t = np.random.default_rng(0).integers(0, 4, (8, 8)).astype(np.uint16)
    return t, np.ascontiguousarray(t[::-1])


def contingency() -> None:
    """The contingency pass's kernels, on the tile type every label image reaches them as."""
    from segscore.objects.metrics import canonical_tile
    from segscore.objects.table import contingency_table

    t, p = _pair()
    contingency_table(canonical_tile(t), canonical_tile(p))


def boundary() -> None:
    """The boundary marks and their distance counts of one 2D tile."""
    from segscore.objects.metrics import DEFAULT_BOUNDARY_TOLERANCES, _boundary_tile, canonical_tile

    t, p = _pair()
    _boundary_tile(canonical_tile(t), canonical_tile(p), slice(0, t.shape[0]), DEFAULT_BOUNDARY_TOLERANCES)


def objects_2d() -> None:
    """What ``objects`` compiles on a 2D pair of 8- to 32-bit labels."""
    from segscore.objects.metrics import _score_segmentation as score_segmentation

    t, p = _pair()
    score_segmentation(t, p)


_HERE = "segscore.objects.warmup:"
#: each command's first run, divided between two processes (:mod:`segscore.engine.firstrun`)
FIRST_RUN = {"objects": Plan(prelude=(), here=(_HERE + "contingency",), there=(_HERE + "boundary",),
                             then=(_HERE + "objects_2d",))}
