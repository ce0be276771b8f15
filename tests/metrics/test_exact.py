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


def placed_args(p, codes, rows):
    """rank_exact's ``placed`` for a 2D map ``p`` and target codes (bit 1 scored, bit 0 class)."""
    from segscore.kernels.exactrank import gather_codes

    h, w = p.shape
    wins = windows(h, w, rows)
    counts = [int(np.count_nonzero(codes[wd] & 2)) for wd in wins]

    def read(wd):
        c = codes[wd]
        s = (c & 2) != 0
        return p[wd][s], c[s] & 1, p[wd]

    def task(ep, tile, values, band_codes):
        tc = np.zeros((2, ep.thr.size + 1), np.int64)
        st = np.array([np.inf, -np.inf, 0.0])
        return ep.placed(tile.index, tc, st, gather_codes(values, band_codes, ep.thr, ep.below, tc, st,
                                                           ep.slot(tile.index)))

    return wins, read, (counts, lambda wd: (np.ascontiguousarray(p[wd]), codes[wd]), task)


@pytest.mark.parametrize("executor", [None, "synchronous", "dask"])
@pytest.mark.parametrize("rows", [1, 7, 45])
@pytest.mark.parametrize("ft", [np.float64, np.float32])
def test_placed_first_pass_is_the_read_one(executor, rows, ft):
    """A first pass placed by the caller's kernel (each tile writing into its slot) ranks as the
    pass that reads ``(raw, cls)``; on dask, or over the budget, the read pass runs instead."""
    rng = np.random.default_rng(rows)
    y = (rng.random((45, 31)) < 0.35).astype(np.uint8)
    p = np.clip(np.where(rng.random(y.shape) < 0.3, 0.5, rng.random(y.shape) ** 3) + 0.1 * y, 0, 1).astype(ft)
    codes = y | ((rng.random(y.shape) < 0.8).astype(np.uint8) << 1)
    wins, read, placed = placed_args(p, codes, rows)
    want = rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, executor=executor, threads=2, dtype=ft)
    for budget in (None, 100):  # fits (placed) / does not (read passes)
        got = rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, executor=executor, threads=2, dtype=ft,
                         placed=placed, budget_px=budget)
        for f in ("roc_auc", "average_precision", "best_f1", "best_threshold", "n_pos", "n_neg", "lo", "hi"):
            assert getattr(got, f) == getattr(want, f), f
        np.testing.assert_array_equal(got.tp_ge, want.tp_ge)
        np.testing.assert_array_equal(got.fp_ge, want.fp_ge)
    s = (codes & 2) != 0
    assert want.roc_auc == pytest.approx(sk.roc_auc_score(y[s], p[s]), abs=1e-12)
    assert want.average_precision == pytest.approx(sk.average_precision_score(y[s], p[s]), abs=1e-12)


def test_placed_first_pass_refuses_nan_and_miscounts():
    rng = np.random.default_rng(3)
    p = rng.random((9, 8))
    codes = np.full(p.shape, 2, np.uint8) | (rng.random(p.shape) < 0.5).astype(np.uint8)
    q = p.copy()
    q[4, 2] = np.nan
    wins, read, placed = placed_args(q, codes, 3)
    with pytest.raises(ScoreError, match="NaN"):
        rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, placed=placed)
    wins, read, placed = placed_args(p, codes, 3)
    wrong = ([placed[0][0] + 1] + placed[0][1:], placed[1], placed[2])
    with pytest.raises(RuntimeError, match="counted"):
        rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, placed=wrong)


def test_scratch_reuses_its_memory_and_auc_only():
    from segscore.metrics.exact import ExactPass, Scratch, _alloc

    sc = Scratch()
    a = sc.take(1000, np.uint64)
    b = sc.take(2000, np.uint32)
    assert np.shares_memory(a, b) and a.size == 1000 and b.size == 2000
    c = sc.take(3000, np.uint64)  # larger: new memory
    assert c.size == 3000 and c.flags.writeable
    big = _alloc((8 << 20) // 8 + 3, np.uint64)  # the huge-page path: writable, the size asked
    big[:] = 5
    assert big.size == (8 << 20) // 8 + 3 and big[-1] == 5
    rng = np.random.default_rng(0)
    y = (rng.random(500) < 0.4).astype(np.uint8)
    p = rng.random(500) ** 2
    full = rank_exact(lambda w: (p, y), [(slice(0, 1),)], thresholds=EXACT_THRESHOLDS, scratch=sc)
    ep = ExactPass(thresholds=(), auc_only=True, scratch=sc)
    only = ep.finish(ep.merge(ep.empty(), ep.first(p, y)), lambda w: (p, y), [(slice(0, 1),)])
    assert only.roc_auc == full.roc_auc == pytest.approx(sk.roc_auc_score(y, p), abs=1e-12)
    assert only.average_precision is None and only.best_f1 is None


def _packed_oracle(p, cls):
    """``key << 1 | class`` of float64 scores, sorted, by NumPy's integer sort."""
    return np.sort((p.astype(np.float64).view(np.uint64) << np.uint64(1)) | cls.astype(np.uint64))


@pytest.mark.parametrize("n", [0, 1, 5, 1000, (1 << 22) + 77])
def test_sorted_threshold_counts_is_first_pass_count(n):
    """The threshold counts read from sorted scores are :func:`first_pass`'s (the kernel counting
    unsorted ones), thresholds below 0, at 0 and 1, above 1, ties on a threshold and repeated
    thresholds included; more than one piece of class bits (``_COUNT_PX``) at the largest size."""
    from segscore.kernels.exactrank import N_CELLS, first_pass
    from segscore.metrics.exact import sorted_threshold_counts

    rng = np.random.default_rng(n)
    p = rng.random(n)
    p[rng.random(n) < 0.2] = 0.5  # ties on a threshold
    p[rng.random(n) < 0.01] = 0.0
    p[rng.random(n) < 0.01] = 1.0
    cls = (rng.random(n) < 0.3).astype(np.uint8)
    for thresholds in (EXACT_THRESHOLDS, np.array([-1.0, 0.0, 0.5, 0.5, 1.0, 2.0]), np.array([0.25])):
        thr = np.unique(thresholds)
        below = np.searchsorted(thr, np.arange(N_CELLS) / N_CELLS, side="right").astype(np.int64)
        want = np.zeros((2, thr.size + 1), np.int64)
        z, zu = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        first_pass(p.view(np.uint64), p, cls, thr, below, want, z, z, zu, zu, zu)
        got = sorted_threshold_counts(_packed_oracle(p, cls), thresholds)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int64
        # and a plain NumPy count: class c with exactly j thresholds <= p
        j = np.searchsorted(thr, p, side="right")
        for c in (0, 1):
            np.testing.assert_array_equal(got[c], np.bincount(j[cls == c], minlength=thr.size + 1))


@pytest.mark.parametrize("rows", [False, True])
def test_presorted_first_pass_is_the_placed_one(rows):
    """A first pass done by the caller (scores gathered, sorted and counted in NumPy) ranks as the
    placed and the read passes do; wrong counts, float32 keys or a budget too small are refused."""
    from segscore.metrics.exact import ExactPass, sorted_threshold_counts

    rng = np.random.default_rng(8)
    y = (rng.random((45, 31)) < 0.35).astype(np.uint8)
    p = np.clip(np.where(rng.random(y.shape) < 0.3, 0.5, rng.random(y.shape) ** 3) + 0.1 * y, 0, 1)
    codes = y | ((rng.random(y.shape) < 0.8).astype(np.uint8) << 1)
    wins, read, placed = placed_args(p, codes, 7)
    s = (codes & 2) != 0
    packed = _packed_oracle(p[s], y[s])
    tcount = sorted_threshold_counts(packed, EXACT_THRESHOLDS)
    want = rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, placed=placed, keep_rows=rows)
    got = rank_exact(read, wins, thresholds=EXACT_THRESHOLDS, keep_rows=rows,
                     presorted=(packed.copy(), tcount, float(p.min()), float(p.max())))
    for f in ("roc_auc", "average_precision", "best_f1", "best_threshold", "n_pos", "n_neg", "lo", "hi", "passes",
              "collected_px"):
        assert getattr(got, f) == getattr(want, f), f
    np.testing.assert_array_equal(got.tp_ge, want.tp_ge)
    np.testing.assert_array_equal(got.fp_ge, want.fp_ge)
    if rows:
        for a, b in zip(got.rows, want.rows):
            np.testing.assert_array_equal(a, b)
    ep = ExactPass(thresholds=EXACT_THRESHOLDS)
    with pytest.raises(ValueError, match="does not count"):
        ep.adopt_sorted(packed, tcount[:, 1:], 0.0, 1.0)
    with pytest.raises(ValueError, match="does not count"):
        ep.adopt_sorted(packed[1:], tcount, 0.0, 1.0)
    with pytest.raises(ValueError, match="float64"):
        ExactPass(thresholds=EXACT_THRESHOLDS, dtype=np.float32).adopt_sorted(packed, tcount, 0.0, 1.0)
    with pytest.raises(ValueError, match="budget"):
        ExactPass(thresholds=EXACT_THRESHOLDS, budget_px=10).adopt_sorted(packed, tcount, 0.0, 1.0)
