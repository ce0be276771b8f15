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


def _pair(wide: bool = False):
    """A tiny 2D pair of uint16 labels (the docs' sample is uint16), or uint64 ones (``wide``)."""
    t = np.random.default_rng(0).integers(0, 4, (8, 8)).astype(np.uint64 if wide else np.uint16)
    return t, np.ascontiguousarray(t[::-1])


def _tiles(wide: bool = False):
    """:func:`_pair` as the tile kernels see it (:func:`segscore.objects.metrics.canonical_tile`:
    uint32, or uint64 when ``wide``)."""
    from segscore.objects.metrics import canonical_tile

    return tuple(canonical_tile(x) for x in _pair(wide))


def contingency(wide: bool = False):
    """The contingency pass's kernels, on the tile type every label image reaches them as
    (``wide``: 64-bit ids); returns the table."""
    from segscore.objects.table import contingency_table

    return contingency_table(*_tiles(wide))


def boundary(wide: bool = False) -> None:
    """The boundary marks and their distance counts of one 2D tile."""
    from segscore.objects.metrics import DEFAULT_BOUNDARY_TOLERANCES, _boundary_tile

    t, p = _tiles(wide)
    _boundary_tile(t, p, slice(0, t.shape[0]), DEFAULT_BOUNDARY_TOLERANCES)


def objects_2d() -> None:
    """What ``objects`` compiles on a 2D pair of 8- to 32-bit labels."""
    from segscore.objects.metrics import _score_segmentation as score_segmentation

    t, p = _pair()
    score_segmentation(t, p)


#: images of more voxels than this are expected to have whole-foreground surfaces above
#: :data:`segscore.objects.surface.SMALL_SURFACES` (a guess: a wrong one costs a load, not a number)
BIG_IMAGE = 1 << 23


def pass_kernels(wide: bool = False, surface: bool = False, big: bool = False) -> None:
    """Load the kernels a streamed objects pass calls (numba's import, its first dispatch and the
    cache entries: about 0.7 s of a warm process, most of it holding the interpreter lock), on a
    tiny pair of ``uint64`` (``wide``) or ``uint32`` tiles (:func:`contingency`, :func:`boundary`);
    with ``surface`` the surface scan and every distance kernel
    :func:`segscore.objects.surface.surface_values` calls too (the k-d tree step is inside them),
    and with ``big`` the whole-foreground directions' kernels of large surfaces.
    :func:`start_loading` runs it beside the pass's first reads."""
    table = contingency(wide)
    boundary(wide)
    if surface:
        from segscore.objects.metrics import _surface_tile
        from segscore.objects.surface import collect, surface_values

        t, p = _tiles(wide)
        parts = _surface_tile(t, p, slice(0, t.shape[0]), 0)
        pair = np.zeros(1, np.int64)
        surface_values(table, pair, pair, collect([parts]), np.ones(3), 1.0, threads=1)
        if big:
            from segscore.metrics.surface import directed_part, probe_balls, summary_from_parts

            pts, sp = np.zeros((1, 3), np.int32), np.ones(3)
            part = directed_part(pts, pts, sp, 1.0, probe_balls(sp))
            summary_from_parts(part, part)


#: the ``(wide, surface, big)`` this process has loaded (:func:`start_loading` starts no thread for them again)
_LOADED: set = set()


def start_loading(wide: bool, surface: bool, big: bool = False):
    """:func:`pass_kernels` on a daemon thread, so that a pass's first reads (file reads, which
    release the interpreter lock) run beside numba's start instead of after it, and the surface
    kernels load while the pass computes. Returns the thread (join it before the pass's result
    is used), or None when this process has loaded them already (a held-out set's second field
    on). A failure here is left to the real call to report."""
    import threading

    key = (bool(wide), bool(surface), bool(big))
    if key in _LOADED:
        return None

    def work():
        try:
            pass_kernels(*key)
            _LOADED.add(key)
        except Exception:  # noqa: BLE001 - only a head start: the real call reports any problem
            pass

    thread = threading.Thread(target=work, name="segscore-kernels", daemon=True)
    thread.start()
    return thread


_HERE = "segscore.objects.warmup:"
#: each command's first run, divided between two processes (:mod:`segscore.engine.firstrun`)
_FIELD = Plan(prelude=(), here=(_HERE + "contingency",), there=(_HERE + "boundary",), then=(_HERE + "objects_2d",))
FIRST_RUN = {"objects": _FIELD, "holdout": _FIELD}  # a held-out set scores each field as objects does
