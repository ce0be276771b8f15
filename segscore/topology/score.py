"""The Vesuvius Challenge surface-detection score (the ``topometrics`` toolkit's leaderboard):

    leaderboard = 0.30 TopoScore + 0.35 SurfaceDice@tau + 0.35 VOI_score

computed on a prediction P and a label volume G of one shape (3D; a 2D image is one slice).

1. **Ignore**: voxels where G equals ``ignore_label`` (default 2) -- or, when ``ignore_mask``
   is given, where it is true *instead* -- take the value 0 in both P and G before anything
   else.
2. **Binarize**: foreground is ``x != 0`` (NaN counts as 0), or ``x > fg_threshold``.
3. **TopoScore**: Betti matching (:func:`segscore.metrics.betti.betti_matching`) of ``1 - P``
   and ``1 - G`` (foreground enters first; 6-connected foreground; among simultaneous births
   the lowest C-order cell is the elder, which on binary volumes decides which component is
   essential; essential classes are not counted), on the tiles of ``topo_tiles`` (default
   2 x 2 x 2: halves along each axis, the first half taking the odd voxel, an axis shorter
   than its parts cut into fewer), counts summed over tiles. Per dimension k: m_k matched,
   p_k = m_k + unmatched in P, g_k = m_k + unmatched in G; TopoF1_k = 2 m_k / (p_k + g_k)
   when g_k > 0, 0.5 / (p_k + g_k + 0.5) when g_k = 0 < p_k, null when p_k + g_k = 0.
   TopoScore = sum of ``topo_weights`` (default 0.34, 0.33, 0.33) times TopoF1_k over the
   defined dimensions, the weights renormalised over them (all equal if they sum to 0); 1
   when none is defined. The tiling is part of the definition (the competition's scorer
   tiles in octants); ``topo_tiles=(1, 1, 1)`` gives the whole-volume matching.
4. **SurfaceDice**: DeepMind's surface Dice at ``tolerance`` (default 2.0, in the unit of
   ``spacing``, default 1 per axis) between G and P (:mod:`segscore.topology.surface`); 1 when
   both are empty, 0 when exactly one is.
5. **VOI**: connected components (``voi_connectivity`` 6, 18 or 26, default 26) of each
   binary volume; on the voxels where either is foreground, scikit-image's
   ``variation_of_information(G_labels, P_labels)``: ``voi_split`` is its first value,
   H(P_labels | G_labels) in bits, ``voi_merge`` its second, H(G_labels | P_labels) (the label
   0 of one volume on the other's foreground is a cluster); ``voi_total`` their sum;
   ``voi_score`` = 1 / (1 + alpha total) (``voi_transform="one_over_one_plus"``) or
   exp(-alpha total) (``"exp"``), alpha = ``voi_alpha`` (default 0.3, as the competition's
   scorer passes it; the toolkit function's own default is 1.0). Both empty: 0, 0, 0 and 1.
   (topometrics documents the first value as H(GT|PR); scikit-image defines it as
   H(image1|image0); the values are the same either way.)
6. **Leaderboard**: ``weights`` (default 0.3, 0.35, 0.35) with negative or non-finite ones set
   to 0, renormalised (1/3 each if they sum to 0), over (TopoScore, SurfaceDice, VOI_score).
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError

DEFAULT_WEIGHTS = (0.3, 0.35, 0.35)
DEFAULT_TOPO_WEIGHTS = (0.34, 0.33, 0.33)
DEFAULT_TOPO_TILES = (2, 2, 2)
VOI_TRANSFORMS = ("one_over_one_plus", "exp")
DIM_NAMES = ("components", "tunnels", "cavities")


class SurfacesInputError(ScoreError):
    """The volumes or options of ``surfaces`` cannot be scored."""


# ---- steps 1 and 2


def binarize(x, *, threshold=None, ignore=None) -> np.ndarray:
    """Foreground of ``x``: ``x != 0`` (NaN as 0) or ``x > threshold``; voxels of ``ignore``
    take the value 0 first."""
    a = np.asarray(x)
    if a.dtype == np.bool_ and threshold is None:
        fg = a.copy()
    elif threshold is None:
        fg = a != 0
        if a.dtype.kind in "fc":
            fg &= ~np.isnan(a)
    else:
        fg = a > float(threshold)  # NaN > t is False: NaN counts as 0 only when 0 > t is False too
        if a.dtype.kind in "fc" and 0 > float(threshold):
            fg |= np.isnan(a)
    if ignore is not None:
        zero_fg = (0 > float(threshold)) if threshold is not None else False
        fg[ignore] = zero_fg
    return fg


def ignore_mask_of(truth, *, ignore_label=2, ignore_mask=None):
    """The voxels to ignore (the explicit mask wins over the label), or None
    (:func:`segscore.metrics.masks.ignore_region`, shared with ``objects`` and ``curve``)."""
    from segscore.metrics.masks import ignore_region

    return ignore_region(truth, ignore_label=ignore_label, ignore_mask=ignore_mask, error=SurfacesInputError)


# ---- step 3


def axis_cuts(n: int, parts: int) -> list[tuple[int, int]]:
    """``[0, n)`` in ``parts`` runs whose sizes differ by at most one (the first ones longer);
    fewer parts when ``n`` is shorter."""
    parts = max(1, min(int(parts), n if n > 0 else 1))
    base, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def tile_slices(shape, tiles) -> list[tuple[slice, slice, slice]]:
    """The tiles (C order: first axis slowest), empty ones left out."""
    cuts = [axis_cuts(n, t) for n, t in zip(shape, tiles)]
    return [(slice(a0, a1), slice(b0, b1), slice(c0, c1))
            for a0, a1 in cuts[0] for b0, b1 in cuts[1] for c0, c1 in cuts[2]
            if a1 > a0 and b1 > b0 and c1 > c0]


#: tiles of more voxels than this are matched one at a time whatever ``threads`` says: a tile
#: takes about 60 bytes per voxel at its peak (a 256^3 octant of a 512^3 volume: ~1 GB)
MAX_PARALLEL_TILE_VOXELS = 1 << 23


def topology_counts(pred_fg: np.ndarray, gt_fg: np.ndarray, *, tiles=DEFAULT_TOPO_TILES, threads: int = 1):
    """``([(m_k, p_k, g_k) for k in 0, 1, 2], number of tiles)``, the counts summed over the
    tiles (the prediction is the matching's first input, as the competition passes it)."""
    from segscore.metrics.betti import betti_matching

    def one(sl):
        p = np.ascontiguousarray(pred_fg[sl])
        g = np.ascontiguousarray(gt_fg[sl])
        m = betti_matching((~p).view(np.uint8), (~g).view(np.uint8))
        out = []
        for d in m.dims:
            matched, un_p, un_g = d.counts()
            out.append((matched, matched + un_p, matched + un_g))
        return out

    slices = tile_slices(pred_fg.shape, tiles)
    biggest = max((np.prod([sl.stop - sl.start for sl in t]) for t in slices), default=0)
    if threads > 1 and len(slices) > 1 and biggest <= MAX_PARALLEL_TILE_VOXELS:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(threads, len(slices))) as pool:
            parts = list(pool.map(one, slices))
    else:
        parts = [one(sl) for sl in slices]
    total = [[0, 0, 0] for _ in range(3)]
    for part in parts:
        for k in range(3):
            for j in range(3):
                total[k][j] += part[k][j]
    return [tuple(t) for t in total], len(slices)


def toposcore(counts, topo_weights=DEFAULT_TOPO_WEIGHTS, notes=None):
    """``(TopoScore, [TopoF1_k or None])`` from the summed counts."""
    f1 = []
    for k, (m, p, g) in enumerate(counts):
        denom = p + g
        if denom == 0:
            f1.append(None)
            if notes is not None:
                notes[f"topoF1_{k}"] = (f"no {DIM_NAMES[k]} in either volume (p_{k} + g_{k} = 0): "
                                        "the dimension is left out of TopoScore")
        elif g != 0:
            f1.append(2.0 * m / denom)
        else:
            f1.append(0.5 / (denom + 0.5))
    active = [k for k in range(3) if f1[k] is not None]
    if not active:
        return 1.0, f1
    w = np.array([float(topo_weights[k]) for k in active])
    if not np.isfinite(w).all() or w.sum() <= 0:
        w = np.ones(len(active))
    w = w / w.sum()
    return float((w * np.array([f1[k] for k in active])).sum()), f1


# ---- step 5


def _labels(fg: np.ndarray, connectivity: int) -> np.ndarray:
    from segscore.metrics.masks import components

    return components(fg, connectivity)


def _xlogx(counts) -> float:
    c = np.asarray(counts, np.float64)
    c = c[c > 0]
    return math.fsum((c * np.log2(c)).tolist())


def voi(pred_fg: np.ndarray, gt_fg: np.ndarray, *, connectivity: int = 26, alpha: float = 0.3,
        transform: str = "one_over_one_plus") -> dict:
    """``voi_split, voi_merge, voi_total, voi_score`` (see the module docstring)."""
    from segscore.kernels.contingency import contingency

    if not (pred_fg.any() or gt_fg.any()):
        return {"voi_split": 0.0, "voi_merge": 0.0, "voi_total": 0.0, "voi_score": 1.0}
    gl = _labels(gt_fg, connectivity)
    pl = _labels(pred_fg, connectivity)
    _, t_area, _, p_area, pair_t, pair_p, pair_n, _, _ = contingency(gl, pl)
    del gl, pl
    per_t = np.bincount(pair_t, weights=pair_n, minlength=t_area.size).astype(np.int64)
    per_p = np.bincount(pair_p, weights=pair_n, minlength=p_area.size).astype(np.int64)
    t_on_0 = t_area - per_t  # a truth component on the prediction's background
    p_on_0 = p_area - per_p
    n = int(t_area.sum() + p_area.sum() - pair_n.sum())
    cells = _xlogx(pair_n) + _xlogx(t_on_0) + _xlogx(p_on_0)
    rows = _xlogx(t_area) + _xlogx([p_on_0.sum()])  # truth components, and truth's 0 on the prediction
    cols = _xlogx(p_area) + _xlogx([t_on_0.sum()])
    split = max(0.0, (rows - cells) / n)  # H(P | G): scikit-image's first value
    merge = max(0.0, (cols - cells) / n)  # H(G | P)
    total = split + merge
    score = math.exp(-alpha * total) if transform == "exp" else 1.0 / (1.0 + alpha * total)
    return {"voi_split": split, "voi_merge": merge, "voi_total": total, "voi_score": score}


# ---- the score


def _check_options(tolerance, spacing, voi_connectivity, voi_alpha, voi_transform, weights, topo_weights, topo_tiles):
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise SurfacesInputError(f"tolerance {tolerance!r}: give a finite number >= 0 (in the spacing's unit)")
    from segscore.metrics.masks import check_connectivity

    check_connectivity(voi_connectivity, 3, SurfacesInputError, "voi_connectivity")
    if not (math.isfinite(voi_alpha) and voi_alpha >= 0):
        raise SurfacesInputError(f"voi_alpha {voi_alpha!r}: give a finite number >= 0")
    if voi_transform not in VOI_TRANSFORMS:
        raise SurfacesInputError(f"voi_transform {voi_transform!r}: give one of {', '.join(VOI_TRANSFORMS)}")
    if len(weights) != 3 or len(topo_weights) != 3:
        raise SurfacesInputError("weights and topo_weights take three numbers each")
    if len(topo_tiles) != 3 or any(int(t) != t or t < 1 for t in topo_tiles):
        raise SurfacesInputError(f"topo_tiles {tuple(topo_tiles)!r}: give three whole numbers >= 1")


def _weights(w) -> tuple:
    w = [0.0 if (not math.isfinite(float(x)) or float(x) < 0) else float(x) for x in w]
    s = sum(w)
    if s <= 0:
        return (1 / 3, 1 / 3, 1 / 3)
    return tuple(x / s for x in w)


def _as_volume(x, name):
    if isinstance(x, (str,)) or hasattr(x, "__fspath__"):
        from segscore.io.readers import open_labels

        with open_labels(x, what=name, ndims=(2, 3)) as source:
            return source.read_all(), True
    a = np.asarray(x)
    if a.ndim not in (2, 3):
        raise SurfacesInputError(f"{name}: a volume of shape {a.shape}; give a 3D volume (or a 2D slice)")
    return a, False


def surfaces(truth=None, pred=None, *, ignore_label=2, ignore_mask=None, fg_threshold=None, tolerance=2.0,
             spacing=None, voi_connectivity=26, voi_alpha=0.3, voi_transform="one_over_one_plus",
             weights=DEFAULT_WEIGHTS, topo_weights=DEFAULT_TOPO_WEIGHTS, topo_tiles=DEFAULT_TOPO_TILES,
             threads: int = 1) -> dict:
    """The surface-detection score of ``pred`` against ``truth`` (the labels; arrays or paths).

    Returns a dict: ``leaderboard, toposcore, topoF1_0, topoF1_1, topoF1_2, surface_dice,
    voi_score, voi_total, voi_split, voi_merge``, ``topology`` (``dim0|dim1|dim2``:
    ``matched``, ``pred`` = p_k, ``gt`` = g_k), ``shape``, ``ignored_voxels``,
    ``foreground_pred``, ``foreground_gt``, ``tiles``, ``params``, ``notes`` and ``warnings``.
    See the module docstring for the definition.
    """
    if truth is None or pred is None:
        raise SurfacesInputError("surfaces needs truth= (the labels) and pred= (the prediction)")
    weights = tuple(weights)
    topo_weights = tuple(topo_weights)
    topo_tiles = tuple(int(t) for t in topo_tiles) if all(float(t).is_integer() for t in topo_tiles) \
        else tuple(topo_tiles)
    _check_options(tolerance, spacing, voi_connectivity, voi_alpha, voi_transform, weights, topo_weights,
                   topo_tiles)
    warnings: list[str] = []
    notes: dict = {}
    g_raw, _ = _as_volume(truth, "labels")
    p_raw, _ = _as_volume(pred, "prediction")
    if g_raw.shape != p_raw.shape:
        raise SurfacesInputError(f"prediction of shape {p_raw.shape} and labels of shape {g_raw.shape} differ; "
                                 "score a prediction on the labels' grid")
    two_d = g_raw.ndim == 2
    if spacing is None:
        sp = (1.0, 1.0, 1.0)
    else:
        sp = tuple(float(s) for s in (spacing if np.ndim(spacing) else [spacing] * g_raw.ndim))
        if len(sp) != g_raw.ndim or not all(math.isfinite(s) and s > 0 for s in sp):
            raise SurfacesInputError(f"spacing {spacing!r}: give {g_raw.ndim} positive numbers, one per axis")
        if two_d:
            sp = (1.0,) + sp
        if any(s != 1.0 for s in sp):
            warnings.append(f"spacing {sp[-g_raw.ndim:]} applied: the surface tolerance is in its unit")
    if two_d:
        g_raw = g_raw[None]
        p_raw = p_raw[None]
        warnings.append("a 2D image is scored as a volume of one slice")
    ign = ignore_mask_of(g_raw if ignore_mask is None else g_raw, ignore_label=ignore_label,
                         ignore_mask=None if ignore_mask is None else
                         (np.asarray(ignore_mask)[None] if two_d else ignore_mask))
    n_ignored = int(ign.sum()) if ign is not None else 0
    if n_ignored:
        what = "the ignore mask" if ignore_mask is not None else f"labels == {ignore_label}"
        warnings.append(f"{n_ignored} voxels ignored ({what}): background in both volumes")
    p = binarize(p_raw, threshold=fg_threshold, ignore=ign)
    g = binarize(g_raw, threshold=fg_threshold, ignore=ign)
    del p_raw, g_raw, ign

    from segscore.topology.surface import surface_dice

    counts, n_tiles = topology_counts(p, g, tiles=topo_tiles, threads=threads)
    topo, f1 = toposcore(counts, topo_weights, notes)
    sd = surface_dice(g, p, tolerance=tolerance, spacing=sp)
    sd = 1.0 if sd is None else sd
    v = voi(p, g, connectivity=voi_connectivity, alpha=voi_alpha, transform=voi_transform)
    w = _weights(weights)
    board = w[0] * topo + w[1] * sd + w[2] * v["voi_score"]
    return {
        "leaderboard": board, "toposcore": topo, "topoF1_0": f1[0], "topoF1_1": f1[1], "topoF1_2": f1[2],
        "surface_dice": sd, "voi_score": v["voi_score"], "voi_total": v["voi_total"],
        "voi_split": v["voi_split"], "voi_merge": v["voi_merge"],
        "topology": {f"dim{k}": {"matched": counts[k][0], "pred": counts[k][1], "gt": counts[k][2]}
                     for k in range(3)},
        "shape": list(g.shape[1:] if two_d else g.shape), "ignored_voxels": n_ignored,
        "foreground_pred": int(np.count_nonzero(p)), "foreground_gt": int(np.count_nonzero(g)),
        "tiles": n_tiles,
        "params": {"ignore_label": ignore_label, "ignore_mask": ignore_mask is not None,
                   "fg_threshold": fg_threshold, "tolerance": float(tolerance), "spacing": list(sp),
                   "voi_connectivity": voi_connectivity, "voi_alpha": float(voi_alpha),
                   "voi_transform": voi_transform, "weights": list(w), "topo_weights": list(topo_weights),
                   "topo_tiles": list(topo_tiles)},
        "notes": notes, "warnings": warnings,
    }
