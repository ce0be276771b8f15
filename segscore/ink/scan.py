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

from segscore.engine.executor import reduce_windows
from segscore.engine.grid import IndexedView
from segscore.engine.plan import DEFAULT_WINDOW_PX, aligned_bands, bands, rows_for_pixels
from segscore.engine.sources import Source
from segscore.ink.quantize import N_LEVELS, MapStats, Quantizer, kernel_array, needs_stats, quantizer_for, tile_stats
from segscore.kernels.blocks import BOOT_BINS

_EMPTY_LEVELS = np.zeros((0, 0), np.int32)


@dataclass
class ScanSpec:
    """What to compute in one pass."""

    keep_zero: bool = False
    inner: int = 0
    block_px: int | None = None  # None: no block histograms
    paired: bool = False  # block histograms over the pixels the map and maps[-1] share
    tile_rows: int | None = None
    executor: object = None
    workers: int | None = None
    progress: object = None


@dataclass
class ScanResult:
    hist: np.ndarray  # (n_maps, 2, 65536) int64: ink, background
    zeros: np.ndarray  # (n_maps,) int64: supervised pixels that are exactly 0
    block_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    block_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    block_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def _merge_stats(a, b):
    return [x.merge(y) for x, y in zip(a, b)]


def quantizers(sources: list[Source], names: list[str], spec: ScanSpec) -> list[Quantizer]:
    """Each map's level rule; one statistics pass over the maps that need one."""
    need = [i for i, s in enumerate(sources) if needs_stats(s.dtype)]
    stats: dict[int, MapStats] = {}
    if need:
        shape = sources[0].shape
        region = (slice(0, shape[0]), slice(0, shape[1]))
        windows = bands(region, spec.tile_rows or rows_for_pixels(region, DEFAULT_WINDOW_PX))

        def task(window):
            return [tile_stats(sources[i].read(window)) for i in need]

        merged = reduce_windows(task, windows, _merge_stats, executor=spec.executor, workers=spec.workers)
        stats = dict(zip(need, merged or [MapStats() for _ in need]))
    return [quantizer_for(s.dtype, stats.get(i), name=names[i]) for i, s in enumerate(sources)]


def plan(shape, view: IndexedView, spec: ScanSpec):
    """The windows of one pass: the map inside its inner margin, in chunk-aligned bands."""
    h, w = shape
    m = spec.inner
    region = (slice(m, h - m), slice(m, w - m))
    if spec.tile_rows:
        return bands(region, spec.tile_rows)
    max_rows = rows_for_pixels(region, DEFAULT_WINDOW_PX)
    return aligned_bands(region, view.row_boundaries(), max_rows)


def scan(sources: list[Source], qs: list[Quantizer], view: IndexedView, spec: ScanSpec) -> ScanResult:
    """One pass over the tiles: class histograms of every map, and block histograms."""
    from segscore.kernels.blocks import block_entries
    from segscore.kernels.levels import class_histograms

    n = len(sources)
    shape = sources[0].shape
    boot = spec.block_px is not None
    nbx = -(-shape[1] // spec.block_px) if boot else 0
    boot_maps = ([0, n - 1] if spec.paired else [0]) if boot else []
    # The task closes over plain values only (not ``spec``, which holds the executor and the
    # progress callback), so a distributed scheduler can pickle it.
    keep_zero, block_px, paired = spec.keep_zero, spec.block_px, spec.paired

    def task(window):
        planes, ridx, cidx = view.read(window)
        ink, sup = planes
        codes = (np.asarray(sup) > 0).view(np.uint8) << 1
        codes |= (np.asarray(ink) > 0).view(np.uint8)
        hist = np.zeros((n, 2, N_LEVELS), np.int64)
        zeros = np.zeros(n, np.int64)
        levels = {}
        hh, ww = window[0].stop - window[0].start, window[1].stop - window[1].start
        for i, (src, q) in enumerate(zip(sources, qs)):
            values = kernel_array(src.read(window))
            out = np.empty((hh, ww), np.int32) if i in boot_maps else _EMPTY_LEVELS
            zeros[i] = class_histograms(values, q.passthrough, q.offset, q.scale, keep_zero,
                                        codes, ridx, cidx, hist[i, 0], hist[i, 1], out)
            if i in boot_maps:
                levels[i] = out
        part = {"hist": hist, "zeros": zeros, "entries": []}
        if boot:
            la = levels[0]
            lb = levels[n - 1] if paired else _EMPTY_LEVELS
            m = la.size * (2 if paired else 1)
            ob, ok, oc = np.empty(m, np.int64), np.empty(m, np.int32), np.empty(m, np.int64)
            k = block_entries(la, qs[0].top, lb, qs[n - 1].top if paired else 65535, codes, ridx, cidx,
                              window[0].start, window[1].start, block_px, nbx, ob, ok, oc)
            part["entries"] = [(ob[:k].copy(), ok[:k].copy(), oc[:k].copy())]
        return part

    def merge(a, b):
        a["hist"] += b["hist"]
        a["zeros"] += b["zeros"]
        a["entries"].extend(b["entries"])
        return a

    windows = plan(shape, view, spec)
    total = reduce_windows(task, windows, merge, executor=spec.executor, workers=spec.workers,
                           progress=spec.progress)
    if total is None:  # nothing inside the inner margin
        return ScanResult(np.zeros((n, 2, N_LEVELS), np.int64), np.zeros(n, np.int64))
    result = ScanResult(total["hist"], total["zeros"])
    if boot and total["entries"]:
        result.block_ids = np.concatenate([e[0] for e in total["entries"]])
        result.block_keys = np.concatenate([e[1] for e in total["entries"]])
        result.block_counts = np.concatenate([e[2] for e in total["entries"]])
    return result


@dataclass
class BlockTable:
    """Sparse block histograms in CSR form, blocks in raster order of the global grid."""

    block_ids: np.ndarray  # (B,) global ids of the blocks holding scored pixels
    indptr: np.ndarray  # (B + 1,)
    keys: np.ndarray  # (nnz,) set * 1024 + bin
    values: np.ndarray  # (nnz,)
    n_keys: int

    @property
    def n_blocks(self) -> int:
        return int(self.block_ids.size)

    def totals(self) -> np.ndarray:
        """The histogram of all blocks together (every block drawn once)."""
        return np.bincount(self.keys, weights=self.values, minlength=self.n_keys).astype(np.int64)


def block_table(result: ScanResult, paired: bool) -> BlockTable:
    """Combine the tiles' sparse entries: sort by (block, key) and add duplicates."""
    n_keys = (4 if paired else 2) * BOOT_BINS
    combined = result.block_ids * n_keys + result.block_keys
    counts = result.block_counts
    if combined.size > 1 and not np.all(combined[1:] > combined[:-1]):
        order = np.argsort(combined, kind="stable")
        combined, counts = combined[order], counts[order]
        starts = np.flatnonzero(np.r_[True, combined[1:] != combined[:-1]])
        counts = np.add.reduceat(counts, starts) if starts.size else counts
        combined = combined[starts]
    blocks = combined // n_keys
    keys = (combined % n_keys).astype(np.int64)
    block_ids, first = np.unique(blocks, return_index=True)
    indptr = np.r_[first, blocks.size].astype(np.int64)
    return BlockTable(block_ids, indptr, keys, counts.astype(np.int64), n_keys)
