"""Surface elements of a binary volume on its 2x2x2 corner grid, and the surface Dice between
two such surfaces at a tolerance.

Each position ``q`` of a grid one larger than a box ``lo..hi`` (inclusive) along every axis
takes the code of the eight voxels ``lo + q - 1 + (i, j, k)``, ``i, j, k`` in {0, 1}: bit
``7 - (4i + 2j + k)`` set where the voxel is foreground (voxels outside the box or the volume
count as background). A position is on the surface when its code is neither 0 nor 255; it
carries the area its code is given by a table (the caller's). This is the neighbourhood
coding of DeepMind's surface-distance (``compute_surface_distances``); the area table is
built in :mod:`segscore.topology.surface`.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def corner_codes(mask, lo0, lo1, lo2, codes):
    """Fill ``codes`` (uint8, shape ``(n0 + 1, n1 + 1, n2 + 1)`` for a box of ``n`` voxels from
    ``lo``) with the neighbourhood code of every corner position; returns the number of surface
    positions. ``mask``: uint8/bool volume, non-zero on the foreground.

    Notes: no check that the box lies in the volume."""
    s0, s1, s2 = mask.shape
    m0, m1, m2 = codes.shape
    n = 0
    for a in range(m0):
        for b in range(m1):
            for c in range(m2):
                code = 0
                for i in range(2):
                    x = lo0 + a - 1 + i
                    if x < 0 or x >= s0 or x < lo0 or x > lo0 + m0 - 2:
                        continue
                    for j in range(2):
                        y = lo1 + b - 1 + j
                        if y < 0 or y >= s1 or y < lo1 or y > lo1 + m1 - 2:
                            continue
                        for k in range(2):
                            z = lo2 + c - 1 + k
                            if z < 0 or z >= s2 or z < lo2 or z > lo2 + m2 - 2:
                                continue
                            if mask[x, y, z]:
                                code |= 1 << (7 - (4 * i + 2 * j + k))
                codes[a, b, c] = code
                if code != 0 and code != 255:
                    n += 1
    return n


@jit
def area_within(codes_a, codes_b, offsets, area):
    """``(total, within)``: the summed area of the surface positions of ``codes_a``, and of those
    with a surface position of ``codes_b`` at one of ``offsets`` (``(K, 3)`` int64, the integer
    offsets within the tolerance, nearest first). Kahan-compensated sums.

    Notes: both code grids have one shape (no check)."""
    m0, m1, m2 = codes_a.shape
    total = 0.0
    ct = 0.0
    within = 0.0
    cw = 0.0
    for a in range(m0):
        for b in range(m1):
            for c in range(m2):
                code = codes_a[a, b, c]
                if code == 0 or code == 255:
                    continue
                w = area[code]
                y = w - ct
                t = total + y
                ct = (t - total) - y
                total = t
                for q in range(offsets.shape[0]):
                    x0 = a + offsets[q, 0]
                    x1 = b + offsets[q, 1]
                    x2 = c + offsets[q, 2]
                    if x0 < 0 or x0 >= m0 or x1 < 0 or x1 >= m1 or x2 < 0 or x2 >= m2:
                        continue
                    other = codes_b[x0, x1, x2]
                    if other != 0 and other != 255:
                        y = w - cw
                        t = within + y
                        cw = (t - within) - y
                        within = t
                        break
    return total, within
