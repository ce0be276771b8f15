"""Nearest candidate voxel within a small radius, for integer voxel positions.

The candidates are sorted by flat voxel index once; each query then walks the integer offsets
of the ball in order of increasing squared length and looks each shifted voxel up by binary
search, stopping after the first length at which a candidate exists. Besides the nearest
candidate it reports whether candidates of different keys lie at that same distance (a tie
whose resolution a caller may need to take from elsewhere).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def search_left(values, x):
    """The first i with ``values[i] >= x`` in an ascending ``values`` (np.searchsorted's "left"),
    by a binary search: numba's own searchsorted compiles five overloads, about 0.3 s of a first run."""
    i = 0
    hi = values.shape[0]
    while i < hi:
        mid = (i + hi) >> 1
        if values[mid] < x:
            i = mid + 1
        else:
            hi = mid
    return i


@jit
def nearest_within(shape3, cand_flat, cand_order, cand_key, queries, offsets, off_d2, best_d2, best, tied):
    """Nearest candidate of each query voxel within the ball given by ``offsets``.

    Parameters
    ----------
    shape3 : (3,) int64 array shape (2D as (1, Y, X)).
    cand_flat : (C,) int64 flat indices of the candidate voxels, sorted ascending.
    cand_order : (C,) int64 candidate number of each sorted entry (ascending among equal voxels).
    cand_key : (C,) int64 key of each candidate (by candidate number).
    queries : (Q, 3) int64 voxel coordinates.
    offsets, off_d2 : (K, 3) int64 offsets and their squared lengths, sorted by length
        (``segscore.kernels.fibers.ball_offsets``).
    best_d2 : (Q,) int64 output, squared distance to the nearest candidate, -1 if none.
    best : (Q,) int64 output, the lowest-numbered candidate at that distance, -1 if none.
    tied : (Q,) bool output, True when candidates of different keys lie at that distance.

    Notes
    -----
    Does not check that the queries lie inside the array or that ``cand_flat`` is sorted.
    """
    Z, Y, X = shape3[0], shape3[1], shape3[2]
    C = cand_flat.shape[0]
    for q in range(queries.shape[0]):
        best_d2[q] = -1
        best[q] = -1
        tied[q] = False
        key = np.int64(0)
        for k in range(offsets.shape[0]):
            if best_d2[q] >= 0 and off_d2[k] > best_d2[q]:
                break
            z = queries[q, 0] + offsets[k, 0]
            y = queries[q, 1] + offsets[k, 1]
            x = queries[q, 2] + offsets[k, 2]
            if z < 0 or z >= Z or y < 0 or y >= Y or x < 0 or x >= X:
                continue
            f = (z * Y + y) * X + x
            i = search_left(cand_flat, f)
            while i < C and cand_flat[i] == f:
                c = cand_order[i]
                if best[q] < 0:
                    best_d2[q] = off_d2[k]
                    best[q] = c
                    key = cand_key[c]
                else:
                    if cand_key[c] != key:
                        tied[q] = True
                    if c < best[q]:
                        best[q] = c
                i += 1
