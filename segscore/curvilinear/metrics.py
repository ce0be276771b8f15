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

import numpy as np

DIADEM_MATCH_RADIUS = 6.0


def dice_iou(gt: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    inter = int(np.count_nonzero(gt & pred))
    a, b = int(np.count_nonzero(gt)), int(np.count_nonzero(pred))
    union = a + b - inter
    dice = 1.0 if a + b == 0 else 2.0 * inter / (a + b)
    iou = 1.0 if union == 0 else inter / union
    return float(dice), float(iou)


def cldice(gt_skel, gt, pred_skel, pred) -> float:
    n_p = int(np.count_nonzero(pred_skel))
    n_g = int(np.count_nonzero(gt_skel))
    t_prec = 1.0 if n_p == 0 else np.count_nonzero(pred_skel & gt) / n_p
    t_sens = 1.0 if n_g == 0 else np.count_nonzero(gt_skel & pred) / n_g
    den = t_prec + t_sens
    return 0.0 if den == 0 else float(2 * t_prec * t_sens / den)


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
    from scipy.spatial import cKDTree

    d, _ = cKDTree(np.asarray(pred_pos, float)).query(np.asarray(ref_pos, float))
    got = ref_weight[d * d <= DIADEM_MATCH_RADIUS**2 + 1e-9]
    return float(np.sum(got) / tot)
