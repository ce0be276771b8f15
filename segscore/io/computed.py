"""A source whose windows are computed block by block (relabelled components, say), read like a file.

:class:`ComputedSource` has the interface of :mod:`segscore.io.sources`: ``shape``, ``dtype``,
``name``, ``read(window)``. The image is cut into a rectilinear grid of blocks (``cuts``: each
axis's block boundaries); ``compute(index)`` returns one whole block (``index``: its position in
the grid, one integer per axis). A window reads every block it meets. Streamed passes read bands
with a halo of a few rows beyond the blocks they own, so each block's first and last ``rim`` rows
along axis 0 are kept once computed (for the last ``keep`` blocks), and the last ``whole`` blocks
whole: a window that needs only a neighbour's rim does not compute that neighbour again, and a band
read in order finds its own block computed already for its predecessor's halo.

Picklable when ``compute`` is (dask workers get the recipe, not the blocks, and compute their own);
an unpickled copy keeps no blocks (it serves one task).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import numpy as np

from segscore.io.sources import Source


class ComputedSource(Source):
    """Windows assembled from blocks that ``compute(index)`` returns (module docstring)."""

    def __init__(self, compute, cuts, dtype, name: str, *, rim: int = 0, keep: int = 16, whole: int = 2,
                 closer=None):
        self.compute = compute
        self.cuts = tuple(np.asarray(c, dtype=np.int64) for c in cuts)
        self.shape = tuple(int(c[-1]) for c in self.cuts)
        self.dtype = np.dtype(dtype)
        self.name = name
        self.rim = int(rim)
        self.keep = int(keep)
        self.whole = int(whole)
        self.chunks = None
        self._closer = closer
        self._init_cache()

    def _init_cache(self):
        self._rims: OrderedDict = OrderedDict()
        self._blocks: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_rims"], state["_blocks"], state["_lock"]
        return state

    def __setstate__(self, state):
        # an unpickled copy serves one task: distributed unpickles each task's arguments on their
        # own and keeps them until the task is forgotten, so a copy that cached blocks would hold
        # them after its task (the idle 1 GB workers of a 1280³ surfaces job held ten 50 MB label
        # blocks and paused); within one task every block is read once
        self.__dict__.update(state)
        self.whole, self.keep = 0, 0
        self._init_cache()

    def _block(self, index, want):
        """Block ``index``'s part ``want`` (slices in the block's coordinates)."""
        if self.rim:
            size0 = int(self.cuts[0][index[0] + 1] - self.cuts[0][index[0]])
            for side, lo in ((0, 0), (1, max(0, size0 - self.rim))):
                if want[0].start >= lo and want[0].stop <= min(size0, lo + self.rim):
                    with self._lock:
                        rim = self._rims.get((index, side))
                    if rim is not None:
                        return rim[(slice(want[0].start - lo, want[0].stop - lo),) + tuple(want[1:])]
        with self._lock:
            block = self._blocks.get(index)
        if block is None:
            block = self._computed(index)
        return block[tuple(want)]

    def _computed(self, index):
        block = np.asarray(self.compute(index))
        if self.whole:
            with self._lock:
                self._blocks[index] = block
                while len(self._blocks) > self.whole:
                    self._blocks.popitem(last=False)
        if self.rim:
            size0 = block.shape[0]
            with self._lock:
                self._rims[(index, 0)] = block[:self.rim].copy()
                self._rims[(index, 1)] = block[max(0, size0 - self.rim):].copy()
                while len(self._rims) > 2 * self.keep:
                    self._rims.popitem(last=False)
        return block

    def read(self, window):
        window = tuple(window)
        out = np.empty(tuple(s.stop - s.start for s in window), self.dtype)
        if out.size == 0:
            return out
        spans = []
        for c, s in zip(self.cuts, window):
            first = int(np.searchsorted(c, s.start, side="right")) - 1
            last = int(np.searchsorted(c, s.stop, side="left"))
            spans.append(range(first, last))
        for index in itertools.product(*spans):
            want, into = [], []
            for axis, i in enumerate(index):
                lo, hi = int(self.cuts[axis][i]), int(self.cuts[axis][i + 1])
                a, b = max(lo, window[axis].start), min(hi, window[axis].stop)
                want.append(slice(a - lo, b - lo))
                into.append(slice(a - window[axis].start, b - window[axis].start))
            out[tuple(into)] = self._block(tuple(index), want)
        return out

    def close(self):
        if self._closer is not None:
            self._closer()
