"""Exact ranking of float scores streamed by tiles, in memory that does not grow with the map.

scikit-learn ranks float64 scores exactly: every distinct value is a threshold. So do these
passes, without holding the map or a sorted copy of it:

1. One pass counts each class into 65,536 buckets ``min(int(p * 65536), 65535)`` (monotone in
   ``p``), with each bucket's smallest and largest score, and counts the scores at or above
   each threshold of the F1 sweep (exact: a count, no ranking needed).
2. A bucket (a *region*: a range of scores with its class counts and the counts above it) is
   final when its inner order cannot change a metric: it holds one distinct score, or only
   negatives (no positive term of AUC or AP, and a threshold inside it never has the best
   F1), or only positives with no negative above it (precision 1 throughout; best F1 at its
   lowest score). It then counts as one row.
3. Every other region is refined in later passes over the map: one holding at most
   ``budget_px`` scores is *collected* (its scores, with their classes, are gathered, sorted
   and read as distinct values), several per pass up to ``budget_px`` scores in all; a larger
   one is *split* into sub-ranges of its float bits (``(bits - lo) >> shift``), which become
   regions of the next pass. Each pass shrinks a split range by a factor of at least 2**12,
   so at most six split levels separate any two doubles of [0, 1].

What a pass holds is bounded: 65,536 sub-bins of counts and key ranges (2 MiB), at most
``budget_px`` collected scores (8 bytes each; with threads, each tile's are copied into one
buffer as it is folded in; with dask, the tiles' pieces are joined at the end, twice that), and
the tiles in flight. The price of a map
whose every score is distinct is passes: about ``(scored pixels) / budget_px`` collecting passes
over the map.

Every term is then scikit-learn's: ROC-AUC is the Mann-Whitney count (doubled wins in integers,
one division), average precision ``sum (R_k - R_{k-1}) P_k`` term by term as scikit-learn
evaluates each (summed with compensation), F1 from the counts at each threshold. The order of
the regions never matters: each carries the counts above it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from segscore.errors import ScoreError

__all__ = ["ExactRanking", "rank_exact", "keys_of", "DEFAULT_BUDGET_PX", "SPLIT_BINS"]

#: scores collected (and sorted) in memory per pass: 2**22 x 8 bytes = 32 MiB
DEFAULT_BUDGET_PX = 1 << 22
#: sub-bins of the regions split in one pass
SPLIT_BINS = 1 << 16
#: sub-bins per split region at least (so each split shrinks a range by 2**12 or more)
_MIN_SUB_BITS = 12
_MAXU = np.iinfo(np.uint64).max


@dataclass
class ExactRanking:
    """What the passes found: counts, the threshold sweep and the exact ranking metrics."""

    n_pos: int
    n_neg: int
    thresholds: np.ndarray  # (t,) increasing
    tp_ge: np.ndarray  # (t,) int64: positives scoring >= each threshold
    fp_ge: np.ndarray  # (t,) int64
    roc_auc: float | None
    average_precision: float | None
    best_f1: float | None  # F1 at the best threshold among every distinct score
    best_threshold: float | None  # the lowest score reaching it
    lo: float = math.inf  # the raw values' range and non-finite count (before clipping)
    hi: float = -math.inf
    nonfinite: int = 0
    passes: int = 0  # passes over the map
    collected_px: int = 0  # scores gathered and sorted over all passes
    max_pass_px: int = 0  # the most gathered in one pass (at most the budget)
    split_regions: int = 0
    #: (scores, positives, negatives) of every row, lowest first, when asked for
    rows: tuple | None = field(default=None, repr=False)


def keys_of(raw) -> tuple[np.ndarray, np.ndarray]:
    """``(p, keys)``: ``raw`` as float64 clipped to [0, 1] (``-0.0`` made ``+0.0``) and its bits."""
    p = np.array(raw, dtype=np.float64, copy=True).ravel()
    np.clip(p, 0.0, 1.0, out=p)
    p += 0.0
    return p, p.view(np.uint64)


def _raw_stats(raw):
    raw = np.asarray(raw)
    if raw.size == 0:
        return math.inf, -math.inf, 0
    if raw.dtype.kind in "biu":
        return float(raw.min()), float(raw.max()), 0
    lo, hi = float(np.min(raw)), float(np.max(raw))
    if math.isfinite(lo) and math.isfinite(hi):
        return lo, hi, 0
    fin = np.isfinite(raw)
    bad = int(raw.size - np.count_nonzero(fin))
    good = raw[fin]
    return (float(good.min()), float(good.max()), bad) if good.size else (math.inf, -math.inf, bad)


class _Terms:
    """Running sums of the metrics' terms over rows."""

    def __init__(self, n_pos, n_neg, keep_rows):
        self.n_pos, self.n_neg = int(n_pos), int(n_neg)
        self.wins2 = 0
        self.acc = np.zeros(2)
        self.best = np.full(1, -1.0)
        self.best_key = np.zeros(1, np.uint64)
        self.rows = [] if keep_rows else None

    def rows_(self, keys, a, b, t0, f0):
        from segscore.kernels.exactrank import row_terms

        if keys.size:
            self.wins2 += int(row_terms(keys, a, b, t0, f0, self.n_pos, self.n_neg, self.acc, self.best,
                                        self.best_key))
            if self.rows is not None:
                self.rows.append((keys.copy(), a.copy(), b.copy()))

    def collected(self, packed, lo, t0, f0):
        from segscore.kernels.exactrank import collected_terms

        if packed.size:
            self.wins2 += int(collected_terms(packed, lo, t0, f0, self.n_pos, self.n_neg, self.acc, self.best,
                                              self.best_key))
            if self.rows is not None:
                keys = packed >> np.uint64(1)
                starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
                pos = np.add.reduceat((packed & np.uint64(1)).astype(np.int64), starts)
                n = np.diff(np.r_[starts, keys.size])
                self.rows.append((keys[starts], pos, n - pos))


#: a bucket holding more regions than this gets a finer index (region_pass's ``fine``)
_FINE_FROM = 8


def _bucket_index(rlo, rhi=None):
    """``(first, fine_off, fine_lo, fine_shift, fine_n, fine)``, region_pass's index of the regions
    (sorted by key): those inside first-pass bucket ``b`` are ``first[b]:first[b + 1]``, and a
    bucket holding more than ``_FINE_FROM`` of them gets about four slots per region (at most 65,536
    slots), each slot knowing the few regions that can hold its keys."""
    from segscore.kernels.exactrank import N_BUCKETS

    bucket = np.minimum((rlo.view(np.float64) * N_BUCKETS).astype(np.int64), N_BUCKETS - 1)
    first = np.searchsorted(bucket, np.arange(N_BUCKETS + 1), side="left").astype(np.int64)
    fine_off = np.full(N_BUCKETS, -1, np.int64)
    fine_lo = np.zeros(N_BUCKETS, np.uint64)
    fine_shift = np.zeros(N_BUCKETS, np.int64)
    fine_n = np.zeros(N_BUCKETS, np.int64)
    parts, off = [], 0
    if rhi is not None:
        for b in np.flatnonzero(np.diff(first) > _FINE_FROM):
            a, z = int(first[b]), int(first[b + 1])
            lo, width = int(rlo[a]), int(rhi[z - 1]) - int(rlo[a])
            bits = min(16, int(4 * (z - a)).bit_length())
            sh = max(0, width.bit_length() - bits)
            n = (width >> sh) + 1
            starts = np.uint64(lo) + (np.arange(n + 1, dtype=np.uint64) << np.uint64(sh))
            parts.append(a + np.searchsorted(rhi[a:z], starts, side="left").astype(np.int64))
            fine_off[b], fine_lo[b], fine_shift[b], fine_n[b] = off, lo, sh, n
            off += n + 1
    fine = np.concatenate(parts) if parts else np.zeros(1, np.int64)
    return first, fine_off, fine_lo, fine_shift, fine_n, fine


def _above(a):
    """Exclusive suffix sums: what lies above each of ascending rows."""
    s = np.cumsum(a[::-1])[::-1]
    return np.r_[s[1:], 0].astype(np.int64)


def rank_exact(read, windows, *, thresholds, executor=None, threads=None, budget_px: int = DEFAULT_BUDGET_PX,
               keep_rows: bool = False, check=None) -> ExactRanking:
    """Rank the scores ``read(window)`` gives for each of ``windows`` exactly (see the module).

    ``read(window) -> (raw, cls)`` or ``(raw, cls, whole)``: the window's scored values (1D, any
    real dtype; the pass clips them to [0, 1] as ScrollGT does), their classes (1D uint8, 1
    positive) and, optionally, the values whose range the first pass reports (the whole window,
    scored or not; default ``raw``). It is called once per window and pass, and must give the
    same values each time. ``thresholds``: the F1
    sweep's, counted with ``p >= t``. ``check(lo, hi, nonfinite)`` sees the raw values' range
    after the first pass and may raise; without it a NaN or infinite value raises ScoreError.
    ``keep_rows`` keeps every row for curves (memory then grows with the distinct scores).
    Engine options as :func:`segscore.engine.reduce`.
    """
    from segscore.engine import reduce
    from segscore.kernels.exactrank import COLLECT, N_BUCKETS, SPLIT, bucket_pass, region_pass

    budget_px = int(budget_px)
    if budget_px < 1:
        raise ValueError(f"budget_px {budget_px}: must be >= 1")
    thr = np.unique(np.asarray(thresholds, np.float64))
    nt = thr.size
    below = np.searchsorted(thr, np.arange(N_BUCKETS) / N_BUCKETS, side="right").astype(np.int64)
    windows = list(windows)

    def first(tile, raw, cls, whole=None):
        lo, hi, bad = _raw_stats(raw if whole is None else whole)
        pos = np.zeros(N_BUCKETS, np.int64)
        neg = np.zeros(N_BUCKETS, np.int64)
        kmin = np.full(N_BUCKETS, _MAXU, np.uint64)
        kmax = np.zeros(N_BUCKETS, np.uint64)
        tcount = np.zeros((2, nt + 1), np.int64)
        if not bad and np.asarray(raw).size:
            p, keys = keys_of(raw)
            bucket_pass(keys, p, np.ascontiguousarray(cls, np.uint8).ravel(), thr, below, pos, neg, kmin, kmax,
                        tcount)
        return [pos, neg, kmin, kmax, tcount, lo, hi, bad]

    def merge_first(x, y):
        x[0] += y[0]
        x[1] += y[1]
        np.minimum(x[2], y[2], out=x[2])
        np.maximum(x[3], y[3], out=x[3])
        x[4] += y[4]
        return [x[0], x[1], x[2], x[3], x[4], min(x[5], y[5]), max(x[6], y[6]), x[7] + y[7]]

    engine = {"executor": executor, "threads": threads}
    local = executor is None or isinstance(executor, str) and executor in ("threads", "synchronous")
    total = reduce(read, first, merge_first, windows=windows, **engine)
    if total is None:
        total = [np.zeros(N_BUCKETS, np.int64), np.zeros(N_BUCKETS, np.int64), np.full(N_BUCKETS, _MAXU, np.uint64),
                 np.zeros(N_BUCKETS, np.uint64), np.zeros((2, nt + 1), np.int64), math.inf, -math.inf, 0]
    pos, neg, kmin, kmax, tcount, lo, hi, bad = total
    if check is not None:
        check(lo, hi, bad)
    elif bad:
        raise ScoreError(f"the scores hold {bad} NaN or infinite values; give finite scores")
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    tp_ge = np.cumsum(tcount[1, ::-1])[::-1][1:].astype(np.int64)
    fp_ge = np.cumsum(tcount[0, ::-1])[::-1][1:].astype(np.int64)
    out = ExactRanking(n_pos, n_neg, thr, tp_ge, fp_ge, None, None, None, None, lo, hi, bad, passes=1)
    if n_pos == 0 or n_neg == 0:
        return out
    if 2.0 * n_pos * n_neg >= 2.0**62:
        raise ScoreError(f"too many pixels for an exact int64 AUC (positives x negatives = {n_pos * n_neg:.3g}, "
                         "needs < 2**61); score a smaller region")

    terms = _Terms(n_pos, n_neg, keep_rows)
    occ = np.flatnonzero((pos + neg) > 0)
    a, b = pos[occ], neg[occ]
    pending = {"lo": kmin[occ], "hi": kmax[occ], "a": a, "b": b, "t0": _above(a), "f0": _above(b)}
    del pos, neg, kmin, kmax

    while pending["lo"].size:
        lo_k, hi_k, a, b, t0, f0 = (pending[k] for k in ("lo", "hi", "a", "b", "t0", "f0"))
        final = (lo_k == hi_k) | (a == 0) | ((b == 0) & (f0 == 0))
        fin = np.flatnonzero(final)
        terms.rows_(lo_k[fin], a[fin], b[fin], t0[fin], f0[fin])
        todo = np.flatnonzero(~final)
        if not todo.size:
            break
        n = a[todo] + b[todo]
        small = todo[n <= budget_px]
        big = todo[n > budget_px]
        # collect the small regions, lowest first, up to the budget; split the big ones
        take = small[np.cumsum(a[small] + b[small]) <= budget_px]
        n_split = min(big.size, SPLIT_BINS >> _MIN_SUB_BITS)
        split = big[:n_split]
        sub_bits = int(math.log2(SPLIT_BINS // max(n_split, 1))) if n_split else 0
        state_of = np.zeros(lo_k.size, np.int64)
        state_of[take] = COLLECT
        state_of[split] = SPLIT
        active = np.flatnonzero(state_of)  # ascending keys
        shift = np.zeros(active.size, np.int64)
        base = np.zeros(active.size, np.int64)
        used = np.zeros(active.size, np.int64)
        nxt = 0
        for i, r in enumerate(active):
            if state_of[r] == SPLIT:
                width = int(hi_k[r] - lo_k[r])
                s = max(0, width.bit_length() - sub_bits)
                shift[i], base[i], used[i] = s, nxt, (width >> s) + 1
                nxt += used[i]
        rlo, rhi, state = lo_k[active], hi_k[active], state_of[active]
        n_sub = max(nxt, 1)
        index = _bucket_index(rlo, rhi)

        def later(tile, raw, cls, *_, rlo=rlo, rhi=rhi, state=state, shift=shift, base=base, n_sub=n_sub,
                  index=index):
            p, keys = keys_of(raw)
            sp = np.zeros(n_sub, np.int64)
            sn = np.zeros(n_sub, np.int64)
            smin = np.full(n_sub, _MAXU, np.uint64)
            smax = np.zeros(n_sub, np.uint64)
            buf = np.empty(keys.size, np.uint64)
            k = region_pass(keys, p, np.ascontiguousarray(cls, np.uint8).ravel(), *index, rlo, rhi, state, shift,
                            base, sp, sn, smin, smax, buf)
            return [sp, sn, smin, smax, [buf[:k].copy()] if k else []]

        n_take = int((a[take] + b[take]).sum())
        # in this process, each tile's scores go straight into one buffer as they are folded in
        packed = np.empty(n_take, np.uint64) if local else None
        filled = [0]

        def drain(parts, packed=packed, filled=filled):
            for part in parts:
                end = filled[0] + part.size
                if end > packed.size:
                    raise RuntimeError("the map changed between passes (a collected region's count differs)")
                packed[filled[0]:end] = part
                filled[0] = end
            parts.clear()

        def merge_later(x, y):
            x[0] += y[0]
            x[1] += y[1]
            np.minimum(x[2], y[2], out=x[2])
            np.maximum(x[3], y[3], out=x[3])
            x[4].extend(y[4])
            if local:
                drain(x[4])
            return x

        got = reduce(read, later, merge_later, windows=windows, **engine)
        out.passes += 1
        sp, sn, smin, smax, parts = got
        if take.size:
            if local:
                drain(parts)
            else:
                packed = np.concatenate(parts) if parts else np.zeros(0, np.uint64)
                del parts[:]
            if (filled[0] if local else packed.size) != n_take:
                raise RuntimeError("the map changed between passes (a collected region's count differs)")
            # sorted as float64: these bit patterns (bit 63 clear, below the exponent of inf and NaN)
            # order as doubles exactly as they order as integers, and NumPy sorts doubles faster
            packed.view(np.float64).sort()
            terms.collected(packed, lo_k[take], t0[take], f0[take])
            out.collected_px += int(packed.size)
            out.max_pass_px = max(out.max_pass_px, int(packed.size))
            del packed
        new = {k: [] for k in pending}
        for i, r in enumerate(active):
            if state[i] != SPLIT:
                continue
            sl = slice(base[i], base[i] + used[i])
            sa, sb = sp[sl], sn[sl]
            keep = np.flatnonzero((sa + sb) > 0)
            sa, sb = sa[keep], sb[keep]
            new["lo"].append(smin[sl][keep])
            new["hi"].append(smax[sl][keep])
            new["a"].append(sa)
            new["b"].append(sb)
            new["t0"].append(t0[r] + _above(sa))
            new["f0"].append(f0[r] + _above(sb))
            out.split_regions += 1
        wait = np.setdiff1d(todo, np.r_[take, split])
        for k in pending:
            new[k].append(pending[k][wait])
        order_parts = {k: np.concatenate(v) if v else np.zeros(0, pending[k].dtype) for k, v in new.items()}
        order = np.argsort(order_parts["lo"], kind="stable")
        pending = {k: v[order] for k, v in order_parts.items()}

    out.roc_auc = terms.wins2 / (2.0 * n_pos * n_neg)
    out.average_precision = float(max(0.0, terms.acc[0]))
    out.best_f1 = float(terms.best[0])
    out.best_threshold = float(terms.best_key.view(np.float64)[0])
    if keep_rows:
        parts = terms.rows
        keys = np.concatenate([r[0] for r in parts])
        order = np.argsort(keys, kind="stable")
        out.rows = (keys[order].view(np.float64), np.concatenate([r[1] for r in parts])[order],
                    np.concatenate([r[2] for r in parts])[order])
    return out
