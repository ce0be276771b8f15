"""rank_exact (the bounded-memory exact ranking) against scikit-learn, on every executor and budget."""

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.ink.cards import EXACT_THRESHOLDS
from segscore.metrics.exact import rank_exact

sk = pytest.importorskip("sklearn.metrics")


def windows(h, w, rows):
    return [(slice(a, min(a + rows, h)), slice(0, w)) for a in range(0, h, rows)]


@pytest.mark.parametrize("executor", [None, "synchronous", "dask"])
@pytest.mark.parametrize("budget", [1, 23, 1 << 22])
def test_equal_to_sklearn(executor, budget):
    rng = np.random.default_rng(budget)
    y = (rng.random((45, 31)) < 0.35).astype(np.uint8)
    p = np.where(rng.random(y.shape) < 0.5, 0.5 + rng.random(y.shape) * 1e-7, rng.random(y.shape) ** 6) + 0.1 * y
    p = np.clip(p, 0, 1)
    ex = rank_exact(lambda w: (p[w].ravel(), y[w].ravel()), windows(45, 31, 6), thresholds=EXACT_THRESHOLDS,
                    budget_px=budget, executor=executor, threads=2)
    assert ex.roc_auc == pytest.approx(sk.roc_auc_score(y.ravel(), p.ravel()), abs=1e-12)
    assert ex.average_precision == pytest.approx(sk.average_precision_score(y.ravel(), p.ravel()), abs=1e-12)
    for t, tp, fp in zip(ex.thresholds, ex.tp_ge, ex.fp_ge):
        assert tp == np.count_nonzero((p >= t) & (y == 1)) and fp == np.count_nonzero((p >= t) & (y == 0))
    assert ex.max_pass_px <= budget
    if budget == 1:
        assert ex.split_regions > 0 and ex.passes > 2


def test_one_class_empty_and_refusals():
    p = np.linspace(0, 1, 12).reshape(3, 4)
    one = rank_exact(lambda w: (p[w].ravel(), np.ones(p[w].size, np.uint8)), windows(3, 4, 2),
                     thresholds=EXACT_THRESHOLDS)
    assert one.roc_auc is None and one.average_precision is None and one.n_pos == 12 and one.passes == 1
    none = rank_exact(lambda w: (p[w].ravel(), np.ones(p[w].size, np.uint8)), [], thresholds=EXACT_THRESHOLDS)
    assert none.n_pos == none.n_neg == 0
    q = p.copy()
    q[1, 1] = np.nan
    with pytest.raises(ScoreError, match="NaN"):
        rank_exact(lambda w: (q[w].ravel(), np.zeros(q[w].size, np.uint8)), windows(3, 4, 2),
                   thresholds=EXACT_THRESHOLDS)
    seen = []
    rank_exact(lambda w: (q[w].ravel(), np.zeros(q[w].size, np.uint8)), windows(3, 4, 2),
               thresholds=EXACT_THRESHOLDS, check=lambda *s: seen.append(s))
    assert seen == [(0.0, 1.0, 1)]


def test_a_map_that_changes_between_passes_is_caught():
    rng = np.random.default_rng(0)
    y = (rng.random(400) < 0.5).astype(np.uint8)
    calls = []

    def read(w):
        calls.append(1)
        p = np.repeat([0.25, 0.5], 200) + rng.random(400) * 1e-9  # new values each call
        return p, y

    with pytest.raises(RuntimeError, match="changed between passes"):  # too many to gather in the first pass
        rank_exact(read, [(slice(0, 1),)], thresholds=EXACT_THRESHOLDS, budget_px=300, executor="synchronous")
