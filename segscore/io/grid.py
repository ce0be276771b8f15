"""The nearest-neighbour grid that puts labels on a map's pixels.

Labels can sit on another grid than the map, up to a uniform scale: a segment's level-2 ink
labels are 5,820 x 8,020 for a 5,980 x 8,240 surface. Map pixel ``(y, x)`` of a map cut at
``crop`` from a surface of ``surface_shape`` reads label
``(floor((Y + 0.5) * sy), floor((X + 0.5) * sx))`` (clipped to the last label), where
``(Y, X)`` is its surface position and ``sy``, ``sx`` are labels per surface pixel: pixel
centres are matched, the convention of kit's ``label_grid``.

:class:`IndexedView` reads label planes through such an index map window by window, so the
resampled labels are never materialized.
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError
from segscore.io.sources import Source

#: largest relative difference of the two axes' scales still called one grid
MAX_AXIS_MISMATCH = 0.005


def _shape_text(shape):
    return " x ".join(str(int(n)) for n in shape)


def check_crop(crop, surface_shape, map_shape, name=None):
    """The window ``(y0, y1, x0, x1)`` of the surface the map covers, after the refusals.

    Without a crop the map must be the whole surface: a map of another shape than
    ``surface_shape`` is refused (its labels would be read at the wrong place, or outside the
    label grid). ``name`` (the map's path) starts the messages that concern the map.
    """
    where = f"{name}: " if name else ""
    if crop is None:
        h, w = int(surface_shape[0]), int(surface_shape[1])
        if map_shape is not None and (h, w) != tuple(int(n) for n in map_shape):
            raise ScoreError(f"{where}the map is {_shape_text(map_shape)} but the surface shape is {h} x {w}; "
                             f"a map cut from a larger surface needs --crop Y0 Y1 X0 X1, a whole-surface map "
                             f"needs no --surface-shape")
        return 0, h, 0, w
    try:
        y0, y1, x0, x1 = (int(v) for v in crop)
    except (TypeError, ValueError):
        raise ScoreError(f"crop {crop!r} must be four integers Y0 Y1 X0 X1") from None
    h, w = int(surface_shape[0]), int(surface_shape[1])
    if not (0 <= y0 < y1 <= h and 0 <= x0 < x1 <= w):
        raise ScoreError(f"crop {[y0, y1, x0, x1]} is outside the {h} x {w} surface")
    if map_shape is not None and (y1 - y0, x1 - x0) != tuple(int(n) for n in map_shape):
        raise ScoreError(f"{where}map shape {tuple(int(n) for n in map_shape)} does not match the window "
                         f"{y1 - y0} x {x1 - x0}")
    return y0, y1, x0, x1


def label_grid(labels_shape, surface_shape, crop, map_shape, name=None):
    """Row and column indices into the labels for every map pixel (nearest neighbour).

    Parameters
    ----------
    labels_shape : (h, w)
        Shape of the labels at the level used.
    surface_shape : (H, W)
        The full surface the labels cover.
    crop : (y0, y1, x0, x1) or None
        The window of the surface the map covers (ends excluded); None for all of it.
    map_shape : (h_map, w_map)
        Must equal the window's shape (the surface's, without a crop).
    name : str, optional
        The map's path, named in the refusals about the map.

    Returns
    -------
    rows : (h_map,) int64, cols : (w_map,) int64

    Raises
    ------
    ScoreError
        When the two axes' scales differ by more than 0.5 %, the crop leaves the surface, or
        the map does not match the window (with or without a crop).
    """
    lh, lw = (int(n) for n in labels_shape)
    sh, sw = (int(n) for n in surface_shape)
    if sh <= 0 or sw <= 0:
        raise ScoreError(f"surface shape {(sh, sw)} must be positive")
    sy, sx = lh / sh, lw / sw
    if abs(sy - sx) > MAX_AXIS_MISMATCH * max(sy, sx):
        raise ScoreError(f"{name + ': ' if name else ''}labels {(lh, lw)} and surface {(sh, sw)} differ in scale "
                         f"between axes "
                         f"({sy:.4f} vs {sx:.4f}); they are not the same grid")
    y0, y1, x0, x1 = check_crop(crop, (sh, sw), map_shape, name)
    rows = np.minimum(((np.arange(y0, y1) + 0.5) * sy).astype(np.int64), lh - 1)
    cols = np.minimum(((np.arange(x0, x1) + 0.5) * sx).astype(np.int64), lw - 1)
    return rows, cols


class IndexedView:
    """Label planes seen on a map's grid: map pixel (y, x) reads ``(rows[y], cols[x])``.

    ``read(window)`` returns the planes' window that the map window needs (the bounding box
    of its indices, each plane as read) together with the local ``rows`` and ``cols``
    indices into it, so a kernel gathers on the fly and the resampled labels are never
    materialized.
    """

    def __init__(self, sources: list[Source], rows: np.ndarray, cols: np.ndarray):
        shape = sources[0].shape
        for s in sources[1:]:
            if s.shape != shape:
                raise ValueError("planes of an IndexedView must share a shape")
        self.sources = sources
        self.rows = np.ascontiguousarray(rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(cols, dtype=np.int64)
        # every index a kernel gathers through is proven inside the planes here
        for idx, n, axis in ((self.rows, shape[0], "row"), (self.cols, shape[1], "column")):
            if idx.ndim != 1 or (idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n)):
                raise ValueError(f"{axis} indices of an IndexedView must lie in 0..{n - 1}")

    def check_map(self, map_shape) -> None:
        """Raise ValueError unless the view has one index per row and column of ``map_shape``."""
        if (self.rows.size, self.cols.size) != tuple(int(n) for n in map_shape):
            raise ValueError(f"an IndexedView of {self.rows.size} x {self.cols.size} indices cannot serve a "
                             f"{tuple(map_shape)} map")

    @classmethod
    def identity(cls, sources: list[Source]):
        h, w = sources[0].shape
        return cls(sources, np.arange(h, dtype=np.int64), np.arange(w, dtype=np.int64))

    @property
    def chunk_rows(self) -> int | None:
        ch = self.sources[0].chunks
        return int(ch[0]) if ch else None

    def row_boundaries(self) -> np.ndarray:
        """Map rows where the planes' chunk rows start (for chunk-aligned plans)."""
        ch = self.chunk_rows
        if not ch:
            return np.empty(0, np.int64)
        starts = np.arange(ch, self.sources[0].shape[0], ch)
        return np.searchsorted(self.rows, starts, side="left")

    def read(self, window, combine=None):
        """The planes' box the map ``window`` needs, with the local row and column indices into it.

        With ``combine`` (a function of one window of each plane, returning one 2D array of that
        shape), the box is read in strips between the column boundaries every chunked plane's grid
        shares (one chunk column where the planes' chunks agree; the whole box where no boundary is
        shared) and ``combine``'s strips are returned as one array instead of the planes: each
        chunk is still decoded once, and only one strip of every plane is held at a time (the AUC
        pass's label codes: 33 MB of planes a 4x-area window fewer). A chunk that cannot be read
        is the first failing one (in C order) of the first strip holding one."""
        ys, xs = window
        r = self.rows[ys.start:ys.stop]
        c = self.cols[xs.start:xs.stop]
        if r.size == 0 or c.size == 0:
            empty = [np.zeros((0, 0), s.dtype) for s in self.sources]
            return (empty if combine is None else combine(*empty)), np.zeros(r.size, np.int64), \
                np.zeros(c.size, np.int64)
        r0, r1 = int(r.min()), int(r.max()) + 1
        c0, c1 = int(c.min()), int(c.max()) + 1
        if combine is None:
            return [s.read((slice(r0, r1), slice(c0, c1))) for s in self.sources], r - r0, c - c0
        inner = None  # column boundaries inside the box shared by every chunked plane's grid
        for s in self.sources:
            if s.chunks and len(s.chunks) > 1:
                step = int(s.chunks[1])
                mine = set(range((c0 // step + 1) * step, c1, step))
                inner = mine if inner is None else inner & mine
        cuts = [c0, *sorted(inner or ()), c1]
        out = None
        for a, b in zip(cuts, cuts[1:]):
            part = combine(*(s.read((slice(r0, r1), slice(a, b))) for s in self.sources))
            if out is None:
                if b == c1:  # one strip: the whole box
                    return part, r - r0, c - c0
                out = np.empty((r1 - r0, c1 - c0), part.dtype)
            out[:, a - c0:b - c0] = part
        return out, r - r0, c - c0
