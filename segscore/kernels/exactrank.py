"""Kernels of the exact ranking of float scores in bounded memory (:mod:`segscore.metrics.exact`).

A score is a float64 probability in [0, 1] (``-0.0`` made ``+0.0``) and its *key* is its bit
pattern as a uint64: for non-negative doubles the order of the keys is the order of the values,
and equal keys are equal values. A class is 1 (positive) or 0 (negative).

- :func:`bucket_pass`: the first pass, 65,536 buckets ``min(int(p * 65536), 65535)`` (monotone
  in ``p``), each with its class counts and its smallest and largest key, plus the class
  counts between consecutive thresholds.
- :func:`region_pass`: a later pass over disjoint key ranges (regions), each either split into
  sub-bins ``(key - lo) >> shift`` (class counts, smallest and largest key) or collected: its
  pixels are written out as ``key << 1 | class`` (keys of [0, 1] leave bit 63 free).
- :func:`collected_terms` and :func:`row_terms`: the terms of ROC-AUC, average precision and
  the best F1 over every distinct score, of rows (a distinct score, or a run of scores whose
  inner order cannot change a metric) whose counts above them are known.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

#: buckets of the first pass
N_BUCKETS = 65536
#: region states of :func:`region_pass`
SKIP, SPLIT, COLLECT = 0, 1, 2


@jit
def _tally(pos, neg, kmin, kmax, b, key, c):
    """Count a value of class ``c`` with sort key ``key`` into bin ``b`` (counts and key range)."""
    if c:
        pos[b] += 1
    else:
        neg[b] += 1
    if key < kmin[b]:
        kmin[b] = key
    if key > kmax[b]:
        kmax[b] = key


@jit
def bucket_pass(keys, p, cls, thresholds, below, pos, neg, kmin, kmax, tcount):
    """Count one tile's scores into the 65,536 first-pass buckets.

    Parameters
    ----------
    keys : (n,) uint64
        The bits of ``p`` (the same memory viewed as uint64).
    p : (n,) float64
        Scores in [0, 1], no NaN, no ``-0.0``.
    cls : (n,) uint8
        1 positive, 0 negative.
    thresholds : (t,) float64, increasing
    below : (65536,) int64
        Thresholds ``<=`` each bucket's lowest value ``b / 65536``
        (``searchsorted(thresholds, arange(65536) / 65536, "right")``).
    pos, neg : (65536,) int64
        Class counts per bucket, accumulated in place.
    kmin, kmax : (65536,) uint64
        Smallest and largest key per bucket, updated in place (start them at the largest
        uint64 and 0).
    tcount : (2, t + 1) int64
        ``tcount[c, j]``: scores of class ``c`` with exactly ``j`` thresholds ``<= p``, in place.

    Notes
    -----
    Does not check NaN, the range of ``p`` or lengths.
    """
    nt = thresholds.shape[0]
    for i in range(p.shape[0]):
        x = p[i]
        b = np.int64(x * 65536.0)
        if b > 65535:
            b = 65535
        c = cls[i]
        _tally(pos, neg, kmin, kmax, b, keys[i], c)
        j = below[b]  # x >= b / 65536 exactly (a product by 2**16 is exact): those thresholds are <= x
        while j < nt and thresholds[j] <= x:
            j += 1
        tcount[c, j] += 1


@jit
def region_pass(keys, p, cls, first, fine_off, fine_lo, fine_shift, fine_n, fine, rlo, rhi, state, shift, base,
                sub_pos, sub_neg, sub_min, sub_max, out):
    """One later pass over a tile's scores: sub-bin counts and collected pixels.

    Parameters
    ----------
    keys : (n,) uint64
    p : (n,) float64
        The scores whose bits ``keys`` are.
    cls : (n,) uint8
    first : (65537,) int64
        The regions inside first-pass bucket ``b`` are ``first[b]:first[b + 1]`` (a region never
        spans two buckets: it is a bucket or a part of one).
    fine_off, fine_lo, fine_shift, fine_n : (65536,) int64, uint64, int64, int64
        A bucket holding many regions has a finer index: ``fine_off[b] >= 0``, and a key ``k`` of
        it lies in slot ``s = (k - fine_lo[b]) >> fine_shift[b]`` (``0 <= s < fine_n[b]``), whose
        regions are at most ``fine[fine_off[b] + s] : fine[fine_off[b] + s + 1] + 1``.
    fine : (f,) int64
    rlo, rhi : (r,) uint64
        Inclusive key ranges of the regions, disjoint and increasing.
    state : (r,) int64
        ``SKIP`` (0), ``SPLIT`` (1) or ``COLLECT`` (2).
    shift, base : (r,) int64
        A split region's sub-bin of key ``k`` is ``base + ((k - lo) >> shift)``.
    sub_pos, sub_neg : (s,) int64; sub_min, sub_max : (s,) uint64
        Sub-bin class counts and key range, updated in place.
    out : (n,) uint64
        Receives ``key << 1 | class`` of each collected pixel, in tile order.

    Returns
    -------
    k : int
        Pixels written to ``out``.

    Notes
    -----
    Does not check that keys leave bit 63 free, nor the sub-bin bounds.
    """
    r = rlo.shape[0]
    k = 0
    if r == 0:
        return k
    for i in range(keys.shape[0]):
        key = keys[i]
        bk = np.int64(p[i] * 65536.0)
        if bk > 65535:
            bk = 65535
        lo = first[bk]
        hi = first[bk + 1]
        if lo == hi:
            continue
        off = fine_off[bk]
        if off >= 0:
            if key < fine_lo[bk]:
                continue
            sl = np.int64((key - fine_lo[bk]) >> np.uint64(fine_shift[bk]))
            if sl >= fine_n[bk]:
                continue
            lo = fine[off + sl]
            h2 = fine[off + sl + 1] + 1
            if h2 < hi:
                hi = h2
        base_lo = lo
        while lo < hi:  # regions with rlo <= key
            mid = (lo + hi) >> 1
            if rlo[mid] <= key:
                lo = mid + 1
            else:
                hi = mid
        j = lo - 1
        if j < base_lo or key > rhi[j]:
            continue
        s = state[j]
        if s == 1:
            b = base[j] + np.int64((key - rlo[j]) >> np.uint64(shift[j]))
            _tally(sub_pos, sub_neg, sub_min, sub_max, b, key, cls[i])
        elif s == 2:
            out[k] = (key << np.uint64(1)) | np.uint64(cls[i])
            k += 1
    return k


@jit
def _term(a, b, t0, f0, n_pos, n_neg, key, acc, best, best_key):
    """Add one row (``a`` positives, ``b`` negatives at one score, ``t0``/``f0`` above it)."""
    t1 = t0 + a
    f1 = f0 + b
    # ROC-AUC: doubled wins against the negatives strictly below, ties half
    wins2 = a * (2 * (n_neg - f1) + b)
    if a > 0:  # average precision: (R_k - R_{k-1}) P_k, as scikit-learn evaluates each term
        term = (t1 / n_pos - t0 / n_pos) * (t1 / (t1 + f1))
        y = term - acc[1]  # Kahan summation
        t = acc[0] + y
        acc[1] = (t - acc[0]) - y
        acc[0] = t
    # F1 with threshold at this score (recall and precision as segscore.metrics.ranking.fbeta_sweep)
    called = t1 + f1
    precision = t1 / called if called > 0 else 0.0
    recall = t1 / n_pos
    denom = precision + recall
    f = 2.0 * precision * recall / denom if denom > 0 else 0.0
    if f > best[0] or (f == best[0] and key < best_key[0]):
        best[0] = f
        best_key[0] = key
    return wins2


@jit
def row_terms(keys, a, b, t0, f0, n_pos, n_neg, acc, best, best_key):
    """Terms of explicit rows.

    Parameters
    ----------
    keys : (m,) uint64
        Each row's score (the smallest key of a run).
    a, b, t0, f0 : (m,) int64
        Positives and negatives of the row; positives and negatives scoring above it.
    n_pos, n_neg : int
    acc : (2,) float64
        Average precision sum and its Kahan compensation, in place.
    best : (1,) float64; best_key : (1,) uint64
        Best F1 so far (start at -1) and the lowest key reaching it, in place.

    Returns
    -------
    wins2 : int64
        ``sum a * (2 * below + b)``.

    Notes
    -----
    Rows may come in any order; ties of F1 go to the lowest key.
    """
    w = np.int64(0)
    for i in range(keys.shape[0]):
        w += _term(a[i], b[i], t0[i], f0[i], n_pos, n_neg, keys[i], acc, best, best_key)
    return w


@jit
def collected_terms(packed, lo, t0, f0, n_pos, n_neg, acc, best, best_key):
    """Terms of the distinct scores of collected pixels.

    Parameters
    ----------
    packed : (m,) uint64, sorted ascending
        ``key << 1 | class`` of every pixel of the collected regions.
    lo : (r,) uint64, increasing
        Smallest key of each collected region (every pixel's key is at or above its region's).
    t0, f0 : (r,) int64
        Positives and negatives scoring above each region.
    n_pos, n_neg, acc, best, best_key
        As :func:`row_terms`.

    Returns
    -------
    wins2 : int64
    """
    w = np.int64(0)
    m = packed.shape[0]
    j = lo.shape[0] - 1
    i = m - 1
    t = np.int64(0)
    f = np.int64(0)
    cur = -1
    while i >= 0:
        key = packed[i] >> np.uint64(1)
        while key < lo[j]:
            j -= 1
        if j != cur:
            cur = j
            t = t0[j]
            f = f0[j]
        a = np.int64(0)
        b = np.int64(0)
        while i >= 0 and (packed[i] >> np.uint64(1)) == key:
            if packed[i] & np.uint64(1):
                a += 1
            else:
                b += 1
            i -= 1
        w += _term(a, b, t, f, n_pos, n_neg, key, acc, best, best_key)
        t += a
        f += b
    return w
