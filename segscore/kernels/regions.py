"""Per-box row sums and class histograms of a map band (column targets).

A column target scores a map inside rectangular boxes of its grid (text columns, gutters).
For one band of map rows, :func:`box_rows` adds every box's per-row sum of probabilities and
count of valid pixels, and counts the levels of its pixels into a class histogram. Every
output is additive over bands, and each grid row lies in exactly one band, so the result
does not depend on how the map is cut.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def box_rows(values, row0, col0, valid, boxes, kinds, passthrough, vdiv, row_sum, row_cnt, hist):
    """Accumulate one band of a map into per-box row profiles and class histograms.

    Parameters
    ----------
    values : (bh, bw) array, any real dtype
        The band: map rows ``row0 .. row0 + bh`` of the grid, columns ``col0 .. col0 + bw``.
    row0, col0 : int
        Grid coordinates of ``values[0, 0]``.
    valid : (H, W) uint8 over the whole grid, or a (0, 0) array for "every pixel valid"
    boxes : (k, 4) int64
        ``y0, y1, x0, x1`` in grid coordinates (ends excluded).
    kinds : (k,) int64
        Histogram row each box's pixels go to (0 or 1), or -1 for none.
    passthrough : bool
        Level = ``int(x)`` (uint8/uint16 maps); else ``clip(rint(x * 65535), 0, 65535)``.
    vdiv : float
        The probability of a pixel is ``x / vdiv`` (255, 65535 or 1).
    row_sum : (k, maxh) float64, row_cnt : (k, maxh) int64
        Row ``r`` of box ``b`` is grid row ``boxes[b, 0] + r``. Accumulated in place.
    hist : (2, 65536) int64
        Accumulated in place.

    Notes
    -----
    Boxes must lie inside the band's columns and ``valid`` must cover them; NaN is not
    checked (the caller refuses maps holding any).
    """
    bh = values.shape[0]
    use_valid = valid.shape[0] > 0
    for b in range(boxes.shape[0]):
        y0 = boxes[b, 0]
        y1 = boxes[b, 1]
        x0 = boxes[b, 2]
        x1 = boxes[b, 3]
        lo = max(y0, row0)
        hi = min(y1, row0 + bh)
        kind = kinds[b]
        for gy in range(lo, hi):
            i = gy - row0
            s = 0.0
            c = 0
            for gx in range(x0, x1):
                if use_valid and valid[gy, gx] == 0:
                    continue
                x = values[i, gx - col0]
                s += np.float64(x) / vdiv
                c += 1
                if kind >= 0:  # levels.level_of with offset 0, scale 65535 (see _jit: one file per kernel)
                    if passthrough:
                        lev = np.int64(x)
                    else:
                        v = np.rint(np.float64(x) * 65535.0)
                        if v < 0.0:
                            v = 0.0
                        elif v > 65535.0:
                            v = 65535.0
                        lev = np.int64(v)
                    hist[kind, lev] += 1
            row_sum[b, gy - y0] += s
            row_cnt[b, gy - y0] += c
