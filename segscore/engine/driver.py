"""The one reduction driver every streamed pass of every family goes through.

``reduce(sources, chunk_fn, combine)`` cuts the sources' shared extent into bands along axis 0
(rows in 2D, slices in 3D), reads each band of every source with ``halo`` extra positions on
both sides (clipped at the image), calls ``chunk_fn(tile, *blocks)`` and folds the partial
results with ``combine(a, b)`` in band order. The fold order is fixed, so a result is the same
whichever executor ran it and however many threads it had; a pass whose partial sums are
exact (integer counts) is also independent of the tile size.

The option vocabulary is the same everywhere (the API's keyword-only options, the CLI's
``--tile-rows`` and ``--threads``):

- ``tile_rows``: positions of axis 0 per band (default: bands of about ``target_px``
  elements, aligned to the first source's chunk rows where it has chunks);
- ``halo``: extra positions read on each side of a band (a kernel that looks ``t`` voxels
  away needs ``t + 1``); the band a tile owns is ``tile.own`` inside the blocks it is given;
- ``executor``: ``"threads"`` (default), ``"synchronous"``, ``"dask"`` or a
  ``distributed.Client``;
- ``threads``: threads of the ``"threads"`` executor (default: the CPUs, at most 8);
- ``progress``: a callable ``(done, total)``.

A pass that reads its inputs its own way (through an index map, say) passes no sources and
reads from ``tile.window``/``tile.read_window`` itself; it may give its own ``windows``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from segscore.engine.executor import reduce_windows
from segscore.engine.plan import DEFAULT_WINDOW_PX, aligned_bands, bands, rows_for_pixels
from segscore.errors import ScoreError

EXECUTORS = ("threads", "synchronous", "dask")


@dataclass(frozen=True)
class Tile:
    """One band of a pass: the window it owns and the (larger) window read for it."""

    index: int
    window: tuple  # owned positions, global coordinates
    read_window: tuple  # window plus the halo along axis 0, clipped to the image

    @property
    def own(self) -> tuple:
        """The owned window in the coordinates of the blocks read for this tile."""
        lo = self.window[0].start - self.read_window[0].start
        return (slice(lo, lo + self.window[0].stop - self.window[0].start),) + tuple(
            slice(None) for _ in self.window[1:])

    @property
    def offset(self) -> int:
        """Axis-0 position of the blocks' first row in the image."""
        return self.read_window[0].start


def check_options(*, tile_rows=None, halo=0, executor=None, threads=None) -> None:
    """Raise ScoreError for an option outside the vocabulary (named as on the CLI)."""
    for name, value, low in (("tile_rows", tile_rows, 1), ("threads", threads, 1)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
            raise ScoreError(f"{name} {value!r}: must be a whole number >= {low} (--{name.replace('_', '-')})")
    if isinstance(halo, bool) or not isinstance(halo, numbers.Integral) or int(halo) < 0:
        raise ScoreError(f"halo {halo!r}: must be a whole number >= 0")
    if executor is None or isinstance(executor, str) and executor in EXECUTORS:
        return
    if not isinstance(executor, str) and callable(getattr(executor, "compute", None)) \
            and callable(getattr(executor, "submit", None)):
        return  # a distributed.Client
    raise ScoreError(f"executor {executor!r}: use 'threads', 'synchronous', 'dask' or a distributed.Client")


def plan_bands(shape, *, tile_rows=None, chunk_rows=None, target_px=DEFAULT_WINDOW_PX) -> list[tuple]:
    """Bands along axis 0 covering ``shape``: ``tile_rows`` each, or about ``target_px``
    elements aligned to ``chunk_rows``."""
    region = tuple(slice(0, int(n)) for n in shape)
    if not shape or shape[0] == 0:
        return []
    if tile_rows:
        return bands(region, int(tile_rows))
    rows = rows_for_pixels(region, target_px)
    if chunk_rows:
        ch = int(chunk_rows)
        rows = max(ch, rows // ch * ch)
        return aligned_bands(region, np.arange(ch, shape[0], ch), rows)
    return bands(region, rows)


def _with_halo(window, halo, n):
    lead = window[0]
    return (slice(max(0, lead.start - halo), min(n, lead.stop + halo)),) + tuple(window[1:])


def reduce(sources: Sequence, chunk_fn: Callable, combine: Callable, *, tile_rows=None, halo: int = 0,
           executor=None, threads=None, progress=None, windows=None, target_px: int = DEFAULT_WINDOW_PX):
    """Fold ``chunk_fn(tile, *blocks)`` over the bands of ``sources`` with ``combine``.

    ``sources`` are :class:`~segscore.io.sources.Source` objects of one shape; ``chunk_fn`` must return a partial result that ``combine`` adds to
    another. Returns None when there is nothing to read. See the module docstring for the
    options; ScoreError for one outside its range.
    """
    check_options(tile_rows=tile_rows, halo=halo, executor=executor, threads=threads)
    halo = int(halo)
    sources = list(sources)
    if windows is None:
        if not sources:
            raise ValueError("reduce needs sources or explicit windows")
        shape = sources[0].shape
        for s in sources[1:]:
            if s.shape != shape:
                raise ValueError(f"sources of one pass must share a shape: {s.shape} vs {shape}")
        ch = sources[0].chunks
        windows = plan_bands(shape, tile_rows=tile_rows, chunk_rows=ch[0] if ch else None, target_px=target_px)
    n0 = sources[0].shape[0] if sources else None
    tiles = []
    for i, w in enumerate(windows):
        rw = _with_halo(w, halo, n0) if n0 is not None else w
        tiles.append(Tile(i, tuple(w), tuple(rw)))

    def task(tile):
        blocks = [s.read(tile.read_window) for s in sources]
        return chunk_fn(tile, *blocks)

    return reduce_windows(task, tiles, combine, executor=executor, workers=threads, progress=progress)


def resolve_aliases(*, tile_rows=None, threads=None, band_rows=None, workers=None) -> tuple:
    """``(tile_rows, threads)`` from the vocabulary's names or their older spellings
    (``band_rows``, ``workers``: accepted for one release); ScoreError when both are given
    and differ."""
    for new, old, a, b in (("tile_rows", "band_rows", tile_rows, band_rows), ("threads", "workers", threads, workers)):
        if a is not None and b is not None and a != b:
            raise ScoreError(f"{new} {a!r} and its old name {old} {b!r} disagree; give {new} only")
    return (tile_rows if tile_rows is not None else band_rows), (threads if threads is not None else workers)
