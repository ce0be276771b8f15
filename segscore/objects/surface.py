"""Surface distances between binary masks and between matched objects, in physical units.

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
from segscore.io.results import as_result

#: keys :func:`surface_distances` returns
KEYS = ("hd", "hd95", "assd", "nsd", "nsd_tolerance", "spacing", "notes")
#: keys the objects scorecard gains with ``surface=True``
SCORECARD_KEYS = ("hd95_per_object", "hd95_per_object_sd", "assd_per_object", "assd_per_object_sd",
                  "nsd_per_object", "nsd_per_object_sd", "hd_pixel", "hd95_pixel", "assd_pixel", "nsd_pixel",
                  "nsd_tolerance", "spacing", "spacing_source", "spacing_unit")
_PER_OBJECT = ("hd95", "assd", "nsd")
_PIXEL = ("hd", "hd95", "assd", "nsd")


# ---------------------------------------------------------------- options

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
    label, uint64; 1 where the voxel is on the surface of ``labels != 0`` too)."""
    from segscore.kernels.surface import surface_count, surface_fill

    if hi is None:
        hi = labels3.shape[axis]
    n = surface_count(labels3, planar, axis, lo, hi)
    coords = np.empty((n, 3), np.int32)
    ids = np.empty(n, np.uint64)
    fg = np.empty(n, np.uint8)
    surface_fill(labels3, planar, axis, lo, hi, coords, ids, fg)
    return coords, ids, fg


def _as_mask(x, what: str) -> np.ndarray:
    from segscore.objects.table import as_labels

    return as_labels(x, what)


def mask_surface(mask) -> np.ndarray:
    """The surface voxels of a binary mask (non-zero = foreground), (n, 3) int32 in C order;
    a 2D mask's coordinates are ``(0, y, x)``."""
    m = _as_mask(mask, "mask")
    if m.ndim not in (2, 3):
        raise ScoreError(f"mask of shape {m.shape}: expected a 2D or 3D mask")
    coords, _, fg = label_surfaces(m[None] if m.ndim == 2 else m, m.ndim == 2)
    return coords if fg.all() else coords[fg.astype(bool)]


# ---------------------------------------------------------------- distances and their summary

def nearest(points: np.ndarray, queries: np.ndarray, sp3: np.ndarray) -> np.ndarray:
    """Distance from each of ``queries`` to the nearest of ``points`` (both (n, 3) int32, points
    not empty), in physical units."""
    from segscore.kernels.surface import nearest_distances

    out = np.empty(queries.shape[0], np.float64)
    nearest_distances(np.ascontiguousarray(points, np.int32), sp3, np.ascontiguousarray(queries, np.int32), out)
    return out


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


def summary_of(d_ab: np.ndarray, d_ba: np.ndarray, tolerance: float) -> np.ndarray:
    """The kernels' summary row (see :func:`segscore.kernels.surface.summarize`) of two
    non-empty directed distance arrays (copied; not changed)."""
    from segscore.kernels.surface import summarize

    out = np.empty(8, np.float64)
    summarize(np.array(d_ab, np.float64), np.array(d_ba, np.float64), float(tolerance), out)
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


@as_result
def surface_distances(a, b, *, spacing=None, tolerance=1.0, threads=None) -> dict:
    """Surface distances between two binary masks (non-zero = foreground), 2D or 3D.

    ``a`` is the truth by convention (every value here is symmetric in ``a`` and ``b``).
    ``spacing``: one voxel size per axis in array order (``(Z, Y, X)`` or ``(Y, X)``; default
    1 per axis); ``tolerance``: the NSD tolerance τ in the spacing's unit. Returns ``hd``,
    ``hd95``, ``assd``, ``nsd`` (definitions in the module docstring), ``nsd_tolerance``,
    ``spacing`` and ``notes``; a mask without foreground makes all four null with a note.

    Memory: the masks themselves, about 40 bytes per surface voxel and one bit per voxel of a
    surface's bounding box (no distance map), so a 512³ pair of blobs needs little beyond its
    two masks; ``threads`` (default: the CPUs, at most 8) extracts the two surfaces and measures
    the two directions side by side.
    """
    tol = check_tolerance(tolerance)
    sa, sb, sp = _two_surfaces(a, b, spacing, threads)
    out = {"hd": None, "hd95": None, "assd": None, "nsd": None, "nsd_tolerance": tol, "spacing": list(sp),
           "notes": {}}
    if not (len(sa) and len(sb)):
        why = _empty_notes(len(sa), len(sb), "mask a", "mask b")
        out["notes"] = {k: why for k in _PIXEL}
        return out
    d_ab, d_ba = _directed(sa, sb, spacing3(sp), threads)
    out.update(_values(summary_of(d_ab, d_ba, tol)))
    return out


# ---------------------------------------------------------------- the objects scorecard's part

def _grouped(coords, ids, object_ids):
    """Surface voxels grouped by object index (C order within each): ``(pts, start)``."""
    from segscore.kernels.surface import group_rows

    idx = np.searchsorted(object_ids, ids).astype(np.int64, copy=False)
    start = np.zeros(object_ids.size + 1, np.int64)
    np.cumsum(np.bincount(idx, minlength=object_ids.size), out=start[1:])
    pts = np.empty((idx.size, 3), np.int32)
    group_rows(coords, idx, start, pts)
    return pts, start


def collect(parts: list) -> dict:
    """The surface voxels of a streamed pass, its tiles' parts concatenated (tile order)."""
    def cat(i, dtype, shape=(0,)):
        arrs = [p[i] for p in parts]
        return np.concatenate(arrs) if arrs else np.zeros(shape, dtype)

    return {"t_coords": cat(0, np.int32, (0, 3)), "t_ids": cat(1, np.uint64), "t_fg": cat(2, np.uint8),
            "p_coords": cat(3, np.int32, (0, 3)), "p_ids": cat(4, np.uint64), "p_fg": cat(5, np.uint8)}


def _pair_blocks(pt, pp, t_start, p_start, n_blocks):
    """Bounds splitting the pairs into ``n_blocks`` runs of about equal work (surface voxels)."""
    k = pt.size
    work = np.cumsum((t_start[pt + 1] - t_start[pt]) + (p_start[pp + 1] - p_start[pp]))
    cuts = np.searchsorted(work, work[-1] * np.arange(1, n_blocks) / n_blocks)
    return np.unique(np.concatenate([[0], cuts, [k]]))


def surface_values(table, pair_t: np.ndarray, pair_p: np.ndarray, voxels: dict, sp3: np.ndarray,
                   tolerance: float, threads=None) -> tuple:
    """``(per_pair, pixel)``: ``per_pair`` holds ``hd``, ``hd95``, ``assd``, ``nsd`` arrays, one value
    per pair ``(pair_t[k], pair_p[k])`` (indices into the table's ids), each pair measured on its
    two objects' surface voxels only; ``pixel`` the whole-foreground values (the masks
    ``truth != 0`` and ``pred != 0``) with ``notes``. The work is shared by ``threads`` (default:
    the CPUs, at most 8) in as many even parts."""
    from segscore.engine import side_by_side
    from segscore.engine.executor import default_workers
    from segscore.kernels.surface import pair_summaries

    workers = max(1, int(threads or default_workers()))
    parts = [[] for _ in range(workers)]
    k = int(pair_t.size)
    out = np.empty((k, 8), np.float64)
    if k:
        t_pts, t_start = _grouped(voxels["t_coords"], voxels["t_ids"], table.truth_ids)
        p_pts, p_start = _grouped(voxels["p_coords"], voxels["p_ids"], table.pred_ids)
        pt, pp = np.ascontiguousarray(pair_t, np.int64), np.ascontiguousarray(pair_p, np.int64)
        bounds = _pair_blocks(pt, pp, t_start, p_start, min(k, workers))
        for w, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            parts[w % workers].append(lambda lo=lo, hi=hi: pair_summaries(
                t_pts, t_start, p_pts, p_start, pt[lo:hi], pp[lo:hi], sp3, float(tolerance), out[lo:hi]))
    ft = voxels["t_coords"][voxels["t_fg"].astype(bool)]
    fp = voxels["p_coords"][voxels["p_fg"].astype(bool)]
    pixel = {key: None for key in _PIXEL}
    directed = {}
    if len(ft) and len(fp):  # the two directions go to the two last parts (the pairs fill the first)
        parts[-1 % workers].append(lambda: directed.__setitem__("tp", nearest(fp, ft, sp3)))
        parts[-2 % workers].append(lambda: directed.__setitem__("pt", nearest(ft, fp, sp3)))
    side_by_side([lambda calls=calls: [c() for c in calls] for calls in parts if calls], threads=workers)
    if directed:
        pixel.update(_values(summary_of(directed["tp"], directed["pt"], tolerance)))
        pixel["notes"] = {}
    else:
        if not len(ft) and not len(fp):
            why = "both images are empty: neither the truth nor the prediction has a surface"
        else:
            why = f"the {'truth' if not len(ft) else 'prediction'} is empty: it has no surface to measure distances to"
        pixel["notes"] = {key: why for key in _PIXEL}
    per_pair = {"hd": out[:, 0].copy(), "hd95": out[:, 1].copy(), "assd": out[:, 2] / out[:, 3],
                "nsd": out[:, 4] / out[:, 3]}
    return per_pair, pixel


def surface_sums(table, match, voxels: dict, spacing: tuple, tolerance: float, threads=None) -> tuple:
    """``(sums, per_pair)``: the scorecard's surface summary of one field (values per matched
    pair in the match's pair order, and the whole-foreground values) and the per-pair arrays."""
    sp3 = spacing3(spacing)
    mt = np.array([p[0] for p in match.pairs], dtype=np.int64)
    mp = np.array([p[1] for p in match.pairs], dtype=np.int64)
    per_pair, pixel = surface_values(table, mt, mp, voxels, sp3, tolerance, threads)
    sums = {"spacing": list(spacing), "nsd_tolerance": float(tolerance),
            "per_object": {k: per_pair[k].tolist() for k in _PER_OBJECT}, "pixel": pixel, "n_fields": 1}
    return sums, per_pair


def add_surface_sums(a: dict, b: dict) -> dict:
    """Two fields' surface summaries pooled: per-object values side by side; the
    whole-foreground values are not poolable (null, with a note; each field reports its own)."""
    if a["spacing"] != b["spacing"] or a["nsd_tolerance"] != b["nsd_tolerance"]:
        raise ScoreError("fields scored with different spacings or NSD tolerances cannot be pooled")
    why = "whole-foreground surface distances do not pool over fields; each field reports its own"
    return {"spacing": a["spacing"], "nsd_tolerance": a["nsd_tolerance"],
            "per_object": {k: a["per_object"][k] + b["per_object"][k] for k in _PER_OBJECT},
            "pixel": {**{k: None for k in _PIXEL}, "notes": {k: why for k in _PIXEL}},
            "n_fields": a["n_fields"] + b["n_fields"]}


def surface_from_sums(s: dict, notes: dict) -> dict:
    """The scorecard's surface keys (:data:`SCORECARD_KEYS`) from a summary."""
    out = {}
    for k in _PER_OBJECT:
        vals = s["per_object"][k]
        n = len(vals)
        if n:
            mean = math.fsum(vals) / n
            out[f"{k}_per_object"] = mean
            out[f"{k}_per_object_sd"] = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / n)
        else:
            out[f"{k}_per_object"] = out[f"{k}_per_object_sd"] = None
            notes[f"{k}_per_object"] = notes[f"{k}_per_object_sd"] = "no matched pairs at the match IoU"
    for k in _PIXEL:
        out[f"{k}_pixel"] = s["pixel"][k]
        if s["pixel"][k] is None:
            notes[f"{k}_pixel"] = s["pixel"]["notes"][k]
    out["nsd_tolerance"] = s["nsd_tolerance"]
    out["spacing"] = list(s["spacing"])
    return out
