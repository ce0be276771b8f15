"""Kernels that put a map's values on 65,536 integer levels and count them.

A level is either the value itself (uint8 and uint16 maps, ``passthrough``) or
``clip(rint((x - offset) * scale), 0, 65535)`` computed in float64. The policy that picks
``offset`` and ``scale`` (known 0..1, 0..255, 0..65535 scales, or a min-max stretch) lives in
:mod:`segscore.ink.quantize`; these kernels only apply it.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

N_LEVELS = 65536


@jit
def level_of(x, passthrough, offset, scale):
    """The level of one value: ``int(x)`` when ``passthrough``, else the clipped affine level."""
    if passthrough:
        return np.int64(x)
    v = np.rint((np.float64(x) - offset) * scale)
    if v < 0.0:
        return np.int64(0)
    if v > 65535.0:
        return np.int64(65535)
    return np.int64(v)


@jit
def value_stats(values, occ_unit, occ_byte, occ_word):
    """One pass over a 2D tile: range, non-finite count and level occupancy.

    Parameters
    ----------
    values : (h, w) array of any real dtype
    occ_unit, occ_byte, occ_word : (65536,) uint8
        Set to 1 at every level a finite in-range pixel takes when the map is read on the
        0..1 (x 65535), 0..255 (x 257) and 0..65535 (x 1) scales. Filled in place, so they
        accumulate over tiles.

    Returns
    -------
    lo, hi : float64
        Minimum and maximum over finite pixels (``inf``, ``-inf`` when there are none).
    n_nonfinite, n_finite : int64

    Notes
    -----
    Occupancy is recorded only for values inside [0, 65535]; a map with any value outside
    that range is stretched, and its occupancy on the known scales is never read.
    """
    lo = np.inf
    hi = -np.inf
    bad = 0
    good = 0
    no = np.bool_(False)  # a bool, not Literal[bool](False): level_of is compiled once
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            x = np.float64(values[i, j])
            if not np.isfinite(x):
                bad += 1
                continue
            good += 1
            if x < lo:
                lo = x
            if x > hi:
                hi = x
            if 0.0 <= x <= 65535.0:
                occ_unit[level_of(x, no, 0.0, 65535.0)] = 1
                occ_byte[level_of(x, no, 0.0, 257.0)] = 1
                occ_word[level_of(x, no, 0.0, 1.0)] = 1
    return lo, hi, bad, good


@jit
def label_codes(ink, sup, out):
    """The label codes :func:`class_histograms` reads: ``out = 2 * (sup > 0) + (ink > 0)``.

    Parameters
    ----------
    ink, sup : (h, w) uint8, C-contiguous
        A label window and its supervision mask (bool planes viewed as uint8).
    out : (h, w) uint8
        Receives the codes: bit 0 where ink, bit 1 where supervised.
    """
    for i in range(out.shape[0]):
        irow = ink[i]
        srow = sup[i]
        orow = out[i]
        for j in range(out.shape[1]):
            orow[j] = (srow[j] > 0) * 2 + (irow[j] > 0)


#: entries of one sub-table of :func:`byte_class_counts`: 4 label codes x 256 byte values
BYTE_TABLE = 1024


@jit
def byte_class_counts(values, other, codes, ridx, cidx, table, other_table):
    """Count a uint8 tile's pixels by label code and value, without a branch; with ``other``, a
    second map's tile over the same pixels in the same pass.

    Parameters
    ----------
    values : (h, w) uint8
        The map's window (its levels are its values).
    other : (h, w) uint8, or an empty array
        A second map's window (a control), counted into ``other_table``; its label codes are
        gathered once for both (1.44 ns a pixel pair against 2.0 for two passes).
    codes, ridx, cidx
        As in :func:`class_histograms`.
    table, other_table : (2 * BYTE_TABLE,) int64
        Accumulated in place: entry ``code * 256 + value`` of one of two sub-tables (even and odd
        columns, so that two neighbours of one value do not wait on each other's count). Every
        pixel is counted, supervised or not; the caller reads codes 2 (background) and 3 (ink).

    Notes
    -----
    About twice as fast as :func:`class_histograms` on ink maps, whose branches on the label
    codes mispredict along every stroke's edge (0.96 against 2.1 ns a pixel on one core).
    """
    w = values.shape[1]
    if other.size == 0:
        for i in range(values.shape[0]):
            crow = codes[ridx[i]]
            vrow = values[i]
            j = 0
            while j + 1 < w:
                table[((np.int64(crow[cidx[j]]) & 3) << 8) | np.int64(vrow[j])] += 1
                table[BYTE_TABLE + (((np.int64(crow[cidx[j + 1]]) & 3) << 8) | np.int64(vrow[j + 1]))] += 1
                j += 2
            if j < w:
                table[((np.int64(crow[cidx[j]]) & 3) << 8) | np.int64(vrow[j])] += 1
        return
    for i in range(values.shape[0]):
        crow = codes[ridx[i]]
        vrow = values[i]
        orow = other[i]
        j = 0
        while j + 1 < w:
            c0 = (np.int64(crow[cidx[j]]) & 3) << 8
            c1 = BYTE_TABLE + ((np.int64(crow[cidx[j + 1]]) & 3) << 8)
            table[c0 | np.int64(vrow[j])] += 1
            other_table[c0 | np.int64(orow[j])] += 1
            table[c1 + np.int64(vrow[j + 1])] += 1
            other_table[c1 + np.int64(orow[j + 1])] += 1
            j += 2
        if j < w:
            c0 = (np.int64(crow[cidx[j]]) & 3) << 8
            table[c0 | np.int64(vrow[j])] += 1
            other_table[c0 | np.int64(orow[j])] += 1


@jit
def class_histograms(values, passthrough, offset, scale, keep_zero, codes, ridx, cidx,
                     ink_hist, bg_hist, levels_out):
    """Count the scored pixels of a tile into ink and background level histograms.

    Parameters
    ----------
    values : (h, w) array, any real dtype
        The map's window.
    passthrough, offset, scale
        The quantization (see :func:`level_of`).
    keep_zero : bool
        Score pixels whose raw value is exactly 0 (otherwise they are "unpredicted").
    codes : (hl, wl) uint8
        Label window: bit 0 set where ink, bit 1 set where supervised (in the mask).
    ridx : (h,) int64, cidx : (w,) int64
        For each row and column of ``values``, the row and column of ``codes`` it reads
        (the nearest-neighbour grid, already relative to the label window).
    ink_hist, bg_hist : (65536,) int64
        Accumulated in place.
    levels_out : (h, w) int32, or an empty array
        When not empty, receives each pixel's level where it was scored and -1 elsewhere.

    Returns
    -------
    zero_in_mask : int64
        Supervised pixels whose raw value is exactly 0 (scored or not, per ``keep_zero``).

    Notes
    -----
    Does not check for NaN (the caller refuses maps holding any) or index bounds.
    """
    want_levels = levels_out.size > 0
    zeros = 0
    for i in range(values.shape[0]):
        crow = codes[ridx[i]]  # the row's labels and values, indexed once per row
        vrow = values[i]
        lrow = levels_out[i if want_levels else 0]  # without levels: an empty row, never written
        for j in range(values.shape[1]):
            if want_levels:
                lrow[j] = -1
            code = crow[cidx[j]]
            if code & 2 == 0:
                continue
            x = vrow[j]
            if x == 0:
                zeros += 1
                if not keep_zero:
                    continue
            lev = level_of(x, passthrough, offset, scale)
            if code & 1:
                ink_hist[lev] += 1
            else:
                bg_hist[lev] += 1
            if want_levels:
                lrow[j] = lev
    return zeros


@jit
def auc_rows(ink, bg, out):
    """Exact Mann-Whitney AUC (ties half) of each row pair of histograms.

    Parameters
    ----------
    ink, bg : (k, L) int64
        Histograms of the ink and background scores on the same L ordered levels.
    out : (k,) float64
        Receives ``(#pairs ink > bg + 0.5 #ties) / (n_ink * n_bg)``, or NaN where a class is
        empty.

    Notes
    -----
    The count of wins is kept doubled in int64 (``2 Σ ink·below + Σ ink·bg``) so it is
    exact; the only rounding is the final division. Counts up to 2**31 per class are safe.
    """
    k, n = ink.shape
    for r in range(k):
        below = np.int64(0)
        wins2 = np.int64(0)
        n_ink = np.int64(0)
        for lev in range(n):
            a = ink[r, lev]
            b = bg[r, lev]
            wins2 += 2 * a * below + a * b
            below += b
            n_ink += a
        if n_ink == 0 or below == 0:
            out[r] = np.nan
        else:
            out[r] = wins2 / (2.0 * np.float64(n_ink) * np.float64(below))
    return out
