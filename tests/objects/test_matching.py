"""Matching and the AP sweep against stardist, relabelling invariance, analytic IoUs."""

import numpy as np
import pytest

from segscore.objects import (DEFAULT_IOU_THRESHOLDS, average_precision, iou_matrix, match_objects,
                              score_segmentation)
from segscore.objects.matching import match_table
from segscore.objects.table import ContingencyTable
from tests.objects.helpers import disk, relabel, synthetic_pair

CASES = [dict(seed=s, shape=(200, 220), n=70) for s in range(4)] + \
        [dict(seed=10, shape=(40, 48, 44), n=25, r=(3, 7)),
         dict(seed=11, shape=(256, 256), n=150, r=(6, 14), p_split=0.3, p_merge=0.3, jitter=4)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}")
def test_parity_with_stardist(case):
    matching = pytest.importorskip("stardist.matching").matching
    truth, pred = synthetic_pair(**case)
    thresholds = list(DEFAULT_IOU_THRESHOLDS) + [0.3, 0.1]
    ref = matching(truth, pred, thresh=thresholds)
    s = score_segmentation(truth, pred)
    for thr, r in zip(thresholds, ref):
        m = match_objects(truth, pred, thr)
        assert (m.true_positives, m.false_positives, m.false_negatives) == (r.tp, r.fp, r.fn), thr
        assert m.n_truth == r.n_true and m.n_pred == r.n_pred
        assert m.precision == pytest.approx(r.precision) and m.recall == pytest.approx(r.recall)
        assert m.f1 == pytest.approx(r.f1) and m.average_precision == pytest.approx(r.accuracy)
        if thr >= 0.5:  # the matching is unique there, so the matched IoUs are too
            assert s[f"ap_{thr:g}"] == pytest.approx(r.accuracy, abs=1e-12)
            assert (m.iou_mean or 0.0) == pytest.approx(r.mean_matched_score, rel=1e-6)
    assert s["true_positives"] == ref[0].tp and s["iou_mean"] == pytest.approx(ref[0].mean_matched_score, rel=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_relabelling_changes_nothing(seed):
    truth, pred = synthetic_pair(seed=seed + 20, n=80, p_split=0.25, p_merge=0.25, jitter=4)
    a = score_segmentation(truth, pred, iou_thresholds=(0.1, 0.3, 0.5, 0.7))
    b = score_segmentation(relabel(truth, seed), relabel(pred, seed + 1), iou_thresholds=(0.1, 0.3, 0.5, 0.7))
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], float):
            assert a[k] == pytest.approx(b[k], rel=1e-12), k
        else:
            assert a[k] == b[k], k
    for thr in (0.1, 0.2, 0.3):
        ma, mb = match_objects(truth, pred, thr), match_objects(relabel(truth, 7), relabel(pred, 8), thr)
        assert ma.true_positives == mb.true_positives
        assert sum(ma.ious) == pytest.approx(sum(mb.ious), abs=1e-12)


def test_more_pairs_than_spacr_rule():
    # truth ids 1, 2; pred ids 1, 2. IoU(1,1)=0.2, IoU(1,2)=0.4, IoU(2,2)=0.25
    truth = np.array([[2, 0, 1, 1, 1, 1, 0, 2]])
    pred = np.array([[2, 0, 2, 2, 0, 1, 1, 0]])
    iou, _, _ = iou_matrix(truth, pred, dense=True)
    np.testing.assert_allclose(iou, [[0.2, 0.4], [0.0, 0.25]])
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(-iou)  # spacr: total IoU first, then the threshold
    assert (iou[r, c] >= 0.3).sum() == 0
    m = match_objects(truth, pred, 0.3)  # stardist's rule: most pairs first
    assert m.pairs == ((0, 1),) and m.true_positives == 1
    matching = pytest.importorskip("stardist.matching").matching
    assert matching(truth, pred, thresh=0.3).tp == 1


def test_count_first_then_iou_on_a_table():
    # truth 0 overlaps pred 0 (0.9) and pred 1 (0.35); truth 1 overlaps pred 0 (0.34) only.
    # Best total IoU keeps (0,0) alone; the most pairs at 0.3 is (0,1) + (1,0).
    def table(ious):
        pt, pp, val = zip(*ious)
        # areas 100 each: IoU = n / (200 - n)  =>  n = 200 IoU / (1 + IoU)
        n = np.array([round(200 * v / (1 + v)) for v in val])
        return ContingencyTable(np.array([1, 2], np.uint64), np.array([100, 100]), np.array([1, 2], np.uint64),
                                np.array([100, 100]), np.array(pt), np.array(pp), n)

    tab = table([(0, 0, 0.9), (0, 1, 0.35), (1, 0, 0.34)])
    m = match_table(tab, 0.3)
    assert m.pairs == ((0, 1), (1, 0))
    assert match_table(tab, 0.5).pairs == ((0, 0),)


def test_exact_half_ties_are_assigned():
    # a truth object of 8 px split exactly in two predicted halves: both IoU exactly 0.5
    truth = np.zeros((4, 4), np.int32)
    truth[:2] = 5
    pred = np.zeros_like(truth)
    pred[0] = 1
    pred[1] = 2
    m = match_objects(truth, pred, 0.5)
    assert m.true_positives == 1 and m.ious == (0.5,)
    matching = pytest.importorskip("stardist.matching").matching
    assert matching(truth, pred, thresh=0.5).tp == 1


@pytest.mark.parametrize("shift", [0, 1, 2, 3, 5, 8])
def test_shifted_disks_have_the_analytic_iou(shift):
    r = 20
    shape = (80, 80)
    truth = disk(shape, (40, 40), r).astype(np.uint8)
    pred = disk(shape, (40, 40 + shift), r).astype(np.uint8) * 7
    inter = np.sum(truth.astype(bool) & pred.astype(bool))
    expected = inter / (2 * truth.sum() - inter)
    # and the continuous lens formula, which the pixels approximate
    d = shift
    lens = 2 * r * r * np.arccos(d / (2 * r)) - d / 2 * np.sqrt(4 * r * r - d * d)
    assert expected == pytest.approx(lens / (2 * np.pi * r * r - lens), abs=0.02)
    m = match_objects(truth, pred, 0.1)
    assert m.ious[0] == pytest.approx(expected, abs=1e-15)
    ap = average_precision(truth, pred)
    for thr in DEFAULT_IOU_THRESHOLDS:
        assert ap[f"ap_{thr:g}"] == (1.0 if expected >= thr else 0.0)


def test_iou_matrix_sparse_equals_dense_and_ids_sorted():
    truth, pred = synthetic_pair(seed=3, n=30)
    sp, ti, pi = iou_matrix(truth, pred)
    de, ti2, pi2 = iou_matrix(truth, pred, dense=True)
    np.testing.assert_array_equal(sp.toarray(), de)
    assert (np.diff(ti.astype(np.int64)) > 0).all() and (ti == ti2).all() and (pi == pi2).all()
    assert sp.shape == (ti.size, pi.size)


def test_match_threshold_refused():
    from segscore.errors import ScoreError

    with pytest.raises(ScoreError):
        match_objects(np.ones((2, 2), int), np.ones((2, 2), int), 0.0)


def _brute_best(n_t, n_p, edges, thr):
    """(max pairs, max total IoU among matchings of that size) by enumerating every matching."""
    from itertools import combinations

    cand = [(a, b, v) for a, b, v in edges if v >= thr]
    best = (0, 0.0)
    for k in range(len(cand), 0, -1):
        for combo in combinations(cand, k):
            if len({a for a, _, _ in combo}) == k and len({b for _, b, _ in combo}) == k:
                total = sum(v for _, _, v in combo)
                if (k, total) > (best[0], best[1] + 1e-12):
                    best = (k, total)
        if best[0] == k:
            break
    return best


def test_assignment_is_maximum_then_heaviest_on_random_tables():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True)
    @hypothesis.given(st.integers(1, 4), st.integers(1, 4), st.data(), st.sampled_from([0.02, 0.05, 0.1, 0.2, 0.5]))
    def check(n_t, n_p, data, thr):
        cells = [(a, b) for a in range(n_t) for b in range(n_p)]
        chosen = data.draw(st.lists(st.sampled_from(cells), unique=True, min_size=min(3, len(cells)), max_size=len(cells)))
        chosen.sort()
        inter = [data.draw(st.integers(1, 40)) for _ in chosen]
        # IoU = n / (ta + pa - n) in (0, 1]; the table need not be realisable, only consistent
        ta = np.array([data.draw(st.integers(40, 80)) for _ in range(n_t)], np.int64)
        pa = np.array([data.draw(st.integers(40, 80)) for _ in range(n_p)], np.int64)
        pt = np.array([a for a, _ in chosen], np.int64)
        pp = np.array([b for _, b in chosen], np.int64)
        tab = ContingencyTable(np.arange(1, n_t + 1, dtype=np.uint64), ta, np.arange(1, n_p + 1, dtype=np.uint64),
                               pa, pt, pp, np.array(inter, np.int64))
        iou = tab.iou
        m = match_table(tab, thr)
        k, total = _brute_best(n_t, n_p, list(zip(pt.tolist(), pp.tolist(), iou.tolist())), thr)
        assert m.true_positives == k
        assert sum(m.ious) == pytest.approx(total, abs=1e-9)
        assert len({a for a, _ in m.pairs}) == k and len({b for _, b in m.pairs}) == k

    check()


def _tie_pair():
    """One predicted object with IoU exactly 0.2 with two truth objects of different areas:
    which one it matches decides the area error (1.0 or -0.5)."""
    truth = np.zeros((6, 12), np.int64)
    pred = np.zeros_like(truth)
    truth[0, 0:2] = 7  # T1: 2 px
    truth[1, 0:2] = 9  # T2: 8 px, 2 of them under P
    truth[3:5, 4:7] = 9
    pred[0, 1] = 4  # P: 1 px in T1, 2 in T2, 1 on background
    pred[1, 0:2] = 4
    pred[2, 0] = 4
    return truth, pred


def test_an_exact_iou_tie_does_not_depend_on_the_ids():
    from segscore.objects.metrics import score_segmentation
    from segscore.objects.table import contingency_table

    truth, pred = _tie_pair()
    tab = contingency_table(truth, pred)
    assert sorted(tab.iou.tolist()) == [0.2, 0.2]
    want = score_segmentation(truth, pred, threshold=0.2)
    rng = np.random.default_rng(0)
    for _ in range(6):
        ids_t = rng.choice(2 ** 40, 3, replace=False) + 1
        ids_p = rng.choice(2 ** 40, 2, replace=False) + 1
        t2 = np.select([truth == 7, truth == 9], [ids_t[0], ids_t[1]], 0)
        p2 = np.where(pred == 4, ids_p[0], 0)
        assert score_segmentation(t2, p2, threshold=0.2) == want
        assert score_segmentation(t2, p2, threshold=0.2, tile_rows=1) == want
    assert want["true_positives"] == 1 and want["area_error_mean"] == 1.0  # T1 (first pixel first) wins


def test_relabelling_changes_no_bit(tmp_path):
    from segscore.objects.metrics import score_segmentation
    from tests.objects.helpers import synthetic_pair

    truth, pred = synthetic_pair(seed=3, shape=(160, 160), n=60)
    want = score_segmentation(truth, pred)
    rng = np.random.default_rng(1)
    for _ in range(3):
        lut_t = np.concatenate([[0], rng.permutation(np.arange(1, truth.max() + 1)) * 7919 + 3])
        lut_p = np.concatenate([[0], rng.permutation(np.arange(1, pred.max() + 1)) * 104729 + 5])
        got = score_segmentation(lut_t[truth], lut_p[pred])
        assert got == want  # bit for bit, notes included
