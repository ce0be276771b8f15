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
def _window_search(mask3, z, y, x, sz2, sy2, sx2, smin, w, best):
    """Squared distance from each voxel of the (2w+1)^d window around (z, y, x) (w 0 or 1; a
    2D image's window is flat) to its nearest background voxel, into ``best`` (27,): slot
    ``(oz+1)*9 + (oy+1)*3 + (ox+1)`` for offset (oz, oy, ox); -1 for offsets outside the array or
    the window, inf where no background exists. One search over Chebyshev shells around the
    centre serves every window voxel; shell k + 1 is at least (k + 1 - w) * min(spacing) from each,
    so the search stops once every window voxel has a nearer background voxel than that."""
    Z, Y, X = mask3.shape
    kmax = max(Z, max(Y, X)) + 1
    rz = 0 if Z == 1 else w
    for j in range(27):
        best[j] = -1.0
    for oz in range(-rz, rz + 1):
        for oy in range(-w, w + 1):
            for ox in range(-w, w + 1):
                if 0 <= z + oz < Z and 0 <= y + oy < Y and 0 <= x + ox < X:
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
                        for oy in range(-w, w + 1):
                            for ox in range(-w, w + 1):
                                j = (oz + 1) * 9 + (oy + 1) * 3 + (ox + 1)
                                if best[j] < 0:
                                    continue
                                a, b, c = dz - oz, dy - oy, dx - ox
                                d2 = a * a * sz2 + b * b * sy2 + c * c * sx2
                                if d2 < best[j]:
                                    best[j] = d2
        worst = 0.0
        for j in range(27):
            if best[j] > worst:
                worst = best[j]
        reach = (k + 1 - w) * smin
        if worst < reach * reach:
            break
        k += 1


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
    first shell beyond the best distance found (:func:`_window_search` with a one-voxel window).
    """
    Z = mask3.shape[0]
    sz2, sy2, sx2 = sp3[0] * sp3[0], sp3[1] * sp3[1], sp3[2] * sp3[2]
    smin = min(sp3[0], min(sp3[1], sp3[2])) if Z > 1 else min(sp3[1], sp3[2])
    best = np.empty(27, np.float64)
    for i in range(coords.shape[0]):
        _window_search(mask3, coords[i, 0], coords[i, 1], coords[i, 2], sz2, sy2, sx2, smin, np.int64(0), best)  # int64, not a literal: one compile
        out[i] = np.sqrt(best[13])


@jit
def window_edt_max(mask3, coords, out):
    """Max of the distance map (voxel units) over the 3x3(x3) window around each ``coords[i]``,
    clipped at the array edge (a 2D image as (1, Y, X): a 3x3 window); the map is evaluated on
    those windows only, by one shell search per window (:func:`_window_search`). ``out`` (K,)
    float64; inf where the array holds no background.

    Notes
    -----
    Does not check that ``coords`` lie inside the array.
    """
    best = np.empty(27, np.float64)
    for i in range(coords.shape[0]):
        _window_search(mask3, coords[i, 0], coords[i, 1], coords[i, 2], 1.0, 1.0, 1.0, 1.0, np.int64(1), best)
        m = 0.0
        for j in range(27):
            if best[j] > m:
                m = best[j]
        out[i] = np.sqrt(m)


@jit
def _voronoi_line(out, base, step, length, axis, coor, sk, shape3, lid, fc, g):
    """One line of the exact feature transform (Maurer, Qi and Raghavan 2003) along ``axis``:
    each voxel of the line takes the feature nearest it among the features its line's voxels
    hold. Arithmetic and comparisons as scipy's ``_VoronoiFT`` makes them (exact on integer
    coordinates), so equidistant features resolve as there."""
    ny, nx = shape3[1], shape3[2]
    n = 0
    for ii in range(length):
        f = out[base + ii * step]
        lid[ii] = f
        if f >= 0:
            v = sk[f]
            z = v // (ny * nx)
            r = v - z * ny * nx
            y = r // nx
            fc[ii, 0] = z
            fc[ii, 1] = y
            fc[ii, 2] = r - y * nx
            n += 1
    if n == 0:
        return
    l = -1
    for ii in range(length):
        if lid[ii] < 0:
            continue
        fd = fc[ii, axis]
        wr = 0.0
        for jj in range(3):
            if jj != axis:
                tw = fc[ii, jj] - coor[jj]
                wr += tw * tw
        while l >= 1:
            i1 = g[l]
            f1 = fc[i1, axis]
            i2 = g[l - 1]
            a = f1 - fc[i2, axis]
            b = fd - f1
            c = a + b
            ur = 0.0
            vr = 0.0
            for jj in range(3):
                if jj != axis:
                    tu = fc[i2, jj] - coor[jj]
                    tv = fc[i1, jj] - coor[jj]
                    ur += tu * tu
                    vr += tv * tv
            if c * vr - b * ur - a * wr - a * b * c <= 0.0:
                break
            l -= 1
        l += 1
        g[l] = ii
    maxl = l
    l = 0
    for ii in range(length):
        d1 = 0.0
        for jj in range(3):
            t = fc[g[l], jj] - (ii if jj == axis else coor[jj])
            d1 += t * t
        while l < maxl:
            d2 = 0.0
            for jj in range(3):
                t = fc[g[l + 1], jj] - (ii if jj == axis else coor[jj])
                d2 += t * t
            if d1 <= d2:
                break
            d1 = d2
            l += 1
        out[base + ii * step] = lid[g[l]]


@jit
def nearest_feature(shape3, sk, out):
    """For every voxel, the feature voxel ``scipy.ndimage.distance_transform_edt(~features,
    return_indices=True)`` assigns it, as its position in ``sk``.

    Parameters
    ----------
    shape3 : (3,) int64 array shape (2D as (1, Y, X)).
    sk : (K,) int64 flat C-order indices of the feature voxels, ascending, K >= 1.
    out : (Z*Y*X,) int32 output (flat, C order): the position in ``sk`` of each voxel's feature.

    The transform runs along axis 0, then 1, then 2, each line keeping the features of the
    previous pass (scipy's order; a 2D image's leading axis of length 1 changes no sum), so
    ties between equidistant features go as scipy's do. Memory: ``out`` and one line's buffers.
    """
    nz, ny, nx = shape3[0], shape3[1], shape3[2]
    out[:] = -1
    for k in range(sk.shape[0]):
        out[sk[k]] = k
    longest = max(nz, max(ny, nx))
    lid = np.empty(longest, np.int64)
    fc = np.empty((longest, 3))
    g = np.empty(longest, np.int64)
    coor = np.zeros(3, np.float64)
    # typed axes and step, not Literal[int]s: _voronoi_line compiled for one signature, not three
    ax0, ax1, ax2 = np.int64(0), np.int64(1), np.int64(2)
    if nz > 1:
        for y in range(ny):
            for x in range(nx):
                coor[1] = y
                coor[2] = x
                _voronoi_line(out, y * nx + x, ny * nx, nz, ax0, coor, sk, shape3, lid, fc, g)
    for z in range(nz):
        for x in range(nx):
            coor[0] = z
            coor[2] = x
            _voronoi_line(out, z * ny * nx + x, nx, ny, ax1, coor, sk, shape3, lid, fc, g)
    coor[2] = 0.0
    for z in range(nz):
        for y in range(ny):
            coor[0] = z
            coor[1] = y
            _voronoi_line(out, (z * ny + y) * nx, ax1, nx, ax2, coor, sk, shape3, lid, fc, g)
