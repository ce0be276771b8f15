"""Paired tests of two models on their common cases, and the adjustment of a family of p-values.

- :func:`wilcoxon_greater`: R's ``wilcox.test(x, y, alternative="greater", paired=TRUE,
  exact=FALSE)`` (the test challengeR ranks by): zero differences dropped, ranks of ``|d|`` with
  ties averaged, the normal approximation with the tie-corrected variance and the continuity
  correction 0.5. One-sided: small p says ``x`` is larger than ``y``.
- :func:`sign_flip_greater`: the paired permutation test of the mean difference. Exact (every
  one of the ``2**n`` sign patterns, ``count / 2**n``) when ``2**n <= permutations``: then equal to
  ``scipy.stats.permutation_test((x, y), mean-of-difference, permutation_type="samples",
  alternative="greater")``. Otherwise the sign patterns are ``rng.integers(0, 2, size=(permutations,
  n))`` (1 flips the sign) with ``rng = numpy.random.default_rng(seed)``, and p is
  ``(count + 1) / (permutations + 1)``. A permuted mean counts as at least the observed one when
  it is ``>= observed - 100 * eps * |observed|`` (the tolerance scipy states for numerically
  equal values).
- :func:`p_adjust`: R's ``p.adjust`` (holm, bonferroni, BH, none); a None p-value is left out of the
  family and stays None.
"""

from __future__ import annotations

import math

import numpy as np

from segscore.errors import ScoreError

#: the adjustments ``--adjust`` takes (``bh``: Benjamini-Hochberg)
ADJUST = ("holm", "bonferroni", "bh", "none")
#: the paired tests ``--test`` takes
TESTS = ("wilcoxon", "permutation")


def _upper_normal(z: float) -> float:
    """``P(Z > z)`` of the standard normal: cephes' ``ndtr(-z)`` (what ``scipy.special.ndtr``
    computes) with the C library's ``erf``/``erfc``, so that this path imports no scipy (whose
    ``scipy.stats`` takes about 2 s to import here); equal to scipy's to 1e-12 relative
    (tests/stats/test_paired.py). One definition, the resampling kernels': its plain Python body
    here (nothing compiled for one call)."""
    from segscore.kernels.resample import upper_normal

    return float(upper_normal.py_func(float(z)))


def average_ranks(values) -> np.ndarray:
    """Ranks with ties averaged (R's ``rank()``, ``scipy.stats.rankdata(method="average")``), in
    NumPy: the sorted values' first positions of each run of equal values, as scipy computes them."""
    a = np.asarray(values, float).ravel()
    order = np.argsort(a, kind="mergesort")
    s = a[order]
    first = np.empty(a.size, bool)
    first[:1] = True
    first[1:] = s[1:] != s[:-1]
    dense = np.empty(a.size, np.int64)
    dense[order] = np.cumsum(first)
    starts = np.concatenate([np.flatnonzero(first), [a.size]])
    return 0.5 * (starts[dense] + starts[dense - 1] + 1)


def wilcoxon_greater(x, y) -> dict:
    """R's one-sided paired Wilcoxon signed-rank test (module docstring) of ``x > y``.

    Returns ``{"n": pairs, "n_nonzero": differences kept, "V": sum of the positive ranks,
    "p": p-value}``. Where every difference is 0, R's formula gives ``z = -0.5 / 0 = -inf`` and
    ``p = 1`` (and challengeR counts it in the family it adjusts): so does this. ``p`` is None only
    for no pair at all (R refuses: not enough observations)."""
    d = np.asarray(x, float) - np.asarray(y, float)
    n_all = d.size
    d = d[d != 0]
    n = d.size
    if n_all == 0:
        return {"n": 0, "n_nonzero": 0, "V": None, "p": None}
    if n == 0:
        return {"n": n_all, "n_nonzero": 0, "V": 0.0, "p": 1.0}
    r = average_ranks(np.abs(d))  # average ties, as R's rank()
    v = float(r[d > 0].sum())
    _, ties = np.unique(r, return_counts=True)
    sigma2 = n * (n + 1) * (2 * n + 1) / 24 - float(np.sum(ties.astype(float) ** 3 - ties)) / 48
    z = v - n * (n + 1) / 4
    if sigma2 <= 0:
        return {"n": n_all, "n_nonzero": n, "V": v, "p": None}
    z = (z - 0.5) / math.sqrt(sigma2)
    return {"n": n_all, "n_nonzero": n, "V": v, "p": _upper_normal(z)}


def sign_flip_greater(x, y, *, permutations: int, seed: int) -> dict:
    """The paired sign-flip permutation test of ``mean(x - y) > 0`` (module docstring).

    Returns ``{"n", "statistic": the observed mean difference, "p", "exact": bool,
    "permutations": patterns used}``; ``p`` is None for no pairs."""
    d = np.asarray(x, float) - np.asarray(y, float)
    n = d.size
    if n == 0:
        return {"n": 0, "statistic": None, "p": None, "exact": True, "permutations": 0}
    obs = float(np.mean(d))
    gamma = abs(np.finfo(float).eps * 100 * obs)
    if n < 63 and 2 ** n <= permutations:
        bits = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
        null = np.where(bits, -d, d).mean(axis=1)
        count = int(np.count_nonzero(null >= obs - gamma))
        return {"n": n, "statistic": obs, "p": min(1.0, count / 2 ** n), "exact": True, "permutations": 2 ** n}
    rng = np.random.default_rng(seed)
    count = 0
    chunk = max(1, (1 << 20) // n)
    done = 0
    while done < permutations:
        c = min(chunk, permutations - done)
        flips = rng.integers(0, 2, size=(c, n))
        null = np.where(flips == 1, -d, d).mean(axis=1)
        count += int(np.count_nonzero(null >= obs - gamma))
        done += c
    return {"n": n, "statistic": obs, "p": min(1.0, (count + 1) / (permutations + 1)), "exact": False,
            "permutations": permutations}


def p_adjust(p, method: str) -> list:
    """R's ``p.adjust(p, method)`` for ``holm``, ``bonferroni``, ``bh`` (``"BH"``) and ``none``; None
    entries are not in the family (R's ``n = sum(!is.na(p))``) and stay None."""
    if method not in ADJUST:
        raise ScoreError(f"--adjust {method!r}: give one of {', '.join(ADJUST)}")
    p = list(p)
    keep = [i for i, v in enumerate(p) if v is not None]
    out: list = [None] * len(p)
    if not keep:
        return out
    a = np.array([p[i] for i in keep], float)
    m = a.size
    if method == "none":
        adj = a
    elif method == "bonferroni":
        adj = np.minimum(1.0, m * a)
    elif method == "holm":
        o = np.argsort(a, kind="stable")
        adj = np.empty(m)
        adj[o] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * a[o]))
    else:  # bh
        o = np.argsort(-a, kind="stable")
        i = np.arange(m, 0, -1)
        adj = np.empty(m)
        adj[o] = np.minimum(1.0, np.minimum.accumulate(m / i * a[o]))
    for k, i in enumerate(keep):
        out[i] = float(adj[k])
    return out
