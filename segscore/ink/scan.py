"""The streamed AUC pass: maps and labels in, level histograms and block histograms out.

One pass over the map's tiles reduces every map (the map, its control, a compared map) to
two 65,536-level histograms (ink, background) and, when a bootstrap is asked for, sparse
per-block 1,024-bin histograms on the global block grid. Everything downstream is a cheap
function of these sums, so the result does not depend on the tiles, and memory is set by
the tile, not the map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from segscore.engine import reduce
from segscore.engine.plan import aligned_bands, bands, plan_bands, rows_for_pixels
from segscore.io.grid import IndexedView
from segscore.io.sources import Source
from segscore.ink.quantize import N_LEVELS, MapStats, Quantizer, kernel_array, needs_stats, quantizer_for, tile_stats

#: bins of a bootstrap block histogram (``segscore.kernels.blocks.BOOT_BINS``, which a test holds equal:
#: that module imports numba, which this one leaves to :func:`start_loading` and the tasks)
BOOT_BINS = 1024

_EMPTY_LEVELS = np.zeros((0, 0), np.int32)
_EMPTY_BYTES = np.zeros((0, 0), np.uint8)
_EMPTY_TABLE = np.zeros(0, np.int64)
#: pixels of a window of the ink AUC pass: its labels are read once (a few bytes per pixel)
LABEL_WINDOW_PX = 1 << 23
#: pixels of a sub-band of an ink window: the maps are read and reduced in these
SUB_WINDOW_PX = 1 << 20


def ink_windows(shape, inner: int, row_boundaries, tile_rows=None) -> list[tuple]:
    """The windows of the ink AUC pass: the map inside its ``inner`` margin, in bands of
    ``tile_rows``, else of about :data:`LABEL_WINDOW_PX` aligned to the labels' chunk rows."""
    h, w = shape
    region = (slice(inner, h - inner), slice(inner, w - inner))
    if tile_rows:
        return bands(region, tile_rows)
    rows = rows_for_pixels(region, LABEL_WINDOW_PX)
    cuts = np.asarray(row_boundaries, np.int64)
    if cuts.size:  # a window a whole chunk row of the labels deep (up to 4x the budget): a window
        # shorter than the chunk rows decodes each of their chunks whole, once per window
        deepest = int(np.max(np.diff(np.concatenate(([0], cuts, [h])))))
        rows = max(rows, min(deepest, 4 * rows))
    return aligned_bands(region, cuts, rows)


def ink_sub_bands(window, width: int, *, tile_rows=None, block_px=None) -> list[tuple]:
    """The sub-bands an ink window reads its maps in (``tile_rows``, else about
    :data:`SUB_WINDOW_PX`); with bootstrap blocks of ``block_px`` they end on block rows, so a
    block is split only where a window ends."""
    rows = tile_rows or rows_for_pixels((slice(0, 1), slice(0, width)), SUB_WINDOW_PX)
    cuts = np.arange(0, window[0].stop, block_px) if block_px and not tile_rows else np.empty(0, np.int64)
    return aligned_bands(window, cuts, max(rows, block_px) if cuts.size else rows)


@dataclass
class ScanSpec:
    """What to compute in one pass."""

    keep_zero: bool = False
    inner: int = 0
    block_px: int | None = None  # None: no block histograms
    paired: bool = False  # block histograms over the pixels the map and maps[-1] share
    tile_rows: int | None = None
    executor: object = None
    threads: int | None = None
    progress: object = None


@dataclass
class ScanResult:
    hist: np.ndarray  # (n_maps, 2, 65536) int64: ink, background
    zeros: np.ndarray  # (n_maps,) int64: supervised pixels that are exactly 0
    block_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    block_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    block_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    n_grid: int | None = None  # blocks in the whole block grid


def start_loading(sources: list[Source], spec: ScanSpec):
    """Load the kernels a scan of ``sources`` calls, and the exact AUC's after it (numba's import, its
    first-dispatch set-up and the on-disk cache entries of the maps' dtypes: about 0.8 s of CPU, most
    of it holding the GIL) on
    a thread, so that the first windows' reads (file reads and zstd decodes, which release the GIL)
    run beside it instead of after it. Returns the thread (join it before the scan returns), or None
    where the tasks run elsewhere (dask, a cluster: the workers load their own kernels). A failure
    here is left to the real call to report."""
    import threading

    if spec.executor not in (None, "threads", "synchronous"):
        return None
    dtypes = [s.dtype for s in sources]
    boot = spec.block_px is not None

    def work():
        try:  # the dtypes as the kernels see them (kernel_array), and whether a statistics pass runs
            kinds = sorted({kernel_array(np.zeros((1, 1), d)).dtype.str for d in dtypes})
            stats = any(needs_stats(d) for d in dtypes)
            from segscore.kernels.levels import auc_rows, class_histograms, label_codes, value_stats

            codes = np.zeros((1, 1), np.uint8)
            label_codes(codes, codes, codes.copy())
            idx = np.zeros(1, np.int64)
            hist = np.zeros((2, N_LEVELS), np.int64)
            out = np.zeros((1, 1), np.int32)
            for kind in kinds:
                values = np.zeros((1, 1), np.dtype(kind))
                if stats:
                    occ = np.zeros((3, N_LEVELS), np.uint8)
                    value_stats(values, occ[0], occ[1], occ[2])
                if values.dtype == np.uint8:
                    count_bytes(values, codes, idx, idx, np.zeros(2 * BYTE_TABLE, np.int64))
                if values.dtype != np.uint8 or boot:
                    class_histograms(values, True, 0.0, 1.0, False, codes, idx, idx, hist[0], hist[1],
                                     out if boot else _EMPTY_LEVELS)
            if boot:
                from segscore.kernels.blocks import block_entries

                ob, ok, oc = np.zeros(4, np.int64), np.zeros(4, np.int16), np.zeros(4, np.int64)
                block_entries(out, 255, _EMPTY_LEVELS, 65535, codes, idx, idx, 0, 0, 1, 1, ob, ok, oc)
                if spec.paired:
                    block_entries(out, 255, out, 255, codes, idx, idx, 0, 0, 1, 1, ob, ok, oc)
            counts = np.zeros((1, 2), np.int64)  # the AUC of the histograms, after the scan
            auc_rows(counts, counts, np.empty(1, np.float64))
        except Exception:  # noqa: BLE001 - only a head start: the real call reports any problem
            pass

    thread = threading.Thread(target=work, name="segscore-kernels", daemon=True)
    thread.start()
    return thread


def _merge_stats(a, b):
    return [x.merge(y) for x, y in zip(a, b)]


#: bytes of label rows :func:`label_codes` makes at a time (they stay in the CPU's cache between its steps)
CODES_BLOCK_BYTES = 1 << 18


_BYTE_PLANES = (np.dtype(np.uint8), np.dtype(np.bool_))


def label_codes(ink: np.ndarray, sup: np.ndarray) -> np.ndarray:
    """The kernels' label codes of two planes of one shape: bit 0 where ``ink > 0``, bit 1 where
    ``sup > 0``. Planes of bytes (uint8, bool: nearly every label image) go through one kernel pass
    (:func:`segscore.kernels.levels.label_codes`, 3 ms for a 1,052 x 16,040 window where NumPy's
    steps take 35); any other type through NumPy a few rows at a time, each row block's three steps
    done while it is in the CPU's cache."""
    codes = np.empty(sup.shape, np.uint8)
    if codes.size == 0:
        return codes
    if ink.dtype in _BYTE_PLANES and sup.dtype in _BYTE_PLANES:
        from segscore.kernels.levels import label_codes as kernel

        kernel(np.ascontiguousarray(ink).view(np.uint8), np.ascontiguousarray(sup).view(np.uint8), codes)
        return codes
    step = max(1, CODES_BLOCK_BYTES // max(1, sup.shape[1]))
    is_ink = np.empty((min(step, sup.shape[0]), sup.shape[1]), np.bool_)
    for r in range(0, sup.shape[0], step):
        c = codes[r:r + step]
        np.greater(sup[r:r + step], 0, out=c.view(np.bool_))
        np.add(c, c, out=c)  # bit 1: supervised
        t = is_ink[:c.shape[0]]
        np.greater(ink[r:r + step], 0, out=t)
        np.bitwise_or(c, t.view(np.uint8), out=c)
    return codes


#: entries of one sub-table of :func:`segscore.kernels.levels.byte_class_counts` (a test holds them equal)
BYTE_TABLE = 1024


def byte_path(values: np.ndarray, q: Quantizer) -> bool:
    """Whether a map's tile can be counted by value and label code (:func:`fold_byte_table`): a
    uint8 map whose levels are its values. The caller keeps the level kernel where it needs each
    pixel's level (the bootstrap's maps)."""
    return values.dtype == np.uint8 and bool(q.passthrough)


def fold_byte_table(table: np.ndarray, ink_hist: np.ndarray, bg_hist: np.ndarray, keep_zero: bool) -> int:
    """Add a :func:`segscore.kernels.levels.byte_class_counts` table to the level histograms, as
    :func:`segscore.kernels.levels.class_histograms` would have counted the same pixels; returns
    the supervised pixels whose value is 0 (counted as level 0 only with ``keep_zero``)."""
    t = (table[:BYTE_TABLE] + table[BYTE_TABLE:]).reshape(4, 256)
    first = 0 if keep_zero else 1
    ink_hist[first:256] += t[3, first:]
    bg_hist[first:256] += t[2, first:]
    return int(t[2, 0] + t[3, 0])


def count_bytes(values, codes, ridx, cidx, table, other=None, other_table=None) -> None:
    """:func:`segscore.kernels.levels.byte_class_counts` of one uint8 tile into ``table`` (and of
    ``other``, a second map's tile over the same pixels, into ``other_table``)."""
    from segscore.kernels.levels import byte_class_counts

    byte_class_counts(values, _EMPTY_BYTES if other is None else other, codes, ridx, cidx, table,
                      _EMPTY_TABLE if other_table is None else other_table)


def byte_histograms(values, codes, ridx, cidx, ink_hist, bg_hist, keep_zero: bool) -> int:
    """One uint8 tile counted into level histograms as :func:`segscore.kernels.levels.class_histograms`
    counts it (passthrough levels, no per-pixel levels), by :func:`count_bytes` and
    :func:`fold_byte_table`; returns the supervised pixels whose value is 0."""
    table = np.zeros(2 * BYTE_TABLE, np.int64)
    count_bytes(values, codes, ridx, cidx, table)
    return fold_byte_table(table, ink_hist, bg_hist, keep_zero)


def max_block_entries(window, block_px: int, paired: bool, top_a: int, top_b: int) -> int:
    """An upper bound on the (block, key) entries of one tile, to size its buffers.

    A block piece of ``p`` pixels holds at most ``p`` keys per map, and never more keys than
    its sets have bins (a uint8 map fills 256 of the 1,024 bins).
    """
    (ys, xs) = window
    def pieces(a, b):
        edges = np.unique(np.r_[a, np.arange(-(-a // block_px) * block_px, b, block_px), b])
        return np.diff(edges)
    hs, ws = pieces(ys.start, ys.stop), pieces(xs.start, xs.stop)
    px = np.multiply.outer(hs, ws).astype(np.int64)
    cap_a = 2 * min(BOOT_BINS, top_a + 1)
    n = np.minimum(px, cap_a).sum()
    if paired:
        n += np.minimum(px, 2 * min(BOOT_BINS, top_b + 1)).sum()
    return int(max(n, 1))


def quantizers(sources: list[Source], names: list[str], spec: ScanSpec) -> list[Quantizer]:
    """Each map's level rule; one statistics pass over the maps that need one."""
    need = [i for i, s in enumerate(sources) if needs_stats(s.dtype)]
    stats: dict[int, MapStats] = {}
    if need:
        merged = reduce([sources[i] for i in need], lambda tile, *maps: [tile_stats(m) for m in maps], _merge_stats,
                        windows=plan_bands(sources[0].shape, tile_rows=spec.tile_rows), executor=spec.executor,
                        threads=spec.threads)
        stats = dict(zip(need, merged or [MapStats() for _ in need]))
    return [quantizer_for(s.dtype, stats.get(i), name=names[i]) for i, s in enumerate(sources)]


def scan(sources: list[Source], qs: list[Quantizer], view: IndexedView, spec: ScanSpec) -> ScanResult:
    """One pass over the tiles: class histograms of every map, and block histograms."""
    n = len(sources)
    shape = sources[0].shape
    view.check_map(shape)  # the kernels gather labels through the view without bounds checks
    boot = spec.block_px is not None
    nbx = -(-shape[1] // spec.block_px) if boot else 0
    boot_maps = ([0, n - 1] if spec.paired else [0]) if boot else []
    # The task closes over plain values only (not ``spec``, which holds the executor and the
    # progress callback), so a distributed scheduler can pickle it.
    keep_zero, block_px, paired, tile_rows, width = spec.keep_zero, spec.block_px, spec.paired, spec.tile_rows, shape[1]

    def read(window):  # a window's labels as codes (bit 0 ink, bit 1 supervised)
        return view.read(window, combine=lambda ink, sup: label_codes(np.asarray(ink), np.asarray(sup)))

    def task(tile, codes, ridx, cidx):
        # the kernels are imported here, not closed over: a numba dispatcher pickled with the task
        # would be rebuilt on a dask worker, its kernels loaded again by every job (~2 s a worker)
        from segscore.kernels.blocks import block_entries
        from segscore.kernels.levels import class_histograms

        # labels once per window (a whole chunk row of the store where the plan aligns to them),
        # the maps in sub-bands, so map buffers stay small while labels are decoded once
        window = tile.window
        hist = np.zeros((n, 2, N_LEVELS), np.int64)
        zeros = np.zeros(n, np.int64)
        tables = {}  # per map read as bytes: its code-by-value counts (byte_class_counts)
        entries = []
        for sub in ink_sub_bands(window, width, tile_rows=tile_rows, block_px=block_px):
            sub_ridx = ridx[sub[0].start - window[0].start: sub[0].stop - window[0].start]
            levels = {}
            hh, ww = sub[0].stop - sub[0].start, sub[1].stop - sub[1].start
            waiting = None  # a byte map read, waiting for a second to share its pass
            for i, (src, q) in enumerate(zip(sources, qs)):
                values = kernel_array(src.read(sub))
                if byte_path(values, q) and i not in boot_maps:
                    if i not in tables:
                        tables[i] = np.zeros(2 * BYTE_TABLE, np.int64)
                    if waiting is None:
                        waiting = (values, i)
                    else:
                        count_bytes(waiting[0], codes, sub_ridx, cidx, tables[waiting[1]], values, tables[i])
                        waiting = None
                    continue
                out = np.empty((hh, ww), np.int32) if i in boot_maps else _EMPTY_LEVELS
                zeros[i] += class_histograms(values, q.passthrough, q.offset, q.scale, keep_zero,
                                             codes, sub_ridx, cidx, hist[i, 0], hist[i, 1], out)
                if i in boot_maps:
                    levels[i] = out
            if waiting is not None:
                count_bytes(waiting[0], codes, sub_ridx, cidx, tables[waiting[1]])
            if boot:
                la = levels[0]
                lb = levels[n - 1] if paired else _EMPTY_LEVELS
                m = max_block_entries(sub, block_px, paired, qs[0].top, qs[n - 1].top if paired else 0)
                ob, ok, oc = np.empty(m, np.int64), np.empty(m, np.int16), np.empty(m, np.int64)
                k = block_entries(la, qs[0].top, lb, qs[n - 1].top if paired else 65535, codes, sub_ridx, cidx,
                                  sub[0].start, sub[1].start, block_px, nbx, ob, ok, oc)
                entries.append((ob[:k].copy(), ok[:k].copy(), oc[:k].copy()))
        for i, table in tables.items():
            zeros[i] += fold_byte_table(table, hist[i, 0], hist[i, 1], keep_zero)
        return {"hist": hist, "zeros": zeros, "entries": entries}

    def merge(a, b):
        a["hist"] += b["hist"]
        a["zeros"] += b["zeros"]
        a["entries"].extend(b["entries"])
        return a

    windows = ink_windows(shape, spec.inner, view.row_boundaries(), spec.tile_rows)
    total = reduce(read, task, merge, windows=windows, executor=spec.executor, threads=spec.threads,
                   progress=spec.progress)
    if total is None:  # nothing inside the inner margin
        return ScanResult(np.zeros((n, 2, N_LEVELS), np.int64), np.zeros(n, np.int64))
    result = ScanResult(total["hist"], total["zeros"])
    if boot:
        result.n_grid = nbx * -(-shape[0] // block_px)
    if boot and total["entries"]:
        result.block_ids = np.concatenate([e[0] for e in total["entries"]])
        result.block_keys = np.concatenate([e[1] for e in total["entries"]])
        result.block_counts = np.concatenate([e[2] for e in total["entries"]])
    return result


@dataclass
class BlockTable:
    """The tiles' sparse block histograms, with blocks numbered in raster order of the grid.

    Entries are (block row, key, count) triples in no particular order; a block split over
    tiles has several entries for one key, and they add up wherever they are used.
    """

    block_ids: np.ndarray  # (B,) global ids of the blocks holding scored pixels, ascending
    rows: np.ndarray  # (nnz,) int64: each entry's block, as an index into block_ids
    keys: np.ndarray  # (nnz,) int16: set * 1024 + bin
    values: np.ndarray  # (nnz,) int64
    n_keys: int

    @property
    def n_blocks(self) -> int:
        return int(self.block_ids.size)

    def totals(self) -> np.ndarray:
        """The histogram of all blocks together (every block drawn once)."""
        return np.bincount(self.keys, weights=self.values, minlength=self.n_keys).astype(np.int64)


#: block grids up to this many blocks are numbered through a dense lookup, not a sort
_DENSE_GRID_MAX = 1 << 26


def block_table(result: ScanResult, paired: bool) -> BlockTable:
    """Number the blocks that hold entries in raster order of the block grid."""
    n_keys = (4 if paired else 2) * BOOT_BINS
    ids = result.block_ids
    n_grid = result.n_grid
    if n_grid is not None and n_grid <= _DENSE_GRID_MAX:
        present = np.zeros(n_grid, np.bool_)
        present[ids] = True
        block_ids = np.flatnonzero(present)
        index = np.cumsum(present, dtype=np.int64) - 1
        rows = index[ids]
    else:
        block_ids, rows = np.unique(ids, return_inverse=True)
    return BlockTable(block_ids.astype(np.int64), rows.astype(np.int64, copy=False),
                      result.block_keys, result.block_counts.astype(np.int64, copy=False), n_keys)
