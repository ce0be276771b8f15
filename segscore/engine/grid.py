"""Reading sources on another grid through a nearest-neighbour index map, window by window."""

from __future__ import annotations

import numpy as np

from segscore.engine.sources import Source


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

    def read(self, window):
        ys, xs = window
        r = self.rows[ys.start:ys.stop]
        c = self.cols[xs.start:xs.stop]
        if r.size == 0 or c.size == 0:
            empty = [np.zeros((0, 0), s.dtype) for s in self.sources]
            return empty, np.zeros(r.size, np.int64), np.zeros(c.size, np.int64)
        r0, r1 = int(r.min()), int(r.max()) + 1
        c0, c1 = int(c.min()), int(c.max()) + 1
        planes = [s.read((slice(r0, r1), slice(c0, c1))) for s in self.sources]
        return planes, r - r0, c - c0
