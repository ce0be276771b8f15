"""Overlap and topology metrics of a curvilinear prediction against a reference.

Definitions follow curvicost 0.3.1 (the parity tests pin them):

* dice, iou on the masks; cldice = harmonic mean of topology precision (prediction skeleton
  inside the reference mask; 1 when that skeleton is empty) and topology sensitivity
  (reference skeleton inside the prediction mask);
* betti0 = connected components (8-connected 2D, 26 in 3D); betti0_error = |difference|;
* erl: reference objects are the components of the reference skeleton; a prediction
  component touching two objects is a merge and zeroes every object it touches; otherwise
  object i contributes sum_j r_ij^2 / L_i (r_ij: its voxels in prediction component j);
  erl_frac = erl / erl of the reference against itself; merged_frac = merged length / total;
* diadem_like: reference graph nodes weighted by their incident edge length, credited when
  a prediction graph node lies within 6 voxels.
"""

from __future__ import annotations

import itertools

import numpy as np

DIADEM_MATCH_RADIUS = 6.0


#: the counts of :func:`overlap_counts`, in order
OVERLAP_COUNTS = ("gt", "pred", "both", "pred_skel", "pred_skel_in_gt", "gt_skel", "gt_skel_in_pred")


def _count_band(tile, gt, pred, gt_skel, pred_skel):
    return np.array([np.count_nonzero(gt), np.count_nonzero(pred), np.count_nonzero(gt & pred),
                     np.count_nonzero(pred_skel), np.count_nonzero(pred_skel & gt),
                     np.count_nonzero(gt_skel), np.count_nonzero(gt_skel & pred)], np.int64)


def overlap_counts(gt, pred, gt_skel, pred_skel, *, tile_rows=None, executor=None, threads=None) -> dict:
    """Voxel counts of the masks, their skeletons and their overlaps (:data:`OVERLAP_COUNTS`),
    one pass through :func:`segscore.engine.reduce` (exact integer sums: no tile changes them)."""
    from segscore.engine import reduce
    from segscore.io.sources import ArraySource

    sources = [ArraySource(np.asarray(a), n) for a, n in
               ((gt, "reference"), (pred, "prediction"), (gt_skel, "reference skeleton"),
                (pred_skel, "prediction skeleton"))]
    total = reduce(sources, _count_band, lambda a, b: a + b, tile_rows=tile_rows, executor=executor,
                   threads=threads, target_px=1 << 24)
    total = np.zeros(len(OVERLAP_COUNTS), np.int64) if total is None else total
    return {k: int(v) for k, v in zip(OVERLAP_COUNTS, total)}


def dice_iou_of(c: dict) -> tuple[float, float]:
    """Dice and IoU of the masks from :func:`overlap_counts` (1.0 for two empty masks)."""
    a, b, inter = c["gt"], c["pred"], c["both"]
    union = a + b - inter
    dice = 1.0 if a + b == 0 else 2.0 * inter / (a + b)
    iou = 1.0 if union == 0 else inter / union
    return float(dice), float(iou)


def cldice_of(c: dict) -> float:
    """clDice from :func:`overlap_counts`: harmonic mean of topology precision and sensitivity."""
    n_p, n_g = c["pred_skel"], c["gt_skel"]
    t_prec = 1.0 if n_p == 0 else c["pred_skel_in_gt"] / n_p
    t_sens = 1.0 if n_g == 0 else c["gt_skel_in_pred"] / n_g
    den = t_prec + t_sens
    return 0.0 if den == 0 else float(2 * t_prec * t_sens / den)


def dice_iou(gt: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    """Dice and IoU of two binary masks."""
    return dice_iou_of({"gt": int(np.count_nonzero(gt)), "pred": int(np.count_nonzero(pred)),
                        "both": int(np.count_nonzero(gt & pred))})


def cldice(gt_skel, gt, pred_skel, pred) -> float:
    """clDice of two masks given their skeletons."""
    return cldice_of(overlap_counts(gt, pred, gt_skel, pred_skel))


def erl(obj: np.ndarray, seg: np.ndarray) -> tuple[float, float]:
    """(erl, merged_frac) from the object id (1..) and prediction segment (0 = none) of every
    reference-skeleton voxel."""
    if len(obj) == 0:
        return 0.0, 0.0
    n_obj = int(obj.max()) + 1
    L = np.bincount(obj, minlength=n_obj).astype(np.float64)
    keep = seg > 0
    o, s = obj[keep].astype(np.int64), seg[keep].astype(np.int64)
    if len(o) == 0:
        return 0.0, 0.0
    keys, counts = np.unique(s * n_obj + o, return_counts=True)
    pairs = np.stack([keys // n_obj, keys % n_obj], axis=1)
    seg_ids, n_objs = np.unique(pairs[:, 0], return_counts=True)
    merged_segs = seg_ids[n_objs > 1]
    bad = np.zeros(n_obj, dtype=bool)
    bad[np.unique(pairs[np.isin(pairs[:, 0], merged_segs), 1])] = True
    good = ~bad[pairs[:, 1]]
    contrib = np.zeros(n_obj)
    np.add.at(contrib, pairs[good, 1], counts[good].astype(np.float64) ** 2)
    total = float(L.sum())
    value = float(np.sum(contrib[1:] / np.where(L[1:] > 0, L[1:], 1.0)))
    return value, float(L[bad].sum() / total)


def diadem_like(ref_pos, ref_weight, pred_pos) -> float | None:
    """Weighted fraction of reference nodes with a prediction node within 6 voxels, or None
    when the reference has no weighted node."""
    tot = float(np.sum(ref_weight))
    if len(ref_pos) == 0 or tot <= 0:
        return None
    if len(pred_pos) == 0:
        return 0.0
    ref_pos = np.asarray(ref_pos)
    pred_pos = np.asarray(pred_pos)
    if np.issubdtype(ref_pos.dtype, np.integer) and np.issubdtype(pred_pos.dtype, np.integer):
        from segscore.curvilinear.graph import nearest_voxels

        lo = np.minimum(ref_pos.min(axis=0), pred_pos.min(axis=0))
        shape = tuple(np.maximum(ref_pos.max(axis=0), pred_pos.max(axis=0)) - lo + 1)
        d2, _, _ = nearest_voxels(pred_pos - lo, ref_pos - lo, shape, int(DIADEM_MATCH_RADIUS**2 + 1e-9))
        close = d2 >= 0
    else:
        from scipy.spatial import cKDTree

        d, _ = cKDTree(np.asarray(pred_pos, float)).query(np.asarray(ref_pos, float))
        close = d * d <= DIADEM_MATCH_RADIUS**2 + 1e-9
    got = ref_weight[close]
    return float(np.sum(got) / tot)


# ---- optional metrics (curvicost's all_metrics; segscore computes them on request) ----------


def skeleton_recall(gt_skel, pred) -> float | None:
    """Fraction of the reference skeleton's voxels inside the prediction mask; None when the
    reference skeleton is empty."""
    n = int(np.count_nonzero(gt_skel))
    return None if n == 0 else float(np.count_nonzero(gt_skel & pred) / n)


def _boundary(mask):
    """Foreground voxels with a background face neighbour (outside the array counts as
    background)."""
    p = np.pad(mask, 1)
    inner = mask.copy()
    for ax in range(mask.ndim):
        for shift in (0, 2):  # the neighbour before and after along this axis
            inner &= p[tuple(slice(shift, shift + n) if a == ax else slice(1, -1) for a, n in enumerate(mask.shape))]
    return mask & ~inner


def hd95(gt, pred) -> float:
    """95th percentile Hausdorff distance between the masks' boundaries (both directions, the
    larger; linear percentile); the array diagonal when either mask is empty."""
    from scipy import ndimage

    if not gt.any() or not pred.any():
        return float(np.linalg.norm(gt.shape))
    bg, bp = _boundary(gt), _boundary(pred)
    to_g = ndimage.distance_transform_edt(~bg)
    to_p = ndimage.distance_transform_edt(~bp)
    return float(max(np.percentile(to_g[bp], 95), np.percentile(to_p[bg], 95)))


def window_max(mask, coords) -> np.ndarray:
    """Max of ``mask``'s distance map over the 3^d window around each coordinate (clipped at
    the array edge), floored at 0; the map is evaluated on those windows only."""
    from segscore.curvilinear.graph import distance_at

    offs = np.array(list(itertools.product((-1, 0, 1), repeat=mask.ndim)), dtype=np.int64)
    nb = (np.asarray(coords, np.int64)[:, None, :] + offs[None, :, :]).reshape(-1, mask.ndim)
    ok = np.all((nb >= 0) & (nb < np.array(mask.shape)), axis=1)
    flat, inverse = np.unique(np.ravel_multi_index(tuple(nb[ok].T), mask.shape), return_inverse=True)
    v = np.zeros(len(nb))
    v[ok] = distance_at(mask, flat)[inverse.ravel()]
    return v.reshape(len(coords), len(offs)).max(axis=1) if len(coords) else np.zeros(0)


def cbdice_star(gt_skel, gt, pred_skel, pred) -> float | None:
    """Radius-balanced centreline Dice: for each skeleton voxel of one mask, the ratio of the
    smaller to the larger of the two masks' radii there (0 where the other mask is absent),
    averaged over that skeleton; the harmonic mean of the two directions. Radii are the
    3^d-window maxima of each mask's distance map. None when either skeleton is empty."""
    def side(skel_a, mask_a, mask_b):
        c = np.argwhere(skel_a)
        if len(c) == 0:
            return None
        ra, rb = window_max(mask_a, c), window_max(mask_b, c)
        return float(np.where(rb > 0, np.minimum(ra, rb) / np.maximum(np.maximum(ra, rb), 1e-9), 0.0).mean())

    a, b = side(gt_skel, gt, pred), side(pred_skel, pred, gt)
    if a is None or b is None:
        return None
    return 0.0 if a + b <= 0 else 2 * a * b / (a + b)
