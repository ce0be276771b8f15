"""segscore.metrics.ranking against scikit-learn's ranking metrics, on tied, weighted and one-class inputs."""

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segscore.errors import ScoreError
from segscore.metrics import ranking as R

sk = pytest.importorskip("sklearn.metrics")

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def tied_scores(draw, weighted=False):
    """0/1 labels with both classes, integer scores on a few levels (many ties), optional weights."""
    n = draw(st.integers(2, 80))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y[draw(st.integers(0, n - 1))] = 1
    y[(np.flatnonzero(y == 1)[0] + 1) % n] = 0  # keep one positive, force a negative
    n_levels = draw(st.integers(1, 12))
    s = np.array(draw(st.lists(st.integers(0, n_levels - 1), min_size=n, max_size=n)), dtype=np.float64)
    s = s / max(n_levels - 1, 1) if draw(st.booleans()) else s  # fractional levels too
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.floats(0.01, 10.0, allow_nan=False), min_size=n, max_size=n)))
    return y, s, w


@SETTINGS
@given(tied_scores())
def test_equal_to_scikit_learn_on_tied_integer_scores(case):
    y, s, _ = case
    levels, pos, neg = R.histograms_of_scores(y, s)
    assert pos.dtype == np.int64 and pos.sum() == y.sum() and neg.sum() == (y == 0).sum()
    assert R.auc(pos, neg) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-12)
    assert R.average_precision(pos, neg) == sk.average_precision_score(y, s)  # bit for bit
    fpr, tpr, thr = R.roc_curve(pos, neg, levels=levels)
    want = sk.roc_curve(y, s, drop_intermediate=False)
    for got, ref in zip((fpr, tpr, thr), want):
        np.testing.assert_array_equal(got, ref)
    prec, rec, thr = R.precision_recall_curve(pos, neg, levels=levels)
    want = sk.precision_recall_curve(y, s)
    for got, ref in zip((prec, rec, thr), want):
        np.testing.assert_array_equal(got, ref)


@SETTINGS
@given(tied_scores(weighted=True))
def test_weighted_scores_equal_scikit_learn(case):
    y, s, w = case
    levels, pos, neg = R.histograms_of_scores(y, s, sample_weight=w)
    assert pos.dtype == np.float64
    assert R.auc(pos, neg) == pytest.approx(sk.roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert R.average_precision(pos, neg) == pytest.approx(sk.average_precision_score(y, s, sample_weight=w),
                                                          abs=1e-12)
    for got, ref in zip(R.roc_curve(pos, neg, levels=levels), sk.roc_curve(y, s, sample_weight=w,
                                                                          drop_intermediate=False)):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    for got, ref in zip(R.precision_recall_curve(pos, neg, levels=levels),
                        sk.precision_recall_curve(y, s, sample_weight=w)):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_integer_weights_count_like_repeated_samples():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 60)
    y[:2] = 0, 1
    s = rng.integers(0, 5, 60).astype(float)
    w = rng.integers(0, 4, 60)  # weight 0: left out, as scikit-learn leaves it out
    w[:2] = 1
    _, pw, nw = R.histograms_of_scores(y, s, sample_weight=w)
    _, pr, nr = R.histograms_of_scores(np.repeat(y, w), np.repeat(s, w))
    np.testing.assert_array_equal(pw, pr)
    np.testing.assert_array_equal(nw, nr)
    assert R.auc(pw, nw) == pytest.approx(R.auc(pr, nr), abs=1e-15)
    assert R.average_precision(pw, nw) == pytest.approx(R.average_precision(pr, nr), abs=1e-15)


@SETTINGS
@given(st.integers(1, 30), st.data())
def test_histogram_input_equals_score_input(n_levels, data):
    values = np.sort(np.array(sorted(data.draw(st.sets(st.floats(-5, 5, allow_nan=False), min_size=n_levels,
                                                        max_size=n_levels))), dtype=np.float64))
    values = values + 0.0  # -0.0 and 0.0 are one score
    pos = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n_levels, max_size=n_levels)), np.int64)
    neg = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n_levels, max_size=n_levels)), np.int64)
    y = np.repeat(np.r_[np.ones(n_levels, int), np.zeros(n_levels, int)], np.r_[pos, neg])
    s = np.repeat(np.r_[values, values], np.r_[pos, neg])
    lv, p2, n2 = R.histograms_of_scores(y, s)
    occupied = (pos + neg) > 0
    np.testing.assert_array_equal(lv, values[occupied])
    np.testing.assert_array_equal(p2, pos[occupied])
    np.testing.assert_array_equal(n2, neg[occupied])
    c1, c2 = R.threshold_counts(pos, neg, levels=values), R.threshold_counts(p2, n2, levels=lv)
    for a, b in zip(c1, c2):
        np.testing.assert_array_equal(a, b)
    assert R.auc(pos, neg) == R.auc(p2, n2)
    assert R.average_precision(pos, neg) == R.average_precision(p2, n2)
    for f in (R.roc_curve, R.precision_recall_curve):
        one, two = f(pos, neg, levels=values), f(p2, n2, levels=lv)
        assert (one is None) == (two is None)
        if one is not None:
            for a, b in zip(one, two):
                np.testing.assert_array_equal(a, b)
    t = np.r_[values, values[:-1] + np.diff(values) / 2, -np.inf, np.inf, 10.0]
    one, two = R.fbeta_sweep(pos, neg, t, levels=values), R.fbeta_sweep(p2, n2, t, levels=lv)
    assert (one is None) == (two is None)
    if one is not None:
        for a, b in zip(one, two):
            np.testing.assert_array_equal(a, b)


@SETTINGS
@given(tied_scores(), st.sampled_from([0.5, 1.0, 2.0]))
def test_fbeta_sweep_equals_scikit_learn_on_thresholded_scores(case, beta):
    y, s, _ = case
    levels, pos, neg = R.histograms_of_scores(y, s)
    thresholds = np.r_[np.linspace(-0.5, s.max() + 0.5, 9), levels]
    sw = R.fbeta_sweep(pos, neg, thresholds, levels=levels, beta=beta)
    for i, t in enumerate(thresholds):
        c = (s >= t).astype(int)
        assert sw.tp[i] == np.sum(c & y) and sw.fp[i] == np.sum(c & (1 - y))
        assert sw.precision[i] == pytest.approx(sk.precision_score(y, c, zero_division=0), abs=1e-15)
        assert sw.recall[i] == pytest.approx(sk.recall_score(y, c, zero_division=0), abs=1e-15)
        assert sw.fbeta[i] == pytest.approx(sk.fbeta_score(y, c, beta=beta, zero_division=0), abs=1e-12)


def test_one_class_or_nothing_gives_none_everywhere():
    for y, s in (([1, 1, 1], [0.2, 0.9, 0.2]), ([0, 0], [0.1, 0.1]), ([1], [0.5]), ([0], [0.5]), ([], [])):
        _, pos, neg = R.histograms_of_scores(y, s)
        assert R.auc(pos, neg) is None
        assert R.average_precision(pos, neg) is None
        assert R.roc_curve(pos, neg) is None and R.precision_recall_curve(pos, neg) is None
        assert R.fbeta_sweep(pos, neg, [0.5]) is None
    w = R.histograms_of_scores([1, 0], [0.3, 0.4], sample_weight=[1.0, 0.0])  # the negative weighs nothing
    assert R.auc(w[1], w[2]) is None and R.average_precision(w[1], w[2]) is None
    assert np.isnan(R.auc_batch(np.array([[0, 0], [2, 1]]), np.array([[1, 0], [0, 0]]))).all()


def test_a_single_pair():
    assert R.auc(*R.histograms_of_samples([0.7], [0.2])[1:]) == 1.0
    assert R.auc(*R.histograms_of_samples([0.2], [0.7])[1:]) == 0.0
    assert R.auc(*R.histograms_of_samples([0.5], [0.5])[1:]) == 0.5
    assert R.average_precision(*R.histograms_of_samples([0.5], [0.5])[1:]) == 0.5
    c = R.threshold_counts([0, 1, 0], [1, 0, 1], levels=[0.1, 0.2, 0.3])
    np.testing.assert_array_equal(c.thresholds, [0.3, 0.2, 0.1])
    np.testing.assert_array_equal(c.tps, [0, 1, 1])
    np.testing.assert_array_equal(c.fps, [1, 1, 2])


def test_auc_equals_the_pairwise_definition_bit_for_bit():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = np.round(rng.random(int(rng.integers(1, 25))), int(rng.integers(0, 3)))
        b = np.round(rng.random(int(rng.integers(1, 25))), int(rng.integers(0, 3)))
        pairwise = ((a[:, None] > b[None]).sum() + 0.5 * (a[:, None] == b[None]).sum()) / (a.size * b.size)
        assert R.auc(*R.histograms_of_samples(a, b)[1:]) == float(pairwise)


def test_auc_is_exact_on_large_integer_counts():
    rng = np.random.default_rng(1)
    pos = rng.integers(0, 2**23, 255)  # up to 2**31 per class, the kernel's stated range
    neg = rng.integers(0, 2**23, 255)
    below = np.cumsum(neg) - neg
    wins2 = sum(int(p) * (2 * int(b) + int(q)) for p, b, q in zip(pos, below, neg))
    want = Fraction(wins2, 2 * int(pos.sum()) * int(neg.sum()))
    assert R.auc(pos, neg) == float(want)
    with pytest.raises(ScoreError, match="too many"):
        R.auc(np.array([2**40]), np.array([2**40]))


def test_auc_batch_rows_equal_auc():
    rng = np.random.default_rng(2)
    pos = rng.integers(0, 5, (7, 40))
    neg = rng.integers(0, 5, (7, 40))
    pos[3] = 0
    got = R.auc_batch(pos, neg)
    for r in range(7):
        want = R.auc(pos[r], neg[r])
        assert (np.isnan(got[r]) and want is None) or got[r] == want
    np.testing.assert_array_equal(R.auc_batch(pos[0], neg[0]), got[:1])


def test_bad_input_is_refused():
    with pytest.raises(ScoreError, match="0 or 1"):
        R.histograms_of_scores([0, 2], [0.1, 0.2])
    with pytest.raises(ScoreError, match="finite"):
        R.histograms_of_scores([0, 1], [0.1, np.nan])
    with pytest.raises(ScoreError, match="one score per label"):
        R.histograms_of_scores([0, 1], [0.1])
    with pytest.raises(ScoreError, match="weights"):
        R.histograms_of_scores([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0])
    with pytest.raises(ScoreError, match="negative"):
        R.auc([1, -1], [1, 1])
    with pytest.raises(ScoreError, match="one length"):
        R.auc([1, 1], [1])
    with pytest.raises(ScoreError, match="increase strictly"):
        R.fbeta_sweep([1, 1], [1, 1], [0.5], levels=[0.2, 0.2])
    with pytest.raises(ScoreError, match="non-integer"):
        R.auc_batch(np.array([0.5, 1.0]), np.array([1.0, 1.0]))


def test_import_loads_numpy_only():
    code = ("import sys, segscore.metrics.ranking; "
            "print([m for m in ('numba', 'scipy', 'sklearn', 'segscore.kernels') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
