"""Raster kernels of the error operators: topology-safe surface erosion, ball painting.

Masks are handled padded by one zero voxel and flattened (C order) so neighbours are flat
offsets; 2D arrays are treated as 3D with a single plane.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def _patch_components(flat, centre, offsets, buf_lab, stack):
    """Connected components among the foreground neighbours of ``centre`` (within the patch)."""
    M = offsets.shape[0]
    for m in range(M):
        buf_lab[m] = 0
    n = 0
    for m in range(M):
        if buf_lab[m] != 0 or not flat[centre + offsets[m]]:
            continue
        n += 1
        buf_lab[m] = n
        top = 0
        stack[top] = m
        top += 1
        while top > 0:
            top -= 1
            a = stack[top]
            pa = centre + offsets[a]
            for b in range(M):
                if buf_lab[b] != 0 or not flat[centre + offsets[b]]:
                    continue
                d = pa - (centre + offsets[b])
                # neighbours of each other: the difference is itself a neighbour offset
                adj = False
                for k in range(M):
                    if offsets[k] == d:
                        adj = True
                        break
                if adj:
                    buf_lab[b] = n
                    stack[top] = b
                    top += 1
    return n


@jit
def erode_surface(flat, order, offsets, n_target):
    """Clear voxels of ``order`` one by one, skipping any whose foreground neighbours would not
    stay connected among themselves (or that has none); stops after ``n_target``.

    Parameters
    ----------
    flat : (P,) uint8 padded flat mask, modified in place.
    order : (K,) int64 flat indices of candidate (surface) voxels, in the order to try.
    offsets : (M,) int64 neighbour offsets (8 in 2D, 26 in 3D).
    n_target : int, voxels to clear.

    Returns the number cleared. Notes: keeps every component's count, so Betti-0 is unchanged;
    does not check that ``order`` holds foreground voxels (background ones are skipped).
    """
    M = offsets.shape[0]
    buf = np.zeros(M, dtype=np.int64)
    stack = np.zeros(M + 1, dtype=np.int64)
    done = 0
    for k in range(order.shape[0]):
        if done >= n_target:
            break
        p = order[k]
        if not flat[p]:
            continue
        flat[p] = 0
        if _patch_components(flat, p, offsets, buf, stack) != 1:
            flat[p] = 1
            continue
        done += 1
    return done


@jit
def paint_balls(shape3, centres, radii, comp, nearest, near_comp, out):
    """Paint a ball of ``radii[i]`` at each of ``centres[i]`` into ``out``, only on voxels whose
    owner (the component of their nearest skeleton voxel, ``near_comp[nearest[q]]``) equals
    ``comp[i]``.

    Parameters
    ----------
    shape3 : (3,) int64, the (unpadded) volume shape, a 2D image as (1, H, W).
    centres : (K, 3) int64; radii : (K,) float64; comp : (K,) int64.
    nearest : (Z*H*W,) int32 flat, each voxel's nearest skeleton voxel (a position in
        ``near_comp``); near_comp : (S,) int64, the component of each skeleton voxel.
    out : (Z*H*W,) bool flat, painted in place.

    Notes: a voxel q is in the ball when |q - c|^2 <= r^2.
    """
    Z, H, W = shape3[0], shape3[1], shape3[2]
    for i in range(centres.shape[0]):
        cz, cy, cx = centres[i, 0], centres[i, 1], centres[i, 2]
        r = radii[i]
        r2 = r * r
        ri = int(np.ceil(r))
        z0 = max(cz - ri, 0)
        z1 = min(cz + ri + 1, Z)
        if Z == 1:
            z0, z1 = 0, 1
        y0, y1 = max(cy - ri, 0), min(cy + ri + 1, H)
        x0, x1 = max(cx - ri, 0), min(cx + ri + 1, W)
        c = comp[i]
        for z in range(z0, z1):
            dz = z - cz
            for y in range(y0, y1):
                dy = y - cy
                for x in range(x0, x1):
                    dx = x - cx
                    if dz * dz + dy * dy + dx * dx <= r2:
                        q = (z * H + y) * W + x
                        if near_comp[nearest[q]] == c:
                            out[q] = True
