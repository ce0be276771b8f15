"""Reachable-length kernel: reference-skeleton voxels counted through a prediction's components.

Every reference-skeleton voxel ``k`` carries its reference component ``rl[k]`` (1..C) and the
label ``pl[k]`` of the prediction's connected component it falls in (0: background).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def root_labels(rl, pl, coords, root_k, wanted, out):
    """Prediction label reached from each wanted reference component's root.

    Parameters
    ----------
    rl, pl : (K,) int64, reference component and prediction label of each skeleton voxel.
    coords : (K, ndim) float64, voxel coordinates.
    root_k : (C + 1,) int64, the root voxel (an index into the K voxels) of component c, -1 if none.
    wanted : (C + 1,) bool, components to resolve.
    out : (C + 1,) int64 output: the label at the root; where the root voxel is background, the
        label at the nearest surviving voxel of the same component (first in voxel order on
        ties); 0 when none of the component survives or it is not wanted.

    Notes
    -----
    Does not check that labels are in range.
    """
    C1 = root_k.shape[0]
    best = np.empty(C1, np.float64)  # not np.full: its overload compiles on a first run
    for c in range(C1):
        best[c] = np.inf
    ndim = coords.shape[1]
    need = False
    for c in range(C1):
        out[c] = 0
        if wanted[c] and root_k[c] >= 0:
            out[c] = pl[root_k[c]]
            if out[c] == 0:
                need = True
    if not need:
        return
    for k in range(rl.shape[0]):
        c = rl[k]
        if not wanted[c] or root_k[c] < 0 or pl[k] == 0 or pl[root_k[c]] != 0:
            continue
        d = 0.0
        r = root_k[c]
        for j in range(ndim):
            t = coords[k, j] - coords[r, j]
            d += t * t
        if d < best[c]:
            best[c] = d
            out[c] = pl[k]


@jit
def count_reached(rl, pl, target):
    """Number of voxels ``k`` with ``target[rl[k]] != 0`` and ``pl[k] == target[rl[k]]``."""
    n = 0
    for k in range(rl.shape[0]):
        t = target[rl[k]]
        if t != 0 and pl[k] == t:
            n += 1
    return n
