"""Slow reference implementations (pure NumPy + scipy) and synthetic fiber targets.

The reference follows ScrollGT's definitions literally: a whole-volume
``scipy.ndimage.distance_transform_edt(..., return_indices=True)`` for nearest-label growth,
``numpy.linspace`` resampling and Python loops for runs. It is the oracle the numba path is
compared with on small cubes.
"""

from __future__ import annotations

import numpy as np

from segscore.io.samples import fiber_target as write_target  # noqa: F401 - the package's sample generators
from segscore.io.samples import random_fibers  # noqa: F401


def grow_reference(labels, radius):
    from scipy import ndimage

    labels = np.asarray(labels)
    if radius <= 0 or not labels.any():
        return labels.copy()
    bg = labels == 0
    dist, idx = ndimage.distance_transform_edt(bg, return_indices=True)
    out = labels.copy()
    grow = bg & (dist <= radius)
    out[grow] = labels[tuple(i[grow] for i in idx)]
    return out


def fiber_list(coords, edges, fiber_offsets, edge_offsets):
    """[(coords (n,3) float64, local edges (m,2))] per stored fiber."""
    out = []
    for i in range(len(fiber_offsets) - 1):
        c0, c1 = fiber_offsets[i], fiber_offsets[i + 1]
        e0, e1 = edge_offsets[i], edge_offsets[i + 1]
        out.append((np.asarray(coords[c0:c1], np.float64), np.asarray(edges[e0:e1], np.int64) - c0))
    return out


def scored(fibers, shape):
    hi = np.asarray(shape) - 1
    return [f for f in fibers if np.all((f[0] >= 0) & (f[0] <= hi), axis=1).sum() > 1]


def resample_reference(c, e, step=0.5):
    if len(e) == 0:
        return [(c[0], 0.0)] if len(c) else []
    pts = []
    for a_i, b_i in e:
        a, b = c[a_i], c[b_i]
        seg = float(np.linalg.norm(b - a))
        if seg == 0.0:
            pts.append((a, 0.0))
            continue
        n = max(2, int(np.ceil(seg / step)) + 1)
        for t in np.linspace(0.0, 1.0, n)[:-1]:
            pts.append((a + (b - a) * t, seg / (n - 1)))
    return pts


def runs_reference(labels, lengths):
    runs, cur, acc = [], None, 0.0
    for lab, dl in zip(labels, lengths):
        if lab == 0:
            if cur is not None:
                runs.append((cur, acc))
                cur, acc = None, 0.0
            continue
        if lab != cur:
            if cur is not None:
                runs.append((cur, acc))
            cur, acc = lab, dl
        else:
            acc += dl
    if cur is not None:
        runs.append((cur, acc))
    return [(lab, ln) for lab, ln in runs if ln > 0]


def score_reference(fibers, labels, tolerance=2.0):
    """Unrounded metrics of ``labels`` against the (already filtered) ``fibers``."""
    labels = np.asarray(labels)
    shape = labels.shape
    grown = grow_reference(labels, tolerance)
    per_fiber = []
    gt_total = covered = 0.0
    gt_mask = np.zeros(shape, bool)
    for c, e in fibers:
        labs, lens = [], []
        for p, dl in resample_reference(c, e):
            idx = tuple(int(v) for v in np.rint(p))
            if not all(0 <= idx[a] < shape[a] for a in range(3)):
                continue
            gt_mask[idx] = True
            labs.append(int(grown[idx]))
            lens.append(dl)
        gt_total += sum(lens)
        covered += sum(dl for lab, dl in zip(labs, lens) if lab != 0)
        per_fiber.append((labs, lens))
    runs = [runs_reference(l, d) for l, d in per_fiber]
    inst_fibers = {}
    for gi, rr in enumerate(runs):
        for lab, _ in rr:
            inst_fibers.setdefault(lab, set()).add(gi)
    merging = {lab for lab, v in inst_fibers.items() if len(v) > 1}
    all_runs = [ln for rr in runs for _, ln in rr]
    tot = sum(all_runs)
    pen = [ln for l, d in per_fiber for _, ln in runs_reference([0 if x in merging else x for x in l], d)]
    if tolerance > 0 and gt_mask.any():
        from scipy import ndimage

        near = ndimage.distance_transform_edt(~gt_mask) <= tolerance
    else:
        near = gt_mask
    pred = labels > 0
    return {
        "erl": sum(r * r for r in all_runs) / tot if tot > 0 else None,
        "erl_merge_penalized": sum(r * r for r in pen) / tot if tot > 0 else None,
        "coverage": covered / gt_total if gt_total > 0 else None,
        "precision": (pred & near).sum() / pred.sum() if pred.any() else None,
        "splits": sum(max(0, len(rr) - 1) for rr in runs),
        "merges": sum(len(v) - 1 for v in inst_fibers.values()),
        "merged_instances": len(merging),
        "n_gt_fibers": len(fibers),
        "n_pred_instances": len(set(np.unique(labels).tolist()) - {0}),
        "gt_length": gt_total,
        "pred_length": float(pred.sum()),
    }


def rasterize_reference(fibers, shape):
    out = np.zeros(shape, np.int32)
    for i, (c, e) in enumerate(fibers, start=1):
        if len(e) == 0:
            pts = c
        else:
            a, b = c[e[:, 0]], c[e[:, 1]]
            seg = np.linalg.norm(a - b, axis=1)
            steps = np.maximum(2, np.ceil(seg * 2).astype(int))
            pts = np.concatenate([a[k] + (b[k] - a[k]) * np.linspace(0, 1, steps[k])[:, None]
                                  for k in range(len(seg))])
        idx = np.rint(pts).astype(int)
        ok = np.all((idx >= 0) & (idx < np.asarray(shape)), axis=1)
        idx = idx[ok]
        out[idx[:, 0], idx[:, 1], idx[:, 2]] = i
    return out


