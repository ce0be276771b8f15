"""Surface Dice at a tolerance, as DeepMind's surface-distance computes it
(``compute_surface_dice_at_tolerance(compute_surface_distances(gt, pred, spacing), tau)``).

Definition: both masks are cut to the bounding box of their union; every corner position of
that box (a grid one larger along each axis) gets the code of its 2x2x2 voxels
(:mod:`segscore.kernels.surfels`); the surface is the positions whose code is neither all
background nor all foreground, each weighted by the area of the marching-cubes surface its
code stands for under the spacing. Each surface position of one mask counts as within the
tolerance when the other mask has a surface position at Euclidean distance ``<= tau`` (in the
spacing's unit). Surface Dice = (area of G within tau of P + area of P within tau of G) /
(area of G + area of P).

The area of a code is the area, in the spacing's unit, of the classic marching-cubes
(Lorensen-Cline) triangulation of its 2x2x2 cube at level 1/2 -- taken for the code itself
when at most four of its corners are foreground and for its complement otherwise (so a code
and its complement have one area). That is DeepMind's table (checked for all 256 codes at
three spacings; tests/topology/test_surfaces.py pins it through recorded answers). The
triangles come from scikit-image's ``marching_cubes(method="lorensen")`` on the unit cube
and are measured here in float64.

Why not :mod:`segscore.metrics.surface`: its normalized surface Dice counts surface *voxels*
once each and differs from DeepMind's area-weighted surfels by up to 0.16; this score is
defined by DeepMind's, so it has its own surfels. Memory: one byte per corner position of the
whole grid for each mask.
"""

from __future__ import annotations

import functools
import math

import numpy as np


@functools.lru_cache(maxsize=16)
def _unit_triangles():
    """Per code: the marching-cubes triangles of the unit cube, float64 ``(T, 3, 3)``."""
    from skimage.measure import marching_cubes

    out = []
    for code in range(256):
        cube = np.zeros((2, 2, 2), np.float64)
        for i in range(2):
            for j in range(2):
                for k in range(2):
                    if code & (1 << (7 - (4 * i + 2 * j + k))):
                        cube[i, j, k] = 1.0
        if bin(code).count("1") > 4:
            cube = 1.0 - cube
        if cube.min() == cube.max():
            out.append(np.zeros((0, 3, 3)))
            continue
        verts, faces, _, _ = marching_cubes(cube, 0.5, method="lorensen", allow_degenerate=True)
        out.append(verts.astype(np.float64)[faces])
    return out


@functools.lru_cache(maxsize=16)
def area_table(spacing: tuple) -> np.ndarray:
    """(256,) float64: the surface area each corner code stands for, under ``spacing``."""
    s = np.asarray(spacing, np.float64)
    table = np.zeros(256, np.float64)
    for code, tri in enumerate(_unit_triangles()):
        if tri.shape[0] == 0:
            continue
        # the area vector of a triangle scaled by the spacing: (s1 s2 n0, s0 s2 n1, s0 s1 n2)
        n = 0.5 * np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        n = n * np.array([s[1] * s[2], s[0] * s[2], s[0] * s[1]])
        table[code] = float(np.sqrt((n * n).sum(axis=1)).sum())
    return table


def tolerance_offsets(tolerance: float, spacing: tuple) -> np.ndarray:
    """(K, 3) int64 offsets whose Euclidean length under ``spacing`` is at most ``tolerance``,
    nearest first."""
    reach = [int(math.floor(tolerance / s)) for s in spacing]
    axes = [np.arange(-r, r + 1) for r in reach]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    d = np.sqrt(((grid * np.asarray(spacing, np.float64)) ** 2).sum(axis=1))
    keep = d <= tolerance
    order = np.argsort(d[keep], kind="stable")
    return np.ascontiguousarray(grid[keep][order].astype(np.int64))


def corner_grid(mask: np.ndarray) -> np.ndarray:
    """The corner codes of a binary volume on its whole grid: uint8, one larger along each axis
    (1 byte per voxel). Cutting the grid to the box of two masks' union, as DeepMind does, changes
    no surface position and no order of summation: positions outside that box hold code 0."""
    from segscore.kernels.surfels import corner_codes

    m = np.ascontiguousarray(mask).view(np.uint8) if mask.dtype == np.bool_ else np.ascontiguousarray(mask != 0).view(np.uint8)
    codes = np.empty(tuple(n + 1 for n in m.shape), np.uint8)
    corner_codes(m, 0, 0, 0, codes)
    return codes


def surfel_histograms(codes_gt: np.ndarray, codes_pred: np.ndarray, *, tolerance: float = 2.0,
                      spacing=(1.0, 1.0, 1.0), box=None) -> np.ndarray:
    """(4, 256) int64, per corner code: the surface positions of G, those of G within ``tolerance``
    of P's surface, the same two of P against G (:func:`segscore.kernels.surfels.surfel_counts`),
    counted at the positions of ``box`` (``(lo, hi)``, three each, half-open, in the grids'
    coordinates; default the whole grids). Integer counts, added over boxes that tile a grid."""
    from segscore.kernels.surfels import surfel_counts

    offsets = tolerance_offsets(float(tolerance), tuple(float(s) for s in spacing))
    lo, hi = box if box is not None else ((0, 0, 0), codes_gt.shape)
    out = np.zeros((4, 256), np.int64)
    surfel_counts(codes_gt, codes_pred, offsets, *map(int, lo), *map(int, hi), out[0], out[1])
    surfel_counts(codes_pred, codes_gt, offsets, *map(int, lo), *map(int, hi), out[2], out[3])
    return out


def surface_dice_of_counts(hist: np.ndarray, spacing=(1.0, 1.0, 1.0)):
    """Surface Dice from :func:`surfel_histograms`' counts: sum_c (within_G[c] + within_P[c]) area[c]
    over sum_c (total_G[c] + total_P[c]) area[c], each sum a ``math.fsum`` of one product per code
    (exact integer counts, one rounding per product, an exactly rounded sum), so the value does not
    depend on how the grid was cut. None when both surfaces are empty, 0.0 when exactly one is."""
    table = area_table(tuple(float(s) for s in spacing))
    hist = np.asarray(hist, np.int64)
    if not hist[0].any() and not hist[2].any():
        return None
    if not hist[0].any() or not hist[2].any():
        return 0.0
    within = hist[1] + hist[3]
    total = hist[0] + hist[2]
    num = math.fsum(float(within[c]) * float(table[c]) for c in range(256) if within[c])
    den = math.fsum(float(total[c]) * float(table[c]) for c in range(256) if total[c])
    return num / den


def surface_dice_of_codes(codes_gt: np.ndarray, codes_pred: np.ndarray, *, tolerance: float = 2.0,
                          spacing=(1.0, 1.0, 1.0)):
    """Surface Dice of two corner-code grids of one shape (:func:`corner_grid`); None when both
    surfaces are empty, 0.0 when exactly one is (:func:`surface_dice_of_counts`)."""
    return surface_dice_of_counts(surfel_histograms(codes_gt, codes_pred, tolerance=tolerance, spacing=spacing),
                                  spacing)


def surface_dice(gt: np.ndarray, pred: np.ndarray, *, tolerance: float = 2.0, spacing=(1.0, 1.0, 1.0)):
    """DeepMind's surface Dice of two binary 3D volumes at ``tolerance``; None when both are
    empty (the caller decides: the leaderboard scores 1), 0.0 when exactly one is."""
    g_any = bool(np.any(gt))
    p_any = bool(np.any(pred))
    if not g_any and not p_any:
        return None
    if g_any != p_any:
        return 0.0
    return surface_dice_of_codes(corner_grid(gt), corner_grid(pred), tolerance=tolerance, spacing=spacing)
