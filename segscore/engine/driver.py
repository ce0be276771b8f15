"""The one reduction driver every streamed pass of every family goes through.

``reduce(read, fn, merge, windows=plan)`` calls ``fn(tile, *read(tile.read_window))`` for
every window of ``plan`` (:mod:`segscore.engine.plan`) and folds the partial results with
``merge(a, b)`` in window order. ``read`` is a callable ``read(window) -> arrays``, or a
sequence of :class:`~segscore.io.sources.Source` objects of one shape: then each is read, and
the windows default to bands along axis 0 (rows in 2D, slices in 3D) of their extent, each
read with ``halo`` extra positions on both sides (clipped at the image); or None, when each
tile reads its own blocks (``fn(tile)``). The fold order is
fixed, so a result is the same whichever executor ran it and however many threads it had; a
pass whose partial sums are exact (integer counts) is also independent of the tile size.

The option vocabulary is the same everywhere (the API's keyword-only options, the CLI's
``--tile-rows`` and ``--threads``), checked by :func:`check_options`:

- ``tile_rows``: positions of axis 0 per band (default: bands of about ``target_px``
  elements, aligned to the first source's chunk rows where it has chunks);
- ``halo``: extra positions read on each side of a band (a kernel that looks ``t`` voxels
  away needs ``t + 1``); the band a tile owns is ``tile.own`` inside the blocks it is given;
- ``executor``: ``"threads"`` (default), ``"synchronous"``, ``"dask"`` or a
  ``distributed.Client``;
- ``threads``: threads of the ``"threads"`` executor (default: the CPUs, at most 8);
- ``progress``: a callable ``(done, total)``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

from segscore.engine.executor import reduce_windows
from segscore.engine.plan import DEFAULT_WINDOW_PX, plan_bands
from segscore.errors import ScoreError, whole_number

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


def check_options(*, tile_rows=None, halo=0, executor=None, threads=None, progress=None, band_rows=None,
                  workers=None) -> dict:
    """The engine options ``{tile_rows, executor, threads[, progress]}`` of a call; the older
    names ``band_rows`` and ``workers`` (accepted for one release) stand for ``tile_rows`` and
    ``threads``. ScoreError for an option outside the vocabulary (named as on the CLI), or an
    old and a new name that disagree."""
    for new, old, a, b in (("tile_rows", "band_rows", tile_rows, band_rows), ("threads", "workers", threads, workers)):
        if a is not None and b is not None and a != b:
            raise ScoreError(f"{new} {a!r} and its old name {old} {b!r} disagree; give {new} only")
    tile_rows = tile_rows if tile_rows is not None else band_rows
    threads = threads if threads is not None else workers
    for name, value, low in (("tile_rows", tile_rows, 1), ("threads", threads, 1)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
            raise ScoreError(f"{name} {value!r}: must be a whole number >= {low} (--{name.replace('_', '-')})")
    whole_number(halo, "halo", 0)
    opts = {"tile_rows": tile_rows, "executor": executor, "threads": threads}
    if progress is not None:
        opts["progress"] = progress
    if executor is None or isinstance(executor, str) and executor in EXECUTORS:
        return opts
    if not isinstance(executor, str) and callable(getattr(executor, "compute", None)) \
            and callable(getattr(executor, "submit", None)):
        return opts  # a distributed.Client
    raise ScoreError(f"executor {executor!r}: use 'threads', 'synchronous', 'dask' or a distributed.Client")


def _with_halo(window, halo, n):
    lead = window[0]
    return (slice(max(0, lead.start - halo), min(n, lead.stop + halo)),) + tuple(window[1:])


def reduce(read, fn: Callable, merge: Callable, *, windows=None, tile_rows=None, halo: int = 0, executor=None,
           threads=None, progress=None, target_px: int = DEFAULT_WINDOW_PX):
    """Fold ``fn(tile, *read(tile.read_window))`` over ``windows`` with ``merge``.

    ``read``: a callable ``read(window) -> arrays`` (then ``windows`` are required and read as
    they are, without a halo), :class:`~segscore.io.sources.Source` objects of one shape, or
    None: each tile reads its own blocks (``fn(tile)``, no arrays; ``windows`` required), for a
    pass that frees what it read before the tile ends (objects' out-of-core tiles).
    ``fn`` must return a partial result that ``merge`` adds to another. Returns None when there
    is nothing to read. See the module docstring for the options; ScoreError for one outside
    its range.
    """
    check_options(tile_rows=tile_rows, halo=halo, executor=executor, threads=threads)
    halo, n0 = int(halo), None
    if read is not None and not callable(read):
        sources = list(read)
        if not sources:
            raise ValueError("reduce needs sources or a read(window) callable")
        shape = sources[0].shape
        for s in sources[1:]:
            if s.shape != shape:
                raise ValueError(f"sources of one pass must share a shape: {s.shape} vs {shape}")
        n0, ch = shape[0], sources[0].chunks
        if windows is None:
            windows = plan_bands(shape, tile_rows=tile_rows, chunk_rows=ch[0] if ch else None, target_px=target_px)

        def read(window):
            return [s.read(window) for s in sources]
    elif windows is None:
        raise ValueError("reduce(read, ...) needs the windows to read")
    elif read is None:
        def read(window):  # the tiles read their own blocks
            return ()
    tiles = [Tile(i, tuple(w), tuple(w if n0 is None else _with_halo(w, halo, n0))) for i, w in enumerate(windows)]

    def task(tile):
        return fn(tile, *read(tile.read_window))

    return reduce_windows(task, tiles, merge, executor=executor, workers=threads, progress=progress)
