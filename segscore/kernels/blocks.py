"""Kernel of the block bootstrap: sparse per-block histograms of a tile.

A block histogram holds, for one square block of the map's global block grid, the counts of
its scored pixels per (set, bin): set 0 and 1 are the map's ink and background pixels, sets
2 and 3 the compared map's. Bins are ``level * 1023 // top`` (1,024 bins). Blocks are stored
sparsely (only the (set, bin) entries that occur), so any block size works, from 1 px up.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

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
    out_block : (m,) int64, out_key : (m,) int16, out_count : (m,) int64
        Filled with (block id = by * nbx + bx, set * 1024 + bin, count) entries. ``m`` must
        be at least the number of entries: per block piece, its scored pixels (twice that
        with ``levels_b``) or its sets' bins, whichever is fewer.

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
    # bin of each level, looked up instead of divided per pixel
    bin_a = np.empty(top_a + 1, np.int32)
    for v in range(top_a + 1):
        bin_a[v] = (v * 1023) // top_a
    bin_b = np.empty(top_b + 1, np.int32)
    for v in range(top_b + 1):
        bin_b[v] = (v * 1023) // top_b
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
                    key = cls * BOOT_BINS + bin_a[la]
                    if buf[key] == 0:
                        touched[nt] = key
                        nt += 1
                    buf[key] += 1
                    if paired:
                        key = (2 + cls) * BOOT_BINS + bin_b[lb]
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


@jit
def dense_blocks(rows, keys, values, column, b0, out):
    """Add sparse block entries into dense rows: ``out[rows[e] - b0, column[keys[e]]] += values[e]``.

    Entries whose block is outside ``b0 .. b0 + len(out)`` are skipped, so a caller can build
    the dense block histograms a chunk of blocks at a time. ``out`` is float64: the sums are
    integers, exact below 2**53.
    """
    nb = out.shape[0]
    for e in range(rows.shape[0]):
        r = rows[e] - b0
        if r < 0 or r >= nb:
            continue
        out[r, column[keys[e]]] += values[e]
    return out
