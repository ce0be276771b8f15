"""The exact-ranking kernels against brute-force NumPy oracles."""

import numpy as np
import pytest

from segscore.kernels.exactrank import (COLLECT, N_BUCKETS, N_CELLS, SPLIT, collected_terms, first_pass,
                                        partition, region_pass, row_terms, sorted_buckets)
from segscore.metrics.exact import _bucket_index, keys_of

MAXU = np.iinfo(np.uint64).max
THR = np.unique(np.r_[np.linspace(0.05, 0.95, 19), 0.5])


def scores(n, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        p = rng.random(n)
    elif kind == "tied":
        p = np.floor(rng.random(n) * 5) / 4  # 0, .25, .5, .75, 1
    else:  # narrow and tiny together
        p = np.where(rng.random(n) < 0.5, 0.5 + rng.random(n) * 1e-9, rng.random(n) * 1e-305)
    return p, (rng.random(n) < 0.3).astype(np.uint8)


def first_scores(n, kind, bits):
    p, cls = scores(n, n + 3, kind)
    if bits == 32:
        p = p.astype(np.float32)
    p, keys = keys_of(p, bits)
    return p, keys, cls, keys.dtype.type


BELOW = np.searchsorted(THR, np.arange(N_CELLS) / N_CELLS, side="right").astype(np.int64)


def buckets(ut):
    return [np.zeros(N_BUCKETS, np.int64), np.zeros(N_BUCKETS, np.int64), np.full(N_BUCKETS, np.iinfo(ut).max, ut),
            np.zeros(N_BUCKETS, ut)]


def no_buckets(ut):
    return [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, ut), np.zeros(0, ut)]


@pytest.mark.parametrize("n", [0, 1, 17, 2000])
@pytest.mark.parametrize("kind", ["uniform", "tied", "narrow_tiny"])
@pytest.mark.parametrize("bits", [64, 32])
def test_first_pass_counting(n, kind, bits):
    p, keys, cls, ut = first_scores(n, kind, bits)
    pos, neg, kmin, kmax = buckets(ut)
    tc = np.zeros((2, THR.size + 1), np.int64)
    first_pass(keys, p, cls, THR, BELOW, tc, pos, neg, kmin, kmax, np.empty(0, ut))
    p64 = p.astype(np.float64)
    b = np.minimum(np.floor(p64 * 65536).astype(np.int64), 65535)
    np.testing.assert_array_equal(pos, np.bincount(b[cls == 1], minlength=N_BUCKETS))
    np.testing.assert_array_equal(neg, np.bincount(b[cls == 0], minlength=N_BUCKETS))
    for k in np.unique(b):
        assert kmin[k] == keys[b == k].min() and kmax[k] == keys[b == k].max()
    assert np.all(kmin[(pos + neg) == 0] == np.iinfo(ut).max)
    j = np.searchsorted(THR, p64, side="right")
    for c in (0, 1):
        np.testing.assert_array_equal(tc[c], np.bincount(j[cls == c], minlength=THR.size + 1))


@pytest.mark.parametrize("n", [0, 1, 17, 2000])
@pytest.mark.parametrize("kind", ["uniform", "tied", "narrow_tiny"])
@pytest.mark.parametrize("bits", [64, 32])
def test_first_pass_gathering_and_sorted_buckets(n, kind, bits):
    """The gathering first pass: every score packed, thresholds counted; the buckets read back
    from the sorted pixels are the counting pass's."""
    p, keys, cls, ut = first_scores(n, kind, bits)
    tc = np.zeros((2, THR.size + 1), np.int64)
    out = np.empty(n, ut)
    first_pass(keys, p, cls, THR, BELOW, tc, *no_buckets(ut), out)
    assert out.tolist() == [(int(k) << 1) | int(c) for k, c in zip(keys, cls)]
    j = np.searchsorted(THR, p.astype(np.float64), side="right")
    for c in (0, 1):
        np.testing.assert_array_equal(tc[c], np.bincount(j[cls == c], minlength=THR.size + 1))
    want = buckets(ut)
    first_pass(keys, p, cls, THR, BELOW, np.zeros_like(tc), *want, np.empty(0, ut))
    got = buckets(ut)
    out.sort()
    starts = (np.arange(N_BUCKETS + 1) / N_BUCKETS).astype(p.dtype).view(ut).copy()
    starts[-1] = np.iinfo(ut).max
    sorted_buckets(out, starts, *got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


EDGE = np.array([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 2.0**-17, 2.0**-16 - 2.0**-70, 2.0**-16, 2.0**-15,
                 0.5 - 2.0**-54, 0.5, 0.75, 1 - 2.0**-53, 1 - 2.0**-17, 1.0])


@pytest.mark.parametrize("case", ["empty", "one", "constant", "distinct", "ties", "edges"])
@pytest.mark.parametrize("bits", [64, 32])
def test_partition(case, bits):
    rng = np.random.default_rng(7)
    ut = np.uint64 if bits == 64 else np.uint32
    raw = {"empty": np.zeros(0), "one": np.array([0.3]), "constant": np.full(50, 0.25),
           "distinct": rng.random(3001), "ties": np.floor(rng.random(999) * 4) / 4, "edges": EDGE}[case]
    _, keys = keys_of(raw.astype(np.float32) if bits == 32 else raw, bits)
    packed = keys + keys + (rng.random(keys.size) < 0.5).astype(ut)
    for pivot in np.unique(np.r_[packed, 0, np.iinfo(ut).max]).astype(ut):
        work = packed.copy()
        k = partition(work, pivot)
        assert k == np.count_nonzero(packed < pivot)
        assert np.all(work[:k] < pivot) and np.all(work[k:] >= pivot)
        np.testing.assert_array_equal(np.sort(work), np.sort(packed))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bits", [64, 32])
def test_region_pass(seed, bits):
    rng = np.random.default_rng(seed)
    p, cls = scores(3000, seed, ["uniform", "tied", "narrow_tiny", "uniform"][seed])
    if bits == 32:
        p = p.astype(np.float32)
    p, keys = keys_of(p, bits)
    ut = keys.dtype.type
    maxu = np.iinfo(ut).max
    # disjoint regions between sorted distinct keys, inside first-pass buckets, some keys in none
    u = np.unique(keys)
    ub = np.minimum((u.view(p.dtype).astype(np.float64) * N_BUCKETS).astype(np.int64), N_BUCKETS - 1)
    cuts = np.sort(rng.choice(u.size, size=min(u.size, 12), replace=False))
    rlo, rhi = [], []
    for a, b in zip(cuts[::2], cuts[1::2]):
        b = a + int(np.searchsorted(ub[a:b + 1], ub[a], side="right")) - 1  # end in a's bucket
        rlo.append(u[a])
        rhi.append(u[b])
    rlo, rhi = np.array(rlo, ut), np.array(rhi, ut)
    index = _bucket_index(rlo, rhi if seed % 2 else None)  # with and without the finer index
    state = rng.choice([0, SPLIT, COLLECT], size=rlo.size).astype(np.int64)
    # a shift leaving at most 2**10 to 2**7 sub-bins per split region
    shift = np.array([max(0, int(h - lo).bit_length() - 10) + int(rng.integers(0, 4)) if st == SPLIT else 0
                      for lo, h, st in zip(rlo, rhi, state)], np.int64)
    used = [int((int(h) - int(lo)) >> int(s)) + 1 if st == SPLIT else 0 for lo, h, s, st in zip(rlo, rhi, shift, state)]
    base = np.r_[0, np.cumsum(used)[:-1]].astype(np.int64)
    n_sub = max(1, sum(used))
    sp, sn = np.zeros(n_sub, np.int64), np.zeros(n_sub, np.int64)
    smin, smax = np.full(n_sub, maxu, ut), np.zeros(n_sub, ut)
    out = np.empty(keys.size, ut)
    k = region_pass(keys, p, cls, *index, rlo, rhi, state, shift, base, sp, sn, smin, smax, out)
    # brute force
    bp, bn = np.zeros(n_sub, np.int64), np.zeros(n_sub, np.int64)
    bmin, bmax = np.full(n_sub, maxu, ut), np.zeros(n_sub, ut)
    got = []
    for key, c in zip(keys.tolist(), cls.tolist()):
        for r in range(rlo.size):
            if int(rlo[r]) <= key <= int(rhi[r]):
                if state[r] == SPLIT:
                    s = int(base[r]) + ((key - int(rlo[r])) >> int(shift[r]))
                    (bp if c else bn)[s] += 1
                    bmin[s] = min(int(bmin[s]), key)
                    bmax[s] = max(int(bmax[s]), key)
                elif state[r] == COLLECT:
                    got.append((key << 1) | c)
    np.testing.assert_array_equal(sp, bp)
    np.testing.assert_array_equal(sn, bn)
    np.testing.assert_array_equal(smin, bmin)
    np.testing.assert_array_equal(smax, bmax)
    assert out[:k].tolist() == got


def test_region_pass_without_regions():
    keys = np.arange(5, dtype=np.uint64)
    z = np.zeros(0, np.uint64)
    zi = np.zeros(0, np.int64)
    assert region_pass(keys, keys.astype(np.float64), np.zeros(5, np.uint8), *_bucket_index(z, z), z, z, zi, zi, zi,
                       np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.uint64), np.zeros(1, np.uint64),
                       np.empty(5, np.uint64)) == 0


def brute_terms(values, a, b):
    """AUC doubled wins, AP and the best F1 (lowest value among ties) of distinct-value rows."""
    order = np.argsort(-values)
    values, a, b = values[order], a[order], b[order]
    P, N = a.sum(), b.sum()
    t = f = 0
    wins2 = 0
    ap = 0.0
    best, best_v = -1.0, None
    for v, x, y in zip(values, a, b):
        wins2 += int(x) * (2 * int(N - f - y) + int(y))
        t1, f1 = t + x, f + y
        if x:
            ap += (t1 / P - t / P) * (t1 / (t1 + f1))
        prec = t1 / (t1 + f1)
        rec = t1 / P
        fs = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
        if fs > best or (fs == best and v < best_v):
            best, best_v = fs, v
        t, f = t1, f1
    return wins2, ap, best, best_v


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bits", [64, 32])
def test_row_and_collected_terms(seed, bits):
    rng = np.random.default_rng(seed)
    n = [1, 2, 50, 400][seed]
    raw = rng.random(n) ** 3
    keys = np.unique(keys_of(raw.astype(np.float32) if bits == 32 else raw, bits)[1])
    ut = keys.dtype.type
    n = keys.size
    a = rng.integers(0, 4, n).astype(np.int64)
    b = rng.integers(0, 4, n).astype(np.int64)
    a[0] += 1
    b[-1] += 1
    P, N = int(a.sum()), int(b.sum())
    want = brute_terms(keys.astype(object), a, b)
    # explicit rows, in a shuffled order, with the counts above each
    t0 = np.array([a[keys > k].sum() for k in keys], np.int64)
    f0 = np.array([b[keys > k].sum() for k in keys], np.int64)
    perm = rng.permutation(n)
    acc, best, bk = np.zeros(2), np.full(1, -1.0), np.zeros(1, ut)
    w = row_terms(keys[perm], a[perm], b[perm], t0[perm], f0[perm], P, N, acc, best, bk)
    assert w == want[0] and acc[0] == pytest.approx(want[1], abs=1e-15) and best[0] == want[2] and bk[0] == want[3]
    # the same rows as collected pixels, cut into regions
    packed = np.concatenate([np.r_[np.full(x, (int(k) << 1) | 1, ut), np.full(y, int(k) << 1, ut)]
                             for k, x, y in zip(keys, a, b)])
    rng.shuffle(packed)
    packed.sort()
    cuts = np.unique(np.r_[0, rng.integers(0, n, 3)])
    lo = keys[cuts]
    acc2, best2, bk2 = np.zeros(2), np.full(1, -1.0), np.zeros(1, ut)
    ends = np.r_[cuts[1:], n]  # a region holds keys[cuts[r]:ends[r]]; the counts above are the rows after it
    ta = np.array([a[e:].sum() for e in ends], np.int64)
    fa = np.array([b[e:].sum() for e in ends], np.int64)
    hi = keys[ends - 1]
    w2 = collected_terms(packed, lo, hi, ta, fa, P, N, acc2, best2, bk2)
    assert w2 == want[0] and acc2[0] == pytest.approx(want[1], abs=1e-15) and best2[0] == want[2]
    assert bk2[0] == want[3]
    assert collected_terms(np.zeros(0, ut), lo, hi, ta, fa, P, N, acc2, best2, bk2) == 0
    # rows outside every region are skipped (their counts are in the counts above the regions below)
    inside = rng.random(n) < 0.6
    inside[0] = True
    idx = np.flatnonzero(inside)
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    lo3 = np.array([keys[r[0]] for r in runs], ut)
    hi3 = np.array([keys[r[-1]] for r in runs], ut)
    t3 = np.array([a[r[-1] + 1:].sum() for r in runs], np.int64)
    f3 = np.array([b[r[-1] + 1:].sum() for r in runs], np.int64)
    acc3, best3, bk3 = np.zeros(2), np.full(1, -1.0), np.zeros(1, ut)
    w3 = collected_terms(packed, lo3, hi3, t3, f3, P, N, acc3, best3, bk3)
    wins, ap, bf, bv = 0, 0.0, -1.0, None
    for i in range(n - 1, -1, -1):  # highest first, counting every row above
        x, y = int(a[i]), int(b[i])
        t, f = int(a[i + 1:].sum()), int(b[i + 1:].sum())
        if not inside[i]:
            continue
        wins += x * (2 * (N - f - y) + y)
        if x:
            ap += ((t + x) / P - t / P) * ((t + x) / (t + x + f + y))
        prec = (t + x) / (t + x + f + y)
        rec = (t + x) / P
        fs = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
        if fs > bf or (fs == bf and keys[i] < bv):
            bf, bv = fs, keys[i]
    assert w3 == wins and acc3[0] == pytest.approx(ap, abs=1e-15) and best3[0] == bf and bk3[0] == bv


@pytest.mark.parametrize("seed", range(3))
def test_region_pass_fine_index_in_a_crowded_bucket(seed):
    """Thousands of regions inside one first-pass bucket (a narrow map split): the finer index
    must find each key's region as a search over all of them does."""
    rng = np.random.default_rng(seed)
    p, keys = keys_of(0.5 + rng.random(20000) * 1e-8)
    cls = (rng.random(p.size) < 0.4).astype(np.uint8)
    u = np.unique(keys)
    cuts = np.sort(rng.choice(u.size, size=3000, replace=False))
    rlo, rhi = u[cuts[::2]], u[cuts[1::2]]
    r = rlo.size
    state = np.full(r, COLLECT, np.int64)
    zi = np.zeros(r, np.int64)
    index = _bucket_index(rlo, rhi)
    assert index[1].max() >= 0  # the finer index is in use
    out = np.empty(keys.size, np.uint64)
    one = np.zeros(1, np.int64)
    k = region_pass(keys, p, cls, *index, rlo, rhi, state, zi, zi, one, one.copy(), np.zeros(1, np.uint64),
                    np.zeros(1, np.uint64), out)
    j = np.searchsorted(rlo, keys, side="right") - 1
    inside = (j >= 0) & (keys <= rhi[np.maximum(j, 0)])
    want = (keys[inside] << np.uint64(1)) | cls[inside].astype(np.uint64)
    np.testing.assert_array_equal(out[:k], want)


# --- the placed first pass (gather_codes, gather_boxes), value_range, the AUC sweeps, rotate ---

from segscore.kernels.exactrank import (collected_wins, gather_boxes, gather_codes, rotate,  # noqa: E402
                                        sorted_wins, value_range)
from segscore.kernels.regions import box_rows  # noqa: E402


def band(shape, seed, ft, special=True):
    """Values in and a little outside [0, 1], with ties, -0.0 and (``special``) NaN and infinities."""
    rng = np.random.default_rng(seed)
    v = np.where(rng.random(shape) < 0.3, np.floor(rng.random(shape) * 4) / 4, rng.random(shape) * 1.2 - 0.1)
    v.flat[:: 7] = -0.0
    if special and v.size > 5:
        v.flat[1], v.flat[3], v.flat[4] = np.nan, np.inf, -np.inf
    return v.astype(ft)


@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (3, 1), (7, 13), (40, 31)])
@pytest.mark.parametrize("ft", [np.float64, np.float32])
@pytest.mark.parametrize("special", [False, True])
def test_gather_codes(shape, ft, special):
    rng = np.random.default_rng(sum(shape))
    v = band(shape, 1, ft, special)
    codes = rng.integers(0, 4, shape).astype(np.uint8)
    ut = np.uint64 if ft == np.float64 else np.uint32
    fin = np.isfinite(v)
    scored = ((codes & 2) != 0) & fin
    n = int(scored.sum())
    buf = np.full(n + 2, 7, ut)  # two sentinels after the slot
    tc = np.zeros((2, THR.size + 1), np.int64)
    stats = np.array([np.inf, -np.inf, 0.0])
    k = gather_codes(v, codes, THR, BELOW, tc, stats, buf[:n])
    assert k == n and np.all(buf[n:] == 7)
    p = np.clip(v[scored], 0, 1).astype(ft) + ft(0.0)  # row-major, -0.0 made +0.0
    cls = (codes[scored] & 1).astype(ut)
    want = (p.view(ut) << ut(1)) | cls
    np.testing.assert_array_equal(buf[:n], want)
    j = np.searchsorted(THR, p.astype(np.float64), side="right")
    for c in (0, 1):
        np.testing.assert_array_equal(tc[c], np.bincount(j[cls == c], minlength=THR.size + 1))
    good = v[fin].astype(np.float64)
    assert stats[2] == v.size - fin.sum()
    assert (stats[0], stats[1]) == ((good.min(), good.max()) if good.size else (np.inf, -np.inf))
    # a slot too small for the band: the count says so, nothing is written past it
    if n > 1:
        small = np.full(n, 7, ut)
        assert gather_codes(v, codes, THR, BELOW, tc, stats, small[:n - 1]) == n and small[-1] == 7


@pytest.mark.parametrize("ft", [np.float64, np.float32])
@pytest.mark.parametrize("with_valid", [False, True])
@pytest.mark.parametrize("row0", [0, 3, 11])
def test_gather_boxes_equals_box_rows_and_the_box_pixels(ft, with_valid, row0):
    rng = np.random.default_rng(row0)
    H, W, col0 = 24, 30, 2
    bh = 9
    v = band((bh, W - col0), row0 + 5, ft, special=False)
    valid = (rng.random((H, W)) < 0.8).astype(np.uint8) if with_valid else np.zeros((0, 0), np.uint8)
    boxes = np.array([[2, 15, 3, 9], [0, 24, 10, 11], [5, 12, 12, 20], [4, 20, 6, 14], [13, 14, 20, 29]], np.int64)
    kinds = np.array([1, -1, 0, 1, 0], np.int64)  # box 3 overlaps boxes 0 and 2: its pixels count again
    maxh = int((boxes[:, 1] - boxes[:, 0]).max())
    want_rs, want_rc = np.zeros((5, maxh)), np.zeros((5, maxh), np.int64)
    box_rows(np.clip(v, 0, 1), row0, col0, valid, boxes, np.full(5, -1, np.int64), False, 1.0, want_rs, want_rc,
             np.zeros((2, 65536), np.int64))
    ut = np.uint64 if ft == np.float64 else np.uint32
    want = []
    for (y0, y1, x0, x1), kd in zip(boxes, kinds):
        if kd < 0:
            continue
        for gy in range(max(y0, row0), min(y1, row0 + bh)):
            for gx in range(x0, x1):
                if not with_valid or valid[gy, gx]:
                    p = np.clip(v[gy - row0, gx - col0], 0, 1) + ft(0.0)
                    want.append((int(np.array(p, ft).view(ut)) << 1) | int(kd))
    out = np.full(len(want) + 1, 3, ut)
    rs, rc = np.zeros((5, maxh)), np.zeros((5, maxh), np.int64)
    k = gather_boxes(v, row0, col0, valid, boxes, kinds, rs, rc, out[:len(want)])
    assert k == len(want) and out[-1] == 3
    assert out[:k].tolist() == want
    np.testing.assert_array_equal(rs, want_rs)  # the same sums, added in the same order
    np.testing.assert_array_equal(rc, want_rc)


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (6, 9)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_value_range(shape, dtype):
    v = band(shape, 4, np.float64).astype(dtype) if dtype != np.int32 else np.arange(np.prod(shape)).reshape(shape)
    v = v.astype(dtype)
    lo, hi, bad = value_range(v)
    x = v.astype(np.float64)
    fin = np.isfinite(x)
    assert bad == x.size - fin.sum()
    assert (lo, hi) == ((x[fin].min(), x[fin].max()) if fin.any() else (np.inf, -np.inf))


def brute_wins(keys, cls):
    """Doubled Mann-Whitney wins: each positive against each negative, ties half."""
    pos, neg = keys[cls == 1], keys[cls == 0]
    return int(sum(2 * np.count_nonzero(neg < k) + np.count_nonzero(neg == k) for k in pos))


@pytest.mark.parametrize("n", [0, 1, 2, 300])
@pytest.mark.parametrize("kind", ["uniform", "tied", "narrow_tiny"])
@pytest.mark.parametrize("bits", [64, 32])
def test_sorted_and_collected_wins(n, kind, bits):
    p, keys, cls, ut = first_scores(n, kind, bits)
    packed = np.sort((keys << ut(1)) | cls.astype(ut))
    want = brute_wins(keys, cls)
    assert sorted_wins(packed) == want
    if n:  # over regions covering every score (one, or cut in three), and over some of them
        srt = np.unique(keys)
        for cuts in (np.zeros(1, np.int64), np.unique(np.r_[0, np.random.default_rng(n).integers(0, srt.size, 2)])):
            cuts = cuts.astype(np.int64)
            ends = np.r_[cuts[1:], srt.size].astype(np.int64)
            lo, hi = srt[cuts], srt[ends - 1]
            f0 = np.array([np.count_nonzero((keys > h) & (cls == 0)) for h in hi], np.int64)
            assert collected_wins(packed, lo, hi, f0, int(np.count_nonzero(cls == 0))) == want
        # the upper half of the scores alone: the lower ones are skipped, not counted as wins
        inside = keys >= srt[srt.size // 2]
        lo, hi = srt[srt.size // 2:srt.size // 2 + 1], srt[-1:]
        got = collected_wins(packed, lo, hi, np.zeros(1, np.int64), int(np.count_nonzero(cls == 0)))
        assert got == sum(2 * np.count_nonzero((keys < k) & (cls == 0)) + np.count_nonzero((keys == k) & (cls == 0))
                          for k in keys[inside & (cls == 1)])


@pytest.mark.parametrize("n", [0, 1, 2, 9, 100])
def test_rotate(n):
    a = np.arange(n, dtype=np.uint64)
    for m in range(0, n + 2):
        b = a.copy()
        rotate(b, m)
        np.testing.assert_array_equal(b, np.roll(a, -m) if n else a)
