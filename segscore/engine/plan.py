"""Tile plans: which windows of an image to read, in which order.

A plan is a list of windows (tuples of slices, one per axis) that together cover a region
once. Scorers reduce each window to a small additive summary and add the summaries up, so
a result never depends on the plan; the plan only sets memory and I/O. Every family's tile
and band heuristic lives here: :func:`plan_bands` (the default, and the map bands of the ink
and column targets), :func:`label_tiles` (objects), :func:`ink_windows` and
:func:`ink_sub_bands` (the ink AUC pass).
"""

from __future__ import annotations

import numpy as np

#: pixels per window when nothing else decides (a few MB per input at 1 byte per pixel)
DEFAULT_WINDOW_PX = 1 << 22
#: pixels per band of a map streamed against a target (ink targets, columns)
MAP_BAND_PX = 1 << 21
#: pixels per band of the exact float passes of a target (each pass reads the map again)
EXACT_BAND_PX = 1 << 18
#: pixels of a window of the ink AUC pass: its labels are read once (a few bytes per pixel)
LABEL_WINDOW_PX = 1 << 23
#: pixels of a sub-band of an ink window: the maps are read and reduced in these
SUB_WINDOW_PX = 1 << 20
#: elements of an object tile's owned band when a label image is read from a file (~96 MB of uint32)
TILE_PX = 3 << 23
#: label images of at least this many voxels are cut into a band per thread even when one tile
#: would do, so the threads share the work; smaller ones stay one tile (the halos would cost more)
BANDS_MIN_VOXELS = 1 << 23


def bands(region: tuple[slice, ...], step: int) -> list[tuple[slice, ...]]:
    """Split ``region`` into windows of ``step`` positions along its first axis."""
    if step < 1:
        raise ValueError(f"tile step must be at least 1, got {step}")
    lead, rest = region[0], tuple(region[1:])
    return [(slice(a, min(a + step, lead.stop)),) + rest for a in range(lead.start, lead.stop, step)]


def rows_for_pixels(region: tuple[slice, ...], target_px: int = DEFAULT_WINDOW_PX) -> int:
    """A band height giving windows of about ``target_px`` pixels."""
    per_row = int(np.prod([s.stop - s.start for s in region[1:]], dtype=np.int64)) or 1
    return max(1, int(target_px // per_row))


def aligned_bands(region: tuple[slice, ...], boundaries: np.ndarray, max_rows: int) -> list[tuple[slice, ...]]:
    """Bands that start at the given first-axis ``boundaries`` where they can.

    Used to align map rows with the chunk rows of a store read through an index map: each
    band then decodes whole chunk rows once. Bands longer than ``max_rows`` are split.
    """
    lead, rest = region[0], tuple(region[1:])
    cuts = sorted({int(b) for b in boundaries if lead.start < b < lead.stop} | {lead.start, lead.stop})
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        out.extend(bands((slice(a, b),) + rest, max_rows))
    # merge runs of short bands up to max_rows so tiny chunks do not make tiny tasks
    merged: list[tuple[slice, ...]] = []
    for w in out:
        if merged and (w[0].stop - merged[-1][0].start) <= max_rows and merged[-1][0].stop == w[0].start:
            merged[-1] = (slice(merged[-1][0].start, w[0].stop),) + rest
        else:
            merged.append(w)
    return merged


def plan_bands(region, *, tile_rows=None, chunk_rows=None, target_px=DEFAULT_WINDOW_PX) -> list[tuple]:
    """Bands along axis 0 covering ``region`` (a shape or a tuple of slices): ``tile_rows``
    each, or about ``target_px`` elements aligned to ``chunk_rows``."""
    region = tuple(s if isinstance(s, slice) else slice(0, int(s)) for s in region)
    if not region or region[0].stop <= region[0].start:
        return []
    if tile_rows:
        return bands(region, int(tile_rows))
    rows = rows_for_pixels(region, target_px)
    if chunk_rows:
        ch = int(chunk_rows)
        rows = max(ch, rows // ch * ch)
        return aligned_bands(region, np.arange(ch, region[0].stop, ch), rows)
    return bands(region, rows)


def label_tiles(shape, halo: int, *, tile_rows=None, in_memory=False, spread=False, executor=None,
                threads=None) -> list[tuple]:
    """The tiles of a pair of label images (objects): ``tile_rows`` rows each; else one tile for
    arrays ``in_memory`` on this process's threads, bands of about :data:`TILE_PX` elements (at
    least 4 halos deep) for files; and, with ``spread`` (surfaces) or an image of
    :data:`BANDS_MIN_VOXELS`, at least a band per thread where the bands stay 8 halos deep."""
    from segscore.engine.executor import default_workers

    whole = [tuple(slice(0, int(n)) for n in shape)]
    auto = tile_rows is None
    if auto and not (in_memory and executor in (None, "threads", "synchronous")):
        tile_rows = max(4 * halo, TILE_PX // max(int(np.prod(shape[1:], dtype=np.int64)), 1), 1)
    big = int(np.prod(shape, dtype=np.int64)) >= BANDS_MIN_VOXELS
    if (spread or big) and auto and executor in (None, "threads"):
        workers = int(threads or default_workers())
        if workers > 1 and shape[0] >= 8 * halo * workers:  # (results do not depend on the bands)
            tile_rows = min(tile_rows or shape[0], -(-int(shape[0]) // workers))
    return plan_bands(shape, tile_rows=tile_rows) if tile_rows else whole


def ink_windows(shape, inner: int, row_boundaries, tile_rows=None) -> list[tuple]:
    """The windows of the ink AUC pass: the map inside its ``inner`` margin, in bands of
    ``tile_rows``, else of about :data:`LABEL_WINDOW_PX` aligned to the labels' chunk rows."""
    h, w = shape
    region = (slice(inner, h - inner), slice(inner, w - inner))
    if tile_rows:
        return bands(region, tile_rows)
    return aligned_bands(region, row_boundaries, rows_for_pixels(region, LABEL_WINDOW_PX))


def ink_sub_bands(window, width: int, *, tile_rows=None, block_px=None) -> list[tuple]:
    """The sub-bands an ink window reads its maps in (``tile_rows``, else about
    :data:`SUB_WINDOW_PX`); with bootstrap blocks of ``block_px`` they end on block rows, so a
    block is split only where a window ends."""
    rows = tile_rows or rows_for_pixels((slice(0, 1), slice(0, width)), SUB_WINDOW_PX)
    cuts = np.arange(0, window[0].stop, block_px) if block_px and not tile_rows else np.empty(0, np.int64)
    return aligned_bands(window, cuts, max(rows, block_px) if cuts.size else rows)
