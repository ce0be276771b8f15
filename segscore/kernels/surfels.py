"""Surface elements of a binary volume on its 2x2x2 corner grid, and the surface Dice between
two such surfaces at a tolerance.

Each position ``q`` of a grid one larger than a box ``lo..hi`` (inclusive) along every axis
takes the code of the eight voxels ``lo + q - 1 + (i, j, k)``, ``i, j, k`` in {0, 1}: bit
``7 - (4i + 2j + k)`` set where the voxel is foreground (voxels outside the box or the volume
count as background). A position is on the surface when its code is neither 0 nor 255; it
carries the area its code is given by a table (the caller's). This is the neighbourhood
coding of DeepMind's surface-distance (``compute_surface_distances``); the area table is
built in :mod:`segscore.topology.surface`, which weighs the per-code counts of
:func:`surfel_counts` by it.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def corner_codes(mask, lo0, lo1, lo2, codes):
    """Fill ``codes`` (uint8, shape ``(n0 + 1, n1 + 1, n2 + 1)`` for a box of ``n`` voxels from
    ``lo``) with the neighbourhood code of every corner position; returns the number of surface
    positions. ``mask``: uint8/bool volume, non-zero on the foreground. The code of the corner
    ``(a, b, c)`` has bit ``7 - (4 i + 2 j + k)`` set when the voxel ``lo + (a, b, c) - 1 + (i, j, k)``
    lies in the box and the volume and is foreground.

    Row by row: each of a corner row's four voxel rows (i, j) is read once, the bits of ``k = 0``
    and ``k = 1`` being one voxel and its successor along the row (no test per voxel and corner).

    Notes: no check that the box lies in the volume."""
    s0, s1, s2 = mask.shape
    m0, m1, m2 = codes.shape
    # the box's voxels along the rows that are in the volume: z in [lo2, z_end)
    z_end = min(lo2 + m2 - 1, s2)
    nz = max(z_end - lo2, 0)  # corners 1..nz take the voxel at their c - 1, corners 0..nz - 1 at c
    n = 0
    for a in range(m0):
        for b in range(m1):
            for c in range(m2):
                codes[a, b, c] = 0
            for i in range(2):
                x = lo0 + a - 1 + i
                if x < 0 or x >= s0 or x < lo0 or x > lo0 + m0 - 2:
                    continue
                for j in range(2):
                    y = lo1 + b - 1 + j
                    if y < 0 or y >= s1 or y < lo1 or y > lo1 + m1 - 2:
                        continue
                    hi = 7 - (4 * i + 2 * j)  # k = 0: the voxel before the corner along the row
                    for c in range(nz):
                        if mask[x, y, lo2 + c]:
                            codes[a, b, c] |= 1 << (hi - 1)
                            codes[a, b, c + 1] |= 1 << hi
            for c in range(m2):
                if codes[a, b, c] != 0 and codes[a, b, c] != 255:
                    n += 1
    return n


@jit
def surfel_counts(codes_a, codes_b, offsets, lo0, lo1, lo2, hi0, hi1, hi2, total, within):
    """Add to ``total[code]`` (int64, 256) each surface position of ``codes_a`` in the box
    ``lo..hi`` (half-open, the grid's coordinates) and to ``within[code]`` those with a surface
    position of ``codes_b`` at one of ``offsets`` (``(K, 3)`` int64, the integer offsets within the
    tolerance, nearest first). Integer counts: a sum of them over boxes that tile the grid is the
    whole grid's, whatever the boxes.

    Notes: both code grids have one shape and the box lies in it (no check); positions of
    ``codes_b`` outside the grid count as no surface."""
    m0, m1, m2 = codes_a.shape
    for a in range(lo0, hi0):
        for b in range(lo1, hi1):
            for c in range(lo2, hi2):
                code = codes_a[a, b, c]
                if code == 0 or code == 255:
                    continue
                total[code] += 1
                for q in range(offsets.shape[0]):
                    x0 = a + offsets[q, 0]
                    x1 = b + offsets[q, 1]
                    x2 = c + offsets[q, 2]
                    if x0 < 0 or x0 >= m0 or x1 < 0 or x1 >= m1 or x2 < 0 or x2 >= m2:
                        continue
                    other = codes_b[x0, x1, x2]
                    if other != 0 and other != 255:
                        within[code] += 1
                        break
