"""Kernels of the block bootstrap: sparse per-block histograms and resampled sums.

A block histogram holds, for one square block of the map's global block grid, the counts of
its scored pixels per (set, bin): set 0 and 1 are the map's ink and background pixels, sets
2 and 3 the compared map's. Bins are ``level * 1023 // top`` (1,024 bins). Blocks are stored
sparsely (only the (set, bin) entries that occur), so any block size works, from 1 px up.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit, prange

BOOT_BINS = 1024


@jit
def block_entries(levels_a, top_a, levels_b, top_b, codes, ridx, cidx, y0, x0, block_px, nbx,
                  out_block, out_key, out_count):
    """Sparse block histograms of one tile.

    Parameters
    ----------
    levels_a : (h, w) int32
        The map's level at each pixel of the tile, -1 where the pixel is not scored.
    top_a : int
        255 for a uint8 map, 65535 otherwise: bin = level * 1023 // top.
    levels_b : (h, w) int32, or (0, 0)
        The compared map's levels. When given, a pixel counts only where both are >= 0,
        and it adds one entry to each map's sets.
    codes, ridx, cidx
        The label window and nearest-neighbour indices, as in ``class_histograms``.
    y0, x0 : int
        The tile's position in the map: blocks are ``((y0 + i) // block_px, (x0 + j) //
        block_px)`` on a grid that starts at the map's pixel (0, 0).
    block_px, nbx : int
        Block side and the number of block columns of the whole map.
    out_block : (m,) int64, out_key : (m,) int32, out_count : (m,) int64
        Filled with (block id = by * nbx + bx, set * 1024 + bin, count) entries. ``m`` must
        be at least the number of scored pixels (twice that with ``levels_b``).

    Returns
    -------
    n : int64
        Entries written. A block split over two tiles yields entries in both; they add up.
    """
    h, w = levels_a.shape
    paired = levels_b.shape[0] > 0
    nkeys = 4 * BOOT_BINS if paired else 2 * BOOT_BINS
    buf = np.zeros(nkeys, np.int64)
    touched = np.empty(nkeys, np.int64)
    n = 0
    if h == 0 or w == 0:
        return n
    by_first = y0 // block_px
    by_last = (y0 + h - 1) // block_px
    bx_first = x0 // block_px
    bx_last = (x0 + w - 1) // block_px
    for by in range(by_first, by_last + 1):
        i_lo = max(by * block_px - y0, 0)
        i_hi = min((by + 1) * block_px - y0, h)
        for bx in range(bx_first, bx_last + 1):
            j_lo = max(bx * block_px - x0, 0)
            j_hi = min((bx + 1) * block_px - x0, w)
            nt = 0
            for i in range(i_lo, i_hi):
                r = ridx[i]
                for j in range(j_lo, j_hi):
                    la = levels_a[i, j]
                    if la < 0:
                        continue
                    if paired:
                        lb = levels_b[i, j]
                        if lb < 0:
                            continue
                    cls = 0 if codes[r, cidx[j]] & 1 else 1
                    key = cls * BOOT_BINS + (la * 1023) // top_a
                    if buf[key] == 0:
                        touched[nt] = key
                        nt += 1
                    buf[key] += 1
                    if paired:
                        key = (2 + cls) * BOOT_BINS + (lb * 1023) // top_b
                        if buf[key] == 0:
                            touched[nt] = key
                            nt += 1
                        buf[key] += 1
            if nt == 0:
                continue
            block = by * nbx + bx
            for t in range(nt):
                key = touched[t]
                out_block[n] = block
                out_key[n] = key
                out_count[n] = buf[key]
                buf[key] = 0
                n += 1
    return n


@jit(parallel=True)  # exception to the shared options: draws are independent rows, run in parallel
def resampled_histograms(counts, indptr, keys, values, out):
    """Histograms of resampled sets of blocks: ``out[d] = Σ_b counts[d, b] * H[b]``.

    Parameters
    ----------
    counts : (k, B) int64
        How many times each draw picked each block.
    indptr : (B + 1,) int64, keys : (nnz,) int64, values : (nnz,) int64
        The blocks' sparse histograms H in CSR form (block b's entries are
        ``keys[indptr[b]:indptr[b + 1]]``).
    out : (k, nkeys) int64
        Overwritten with the resampled histograms. Each draw owns its row, so the result
        does not depend on the number of threads.
    """
    k = counts.shape[0]
    nblocks = counts.shape[1]
    for d in prange(k):
        row = out[d]
        row[:] = 0
        for b in range(nblocks):
            c = counts[d, b]
            if c == 0:
                continue
            for e in range(indptr[b], indptr[b + 1]):
                row[keys[e]] += c * values[e]
    return out
