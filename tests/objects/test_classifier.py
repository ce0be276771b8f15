"""Classifier metrics equal scikit-learn's."""

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.objects import compare_classifier_against_baseline, score_classifier

sk = pytest.importorskip("sklearn.metrics")


def ece_oracle(y, s, bins=10):
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, s, n_bins=bins, strategy="uniform")
    edges = np.linspace(0, 1, bins + 1)
    idx = np.searchsorted(edges[1:-1], s)
    n = np.bincount(idx, minlength=bins)
    n = n[n > 0]
    return float(np.sum(n * np.abs(prob_true - prob_pred)) / len(y))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8])
def test_equal_to_scikit_learn(seed, threshold):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    y = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(int)
    y[0], y[1] = 0, 1
    s = np.clip(rng.normal(0.35 + 0.3 * y, 0.25), 0, 1)
    if seed % 2:
        s = np.round(s, 1)  # ties
    r = score_classifier(y, s, threshold=threshold)
    c = (s >= threshold).astype(int)
    tn, fp, fn, tp = sk.confusion_matrix(y, c, labels=[0, 1]).ravel()
    assert (r["tp"], r["fp"], r["tn"], r["fn"]) == (tp, fp, tn, fn)
    assert r["n"] == n and r["n_positive"] == y.sum() and r["threshold"] == threshold
    assert r["accuracy"] == pytest.approx(sk.accuracy_score(y, c))
    assert r["balanced_accuracy"] == pytest.approx(sk.balanced_accuracy_score(y, c))
    if tp + fp:
        assert r["precision"] == pytest.approx(sk.precision_score(y, c))
    assert r["recall"] == pytest.approx(sk.recall_score(y, c))
    assert r["specificity"] == pytest.approx(sk.recall_score(y, c, pos_label=0))
    assert r["f1"] == pytest.approx(sk.f1_score(y, c))
    if r["mcc"] is not None:
        assert r["mcc"] == pytest.approx(sk.matthews_corrcoef(y, c))
    assert r["auroc"] == pytest.approx(sk.roc_auc_score(y, s), abs=1e-12)
    assert r["auprc"] == pytest.approx(sk.average_precision_score(y, s), abs=1e-12)
    assert r["brier"] == pytest.approx(sk.brier_score_loss(y, s))
    assert r["ece"] == pytest.approx(ece_oracle(y, s), abs=1e-12)


def test_one_class_gives_null_ranking_metrics():
    r = score_classifier([1, 1, 1], [0.2, 0.9, 0.6])
    assert r["auroc"] is None and r["auprc"] is None and "auroc" in r["notes"]
    assert r["specificity"] is None and r["balanced_accuracy"] is None and r["mcc"] is None
    assert r["recall"] == pytest.approx(2 / 3) and r["precision"] == 1.0
    r = score_classifier([0, 0], [0.1, 0.2])
    assert r["precision"] is None and r["recall"] is None and r["f1"] is None and r["accuracy"] == 1.0


def test_compare_drops_counts_from_delta():
    y = [0, 1, 1, 0, 1]
    out = compare_classifier_against_baseline(y, [0.1, 0.9, 0.8, 0.3, 0.7], [0.6, 0.4, 0.8, 0.3, 0.2])
    d = out["delta"]
    for k in ("threshold", "n", "n_positive", "tp", "fp", "tn", "fn", "notes"):
        assert k not in d
    assert d["accuracy"] == pytest.approx(out["finetuned"]["accuracy"] - out["vanilla"]["accuracy"])
    assert d["auroc"] == pytest.approx(1.0 - sk.roc_auc_score(y, [0.6, 0.4, 0.8, 0.3, 0.2]))


@pytest.mark.parametrize("labels,scores,msg", [([0, 1], [0.5], "2 labels against 1"), ([], [], "no labels"),
                                               ([0, 2], [0.1, 0.2], "0 or 1"), ([0, 1], [0.1, 1.5], r"\[0, 1\]"),
                                               ([0, 1], [0.1, np.nan], "NaN")])
def test_refusals(labels, scores, msg):
    with pytest.raises(ScoreError, match=msg):
        score_classifier(labels, scores)
