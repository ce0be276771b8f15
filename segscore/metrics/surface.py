"""Surface distances between binary masks, in physical units: the one implementation the objects
scorecard (per matched pair, whole foreground) and the curvilinear ``hd95`` use.

Definitions (every one pinned by a test against an explicit all-pairs distance matrix):

* **surface** of a binary mask: its foreground voxels with at least one face neighbour (4 in
  2D, 6 in 3D) in the background. The image border counts as background (a foreground voxel
  on the border is a surface voxel), which is what ``mask & ~binary_erosion(mask)`` gives with
  scipy's cross-shaped structure and default ``border_value=0``: curvicost 0.3.1's ``hd95``,
  MONAI's ``get_mask_edges`` and panoptica use that set. The surface of one object of a label
  image is the surface of ``labels == id`` (a voxel touching another object is on it).
* **distances**: from every surface voxel of one mask to the nearest surface voxel of the
  other, Euclidean, in the unit of ``spacing`` (one voxel size per axis, in array order:
  ``(Z, Y, X)`` or ``(Y, X)``; default 1 per axis), and back: two *directed* sets
  ``d(a→b)`` (one per surface voxel of ``a``) and ``d(b→a)``.
* ``hd``: the Hausdorff distance, ``max(max d(a→b), max d(b→a))``.
* ``hd95``: the larger of the two directed 95th percentiles, ``max(P95 d(a→b), P95 d(b→a))``,
  each numpy's ``np.percentile(d, 95)`` with its default method ``"linear"`` (Hyndman and
  Fan's 7th: virtual index ``0.95 (n - 1)``, linear interpolation), exactly as curvicost 0.3.1
  and MONAI compute it (``compute_hausdorff_distance(..., percentile=95)``). panoptica 2.1.7
  differs: it takes one 95th percentile of both directions pooled
  (``np.percentile(np.hstack((d_ab, d_ba)), 95)``), which lies between the two directed
  percentiles, so it never exceeds this ``hd95`` and is smaller when the directions disagree.
* ``assd``: the mean of all distances of both directions pooled,
  ``(sum d(a→b) + sum d(b→a)) / (|S_a| + |S_b|)``. panoptica's ASSD is the mean of the two
  directed means instead (equal when both surfaces have as many voxels).
* ``nsd`` at tolerance τ (``nsd_tolerance``, in the spacing's unit): the share of both surfaces
  within τ of the other, ``(#{d(a→b) <= τ} + #{d(b→a) <= τ}) / (|S_a| + |S_b|)``: DeepMind
  surface-distance's normalized surface Dice (``compute_surface_dice_at_tolerance``) with each
  surface voxel counted once, where DeepMind weights its surface elements (contour segments,
  surfels on the half-voxel grid) by their length or area. They agree within a tolerance, not
  voxel for voxel: on the 24 ball unions of ``tests/data/panoptica/surface_distance_0.1.json``
  (radii 2 to 30 voxels, τ from 0.5 to 3, isotropic and anisotropic spacings) this NSD is
  lower than DeepMind's by at most 0.09 in 2D and 0.16 in 3D, most where τ is below the
  coarsest voxel size; ``hd`` equals DeepMind's there, and ``hd95`` lies within the largest
  voxel size of DeepMind's area-weighted percentile.

Named definitions (``distance_definition``, :data:`DISTANCE_DEFINITIONS`). The values above
are ``"monai"``'s, the default: MONAI's ``compute_hausdorff_distance(percentile=95)`` (the larger
directed percentile) and ``compute_average_surface_distance(symmetric=True)`` (the pooled mean),
on the same surface voxels (``get_mask_edges``: scipy's erosion with its default cross, after a
crop that keeps a background margin). ``"panoptica"``: the same surface and ``hd``; ``hd95``
one 95th percentile of both directions pooled, ``assd`` the mean of the two directed means
(panoptica 2.1.7's ``_compute_hausdorff_distance95`` and ``_average_symmetric_surface_distance``).
``"deepmind"``: DeepMind surface-distance 0.1's ``compute_surface_distances``: the surface is
made of elements at voxel corners (:func:`corner_surfels`; a corner whose 2x2(x2) neighbourhood
is neither empty nor full) weighted by their area or contour length (:func:`surfel_table`),
distances run between corners, ``hd``/``hd95`` are ``compute_robust_hausdorff`` at 100 and 95
(the first element, sorted by distance, whose cumulative weight share reaches it; the larger
direction), ``assd`` the mean of the two weighted directed means, ``nsd``
``compute_surface_dice_at_tolerance`` (:func:`deepmind_values`).

An empty mask has no surface: every distance is then null with a note, never inf or NaN.

Computed on the surface voxels only (:mod:`segscore.kernels.surface`): the nearest surface
voxel of the other mask is found in a bit map of that surface's bounding box within 4.5 voxel
sizes, and in a k-d tree of it beyond; both exact, no distance map. Memory: about 40 bytes per
surface voxel plus one bit per voxel of a surface's bounding box (16 MB for a 512³ box).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from segscore.errors import ScoreError
# the named definitions live in a module without numpy: the CLI's parser (and --help) imports no metric
from segscore.metrics.definitions import (DEFAULT_DISTANCE_DEFINITION, DEFINITION_HELP,  # noqa: F401
                                          DISTANCE_DEFINITIONS, check_definition)

# ---------------------------------------------------------------- options

#: the voxel sizes scored with (segscore.io.spacing's range, which this layer may not import; a
#: test pins the two equal): smaller or larger ones make distances underflow or overflow
SPACING_MIN, SPACING_MAX = 1e-12, 1e12

def check_spacing(spacing, ndim: int) -> tuple:
    """``spacing`` as a tuple of ``ndim`` positive finite floats (None: 1 per axis)."""
    if spacing is None:
        return (1.0,) * ndim
    if isinstance(spacing, numbers.Real):
        raise ScoreError(f"spacing {spacing!r}: give one voxel size per axis in array order ({ndim} numbers)")
    try:
        vals = tuple(float(v) for v in spacing)
    except (TypeError, ValueError):
        raise ScoreError(f"spacing {spacing!r}: give {ndim} numbers, one voxel size per axis in array order") from None
    if len(vals) != ndim:
        raise ScoreError(f"spacing {list(vals)}: {len(vals)} numbers for a {ndim}D image; give one per axis "
                         "in array order (Z Y X or Y X)")
    if not all(math.isfinite(v) and v > 0 for v in vals):
        raise ScoreError(f"spacing {list(vals)}: every voxel size must be a positive finite number")
    if not all(SPACING_MIN <= v <= SPACING_MAX for v in vals):
        raise ScoreError(f"spacing {list(vals)}: every voxel size must be from {SPACING_MIN:g} to {SPACING_MAX:g} "
                         f"(smaller or larger ones underflow or overflow); give it in another unit")
    return vals


def check_tolerance(tolerance) -> float:
    """The NSD tolerance as a finite float >= 0."""
    if isinstance(tolerance, bool):
        raise ScoreError(f"nsd tolerance {tolerance!r}: must be a number >= 0 in the spacing's unit")
    try:
        t = float(tolerance)
    except (TypeError, ValueError):
        raise ScoreError(f"nsd tolerance {tolerance!r}: must be a number >= 0 in the spacing's unit") from None
    if not math.isfinite(t) or t < 0:
        raise ScoreError(f"nsd tolerance {tolerance!r}: must be a finite number >= 0 in the spacing's unit")
    return t


def spacing3(spacing: tuple) -> np.ndarray:
    """The kernels' (3,) spacing: a 2D image is (1, Y, X), its first axis a unit one."""
    sp = (1.0,) * (3 - len(spacing)) + tuple(spacing)
    return np.array(sp, dtype=np.float64)


# ---------------------------------------------------------------- surface voxels

def label_surfaces(labels3: np.ndarray, planar: bool, axis: int = 0, lo: int = 0, hi: int | None = None):
    """``(coords, ids, foreground)`` of the surface voxels of a (A, B, C) label block whose
    index along ``axis`` is in ``lo:hi`` (C order; block coordinates, int32 (n, 3); the
    label, uint64; 1 where the voxel is on the surface of ``labels != 0`` too). One scan
    (:func:`segscore.kernels.surface.surface_scan`) into outputs of an eighth of the range's
    voxels, doubled while they fill (a buffer never written costs no memory)."""
    from segscore.kernels.surface import surface_scan

    if hi is None:
        hi = labels3.shape[axis]
    shape = list(labels3.shape)
    shape[axis] = max(hi - lo, 0)
    rows = shape[0] * shape[1]
    cap = max(int(np.prod(shape, dtype=np.int64)) // 8, 2 * shape[2], 64)
    coords = np.empty((cap, 3), np.int32)
    ids = np.empty(cap, np.uint64)
    fg = np.empty(cap, np.uint8)
    n, row = surface_scan(labels3, planar, axis, lo, hi, 0, coords, ids, fg)
    while row < rows:
        cap *= 2
        c2, i2, f2 = np.empty((cap, 3), np.int32), np.empty(cap, np.uint64), np.empty(cap, np.uint8)
        c2[:n], i2[:n], f2[:n] = coords[:n], ids[:n], fg[:n]
        coords, ids, fg = c2, i2, f2
        k, row = surface_scan(labels3, planar, axis, lo, hi, row, coords[n:], ids[n:], fg[n:])
        n += k
    return coords[:n], ids[:n], fg[:n]


def _as_mask(x, what: str) -> np.ndarray:
    """``x`` as a NumPy array of integer or boolean values (non-zero = foreground)."""
    a = np.asarray(x)
    if a.dtype.kind not in "biu":
        if a.dtype.kind == "f" and np.isfinite(a).all() and np.array_equal(a, np.round(a)):
            return a.astype(np.int64)
        raise ScoreError(f"{what}: holds {a.dtype} values; a mask holds 0 and non-zero integers or booleans")
    return a


def mask_surface(mask) -> np.ndarray:
    """The surface voxels of a binary mask (non-zero = foreground), (n, 3) int32 in C order;
    a 2D mask's coordinates are ``(0, y, x)``."""
    m = _as_mask(mask, "mask")  # an array: reading files is the families' (objects.surface_distances)
    if m.ndim not in (2, 3):
        raise ScoreError(f"mask of shape {m.shape}: expected a 2D or 3D mask")
    coords, _, fg = label_surfaces(m[None] if m.ndim == 2 else m, m.ndim == 2)
    return coords if fg.all() else coords[fg.astype(bool)]


# ---------------------------------------------------------------- distances and their summary

def nearest(points: np.ndarray, queries: np.ndarray, sp3: np.ndarray, balls=None) -> np.ndarray:
    """Distance from each of ``queries`` to the nearest of ``points`` (both (n, 3) int32, points
    not empty), in physical units.

    ``balls`` (:func:`probe_balls` of ``sp3``): measure with the one kernel the per-pair distances
    compile (:func:`segscore.kernels.surface.nearest_with`), for a caller that computes those too
    (the objects family): one cache entry to load, not the nine of
    :func:`~segscore.kernels.surface.nearest_distances`' steps (about 15 ms of a process). The
    same distances either way."""
    from segscore.kernels.surface import nearest_distances, nearest_with

    out = np.empty(queries.shape[0], np.float64)
    pts, qs = np.ascontiguousarray(points, np.int32), np.ascontiguousarray(queries, np.int32)
    if balls is None:
        nearest_distances(pts, sp3, qs, out)
    else:
        nearest_with(pts, sp3, qs, out, *balls)
    return out


def probe_balls(sp3: np.ndarray) -> tuple:
    """The probe offsets :func:`nearest` takes as ``balls``: the volume's ball and the in-plane
    one (:func:`segscore.kernels.surface.ball`), six arrays."""
    from segscore.kernels.surface import ball

    return ball(sp3, np.bool_(False)) + ball(sp3, np.bool_(True))


def warm_nearest() -> None:
    """Compile both steps of :func:`nearest` (for the warm-ups): a query beyond the ball of
    :func:`segscore.kernels.surface.nearest_probe` takes the k-d tree, which a first call only
    compiles when some query needs it."""
    pts = np.zeros((1, 3), np.int32)
    queries = np.array([[0, 0, 0], [0, 0, 64]], np.int32)
    out = nearest(pts, queries, np.ones(3))
    if out[1] != 64.0:  # not assert: the warm-up must fail loudly, also under -O
        raise RuntimeError(f"warm_nearest: {out[1]} != 64")


def _directed(sa, sb, sp3, threads=None):
    from segscore.engine import side_by_side

    return side_by_side([lambda: nearest(sb, sa, sp3), lambda: nearest(sa, sb, sp3)], threads=threads)


def directed_distances(a, b, *, spacing=None, threads=None) -> tuple:
    """``(d_ab, d_ba)``: from each surface voxel of ``a`` (in C order) to the nearest surface
    voxel of ``b``, and back; physical units. Empty arrays where a mask is empty."""
    sa, sb, sp = _two_surfaces(a, b, spacing, threads)
    if not (len(sa) and len(sb)):
        return np.zeros(0), np.zeros(0)
    return tuple(_directed(sa, sb, spacing3(sp), threads))


def directed_part(points: np.ndarray, queries: np.ndarray, sp3: np.ndarray, tolerance: float,
                  balls=None) -> tuple:
    """``(part, n)``: one direction's share of the summary row (the distances from ``queries``
    to the nearest of ``points``, both non-empty, summarized by
    :func:`segscore.kernels.surface.directed_summary` and dropped), so that two directions
    measure and summarize side by side; :func:`summary_from_parts` joins them. ``balls``: as
    :func:`nearest` takes them."""
    from segscore.kernels.surface import directed_summary

    d = nearest(points, queries, sp3, balls)
    part = np.empty(4, np.float64)
    directed_summary(d, float(tolerance), part)
    return part, d.shape[0]


def summary_from_parts(a: tuple, b: tuple) -> np.ndarray:
    """The kernels' summary row (see :func:`segscore.kernels.surface.summarize`) from the two
    directions' :func:`directed_part`."""
    from segscore.kernels.surface import combine_summaries

    out = np.empty(8, np.float64)
    combine_summaries(a[0], a[1], b[0], b[1], out)
    return out


def _values(row: np.ndarray) -> dict:
    return {"hd": float(row[0]), "hd95": float(row[1]), "assd": float(row[2] / row[3]),
            "nsd": float(row[4] / row[3])}


def _empty_notes(n_a: int, n_b: int, a_name: str, b_name: str) -> str:
    if not n_a and not n_b:
        return f"both masks are empty: neither {a_name} nor {b_name} has a surface"
    return f"the {a_name if not n_a else b_name} is empty: it has no surface to measure distances to"


def _two_surfaces(a, b, spacing, threads=None):
    from segscore.engine import side_by_side

    ma, mb = _as_mask(a, "mask a"), _as_mask(b, "mask b")
    if ma.shape != mb.shape:
        raise ScoreError(f"mask a {ma.shape} and mask b {mb.shape} are different shapes; give two masks on one grid")
    if ma.ndim not in (2, 3):
        raise ScoreError(f"masks of shape {ma.shape}: expected 2D or 3D masks")
    sp = check_spacing(spacing, ma.ndim)
    sa, sb = side_by_side([lambda: mask_surface(ma), lambda: mask_surface(mb)], threads=threads)
    return sa, sb, sp


def _corner_triangles(code: int, ndim: int):
    """The unit-cell surface pieces of one corner code: triangles (3D, (t, 3, 3)) of scikit-image's
    Lorensen marching cubes, or segments (2D, (s, 2, 2)) of marching squares, in voxel units."""
    if ndim == 2:
        inside = [(k >> 1, k & 1) for k in range(4) if code >> (3 - k) & 1]
        mid = {(0, "h"): (0.0, 0.5), (1, "h"): (1.0, 0.5), (0, "v"): (0.5, 0.0), (1, "v"): (0.5, 1.0)}
        if len(inside) in (1, 3):  # one corner cut off (or kept): a segment across it
            corners = inside if len(inside) == 1 else [(r, c) for r in (0, 1) for c in (0, 1) if (r, c) not in inside]
            r, c = corners[0]
            return np.array([[mid[(r, "h")], mid[(c, "v")]]])
        if len(inside) == 2:
            (r0, c0), (r1, c1) = inside
            if r0 == r1:  # one row inside: a segment along the rows' axis
                return np.array([[mid[(0, "v")], mid[(1, "v")]]])
            if c0 == c1:
                return np.array([[mid[(0, "h")], mid[(1, "h")]]])
            return np.array([[mid[(0, "h")], mid[(0, "v")]], [mid[(1, "h")], mid[(1, "v")]]])  # a diagonal: two
        return np.zeros((0, 2, 2))
    from skimage.measure import marching_cubes

    if bin(code).count("1") > 4:  # DeepMind's table takes the complement's pieces (same area class)
        code = 255 - code
    v = np.zeros((2, 2, 2))
    for k in range(8):
        if code >> (7 - k) & 1:
            v[k >> 2, (k >> 1) & 1, k & 1] = 1.0
    if not 0 < v.sum() < 8:
        return np.zeros((0, 3, 3))
    verts, faces, _, _ = marching_cubes(v, 0.5, method="lorensen")
    return np.asarray(verts, np.float64)[faces]


_PIECES: dict = {}


def surfel_table(spacing) -> np.ndarray:
    """Area (3D, 256 codes) or length (2D, 16 codes) of the surface element at a corner of each
    code (:func:`segscore.kernels.surface.corner_scan`), in the spacing's unit: DeepMind
    surface-distance's ``create_table_neighbour_code_to_surface_area`` and
    ``..._contour_length``. The pieces are computed here: scikit-image's Lorensen marching cubes
    of the corner's 2x2x2 cell, a code with more than four corners inside taking its complement's
    pieces (as DeepMind's table does), and marching squares in 2D; tested equal to DeepMind's
    table for isotropic and anisotropic spacings."""
    sp = np.asarray(spacing, np.float64)
    nd = sp.size
    if nd not in _PIECES:
        _PIECES[nd] = [_corner_triangles(c, nd) for c in range(16 if nd == 2 else 256)]
    out = np.zeros(16 if nd == 2 else 256)
    for code, pieces in enumerate(_PIECES[nd]):
        if not len(pieces):
            continue
        p = pieces * sp
        if nd == 2:
            out[code] = float(np.sqrt(((p[:, 1] - p[:, 0]) ** 2).sum(1)).sum())
        else:
            c = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
            out[code] = float((0.5 * np.sqrt((c ** 2).sum(1))).sum())
    return out


def corner_surfels(labels) -> tuple:
    """``((coords, ids, codes), (fg_coords, fg_codes))``: the border corners of every object of
    a 2D or 3D label image and of its foreground ``labels != 0``
    (:func:`segscore.kernels.surface.corner_scan`; a 2D image's corners are ``(0, y, x)``).
    Outputs start at an eighth of the corners and double while they fill (a buffer never
    written costs no memory)."""
    from segscore.kernels.surface import corner_scan

    lab = np.asarray(labels)
    planar = lab.ndim == 2
    lab3 = np.ascontiguousarray(lab[None] if planar else lab)
    if lab3.dtype == np.bool_:
        lab3 = lab3.view(np.uint8)
    A, B, C = lab3.shape
    nk, planes = (4, 1) if planar else (8, A + 1)
    per_plane = (B + 1) * (C + 1)
    cap = max(planes * per_plane // 8, nk * per_plane)
    fcap = max(planes * per_plane // 16, per_plane)
    bufs = [np.empty((cap, 3), np.int32), np.empty(cap, np.uint64), np.empty(cap, np.uint8),
            np.empty((fcap, 3), np.int32), np.empty(fcap, np.uint8)]
    n = nf = 0
    plane = 0
    while True:
        k, kf, plane = corner_scan(lab3, planar, plane, bufs[0][n:], bufs[1][n:], bufs[2][n:], bufs[3][nf:],
                                   bufs[4][nf:])
        n, nf = n + k, nf + kf
        if plane >= planes:
            break
        for i, m in ((0, n), (1, n), (2, n), (3, nf), (4, nf)):  # grow what is short, keep what is stored
            if bufs[i].shape[0] - m < (nk if i < 3 else 1) * per_plane:
                grown = np.empty((2 * bufs[i].shape[0] + per_plane * nk,) + bufs[i].shape[1:], bufs[i].dtype)
                grown[:m] = bufs[i][:m]
                bufs[i] = grown
    return (bufs[0][:n], bufs[1][:n], bufs[2][:n]), (bufs[3][:nf], bufs[4][:nf])


def _weighted_direction(d: np.ndarray, w: np.ndarray, tolerance: float) -> tuple:
    """One direction of DeepMind's measures: ``(p95, p100, weighted mean, weight within
    tolerance, total weight)``; surface elements sorted by (distance, weight) as DeepMind sorts
    them, the percentile the first element whose cumulative weight share reaches it."""
    order = np.lexsort((w, d))
    d, w = d[order], w[order]
    total = np.sum(w)
    cum = np.cumsum(w) / total
    p95 = d[min(int(np.searchsorted(cum, 0.95)), d.size - 1)]
    p100 = d[min(int(np.searchsorted(cum, 1.0)), d.size - 1)]
    return float(p95), float(p100), float(np.sum(d * w) / total), float(np.sum(w[d <= tolerance])), float(total)


def deepmind_values(pa, wa, pb, wb, sp3, tolerance) -> dict:
    """``hd``, ``hd95``, ``assd``, ``nsd`` (DeepMind surface-distance's definitions) of two
    non-empty sets of surface elements: corner coordinates ``pa``/``pb`` ((n, 3) int32) and their
    areas or lengths ``wa``/``wb``. ``hd``: ``compute_robust_hausdorff(d, 100)``; ``hd95``: at 95;
    ``assd``: the mean of the two directed means of ``compute_average_surface_distance`` (which
    returns them as a pair); ``nsd``: ``compute_surface_dice_at_tolerance``."""
    da, db = nearest(pb, pa, sp3), nearest(pa, pb, sp3)
    a, b = _weighted_direction(da, wa, tolerance), _weighted_direction(db, wb, tolerance)
    return {"hd": max(a[1], b[1]), "hd95": max(a[0], b[0]), "assd": 0.5 * (a[2] + b[2]),
            "nsd": (a[3] + b[3]) / (a[4] + b[4])}


def voxel_values(sa, sb, sp3, tolerance, definition: str, threads=None) -> dict:
    """``hd``, ``hd95``, ``assd``, ``nsd`` of two non-empty surface-voxel sets under the
    ``"monai"`` or ``"panoptica"`` definition (they share the surface, ``hd`` and ``nsd``; module
    docstring)."""
    if definition == "monai":
        from segscore.engine import side_by_side

        parts = side_by_side([lambda: directed_part(sb, sa, sp3, tolerance),
                              lambda: directed_part(sa, sb, sp3, tolerance)], threads=threads)
        return _values(summary_from_parts(*parts))
    da, db = _directed(sa, sb, sp3, threads)
    both = np.concatenate([da, db])
    return {"hd": float(both.max()), "hd95": float(np.percentile(both, 95)),
            "assd": float(np.mean((da.mean(), db.mean()))), "nsd": float(np.count_nonzero(both <= tolerance) / both.size)}
