"""Dice, areas, splits/merges, boundary F1 and the whole scorecard against brute-force oracles."""

import numpy as np
import pytest
from scipy import ndimage as ndi

from segscore.objects import (boundary_f1, counts_and_areas, dice, match_objects, score_segmentation,
                              splits_and_merges)
from tests.objects.helpers import synthetic_pair

KEYS = ["match_iou", "precision", "recall", "f1", "true_positives", "false_positives", "false_negatives",
        "iou_mean", "dice_per_object", "dice_pixel", "n_matched",
        *[f"ap_{round(0.5 + 0.05 * k, 2):g}" for k in range(9)], "ap_mean",
        *[f"boundary_{m}_{t}px" for t in (1, 2, 3) for m in ("precision", "recall", "f1")],
        "splits", "merges", "n_truth", "n_pred", "count_error", "area_error_mean", "area_error_abs_mean",
        "pq", "sq", "rq", "pq_dsc", "sq_dsc", "voi_split", "voi_merge", "adapted_rand_error",
        "adapted_rand_precision", "adapted_rand_recall", "count_background"]


def brute(truth, pred, thr=0.5, minimum_overlap=0.1):
    t_ids = [i for i in np.unique(truth) if i]
    p_ids = [i for i in np.unique(pred) if i]
    ta = {i: (truth == i).sum() for i in t_ids}
    pa = {j: (pred == j).sum() for j in p_ids}
    inter = {(i, j): ((truth == i) & (pred == j)).sum() for i in t_ids for j in p_ids}
    m = match_objects(truth, pred, thr)
    tids, pids = np.array(t_ids), np.array(p_ids)
    pairs = [(tids[a], pids[b]) for a, b in m.pairs]
    ious = [inter[p] / (ta[p[0]] + pa[p[1]] - inter[p]) for p in pairs]
    err = [(pa[j] - ta[i]) / ta[i] for i, j in pairs]
    fg = 2 * ((truth > 0) & (pred > 0)).sum() / ((truth > 0).sum() + (pred > 0).sum())
    cover = {(i, j): inter[i, j] / ta[i] >= minimum_overlap for i in t_ids for j in p_ids}
    splits = sum(sum(cover[i, j] for j in p_ids) >= 2 for i in t_ids)
    merges = sum(sum(cover[i, j] for i in t_ids) >= 2 for j in p_ids)
    return dict(iou_mean=np.mean(ious), dice_per_object=np.mean([2 * v / (1 + v) for v in ious]),
                dice_pixel=fg, area_error_mean=np.mean(err), area_error_abs_mean=np.mean(np.abs(err)),
                splits=splits, merges=merges, count_error=len(p_ids) - len(t_ids))


def brute_boundary(truth, pred, tol):
    def edge(m):
        return (ndi.grey_dilation(m, size=3) != ndi.grey_erosion(m, size=3)) & (m > 0)

    te, pe = edge(truth), edge(pred)
    fp = np.ones((2 * tol + 1,) * truth.ndim, bool)
    p = (pe & ndi.binary_dilation(te, structure=fp)).sum() / pe.sum()
    r = (te & ndi.binary_dilation(pe, structure=fp)).sum() / te.sum()
    return p, r, 2 * p * r / (p + r)


@pytest.mark.parametrize("case", [dict(seed=1, shape=(120, 130), n=40), dict(seed=2, shape=(30, 34, 32), n=12, r=(3, 6)),
                                  dict(seed=3, shape=(150, 150), n=60, p_split=0.3, p_merge=0.3, jitter=3)])
def test_scorecard_against_brute_force(case):
    truth, pred = synthetic_pair(**case)
    s = score_segmentation(truth, pred)
    assert list(s) == KEYS + ["shape", "notes", "warnings"] and s["notes"] == {} and s["warnings"] == []
    assert s["shape"] == list(truth.shape)  # the image diagonal a distance counts as under --missing worst
    b = brute(truth, pred)
    for k, v in b.items():
        assert s[k] == pytest.approx(v, rel=1e-12), k
    for tol in (1, 2, 3):
        p, r, f = brute_boundary(truth, pred, tol)
        assert s[f"boundary_precision_{tol}px"] == pytest.approx(p)
        assert s[f"boundary_recall_{tol}px"] == pytest.approx(r)
        assert s[f"boundary_f1_{tol}px"] == pytest.approx(f)
    # the parts agree with the whole
    d, c, sm = dice(truth, pred), counts_and_areas(truth, pred), splits_and_merges(truth, pred)
    bf = boundary_f1(truth, pred)
    for part in (d, c, sm, bf):
        for k, v in part.items():
            if k not in ("notes", "warnings"):
                assert s[k] == v, k
    assert s["ap_mean"] == pytest.approx(np.mean([s[k] for k in KEYS if k.startswith("ap_0")]))


def test_splits_and_merges_by_hand():
    truth = np.zeros((10, 20), np.int32)
    truth[:, :10] = 1  # split by pred 5 / 6
    truth[:, 10:15] = 2  # merged with 3 by pred 7
    truth[:, 15:] = 3
    pred = np.zeros_like(truth)
    pred[:5, :10] = 5
    pred[5:, :10] = 6
    pred[:, 10:] = 7
    pred[0, 0] = 8  # a one-pixel graze is not a split at 10 %
    assert splits_and_merges(truth, pred) == {"splits": 1, "merges": 1}
    assert splits_and_merges(truth, pred, minimum_overlap=0.6) == {"splits": 0, "merges": 1}


def test_counts_are_signed():
    truth = np.zeros((8, 8), int)
    truth[1:3, 1:3] = 1
    pred = truth.copy()
    pred[5:7, 5:7] = 2
    pred[1:4, 1:3] = 1  # 6 px against 4: +50 %
    c = counts_and_areas(truth, pred, threshold=0.5)
    assert c["count_error"] == 1 and c["area_error_mean"] == pytest.approx(0.5)
    assert c["area_error_abs_mean"] == pytest.approx(0.5)


@pytest.mark.parametrize("which", ["no_pred", "no_truth", "both"])
def test_empty_images_give_nulls_with_notes(which):
    full = np.zeros((20, 20), np.uint16)
    full[3:9, 3:9] = 4
    empty = np.zeros_like(full)
    truth, pred = {"no_pred": (full, empty), "no_truth": (empty, full), "both": (empty, empty)}[which]
    s = score_segmentation(truth, pred)
    for k in ("iou_mean", "dice_per_object", "area_error_mean", "area_error_abs_mean"):
        assert s[k] is None and k in s["notes"]
    if which == "no_pred":
        assert s["precision"] is None and s["recall"] == 0.0 and s["f1"] == 0.0 and s["ap_mean"] == 0.0
        assert s["boundary_precision_1px"] is None and s["boundary_recall_1px"] == 0.0
        assert s["boundary_f1_1px"] == 0.0 and s["false_negatives"] == 1 and s["dice_pixel"] == 0.0
    elif which == "no_truth":
        assert s["recall"] is None and s["precision"] == 0.0 and s["f1"] == 0.0 and s["false_positives"] == 1
    else:
        for k in ("precision", "recall", "f1", "ap_0.5", "ap_mean", "dice_pixel", "boundary_f1_2px"):
            assert s[k] is None, k
        assert s["true_positives"] == 0 and s["n_truth"] == 0 and s["count_error"] == 0
    from segscore.io.results import dumps

    assert "NaN" not in dumps(s)


def test_refusals():
    from segscore.errors import ScoreError

    a = np.zeros((4, 4), int)
    with pytest.raises(ScoreError, match="different shapes"):
        score_segmentation(a, np.zeros((4, 5), int))
    with pytest.raises(ScoreError, match="negative"):
        score_segmentation(a - 1, a)
    with pytest.raises(ScoreError, match="fractional"):
        score_segmentation(a + 0.5, a)
    with pytest.raises(ScoreError, match="2D or 3D"):
        score_segmentation(np.zeros(5, int), np.zeros(5, int))
    with pytest.raises(ScoreError, match="tolerances"):
        boundary_f1(a, a, tolerances=(1.5,))
    # whole-valued floats and bools are label images
    assert score_segmentation(a.astype(float) + 1, (a + 1).astype(bool))["true_positives"] == 1


def test_pixel_dice_of_identical_images_is_one():
    truth, _ = synthetic_pair(seed=9, n=20)
    s = score_segmentation(truth, truth)
    assert s["dice_pixel"] == 1.0 and s["f1"] == 1.0 and s["ap_mean"] == 1.0 and s["boundary_f1_1px"] == 1.0
    assert s["splits"] == 0 and s["merges"] == 0
