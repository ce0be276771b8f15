"""Surface distances of the objects scorecard: per matched object pair and of the whole
foregrounds, in physical units, and :func:`surface_distances` for two mask files or arrays.

The definitions (surface, hd, hd95, assd, nsd) and the kernels' wrappers are in
:mod:`segscore.metrics.surface`, shared with the curvilinear family's ``hd95``; their names stay
importable from here.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError
from segscore.io.results import as_result
from segscore.metrics.surface import (_empty_notes, _values, check_spacing, check_tolerance,  # noqa: F401
                                      directed_part, label_surfaces, mask_surface, nearest, spacing3, summary_from_parts)

#: keys :func:`surface_distances` returns
KEYS = ("hd", "hd95", "assd", "nsd", "nsd_tolerance", "spacing", "distance_definition", "notes")
#: keys the objects scorecard gains with ``surface=True``
SCORECARD_KEYS = ("hd95_per_object", "hd95_per_object_sd", "assd_per_object", "assd_per_object_sd",
                  "nsd_per_object", "nsd_per_object_sd", "hd_pixel", "hd95_pixel", "assd_pixel", "nsd_pixel",
                  "nsd_tolerance", "distance_definition", "spacing", "spacing_source", "spacing_unit")
_PER_OBJECT = ("hd95", "assd", "nsd")
_PIXEL = ("hd", "hd95", "assd", "nsd")


# ---------------------------------------------------------------- surface voxels

def _as_mask(x, what: str) -> np.ndarray:
    """``x`` (a path of any readable format, or an array) as a label array."""
    import os

    from segscore.objects.table import as_labels, read_labels

    if isinstance(x, (str, os.PathLike)):  # a refusal names the file, not its role
        return as_labels(read_labels(x, what), os.fspath(x))
    return as_labels(x, what)


def directed_distances(a, b, *, spacing=None, threads=None) -> tuple:
    """:func:`segscore.metrics.surface.directed_distances` of two masks given as paths or arrays."""
    from segscore.metrics.surface import directed_distances as shared

    return shared(_as_mask(a, "mask a"), _as_mask(b, "mask b"), spacing=spacing, threads=threads)


# ---------------------------------------------------------------- distances and their summary

@as_result
def surface_distances(a, b, *, spacing=None, tolerance=1.0, threads=None, distance_definition=None) -> dict:
    """Surface distances between two binary masks (non-zero = foreground), 2D or 3D.

    ``distance_definition``: ``"monai"`` (the default), ``"panoptica"`` or ``"deepmind"``
    (:data:`segscore.metrics.surface.DEFINITION_HELP`; recorded as ``distance_definition``).

    ``a`` is the truth by convention (every value here is symmetric in ``a`` and ``b``).
    ``spacing``: one voxel size per axis in array order (``(Z, Y, X)`` or ``(Y, X)``); without
    it, what a path's header states (NIfTI pixdim, OME-Zarr scale, TIFF resolution:
    :func:`segscore.io.spacing.resolve_spacing`; two files stating different spacings are
    refused), else 1 per axis. ``tolerance``: the NSD tolerance τ in the spacing's unit. Returns
    ``hd``, ``hd95``, ``assd``, ``nsd`` (definitions in the module docstring), ``nsd_tolerance``,
    ``spacing``, ``spacing_source`` (``given``, ``nifti``, ``ome-zarr``, ``tiff``, ``imagej``,
    ``default``), ``spacing_unit`` (as the file states it, else null) and ``notes``; a mask
    without foreground makes all four null with a note.

    Memory: the masks themselves, about 40 bytes per surface voxel and one bit per voxel of a
    surface's bounding box (no distance map), so a 512³ pair of blobs needs little beyond its
    two masks; ``threads`` (default: the CPUs, at most 8) extracts the two surfaces and measures
    the two directions side by side.
    """
    from segscore.engine import side_by_side
    from segscore.io.spacing import Spacing, resolve_spacing
    from segscore.metrics.surface import _two_surfaces

    from segscore.metrics.surface import check_definition

    tol = check_tolerance(tolerance)
    definition = check_definition(distance_definition)
    ma, mb = _as_mask(a, "mask a"), _as_mask(b, "mask b")
    record = spacing if isinstance(spacing, Spacing) else None
    if spacing is None and ma.ndim in (2, 3):
        record = resolve_spacing(None, [a, b], ma.ndim)  # what the files state, else 1 per axis
    sa, sb, sp = _two_surfaces(ma, mb, spacing if record is None else record.values, threads)
    source, unit = ("given", None) if record is None else (record.source, record.unit)
    out = {"hd": None, "hd95": None, "assd": None, "nsd": None, "nsd_tolerance": tol, "spacing": list(sp),
           "spacing_source": source, "spacing_unit": unit, "distance_definition": definition, "notes": {}}
    if not (len(sa) and len(sb)):
        why = _empty_notes(len(sa), len(sb), "mask a", "mask b")
        out["notes"] = {k: why for k in _PIXEL}
        return out
    sp3 = spacing3(sp)
    if definition == "deepmind":
        from segscore.metrics.surface import corner_surfels, deepmind_values, surfel_table

        table = surfel_table(sp)
        ((pa, ca), (pb, cb)) = [x[1] for x in side_by_side([lambda: corner_surfels(ma != 0),
                                                             lambda: corner_surfels(mb != 0)], threads=threads)]
        out.update(deepmind_values(pa, table[ca], pb, table[cb], sp3, tol))
    else:
        from segscore.metrics.surface import voxel_values

        out.update(voxel_values(sa, sb, sp3, tol, definition, threads))
    return out


# ---------------------------------------------------------------- the objects scorecard's part

def _grouped(coords, ids, object_ids):
    """Surface voxels grouped by object index (C order within each): ``(pts, start)``."""
    from segscore.kernels.surface import group_by_id

    start = np.empty(object_ids.size + 1, np.int64)
    pts = np.empty((ids.size, 3), np.int32)
    group_by_id(coords, np.ascontiguousarray(ids, np.uint64), np.ascontiguousarray(object_ids, np.uint64), start, pts)
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


def _deepmind_values(table, pair_t, pair_p, labels, sp3, tolerance, threads=None) -> tuple:
    """:func:`surface_values` under DeepMind's definition: each object's border corners (its
    surface elements) from the two label images ``labels`` (held whole), weighted by area."""
    from segscore.engine import side_by_side
    from segscore.metrics.surface import corner_surfels, deepmind_values, surfel_table

    truth, pred = labels
    nd = truth.ndim
    weights = surfel_table(tuple(sp3[3 - nd:]))
    (t_obj, t_fg), (p_obj, p_fg) = side_by_side([lambda: corner_surfels(truth), lambda: corner_surfels(pred)],
                                                threads=threads)

    def grouped(scan, ids):
        coords, obj, codes = scan
        idx = np.searchsorted(ids, obj)
        order = np.argsort(idx, kind="stable")
        start = np.searchsorted(idx[order], np.arange(ids.size + 1))
        return coords[order], weights[codes[order]], start

    tc, tw, ts = grouped(t_obj, table.truth_ids)
    pc, pw, ps = grouped(p_obj, table.pred_ids)
    k = int(pair_t.size)
    per_pair = {key: np.empty(k) for key in ("hd", "hd95", "assd", "nsd")}
    for i, (a, b) in enumerate(zip(pair_t.tolist(), pair_p.tolist())):
        v = deepmind_values(tc[ts[a]:ts[a + 1]], tw[ts[a]:ts[a + 1]], pc[ps[b]:ps[b + 1]], pw[ps[b]:ps[b + 1]],
                            sp3, tolerance)
        for key in per_pair:
            per_pair[key][i] = v[key]
    (fa, ca), (fb, cb) = t_fg, p_fg
    pixel = {key: None for key in _PIXEL}
    if len(fa) and len(fb):
        pixel.update(deepmind_values(fa, weights[ca], fb, weights[cb], sp3, tolerance))
        pixel["notes"] = {}
    else:
        pixel["notes"] = {key: _pixel_why(len(fa), len(fb)) for key in _PIXEL}
    return per_pair, pixel


def _pixel_why(n_t, n_p) -> str:
    if not n_t and not n_p:
        return "both images are empty: neither the truth nor the prediction has a surface"
    return f"the {'truth' if not n_t else 'prediction'} is empty: it has no surface to measure distances to"


#: whole-foreground surfaces of at most this many voxels (both images together) are measured as
#: one more pair of :func:`segscore.kernels.surface.pair_summaries`, beside the object pairs (the
#: same kernel, so the same numbers); larger ones in two directions side by side. Below it the
#: directions' own kernels cost more to load from the cache (about 40 ms of a process) than
#: splitting the work gains (a 2048² pair with 2,000 objects has about 190,000)
SMALL_SURFACES = 1 << 19


def surface_values(table, pair_t: np.ndarray, pair_p: np.ndarray, voxels: dict, sp3: np.ndarray,
                   tolerance: float, threads=None, definition: str = "monai", labels=None) -> tuple:
    """``(per_pair, pixel)``: ``per_pair`` holds ``hd``, ``hd95``, ``assd``, ``nsd`` arrays, one value
    per pair ``(pair_t[k], pair_p[k])`` (indices into the table's ids), each pair measured on its
    two objects' surface voxels only; ``pixel`` the whole-foreground values (the masks
    ``truth != 0`` and ``pred != 0``) with ``notes``. The work is shared by ``threads`` (default:
    the CPUs, at most 8): the grouping and the whole-foreground distances in two parts, then the
    pairs in as many even parts as threads (whole-foreground surfaces up to :data:`SMALL_SURFACES`
    voxels are one more pair there). ``definition`` (:data:`segscore.metrics.surface.
    DISTANCE_DEFINITIONS`) names what the values are; ``"deepmind"`` needs ``labels``, the two
    label images whole (its surface elements lie between voxels)."""
    from segscore.engine import side_by_side
    from segscore.engine.executor import default_workers
    from segscore.kernels.surface import pair_summaries

    if definition == "deepmind":
        return _deepmind_values(table, pair_t, pair_p, labels, sp3, tolerance, threads)
    workers = max(1, int(threads or default_workers()))
    k = int(pair_t.size)
    pooled = definition == "panoptica"
    out = np.empty((k, 9 if pooled else 8), np.float64)
    # the whole-foreground surfaces (np.compress: faster than a boolean index on long coordinate lists)
    ft = np.compress(voxels["t_fg"].astype(bool, copy=False), voxels["t_coords"], axis=0)
    fp = np.compress(voxels["p_fg"].astype(bool, copy=False), voxels["p_coords"], axis=0)
    pixel = {key: None for key in _PIXEL}
    directed, grouped = {}, {}
    # first each image's voxels grouped by object beside one direction of the whole-foreground
    # distances (two even parts), then the pairs in ``workers`` even parts
    first = [[], []]
    if k:
        for i, (side, ids) in enumerate((("t", table.truth_ids), ("p", table.pred_ids))):
            first[i].append(lambda side=side, ids=ids: grouped.__setitem__(
                side, _grouped(voxels[f"{side}_coords"], voxels[f"{side}_ids"], ids)))
    if len(ft) and len(fp) and pooled:
        from segscore.metrics.surface import voxel_values

        first[0].append(lambda: directed.__setitem__("values", voxel_values(ft, fp, sp3, tolerance, definition, 1)))
    elif len(ft) and len(fp) and len(ft) + len(fp) > SMALL_SURFACES:  # the two directions side by side,
        # with the per-pair kernel's balls (one cache entry, the pairs' own)
        from segscore.metrics.surface import probe_balls

        balls = probe_balls(sp3)
        first[0].append(lambda: directed.__setitem__("tp", directed_part(fp, ft, sp3, tolerance, balls)))
        first[1].append(lambda: directed.__setitem__("pt", directed_part(ft, fp, sp3, tolerance, balls)))
    side_by_side([lambda calls=calls: [c() for c in calls] for calls in first if calls], threads=workers)
    last = []
    if len(ft) and len(fp) and not pooled and not directed:  # small surfaces: one more pair, beside the pairs
        whole = np.empty((1, 8), np.float64)
        one, ends = np.zeros(1, np.int64), (np.array([0, len(ft)], np.int64), np.array([0, len(fp)], np.int64))
        last.append(lambda: pair_summaries(ft, ends[0], fp, ends[1], one, one, sp3, float(tolerance), whole))
        directed["row"] = whole
    if k:
        (t_pts, t_start), (p_pts, p_start) = grouped["t"], grouped["p"]
        pt, pp = np.ascontiguousarray(pair_t, np.int64), np.ascontiguousarray(pair_p, np.int64)
        bounds = _pair_blocks(pt, pp, t_start, p_start, min(k, workers))
        last += [lambda lo=lo, hi=hi: pair_summaries(t_pts, t_start, p_pts, p_start, pt[lo:hi], pp[lo:hi], sp3,
                                                     float(tolerance), out[lo:hi])
                 for lo, hi in zip(bounds[:-1], bounds[1:])]
    side_by_side(last, threads=workers)
    if "row" in directed:
        pixel.update(_values(directed["row"][0]))
        pixel["notes"] = {}
    elif directed:
        pixel.update(directed["values"] if pooled else _values(summary_from_parts(directed["tp"], directed["pt"])))
        pixel["notes"] = {}
    else:
        pixel["notes"] = {key: _pixel_why(len(ft), len(fp)) for key in _PIXEL}
    per_pair = {"hd": out[:, 0].copy(), "hd95": out[:, 1].copy(), "assd": out[:, 2] / out[:, 3],
                "nsd": out[:, 4] / out[:, 3]}
    if pooled:  # panoptica: one percentile of both directions pooled, the mean of the directed means
        per_pair["hd95"], per_pair["assd"] = out[:, 8].copy(), out[:, 7].copy()
    return per_pair, pixel


def surface_sums(table, match, voxels: dict, spacing: tuple, tolerance: float, threads=None,
                 definition: str = "monai", labels=None) -> tuple:
    """``(sums, per_pair)``: the scorecard's surface summary of one field (values per matched
    pair in the match's pair order, and the whole-foreground values) and the per-pair arrays,
    under the named ``definition`` (``labels``: the two label images, for ``"deepmind"``)."""
    sp3 = spacing3(spacing)
    mt = np.array([p[0] for p in match.pairs], dtype=np.int64)
    mp = np.array([p[1] for p in match.pairs], dtype=np.int64)
    per_pair, pixel = surface_values(table, mt, mp, voxels, sp3, tolerance, threads, definition, labels)
    sums = {"spacing": list(spacing), "nsd_tolerance": float(tolerance), "distance_definition": definition,
            "per_object": {k: per_pair[k].tolist() for k in _PER_OBJECT}, "pixel": pixel, "n_fields": 1}
    return sums, per_pair


def add_surface_sums(a: dict, b: dict) -> dict:
    """Two fields' surface summaries pooled: per-object values side by side; the
    whole-foreground values are not poolable (null, with a note; each field reports its own)."""
    if a["nsd_tolerance"] != b["nsd_tolerance"]:
        raise ScoreError("fields scored with different NSD tolerances cannot be pooled")
    if a.get("distance_definition", "monai") != b.get("distance_definition", "monai"):
        raise ScoreError("fields scored with different surface-distance definitions cannot be pooled")
    why = "whole-foreground surface distances do not pool over fields; each field reports its own"
    # distances in physical units pool whatever each field's voxel size (the caller keeps the unit
    # one); the pooled record of a spacing is then none
    spacing = a["spacing"] if a["spacing"] == b["spacing"] else None
    return {"spacing": spacing, "nsd_tolerance": a["nsd_tolerance"],
            "distance_definition": a.get("distance_definition", "monai"),
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
    out["distance_definition"] = s.get("distance_definition", "monai")
    if s["spacing"] is None:
        out["spacing"] = None
        notes["spacing"] = "the fields have different voxel spacings: each field's distances are in its own (see its row)"
    else:
        out["spacing"] = list(s["spacing"])
    return out
