"""Exact Euclidean distance to the background, evaluated at chosen voxels only.

``scipy.ndimage.distance_transform_edt`` computes the whole map; the curvilinear costs read it
only on skeleton voxels, so this kernel searches Chebyshev shells around each voxel outward
until no closer background voxel can exist. The distance is the exact minimum over
background voxels, so it equals scipy's value bit for bit (both are ``sqrt`` of the same
integer).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def _edt_one(mask3, z, y, x, sz2, sy2, sx2, smin, kmax):
    """The distance at voxel (z, y, x) (0 on background, inf without any background)."""
    Z, Y, X = mask3.shape
    if not mask3[z, y, x]:
        return 0.0
    best = -1.0
    k = 1
    while k <= kmax:
        for dz in range(-k, k + 1):
            zz = z + dz
            if zz < 0 or zz >= Z:
                continue
            for dy in range(-k, k + 1):
                yy = y + dy
                if yy < 0 or yy >= Y:
                    continue
                full = dz == k or dz == -k or dy == k or dy == -k
                step = 1 if full else 2 * k
                for dx in range(-k, k + 1, step):
                    xx = x + dx
                    if xx < 0 or xx >= X:
                        continue
                    if not mask3[zz, yy, xx]:
                        d2 = dz * dz * sz2 + dy * dy * sy2 + dx * dx * sx2
                        if best < 0 or d2 < best:
                            best = d2
        if best >= 0 and best < (k + 1) * (k + 1) * smin * smin:
            break
        k += 1
    return np.sqrt(best) if best >= 0 else np.inf


@jit
def edt_at(mask3, coords, sp3, out):
    """Distance from each voxel ``coords[i]`` to the nearest 0 of ``mask3``, in the unit of ``sp3``.

    Parameters
    ----------
    mask3 : (Z, Y, X) uint8 or bool, a 2D image as (1, Y, X). Voxels outside the array are not
        background (scipy's convention).
    coords : (K, 3) int64 voxel coordinates.
    sp3 : (3,) float64 voxel size per axis (scipy's ``sampling``); ones give voxel units, where
        every squared distance is an integer summed exactly, so the value is scipy's bit for bit.
    out : (K,) float64 output; ``inf`` where the array holds no background at all.

    Notes
    -----
    Does not check that ``coords`` lie inside the array or that ``sp3`` is positive. Shell ``k``
    (Chebyshev radius) holds no voxel nearer than ``k * min(sp3)``, so the search stops at the
    first shell beyond the best distance found.
    """
    Z, Y, X = mask3.shape
    kmax = max(Z, max(Y, X))
    sz2, sy2, sx2 = sp3[0] * sp3[0], sp3[1] * sp3[1], sp3[2] * sp3[2]
    smin = min(sp3[0], min(sp3[1], sp3[2])) if Z > 1 else min(sp3[1], sp3[2])
    for i in range(coords.shape[0]):
        out[i] = _edt_one(mask3, coords[i, 0], coords[i, 1], coords[i, 2], sz2, sy2, sx2, smin, kmax)


@jit
def window_edt_max(mask3, coords, out):
    """Max of the distance map (voxel units) over the 3x3(x3) window around each ``coords[i]``,
    clipped at the array edge (a 2D image as (1, Y, X): a 3x3 window); the map is evaluated on
    those windows only. ``out`` (K,) float64; inf where the array holds no background.

    One shell search around the window's centre serves all its voxels: every background voxel
    met is measured to each window voxel, and the search stops once no farther shell can hold a
    nearer background voxel for any of them (shell k is at least k - 1 from each).

    Notes
    -----
    Does not check that ``coords`` lie inside the array.
    """
    Z, Y, X = mask3.shape
    kmax = max(Z, max(Y, X)) + 1
    rz = 0 if Z == 1 else 1
    best = np.empty(27)
    for i in range(coords.shape[0]):
        z, y, x = coords[i, 0], coords[i, 1], coords[i, 2]
        for j in range(27):
            best[j] = -1.0  # -1: outside the array (not a window voxel); else the best d2 so far (inf: none)
        for oz in range(-rz, rz + 1):
            for oy in range(-1, 2):
                for ox in range(-1, 2):
                    zz, yy, xx = z + oz, y + oy, x + ox
                    if 0 <= zz < Z and 0 <= yy < Y and 0 <= xx < X:
                        best[(oz + 1) * 9 + (oy + 1) * 3 + (ox + 1)] = np.inf
        k = 0
        while k <= kmax:
            for dz in range(-k, k + 1):
                zz = z + dz
                if zz < 0 or zz >= Z:
                    continue
                for dy in range(-k, k + 1):
                    yy = y + dy
                    if yy < 0 or yy >= Y:
                        continue
                    full = dz == k or dz == -k or dy == k or dy == -k
                    step = 1 if (full or k == 0) else 2 * k
                    for dx in range(-k, k + 1, step):
                        xx = x + dx
                        if xx < 0 or xx >= X or mask3[zz, yy, xx]:
                            continue
                        for oz in range(-rz, rz + 1):
                            for oy in range(-1, 2):
                                for ox in range(-1, 2):
                                    j = (oz + 1) * 9 + (oy + 1) * 3 + (ox + 1)
                                    if best[j] < 0:
                                        continue
                                    a, b, c = dz - oz, dy - oy, dx - ox
                                    d2 = float(a * a + b * b + c * c)
                                    if d2 < best[j]:
                                        best[j] = d2
            worst = 0.0
            for j in range(27):
                if best[j] > worst:
                    worst = best[j]
            if worst < k * k:  # shell k + 1 and beyond are at least k from every window voxel
                break
            k += 1
        m = 0.0
        for j in range(27):
            if best[j] > m:
                m = best[j]
        out[i] = np.sqrt(m) if m < np.inf else np.inf
