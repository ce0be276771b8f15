"""segscore.objects.matching_stardist against stardist's own ``matching`` on random label images:
thresholds 0, 0.5, 1.0, 1.5 (and others), empty truth and prediction, and the default's nulls."""

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.objects import matching_stardist, score_segmentation
from segscore.objects.matching import STARDIST_FIELDS
from tests.objects.helpers import synthetic_pair

THRESHOLDS = (0, 0.1, 0.3, 0.5, 0.7, 1.0, 1.5, 2)
#: stardist's scores are float32 IoUs summed in float32
SCORES = ("mean_true_score", "mean_matched_score", "panoptic_quality")


def same(mine: dict, ref) -> None:
    assert tuple(mine) == STARDIST_FIELDS == ref._fields
    for k in STARDIST_FIELDS:
        want = getattr(ref, k)
        if k in SCORES:
            assert mine[k] == pytest.approx(float(want), rel=2e-6, abs=1e-7), k
        elif k in ("precision", "recall", "accuracy", "f1"):
            assert mine[k] == pytest.approx(float(want), rel=1e-15, abs=0), k  # ratios of counts: exact
            assert isinstance(mine[k], float)
        else:
            assert mine[k] == want, k


def random_labels(rng, shape, n):
    """Random blobs of ``n`` labels (some absent, overlapping ones painted over)."""
    lab = np.zeros(shape, np.int32)
    for v in rng.choice(np.arange(1, 4 * n + 1), n, replace=False):
        c = [int(rng.integers(0, s)) for s in shape]
        r = [int(rng.integers(1, 6)) for _ in shape]
        lab[tuple(slice(max(0, a - b), a + b) for a, b in zip(c, r))] = v
    return lab


@pytest.mark.parametrize("seed", range(12))
def test_equal_to_stardist_on_random_label_images(seed):
    matching = pytest.importorskip("stardist.matching").matching
    rng = np.random.default_rng(seed)
    shape = (32, 40) if seed % 3 else (12, 14, 16)
    t = random_labels(rng, shape, int(rng.integers(1, 25)))
    p = random_labels(rng, shape, int(rng.integers(1, 25)))
    if seed % 4 == 1:
        p = np.where(rng.random(shape) < 0.9, t, p)  # close to the truth: matches at high IoU, some exact
    refs = matching(t, p, thresh=list(THRESHOLDS))
    mine = matching_stardist(t, p, thresh=THRESHOLDS)
    assert len(mine) == len(THRESHOLDS)
    for m, r in zip(mine, refs):
        same(m, r)
    from segscore.objects import match_objects

    for thr, m in zip(THRESHOLDS, mine):
        if 0 < thr <= 1:  # the count of matches is segscore's own
            assert m["tp"] == match_objects(t, p, thr).true_positives
    # a scalar threshold gives one dict, the same as its entry in the sequence
    assert matching_stardist(t, p, thresh=1.5) == mine[THRESHOLDS.index(1.5)]


def test_threshold_zero_matches_every_assigned_pair_even_without_overlap():
    matching = pytest.importorskip("stardist.matching").matching
    t = np.zeros((20, 20), np.int32)
    p = np.zeros_like(t)
    t[2:6, 2:6], t[12:16, 12:16], t[2:5, 14:18] = 1, 2, 3
    p[2:6, 3:7], p[10:12, 0:3] = 7, 9  # 9 overlaps nothing
    m, r = matching_stardist(t, p, thresh=0), matching(t, p, thresh=0)
    same(m, r)
    assert m["tp"] == 2 and m["fp"] == 0 and m["fn"] == 1


def test_synthetic_pairs_at_the_edges_of_the_range():
    matching = pytest.importorskip("stardist.matching").matching
    t, p = synthetic_pair(shape=(120, 130), n=40, seed=5, p_split=0.2, p_merge=0.2)
    p[:10] = np.where(t[:10] > 0, t[:10] + 100000, 0)  # some predictions equal to their truth: IoU exactly 1
    for thr, r in zip(THRESHOLDS, matching(t, p, thresh=list(THRESHOLDS))):
        m = matching_stardist(t, p, thresh=thr)
        same(m, r)
    assert matching_stardist(t, p, thresh=1.0)["tp"] > 0
    assert matching_stardist(t, p, thresh=1.5)["tp"] == 0


@pytest.mark.parametrize("which", ["truth", "pred", "both"])
def test_empty_images_report_zero_where_segscore_reports_null(which):
    matching = pytest.importorskip("stardist.matching").matching
    t, p = synthetic_pair(shape=(60, 60), n=10, seed=3)
    if which in ("truth", "both"):
        t = np.zeros_like(t)
    if which in ("pred", "both"):
        p = np.zeros_like(p)
    for thr in THRESHOLDS:
        m, r = matching_stardist(t, p, thresh=thr), matching(t, p, thresh=thr)
        same(m, r)
        assert m["precision"] == m["recall"] == m["f1"] == m["accuracy"] == 0.0
        assert m["mean_matched_score"] == m["panoptic_quality"] == 0.0
    # segscore's own scorecard keeps null with a note that names the compatibility function
    s = score_segmentation(t, p)
    nulls = {"truth": ["recall"], "pred": ["precision"], "both": ["precision", "recall", "f1"]}[which]
    for k in nulls:
        assert s[k] is None and "matching_stardist" in s["notes"][k]


def test_segscore_refuses_what_stardist_takes_and_names_the_function():
    from segscore.objects import match_objects

    t, p = synthetic_pair(shape=(40, 40), n=6, seed=1)
    with pytest.raises(ScoreError, match="matching_stardist"):
        match_objects(t, p, 1.5)
    assert matching_stardist(t, p, thresh=None) == matching_stardist(t, p, thresh=0)
    for bad in (float("nan"), float("inf"), "0.5", True):
        with pytest.raises(ScoreError, match="thresh"):
            matching_stardist(t, p, thresh=bad)
