"""Panoptic quality against stardist and a brute-force count; VOI and the adapted Rand error
against scikit-image under both background rules, pooled, tiled and on empty images."""

import math

import numpy as np
import pytest

from segscore.objects import score_segmentation
from tests.objects.helpers import synthetic_pair

CASES = [dict(seed=1, shape=(120, 130), n=40), dict(seed=2, shape=(30, 34, 32), n=12, r=(3, 6)),
         dict(seed=3, shape=(150, 150), n=60, p_split=0.3, p_merge=0.3, jitter=3)]


def entropies(truth, pred, count_background):
    """H(pred | truth), H(truth | pred) in bits and the adapted Rand triple, from a dense table."""
    keep = np.ones(truth.shape, bool) if count_background else truth > 0
    t, p = truth[keep].astype(np.int64), pred[keep].astype(np.int64)
    _, ti = np.unique(t, return_inverse=True)
    _, pi = np.unique(p, return_inverse=True)
    joint = np.zeros((ti.max() + 1, pi.max() + 1))
    np.add.at(joint, (ti, pi), 1)
    n = joint.sum()
    pt, pp = joint.sum(1), joint.sum(0)
    nz = joint > 0
    h_p_given_t = -sum(joint[nz] / n * np.log2(joint[nz] / np.broadcast_to(pt[:, None], joint.shape)[nz]))
    h_t_given_p = -sum(joint[nz] / n * np.log2(joint[nz] / np.broadcast_to(pp[None, :], joint.shape)[nz]))
    pairs, tp_, pp_ = (joint ** 2).sum() - n, (pt ** 2).sum() - n, (pp ** 2).sum() - n
    return h_p_given_t, h_t_given_p, (1 - pairs / (0.5 * tp_ + 0.5 * pp_), pairs / tp_, pairs / pp_)


@pytest.mark.parametrize("case", CASES)
def test_panoptic_quality_equals_stardist(case):
    from stardist.matching import matching

    truth, pred = synthetic_pair(**case)
    for thr in (0.5, 0.7):
        s = score_segmentation(truth, pred, threshold=thr)
        m = matching(truth, pred, thresh=thr)
        assert s["pq"] == pytest.approx(m.panoptic_quality, abs=1e-6)  # stardist sums float32 IoUs
        tp, fp, fn = s["true_positives"], s["false_positives"], s["false_negatives"]
        if tp == 0:  # stardist's 0 is a mean over no pair: null with a note here
            assert m.mean_matched_score == 0 and s["sq"] is None and s["sq_dsc"] is None and "sq" in s["notes"]
            continue
        assert s["sq"] == pytest.approx(m.mean_matched_score, abs=1e-6)
        assert (tp, fp, fn) == (m.tp, m.fp, m.fn)
        assert s["rq"] == tp / (tp + fp / 2 + fn / 2)
        assert s["pq"] == pytest.approx(s["sq"] * s["rq"], rel=1e-12)
        assert s["sq_dsc"] == pytest.approx(s["dice_per_object"], rel=1e-12)
        assert s["pq_dsc"] == pytest.approx(s["sq_dsc"] * s["rq"], rel=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("count_background", [False, True])
def test_voi_and_rand_equal_scikit_image_and_a_dense_oracle(case, count_background):
    from skimage.metrics import adapted_rand_error, variation_of_information

    truth, pred = synthetic_pair(**case)
    s = score_segmentation(truth, pred, count_background=count_background)
    assert s["count_background"] is count_background
    ignore = () if count_background else (0,)
    split, merge = variation_of_information(truth, pred, ignore_labels=ignore)
    assert s["voi_split"] == pytest.approx(split, abs=1e-12)
    assert s["voi_merge"] == pytest.approx(merge, abs=1e-12)
    are, prec, rec = adapted_rand_error(truth, pred, ignore_labels=ignore)
    assert (s["adapted_rand_error"], s["adapted_rand_precision"], s["adapted_rand_recall"]) == \
        pytest.approx((are, prec, rec), abs=1e-12)
    hs, hm, rand = entropies(truth, pred, count_background)
    assert (s["voi_split"], s["voi_merge"]) == pytest.approx((hs, hm), abs=1e-12)
    assert (s["adapted_rand_error"], s["adapted_rand_precision"], s["adapted_rand_recall"]) == \
        pytest.approx(rand, abs=1e-12)


def test_the_background_rule_changes_voi():
    truth, pred = synthetic_pair(seed=5, shape=(80, 90), n=15)
    a, b = (score_segmentation(truth, pred, count_background=c) for c in (False, True))
    assert abs(a["voi_merge"] - b["voi_merge"]) > 1e-3 and abs(a["adapted_rand_error"] - b["adapted_rand_error"]) > 1e-3


def test_pooled_fields_score_as_the_fields_side_by_side():
    from segscore.objects.metrics import add_sums, field_sums, metrics_from_sums

    (t1, p1), (t2, p2) = synthetic_pair(seed=6, shape=(60, 70), n=10), synthetic_pair(seed=7, shape=(60, 70), n=12)
    t2, p2 = np.where(t2 > 0, t2 + 1000, 0), np.where(p2 > 0, p2 + 1000, 0)
    for cb in (False, True):
        pooled = metrics_from_sums(add_sums(field_sums(t1, p1, count_background=cb),
                                            field_sums(t2, p2, count_background=cb)))
        whole = score_segmentation(np.hstack([t1, t2]), np.hstack([p1, p2]), count_background=cb)
        for k in ("voi_split", "voi_merge", "adapted_rand_error", "adapted_rand_precision", "adapted_rand_recall",
                  "pq", "sq", "rq", "pq_dsc", "sq_dsc"):
            assert pooled[k] == pytest.approx(whole[k], rel=1e-12, abs=1e-15), (cb, k)


def test_tiles_do_not_change_the_new_keys():
    truth, pred = synthetic_pair(seed=8, shape=(70, 64), n=14)
    keys = ("pq", "sq", "rq", "pq_dsc", "sq_dsc", "voi_split", "voi_merge", "adapted_rand_error")
    for cb in (False, True):
        base = score_segmentation(truth, pred, count_background=cb)
        for tile_rows in (1, 9):
            r = score_segmentation(truth, pred, count_background=cb, tile_rows=tile_rows, threads=2)
            assert all(r[k] == base[k] for k in keys), tile_rows


def test_empty_images_give_nulls_with_notes():
    z = np.zeros((20, 20), np.int32)
    one = z.copy()
    one[5:9, 5:9] = 1
    s = score_segmentation(z, z)
    for k in ("pq", "sq", "rq", "voi_split", "adapted_rand_error"):
        assert s[k] is None and k in s["notes"]
    s = score_segmentation(one, z)  # nothing predicted: PQ 0, SQ undefined
    assert s["pq"] == 0.0 and s["rq"] == 0.0 and s["sq"] is None and "sq" in s["notes"]
    assert s["voi_split"] == 0.0 and s["voi_merge"] == 0.0  # one truth segment, all on the prediction's background
    s = score_segmentation(one, one)
    assert (s["pq"], s["sq"], s["rq"], s["voi_split"], s["voi_merge"]) == (1.0, 1.0, 1.0, 0.0, 0.0)
    assert s["adapted_rand_error"] == 0.0 and not math.isnan(s["adapted_rand_precision"])
