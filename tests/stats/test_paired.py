"""Paired tests against scipy (wilcoxon, permutation_test) and R's p.adjust (worked examples)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from segscore.errors import ScoreError
from segscore.stats import analyse
from segscore.stats.paired import p_adjust, sign_flip_greater, wilcoxon_greater


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_equals_scipys_normal_approximation_with_ties_and_zeros(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    x = np.round(rng.random(n), 1)
    y = np.round(rng.random(n) * 0.8, 1)  # ties in |d| and zero differences
    ours = wilcoxon_greater(x, y)
    ref = stats.wilcoxon(x, y, alternative="greater", method="approx", correction=True, zero_method="wilcox")
    assert abs(ours["p"] - ref.pvalue) < 1e-12
    assert ours["n_nonzero"] == int(np.count_nonzero(x != y))


def test_wilcoxon_all_zero_differences_is_rs_p_of_one_and_no_pair_is_null():
    """R: every difference 0 leaves n = 0, z = (0 - 0.5) / 0 = -Inf, pnorm(-Inf, lower.tail=FALSE) = 1."""
    assert wilcoxon_greater([1.0, 2.0], [1.0, 2.0]) == {"n": 2, "n_nonzero": 0, "V": 0.0, "p": 1.0}
    assert wilcoxon_greater([], [])["p"] is None


@pytest.mark.parametrize("n", [2, 5, 11])
def test_exact_sign_flip_equals_scipys_permutation_test(n):
    rng = np.random.default_rng(n)
    x, y = rng.random(n), rng.random(n)
    x[0] = y[0]  # a zero difference
    ours = sign_flip_greater(x, y, permutations=4096, seed=0)
    ref = stats.permutation_test((x, y), lambda a, b, axis=-1: np.mean(a - b, axis=axis), vectorized=True,
                                 permutation_type="samples", alternative="greater", n_resamples=4096)
    assert ours["exact"] and ours["permutations"] == 2 ** n
    assert abs(ours["p"] - ref.pvalue) < 1e-12


def test_randomized_sign_flip_uses_the_stated_draws():
    rng = np.random.default_rng(1)
    x, y = rng.random(30), rng.random(30) - 0.1
    ours = sign_flip_greater(x, y, permutations=2000, seed=5)
    d = x - y
    flips = np.random.default_rng(5).integers(0, 2, size=(2000, 30))
    null = np.where(flips == 1, -d, d).mean(axis=1)
    obs = d.mean()
    expect = (np.count_nonzero(null >= obs - abs(obs) * 100 * np.finfo(float).eps) + 1) / 2001
    assert not ours["exact"] and abs(ours["p"] - expect) < 1e-15


@pytest.mark.parametrize("p, method, expect", [
    ([0.01, 0.02, 0.03, 0.04, 0.05], "holm", [0.05, 0.08, 0.09, 0.09, 0.09]),
    ([0.01, 0.02, 0.03, 0.04, 0.05], "bonferroni", [0.05, 0.10, 0.15, 0.20, 0.25]),
    ([0.005, 0.04, 0.03, 0.5], "bh", [0.02, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5]),
    ([0.3, None, 0.6], "bonferroni", [0.6, None, 1.0]),
    ([0.3, None, 0.6], "none", [0.3, None, 0.6]),
])
def test_p_adjust_equals_rs(p, method, expect):
    got = p_adjust(p, method)
    for g, e in zip(got, expect):
        assert (g is None and e is None) or abs(g - e) < 1e-15


def test_bh_equals_scipys_false_discovery_control():
    p = np.random.default_rng(2).random(40) ** 3
    assert np.allclose(p_adjust(p, "bh"), stats.false_discovery_control(p, method="bh"), rtol=0, atol=1e-15)


def test_permutation_comparisons_in_analyse_and_their_sidedness():
    rng = np.random.default_rng(3)
    rows = [{"case": f"c{j}", "model": m, "s": float(rng.random() + (0.2 if m == "good" else 0))}
            for m in ("good", "bad") for j in range(8)]
    out = analyse(rows, case="case", by="model", metric="s", compare=True, test="permutation", permutations=999,
                  adjust="none")
    row = next(r for r in out["comparisons"]["rows"] if r["a"] == "good")
    good = np.array([r["s"] for r in rows if r["model"] == "good"])
    bad = np.array([r["s"] for r in rows if r["model"] == "bad"])
    ref = stats.permutation_test((good, bad), lambda a, b, axis=-1: np.mean(a - b, axis=axis), vectorized=True,
                                 permutation_type="samples", alternative="greater", n_resamples=999)
    assert row["exact"] and abs(row["p"] - ref.pvalue) < 1e-12
    assert row["sided"].startswith("one-sided") and out["comparisons"]["params"]["test"] == "permutation"


def test_smaller_better_flips_every_direction():
    rows = [{"case": f"c{j}", "model": m, "err": float(j + (0 if m == "a" else 1))} for m in ("a", "b")
            for j in range(10)]
    out = analyse(rows, case="case", by="model", metric="err", smaller_better=["err"], compare=True, rank=True,
                  resamples=50)
    ab = next(r for r in out["comparisons"]["rows"] if r["a"] == "a")
    assert ab["win"] and ab["difference"] == -1.0
    ranks = {(r["method"], r["model"]): r["rank"] for r in out["rankings"]["rows"]}
    assert ranks[("aggregate_mean", "a")] == 1 and ranks[("test_then_rank", "a")] == 1
    assert out["params"]["directions"] == {"err": "smaller"}


def test_refusals_are_one_line_score_errors(tmp_path):
    rows = [{"case": "c1", "model": "a", "s": None}, {"case": "c1", "model": "b", "s": 0.5}]
    with pytest.raises(ScoreError, match="--worst s=VALUE"):
        analyse(rows, case="case", by="model", metric="s", missing="worst")
    with pytest.raises(ScoreError, match="no column 'x'"):
        analyse(rows, case="case", by="model", metric="x")
    with pytest.raises(ScoreError, match="two rows"):
        analyse(rows + rows[:1], case="case", by="model", metric="s")
    with pytest.raises(ScoreError, match="--adjust"):
        analyse(rows, case="case", by="model", metric="s", adjust="fdr")
    with pytest.raises(ScoreError, match="no such table"):
        analyse(tmp_path / "nope.csv", case="case", by="model", metric="s")
    bad = tmp_path / "bad.csv"
    bad.write_text("case,model,s\nc1,a,x\n")
    with pytest.raises(ScoreError, match="not a number"):
        analyse(bad, case="case", by="model", metric="s")
    out = analyse(rows, case="case", by="model", metric="s", missing="worst", worst={"s": 0.0}, resamples=10)
    assert out["counts"]["imputed"] == {"s": 1} and out["intervals"]["rows"][0]["estimate"] == 0.0


def test_upper_normal_and_average_ranks_equal_scipys_without_importing_it():
    """The compare and rank paths import no scipy: their normal tail and average ranks are our own,
    equal to ``scipy.special.ndtr`` (1e-12 relative, far into the tail) and ``scipy.stats.rankdata`` (exactly)."""
    from scipy.special import ndtr

    from segscore.stats.paired import _upper_normal, average_ranks

    for z in np.concatenate([np.linspace(-9, 39, 4001), [0.0, 0.70710678, -0.70710678, np.inf, -np.inf]]):
        ref = float(ndtr(-z))
        assert abs(_upper_normal(z) - ref) <= 1e-12 * ref + 1e-300, z
    assert np.isnan(_upper_normal(np.nan))
    rng = np.random.default_rng(3)
    for _ in range(20):
        v = np.round(rng.normal(size=int(rng.integers(1, 80))), 1)
        assert np.array_equal(average_ranks(v), stats.rankdata(v, method="average"))


def test_compare_and_rank_import_neither_scipy_stats_nor_special():
    """(numba's first kernel load imports ``scipy.linalg`` for its BLAS check: not ours to avoid.)"""
    import subprocess
    import sys

    code = ("import sys\nfrom segscore.stats import analyse\n"
            "t = {'case': ['c1', 'c2', 'c3'] * 2, 'model': ['a'] * 3 + ['b'] * 3, 's': [.1, .5, .7, .2, .4, .9]}\n"
            "analyse(t, case='case', by='model', metric='s', compare=True, rank=True, resamples=20)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('scipy.stats', 'scipy.special'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
