"""Physical length per skeleton voxel under an anisotropic voxel spacing.

Counting skeleton voxels measures a curve's chessboard (L-infinity) length in voxel units: a
digital line in direction ``t`` has ``L * |t|_inf / |t|_2`` voxels over Euclidean length ``L``.
The same curve measured in physical units has chessboard length ``sum |t * s|_inf / |t|_inf``
over its voxels (``s`` the spacing), so each voxel's weight is ``|t * s|_inf / |t|_inf``: 1 at
unit spacing (every count unchanged), and a mask resampled along an axis (stretched 2x there,
scored with spacing 0.5) keeps its length. ``t`` is the principal direction of the skeleton
voxels in a (2R+1)-wide box around the voxel (power iteration on their scatter matrix, in
physical coordinates' voxel units).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def chessboard_weights(skel3, coords, spacing, radius, out):
    """Physical chessboard length of each skeleton voxel ``coords[k]``.

    Parameters
    ----------
    skel3 : (Z, Y, X) uint8, the skeleton (a 2D one as (1, Y, X)).
    coords : (K, 3) int64, the skeleton voxels' coordinates.
    spacing : (3,) float64, the voxel size per axis (a 2D image's first axis: 1).
    radius : int, the half-width R of the box whose skeleton voxels give the direction.
    out : (K,) float64, filled with the weights. A voxel with no skeleton neighbour in its box
        gets the mean of the spacing over the image's axes (its direction is undefined).

    Notes
    -----
    Does not check that ``coords`` are skeleton voxels or inside the array.
    """
    Z, Y, X = skel3.shape
    planar = Z == 1
    mean_sp = (spacing[1] + spacing[2]) / 2.0 if planar else (spacing[0] + spacing[1] + spacing[2]) / 3.0
    for k in range(coords.shape[0]):
        z, y, x = coords[k, 0], coords[k, 1], coords[k, 2]
        c00 = c01 = c02 = c11 = c12 = c22 = 0.0
        n = 0
        for dz in range(-radius, radius + 1):
            zz = z + dz
            if zz < 0 or zz >= Z:
                continue
            for dy in range(-radius, radius + 1):
                yy = y + dy
                if yy < 0 or yy >= Y:
                    continue
                for dx in range(-radius, radius + 1):
                    xx = x + dx
                    if xx < 0 or xx >= X or skel3[zz, yy, xx] == 0:
                        continue
                    c00 += dz * dz
                    c01 += dz * dy
                    c02 += dz * dx
                    c11 += dy * dy
                    c12 += dy * dx
                    c22 += dx * dx
                    n += 1
        if n <= 1:
            out[k] = mean_sp
            continue
        # power iteration from the box's dominant diagonal axis
        v0, v1, v2 = 0.0, 0.0, 0.0
        if c00 >= c11 and c00 >= c22:
            v0 = 1.0
        elif c11 >= c22:
            v1 = 1.0
        else:
            v2 = 1.0
        v0 += 0.1
        v1 += 0.2
        v2 += 0.3
        if planar:
            v0 = 0.0
        for _ in range(60):
            a0 = c00 * v0 + c01 * v1 + c02 * v2
            a1 = c01 * v0 + c11 * v1 + c12 * v2
            a2 = c02 * v0 + c12 * v1 + c22 * v2
            norm = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if norm == 0.0:
                break
            v0, v1, v2 = a0 / norm, a1 / norm, a2 / norm
        t_inf = max(abs(v0), abs(v1), abs(v2))
        if t_inf == 0.0:
            out[k] = mean_sp
            continue
        p_inf = max(abs(v0) * spacing[0], abs(v1) * spacing[1], abs(v2) * spacing[2])
        out[k] = p_inf / t_inf
