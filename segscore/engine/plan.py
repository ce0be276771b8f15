"""Tile plans: which windows of an image to read, in which order.

A plan is a list of windows (tuples of slices, one per axis) that together cover a region
once. Scorers reduce each window to a small additive summary and add the summaries up, so
a result never depends on the plan; the plan only sets memory and I/O. Only generic planners
live here: bands by an element budget (:func:`plan_bands`, :func:`rows_for_pixels`), bands
aligned to a store's chunk rows (:func:`aligned_bands`), bands shared among threads
(:func:`spread_rows`) and boxes of a given shape (:func:`plan_boxes`). A family's own budgets
and window shapes live with the family, which passes its windows in (``objects.tiles``,
``ink.scan``, ``ink.targets``, ``topology.stream``).
"""

from __future__ import annotations

import numpy as np

#: pixels per window when nothing else decides (a few MB per input at 1 byte per pixel)
DEFAULT_WINDOW_PX = 1 << 22


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


def plan_boxes(shape, box) -> list[tuple]:
    """Boxes of ``box`` positions per axis (the last along each axis shorter) tiling ``shape`` as a
    grid, in C order of the grid; none when an axis is empty."""
    import itertools

    if len(box) != len(shape) or any(int(b) < 1 for b in box):
        raise ValueError(f"box {tuple(box)}: one length >= 1 per axis of {tuple(shape)}")
    axes = [[slice(a, min(a + int(b), int(n))) for a in range(0, int(n), int(b))] for n, b in zip(shape, box)]
    return [tuple(w) for w in itertools.product(*axes)]


def spread_rows(rows: int, depth: int, workers: int) -> int | None:
    """A band height giving each of ``workers`` threads a band of ``rows`` when every band stays
    at least ``depth`` rows deep (halos cost more than thin bands save); None when it would not."""
    if workers > 1 and rows >= depth * workers:
        return -(-int(rows) // workers)
    return None
