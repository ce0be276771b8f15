"""Parity with spacr.scorecard itself, where its module is at hand (never installed).

The module is looked for at ``$SPACR_SCORECARD`` or where ``benchmarks/bench_objects.py --spacr``
unpacks it (``benchmarks/_cache/spacr/spacr/scorecard.py``); the tests skip otherwise.
Known, deliberate differences: merges (the issue measures a merge against the truth objects'
areas, spacr against the predicted object's), null-with-a-note where spacr returns 0, and the
matching rule (pinned in test_matching.py).
"""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from segscore.objects import score_classifier, score_segmentation
from tests.objects.helpers import synthetic_pair

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spacr():
    path = Path(os.environ.get("SPACR_SCORECARD", REPO / "benchmarks/_cache/spacr/spacr/scorecard.py"))
    if not path.is_file():
        if os.environ.get("CI") == "true":  # .ci/run downloads it: in CI a skip would hide the parity test
            pytest.fail(f"spacr/scorecard.py not found at {path} (SPACR_SCORECARD); .ci/run should have fetched it")
        pytest.skip("spacr/scorecard.py not found: set SPACR_SCORECARD (pip download --no-deps spacr, unzip)")
    spec = importlib.util.spec_from_file_location("spacr_scorecard_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", range(3))
def test_segmentation_keys_equal_spacr(spacr, seed):
    truth, pred = synthetic_pair(seed=seed + 40, shape=(120, 120), n=40)
    ours, theirs = score_segmentation(truth, pred), spacr.score_segmentation(truth, pred)
    shared = [k for k in theirs if k in ours and k != "merges"]
    assert len(shared) >= 30
    for k in shared:
        assert ours[k] == pytest.approx(theirs[k], rel=1e-12, abs=1e-15), k


def test_classifier_equals_spacr_without_ties(spacr):
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.4).astype(int)
    s = np.clip(rng.normal(0.35 + 0.3 * y, 0.25), 0, 1)
    s[s == 0] = 1e-9 * rng.random((s == 0).sum())
    s[s == 1] = 1 - 1e-9 * rng.random((s == 1).sum())
    assert np.unique(s).size == s.size
    ours, theirs = score_classifier(y, s, threshold=0.45), spacr.score_classifier(y, s, threshold=0.45)
    names = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}
    for k, v in ours.items():
        if k in ("notes", "warnings"):
            continue
        assert v == pytest.approx(theirs[names.get(k, k)], rel=1e-12, abs=1e-15), k


def test_tied_scores_auprc_follows_scikit_learn_not_spacr(spacr):
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.4).astype(int)
    s = np.round(np.clip(rng.normal(0.35 + 0.3 * y, 0.25), 0, 1), 2)
    ours, theirs = score_classifier(y, s), spacr.score_classifier(y, s)
    assert ours["auprc"] == pytest.approx(sk.average_precision_score(y, s), abs=1e-12)
    assert theirs["auprc"] != pytest.approx(ours["auprc"], abs=1e-6)  # spacr ranks ties in input order
    assert ours["auroc"] == pytest.approx(theirs["auroc"], abs=1e-12)


def test_spacr_reads_our_scorecard_csv(spacr):
    from segscore.objects import read_scorecard_csv, score_holdout, scorecard_csv, scorecard_rows

    pairs = [synthetic_pair(seed=k, n=15, shape=(64, 64)) for k in range(2)]
    fine = score_holdout(pairs, name="toy", version="3")
    van = score_holdout([(t, np.roll(p, 3, 0)) for t, p in pairs], name="toy", version="3")
    text = scorecard_csv(scorecard_rows(fine, van))
    ours, theirs = read_scorecard_csv(text), spacr.read_scorecard_csv(text)
    for k, v in ours.items():
        if isinstance(v, dict):
            assert v == theirs[k], k
    assert ours["holdout"] == theirs["holdout"] == "toy"
    assert ours["holdout_version"] == "3" and theirs["holdout_version"] == 3  # spacr parses the version as a number
