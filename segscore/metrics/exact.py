"""Exact ranking of float scores streamed by tiles, in memory that does not grow with the map.

scikit-learn ranks float64 scores exactly: every distinct value is a threshold. So do these
passes, without holding more of the map than a fixed budget:

1. A map whose scores fit the budget (:data:`DEFAULT_BUDGET_BYTES`; the caller says how many to
   expect) is read once: each tile's scores are gathered as ``key << 1 | class`` (the key the
   score's bits) and counted at each threshold of the F1 sweep (a count, no ranking needed);
   the gathered scores are then sorted (on two threads: split at a sampled median), and the
   65,536 buckets ``min(int(p * 65536), 65535)`` (monotone in ``p``), with their class counts and
   smallest and largest score, are read from the sorted scores in one sweep. Nothing is read
   twice.
   A caller that counts each window's scores beforehand (a target's codes, a column target's
   boxes) *places* the pass: each tile's kernel writes its scores into its own slot of the buffer
   (:meth:`ExactPass.place`), so nothing is copied after the kernel. The buffer is anonymous memory
   in huge pages (:func:`_alloc`), lent by a :class:`Scratch` to the rankings of one command; a
   ranking that needs ROC-AUC only (``auc_only``) reads it from the sorted scores in one sweep.
   A caller that can gather and sort the scores in NumPy alone hands them over *presorted*
   (:meth:`ExactPass.adopt_sorted`, with :func:`sorted_threshold_counts`): a target's uniform
   floor is drawn, packed and sorted on its own thread while numba loads (NumPy releases the GIL
   in each of those calls), and only the sweeps wait for the kernels.
2. A larger map is first counted into those buckets in one pass (with the thresholds), and the
   buckets ranked by later passes (step 4).
3. A bucket (a *region*: a range of scores with its class counts and the counts above it) is
   final when its inner order cannot change a metric: it holds one distinct score, or only
   negatives (no positive term of AUC or AP, and a threshold inside it never has the best
   F1), or only positives with no negative above it (precision 1 throughout; best F1 at its
   lowest score). It then counts as one row; the others' rows are the distinct scores in them.
4. Later passes (a map larger than the budget): a region holding at most ``budget_px`` scores is
   *collected* (its scores gathered, sorted and read as distinct values), several per pass up to
   ``budget_px`` scores in all; a larger one is *split* into sub-ranges of its float bits
   (``(bits - lo) >> shift``), which become regions of the next pass. Each pass shrinks a split
   range by a factor of at least 2**12, so at most six split levels separate any two doubles of
   [0, 1].

A float32 (or float16) map is ranked on float32 bits (4 bytes a score; the same order and the same
values as its float64 copy), any other map on float64 bits (8 bytes). The budget, 128 MiB, is
2**24 float64 or 2**25 float32 scores: a 4,096² target's uniform floor (16.7 M doubles) or the
33.4 M column and gutter pixels of a full PHerc 1667 column grid in float32 are ranked from one
read. Besides the budget a pass holds the tiles in flight and, when counting, 65,536 buckets
(2 MiB) per tile or as many sub-bins (with dask, the tiles' gathered pieces are joined at the end:
twice the budget). The price of a map larger than the budget is passes: about
``(scored pixels) / budget_px`` collecting passes after the counting one.

Every term is then scikit-learn's: ROC-AUC is the Mann-Whitney count (doubled wins in integers,
one division), average precision ``sum (R_k - R_{k-1}) P_k`` term by term as scikit-learn
evaluates each (summed with compensation, in one order whatever the passes: the final regions'
rows lowest first, then the other rows highest first, pass after pass), F1 from the counts at
each threshold. AUC and F1 do not depend on the order of the regions: each carries the counts
above it.

Where the time went (benchmarks/README.md): the uniform floor of a 4,096² target took six passes
of about 5 s on a busy machine, each calling a kernel helper that took arrays per pixel (reference
counted: 7x slower than inline) and looking each score's region up in megabyte tables; it is now
one read, one sort and two sequential sweeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from segscore.errors import ScoreError

__all__ = ["ExactRanking", "ExactPass", "Scratch", "rank_exact", "keys_of", "key_bits", "sorted_threshold_counts",
           "DEFAULT_BUDGET_BYTES", "DEFAULT_BUDGET_PX", "SPLIT_BINS"]

#: bytes of scores gathered (and sorted) in memory per pass: 2**24 float64 or 2**25 float32 scores
DEFAULT_BUDGET_BYTES = 1 << 27
#: the budget in float64 scores
DEFAULT_BUDGET_PX = DEFAULT_BUDGET_BYTES // 8
#: sub-bins of the regions split in one pass
SPLIT_BINS = 1 << 16
#: sub-bins per split region at least (so each split shrinks a range by 2**12 or more)
_MIN_SUB_BITS = 12
#: per key width: the float and unsigned types
_FLOAT = {32: np.float32, 64: np.float64}
_UINT = {32: np.uint32, 64: np.uint64}


def key_bits(dtype) -> int:
    """32 for a float32 or float16 map (ranked on float32 bits), 64 for any other."""
    return 32 if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float16)) else 64


def _alloc(n: int, dtype) -> np.ndarray:
    """``n`` uninitialised values of ``dtype`` for gathered scores, in anonymous memory asking the
    kernel for huge pages (``madvise(MADV_HUGEPAGE)``, Linux; elsewhere ``numpy.empty``).

    Why: first touching a page costs a fault, and in a virtual machine a fault can cost 10 us or
    more; 128 MiB of 4 kB pages took 0.15-0.5 s to fill in a fresh process here, the same buffer
    in 2 MB pages 0.05 s (benchmarks/README.md, bench_exact.py). The memory is the process's own,
    returned when the array goes."""
    import mmap

    dtype = np.dtype(dtype)
    nbytes = max(int(n) * dtype.itemsize, dtype.itemsize)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None or nbytes < (4 << 20):
        return np.empty(int(n), dtype)
    try:
        mem = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        mem.madvise(advice)
    except (OSError, ValueError, AttributeError):  # no such advice here: plain pages
        return np.empty(int(n), dtype)
    return np.frombuffer(mem, dtype, count=int(n))


class Scratch:
    """The memory of the gathered scores, reused by the exact rankings of one command (``columns``
    ranks its map, then its floor: the second ranking writes into the pages the first touched,
    and the command's peak holds one buffer, not two).

    Made by the call that scores and dropped with it: nothing is kept across calls. Rankings
    sharing one must run one after the other (each ranking's buffer is a view of it until its
    ``finish`` returns)."""

    def __init__(self):
        self._mem = None

    def take(self, n: int, dtype) -> np.ndarray:
        """A buffer of ``n`` values of ``dtype`` (uninitialised; a view of the scratch memory)."""
        dtype = np.dtype(dtype)
        nbytes = int(n) * dtype.itemsize
        if self._mem is None or self._mem.size < nbytes:
            self._mem = None  # the old pages go before the new ones come
            self._mem = _alloc(max(nbytes, 8), np.uint8)
        return self._mem[:nbytes].view(dtype)


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


def keys_of(raw, bits: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """``(p, keys)``: ``raw`` clipped to [0, 1] (``-0.0`` made ``+0.0``) as float64 (``bits=64``)
    or float32 (``bits=32``: ``raw`` must hold float32 values, as a float32 or float16 map does;
    ValueError otherwise) and its bits as unsigned integers of that width."""
    raw = np.asarray(raw)
    p = np.array(raw, dtype=_FLOAT[bits], copy=True).ravel()
    if bits == 32 and raw.dtype not in (np.dtype(np.float32), np.dtype(np.float16)) and \
            not np.array_equal(p, raw.ravel(), equal_nan=True):
        raise ValueError(f"scores of dtype {raw.dtype} are not all float32 values: rank them on float64 bits")
    np.clip(p, 0.0, 1.0, out=p)
    p += 0.0
    return p, p.view(_UINT[bits])


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

    def __init__(self, n_pos, n_neg, keep_rows, bits, auc_only=False):
        self.n_pos, self.n_neg = int(n_pos), int(n_neg)
        self.auc_only = auc_only
        self.ut, self.ft = _UINT[bits], _FLOAT[bits]
        self.wins2 = 0
        self.acc = np.zeros(2)
        self.best = np.full(1, -1.0)
        self.best_key = np.zeros(1, self.ut)
        self.rows = [] if keep_rows else None

    def rows_(self, keys, a, b, t0, f0):
        from segscore.kernels.exactrank import row_terms

        if keys.size:
            self.wins2 += int(row_terms(keys, a, b, t0, f0, self.n_pos, self.n_neg, self.acc, self.best,
                                        self.best_key))
            if self.rows is not None:
                self.rows.append((keys.view(self.ft).astype(np.float64), a.copy(), b.copy()))

    def collected(self, packed, lo, hi, t0, f0, need=None):
        """Terms of sorted gathered pixels inside the regions ``lo``..``hi`` (others skipped);
        ``need`` (65,536 flags of the buckets holding the regions) when pixels outside them
        were gathered too and rows are kept."""
        from segscore.kernels.exactrank import collected_terms, collected_wins

        if packed.size and self.auc_only:
            self.wins2 += int(collected_wins(packed, lo, hi, f0, self.n_neg))
        elif packed.size:
            self.wins2 += int(collected_terms(packed, lo, hi, t0, f0, self.n_pos, self.n_neg, self.acc, self.best,
                                              self.best_key))
            if self.rows is not None:
                values = (packed >> self.ut(1)).view(self.ft).astype(np.float64)
                if need is not None:
                    inside = need[np.minimum((values * 65536).astype(np.int64), 65535)] != 0
                    packed, values = packed[inside], values[inside]
                if packed.size:
                    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
                    pos = np.add.reduceat((packed & self.ut(1)).astype(np.int64), starts)
                    n = np.diff(np.r_[starts, values.size])
                    self.rows.append((values[starts], pos, n - pos))

    def best_threshold(self) -> float:
        return float(self.best_key.view(self.ft)[0])


#: a bucket holding more regions than this gets a finer index (region_pass's ``fine``)
_FINE_FROM = 8


def _bucket_index(rlo, rhi=None):
    """``(first, fine_off, fine_lo, fine_shift, fine_n, fine)``, region_pass's index of the regions
    (sorted by key; uint64 keys of float64 scores or uint32 keys of float32 ones): those inside
    first-pass bucket ``b`` are ``first[b]:first[b + 1]``, and a bucket holding more than
    ``_FINE_FROM`` of them gets about four slots per region (at most 65,536 slots), each slot
    knowing the few regions that can hold its keys."""
    from segscore.kernels.exactrank import N_BUCKETS

    ft = np.float32 if rlo.dtype == np.uint32 else np.float64
    bucket = np.minimum((rlo.view(ft).astype(np.float64) * N_BUCKETS).astype(np.int64), N_BUCKETS - 1)
    first = np.searchsorted(bucket, np.arange(N_BUCKETS + 1), side="left").astype(np.int64)
    fine_off = np.full(N_BUCKETS, -1, np.int64)
    fine_lo = np.zeros(N_BUCKETS, rlo.dtype)
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
            parts.append(a + np.searchsorted(rhi[a:z].astype(np.uint64), starts, side="left").astype(np.int64))
            fine_off[b], fine_lo[b], fine_shift[b], fine_n[b] = off, lo, sh, n
            off += n + 1
    fine = np.concatenate(parts) if parts else np.zeros(1, np.int64)
    return first, fine_off, fine_lo, fine_shift, fine_n, fine


def _above(a):
    """Exclusive suffix sums: what lies above each of ascending rows."""
    s = np.cumsum(a[::-1])[::-1]
    return np.r_[s[1:], 0].astype(np.int64)


def _sort_packed(packed, bits, threads=None):
    """Sort gathered ``key << 1 | class`` in place, on two threads where there are two and many
    pixels (split at a sampled median by :func:`segscore.kernels.exactrank.partition`; the result
    is the one sorted array whatever the threads). Sorted as floats: these bit patterns (top bit
    clear, below the exponent of inf and NaN) order as floats exactly as they order as integers,
    and NumPy sorts floats faster (and releases the GIL while it sorts)."""
    from segscore.engine.executor import default_workers, side_by_side

    ft = _FLOAT[bits]
    workers = default_workers() if threads is None else int(threads)
    if packed.size < (1 << 20) or workers < 2:
        packed.view(ft).sort()
        return
    from segscore.kernels.exactrank import partition

    from segscore.kernels.exactrank import rotate

    step = packed.size // 1024
    pivot = np.sort(packed[::step])[packed[::step].size // 2]
    # each half partitioned on its own thread, then the middle rotated: [lo1 hi1 lo2 hi2] -> [lo1 lo2 hi1 hi2]
    half = packed.size // 2
    k1, k2 = side_by_side([lambda: partition(packed[:half], pivot), lambda: partition(packed[half:], pivot)],
                          threads=2)
    rotate(packed[k1:half + k2], half - k1)
    k = k1 + k2
    lo, hi = packed[:k].view(ft), packed[k:].view(ft)
    side_by_side([lo.sort, hi.sort], threads=2)


#: a first pass's gathered pieces when they outgrew the budget
_OVERFLOW = "overflow"
#: a first pass whose tiles wrote their scores into the buffer themselves (:meth:`ExactPass.place`)
_PLACED = "placed"
#: a first pass done by the caller, its scores gathered and sorted already (:meth:`ExactPass.adopt_sorted`)
_SORTED = "sorted"


#: scores whose class bits :func:`sorted_threshold_counts` reads in one NumPy call (4 MiB of bytes)
_COUNT_PX = 1 << 22


def sorted_threshold_counts(packed, thresholds) -> np.ndarray:
    """``tcount`` of a first pass (``(2, t + 1)`` int64: scores of class ``c`` with exactly ``j`` of
    the thresholds ``<= p``, as :func:`segscore.kernels.exactrank.first_pass` counts them) read from
    gathered float64 scores ``key << 1 | class`` sorted ascending (uint64), in NumPy alone: each
    threshold's place by a binary search, and each stretch's positives the low bits summed.

    NumPy releases the GIL in each of these calls, so a thread can count while another runs Python
    (:func:`segscore.ink.targets.uniform_presorted`, the uniform floor ranked before numba loads).
    ``thresholds``: as :class:`ExactPass` takes them (made unique and sorted)."""
    import sys

    packed = np.ascontiguousarray(packed, np.uint64)
    thr = np.unique(np.asarray(thresholds, np.float64))
    # p >= t exactly when the key of p is >= the key of t (p in [0, 1]; a threshold <= 0 holds every p)
    tkeys = np.where(thr > 0, thr, 0.0).view(np.uint64) << np.uint64(1)
    bounds = np.r_[0, np.searchsorted(packed, tkeys, side="left"), packed.size].astype(np.int64)
    lens = np.diff(bounds)
    pos = np.zeros(thr.size + 1, np.int64)
    if packed.size:  # the class bits by pieces of at most _COUNT_PX (a sum would cast them all to int64 first)
        low = packed.view(np.uint8)[(0 if sys.byteorder == "little" else 7)::8]
        tmp = np.empty(min(_COUNT_PX, packed.size), np.uint8)
        cuts = np.union1d(bounds, np.arange(0, packed.size, _COUNT_PX))
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            if b > a:
                j = int(np.searchsorted(bounds, a, side="right")) - 1
                pos[j] += np.count_nonzero(np.bitwise_and(low[a:b], np.uint8(1), out=tmp[:b - a]))
    return np.stack([lens - pos, pos])


class ExactPass:
    """One exact ranking (:func:`rank_exact`), its first pass done by the caller's own pass.

    ``first(raw, cls, whole=None)`` is the first pass's work on one tile (its partial result),
    ``merge(x, y)`` adds two partials in window order, and ``finish(total, read, windows)`` ranks
    from the merged partial, reading the map again only when the first pass could not gather it.
    A family whose own pass reads the map anyway (``columns``: row profiles) calls ``first`` on the
    same tiles instead of reading the map twice. Options as :func:`rank_exact`.

    A caller that knows how many scores each window holds (a target's codes, a column target's
    boxes) places the first pass instead: :meth:`place` with those counts, then each tile's
    kernel (:func:`segscore.kernels.exactrank.gather_codes`, ``gather_boxes``) writes its scores
    straight into :meth:`slot` of its tile, and returns :meth:`placed`: no piece is copied, and
    the main thread does not append the tiles' pieces one after the other. ``scratch`` (a
    :class:`Scratch`) lends the buffer; ``auc_only`` computes ROC-AUC alone (``average_precision``
    and ``best_f1`` stay None).
    """

    def __init__(self, *, thresholds, dtype=None, budget_px=None, expected_px=None, keep_rows=False,
                 executor=None, scratch=None, auc_only=False):
        from segscore.kernels.exactrank import N_CELLS

        self.bits = 64 if dtype is None else key_bits(dtype)
        self.ut, self.ft = _UINT[self.bits], _FLOAT[self.bits]
        budget_px = DEFAULT_BUDGET_BYTES // (self.bits // 8) if budget_px is None else int(budget_px)
        if budget_px < 1:
            raise ValueError(f"budget_px {budget_px}: must be >= 1")
        self.budget_px = budget_px
        self.keep_rows = keep_rows
        self.thr = np.unique(np.asarray(thresholds, np.float64))
        self.below = np.searchsorted(self.thr, np.arange(N_CELLS) / N_CELLS, side="right").astype(np.int64)
        self.local = executor is None or isinstance(executor, str) and executor in ("threads", "synchronous")
        # gather in the first pass unless the map is known not to fit; else count into buckets
        self.counting = expected_px is not None and int(expected_px) > budget_px
        self.gathering = not self.counting  # turns off when the gathered scores outgrow the budget
        self._buf = None  # this process's buffer of gathered scores (threads), filled in window order
        self._filled = 0
        self._off = None  # a placed pass's offsets of the windows in the buffer
        self.scratch = scratch
        self.auc_only = auc_only
        self._no_buckets = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, self.ut), np.zeros(0, self.ut))

    # partials: gathering [tcount, lo, hi, bad, pieces or _OVERFLOW, n gathered];
    # counting [tcount, lo, hi, bad, pos, neg, kmin, kmax]
    def empty(self, counting=None):
        from segscore.kernels.exactrank import N_BUCKETS

        head = [np.zeros((2, self.thr.size + 1), np.int64), math.inf, -math.inf, 0]
        if not (self.counting if counting is None else counting):
            return head + [[], 0]
        maxu = np.iinfo(self.ut).max
        return head + [np.zeros(N_BUCKETS, np.int64), np.zeros(N_BUCKETS, np.int64), np.full(N_BUCKETS, maxu, self.ut),
                       np.zeros(N_BUCKETS, self.ut)]

    def first(self, raw, cls, whole=None):
        """The first pass over one tile: ``raw`` (1D, any real dtype; clipped to [0, 1]), ``cls``
        (1D uint8, 1 positive) and ``whole``, the values whose range is reported (default ``raw``)."""
        return self._first(raw, cls, whole, counting=self.counting)

    def _first(self, raw, cls, whole=None, *, counting):
        from segscore.kernels.exactrank import first_pass

        part = self.empty(counting)
        part[1], part[2], part[3] = _raw_stats(raw if whole is None else whole)
        raw = np.asarray(raw)
        if part[3] or not raw.size:
            return part
        p, keys = keys_of(raw, self.bits)
        cls = np.ascontiguousarray(cls, np.uint8).ravel()
        gather = not counting and self.gathering and p.size <= self.budget_px
        out = np.empty(p.size if gather else 0, self.ut)
        buckets = part[4:] if counting else self._no_buckets
        first_pass(keys, p, cls, self.thr, self.below, part[0], *buckets, out)
        if gather:
            part[4], part[5] = [out], out.size
        elif not counting:  # no use gathering: the scores outgrew the budget
            self.gathering = False
            part[4] = _OVERFLOW
        return part

    def place(self, counts) -> bool:
        """Place the first pass: ``counts[i]`` scores in window ``i``. True when they fit the
        budget in this process (then :meth:`slot` gives each tile its part of the buffer); False
        (the map is larger than the budget, or the pass runs on dask): use :meth:`first`."""
        counts = np.asarray(counts, np.int64)
        total = int(counts.sum())
        if self.counting or not self.local or total > self.budget_px:
            return False
        self._off = np.r_[0, np.cumsum(counts)].astype(np.int64)
        self._buf = self.scratch.take(total, self.ut) if self.scratch is not None else _alloc(total, self.ut)
        self._filled = total
        return True

    def adopt_sorted(self, packed, tcount, lo, hi):
        """The first pass done by the caller (float64 scores only): ``packed``, every score as
        ``key << 1 | class`` (uint64) sorted ascending, becomes the pass's buffer; ``tcount``
        (:func:`sorted_threshold_counts`) and ``(lo, hi)``, the range of the map's values (all
        finite), are the rest of its partial, which :meth:`finish` ranks without sorting again.
        ValueError when the keys are not float64's, the counts do not match or the scores outgrow
        the budget."""
        tcount = np.asarray(tcount, np.int64)
        if self.bits != 64 or packed.dtype != np.uint64:
            raise ValueError("adopt_sorted takes float64 scores (uint64 keys) only")
        if tcount.shape != (2, self.thr.size + 1) or int(tcount.sum()) != packed.size:
            raise ValueError(f"tcount of shape {tcount.shape} summing to {int(tcount.sum())} does not count "
                             f"{packed.size} scores on {self.thr.size} thresholds")
        if packed.size > self.budget_px:
            raise ValueError(f"{packed.size} scores outgrow the budget of {self.budget_px}")
        self._buf, self._filled, self._off = packed, packed.size, None
        return [tcount, float(lo), float(hi), 0, _SORTED, int(packed.size)]

    def slot(self, index: int) -> np.ndarray:
        """Where tile ``index`` of a placed pass writes its scores."""
        return self._buf[self._off[index]:self._off[index + 1]]

    def placed(self, index, tcount, stats, written):
        """The partial result of placed tile ``index``: its threshold counts ``(2, t + 1)``, the
        ``(lo, hi, nonfinite)`` of its values and how many scores its kernel found (RuntimeError
        when that is not its count, unless non-finite values, refused later, were skipped)."""
        if int(stats[2]) == 0 and int(written) != int(self._off[index + 1] - self._off[index]):
            raise RuntimeError(f"tile {index} holds {int(written)} scores where "
                               f"{int(self._off[index + 1] - self._off[index])} were counted")
        return [tcount, float(stats[0]), float(stats[1]), int(stats[2]), _PLACED, int(written)]

    def merge(self, x, y):
        """Add partial ``y`` (the later windows) to ``x``."""
        x[0] += y[0]
        x[1], x[2], x[3] = min(x[1], y[1]), max(x[2], y[2]), x[3] + y[3]
        if x[4] is _PLACED:
            x[5] += y[5]
        elif len(x) == 8:  # counting
            x[4] += y[4]
            x[5] += y[5]
            np.minimum(x[6], y[6], out=x[6])
            np.maximum(x[7], y[7], out=x[7])
        elif x[4] is _OVERFLOW or y[4] is _OVERFLOW or x[5] + y[5] > self.budget_px:
            self._overflow()
            x[4], x[5] = _OVERFLOW, 0
        else:
            x[4] = x[4] + y[4]
            x[5] += y[5]
            if self.local:
                self._drain(x[4])
        return x

    def _overflow(self):
        self.gathering = False
        self._buf = None
        self._filled = 0
        self._off = None

    def _drain(self, pieces):
        """Copy gathered pieces into this process's buffer (threads: partials stay small)."""
        if not pieces:
            return
        if self._buf is None:  # pages are touched only as they are filled
            self._buf = _alloc(self.budget_px, self.ut)
        for piece in pieces:
            end = self._filled + piece.size
            self._buf[self._filled:end] = piece
            self._filled = end
        pieces.clear()

    def _gathered(self, pieces):
        """Every score of the first pass, gathered (a view of this process's buffer)."""
        if self.local:
            self._drain(pieces)
            buf = self._buf if self._buf is not None else np.zeros(0, self.ut)
            return buf[:self._filled]
        return np.concatenate(pieces) if pieces else np.zeros(0, self.ut)

    def finish(self, total, read, windows, *, executor=None, threads=None, check=None) -> ExactRanking:
        """The ranking from the merged first-pass partial ``total`` (None: no window); ``read``
        and ``windows`` serve the later passes (:func:`rank_exact`)."""
        try:
            return self._finish(self.empty() if total is None else total, read, list(windows), executor, threads,
                                check)
        finally:
            self._overflow()  # the buffer is released whatever happens

    def _finish(self, total, read, windows, executor, threads, check):
        from segscore.engine import reduce
        from segscore.kernels.exactrank import COLLECT, N_BUCKETS, SPLIT, region_pass, sorted_buckets

        bits, ut, budget_px = self.bits, self.ut, self.budget_px
        tcount, lo, hi, bad = total[:4]
        if check is not None:
            check(lo, hi, bad)
        elif bad:
            raise ScoreError(f"the scores hold {bad} NaN or infinite values; give finite scores")
        n_pos, n_neg = int(tcount[1].sum()), int(tcount[0].sum())
        tp_ge = np.cumsum(tcount[1, ::-1])[::-1][1:].astype(np.int64)
        fp_ge = np.cumsum(tcount[0, ::-1])[::-1][1:].astype(np.int64)
        out = ExactRanking(n_pos, n_neg, self.thr, tp_ge, fp_ge, None, None, None, None, lo, hi, bad, passes=1)
        if n_pos == 0 or n_neg == 0:
            return out
        if 2.0 * n_pos * n_neg >= 2.0**62:
            raise ScoreError(f"too many pixels for an exact int64 AUC (positives x negatives = {n_pos * n_neg:.3g}, "
                             "needs < 2**61); score a smaller region")
        engine = {"executor": executor, "threads": threads}
        gathered = None
        if len(total) == 8:
            pos, neg, kmin, kmax = total[4:]
        elif total[4] is _OVERFLOW:  # more scores than the budget: count them into buckets in a pass of its own
            self._overflow()
            counted = reduce(read, lambda tile, *r: self._first(*r, counting=True), self.merge, windows=windows,
                             **engine)
            out.passes += 1
            pos, neg, kmin, kmax = counted[4:]
        else:  # every score gathered: sort them and read the buckets from them
            if total[4] is _PLACED or total[4] is _SORTED:
                gathered = self._buf
                if total[5] != gathered.size:
                    raise RuntimeError(f"the first pass wrote {total[5]} scores where {gathered.size} were counted")
            else:
                gathered = self._gathered(total[4])
            if gathered.size != n_pos + n_neg:
                raise RuntimeError("the first pass gathered a different number of scores than it counted")
            if total[4] is not _SORTED:
                _sort_packed(gathered, bits, threads if self.local else 1)
            out.collected_px = out.max_pass_px = int(gathered.size)
            if self.auc_only and not self.keep_rows:  # ROC-AUC alone: one sweep, no buckets nor regions
                from segscore.kernels.exactrank import sorted_wins

                out.roc_auc = int(sorted_wins(gathered)) / (2.0 * n_pos * n_neg)
                return out
            pos, neg = np.zeros(N_BUCKETS, np.int64), np.zeros(N_BUCKETS, np.int64)
            kmin, kmax = np.full(N_BUCKETS, np.iinfo(ut).max, ut), np.zeros(N_BUCKETS, ut)
            starts = (np.arange(N_BUCKETS + 1) / N_BUCKETS).astype(self.ft).view(ut).copy()
            starts[-1] = np.iinfo(ut).max  # 1.0 is bucket 65535's
            sorted_buckets(gathered, starts, pos, neg, kmin, kmax)
            out.collected_px = out.max_pass_px = int(gathered.size)

        terms = _Terms(n_pos, n_neg, self.keep_rows, bits, self.auc_only)
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
            if gathered is not None:  # every score is sorted in memory: the other buckets' are skipped
                need = None
                if self.keep_rows:
                    need = np.zeros(N_BUCKETS, np.uint8)
                    need[occ[todo]] = 1
                terms.collected(gathered, lo_k[todo], hi_k[todo], t0[todo], f0[todo], need)
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
                    width = int(hi_k[r]) - int(lo_k[r])
                    s = max(0, width.bit_length() - sub_bits)
                    shift[i], base[i], used[i] = s, nxt, (width >> s) + 1
                    nxt += used[i]
            rlo, rhi, state = lo_k[active], hi_k[active], state_of[active]
            n_sub = max(nxt, 1)
            index = _bucket_index(rlo, rhi)
            maxu = np.iinfo(ut).max

            def later(tile, raw, cls, *_, rlo=rlo, rhi=rhi, state=state, shift=shift, base=base, n_sub=n_sub,
                      index=index):
                p, keys = keys_of(raw, bits)
                sp = np.zeros(n_sub, np.int64)
                sn = np.zeros(n_sub, np.int64)
                smin = np.full(n_sub, maxu, ut)
                smax = np.zeros(n_sub, ut)
                buf = np.empty(keys.size, ut)
                k = region_pass(keys, p, np.ascontiguousarray(cls, np.uint8).ravel(), *index, rlo, rhi, state, shift,
                                base, sp, sn, smin, smax, buf)
                return [sp, sn, smin, smax, [buf[:k].copy()] if k else []]

            n_take = int((a[take] + b[take]).sum())
            # in this process, each tile's scores go straight into one buffer as they are folded in
            packed = _alloc(n_take, ut) if self.local else None
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
                if self.local:
                    drain(x[4])
                return x

            got = reduce(read, later, merge_later, windows=windows, **engine)
            out.passes += 1
            sp, sn, smin, smax, parts = got
            if take.size:
                if self.local:
                    drain(parts)
                else:
                    packed = np.concatenate(parts) if parts else np.zeros(0, ut)
                    del parts[:]
                if (filled[0] if self.local else packed.size) != n_take:
                    raise RuntimeError("the map changed between passes (a collected region's count differs)")
                _sort_packed(packed, bits, threads if self.local else 1)
                terms.collected(packed, lo_k[take], hi_k[take], t0[take], f0[take])
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
        if not self.auc_only:
            out.average_precision = float(max(0.0, terms.acc[0]))
            out.best_f1 = float(terms.best[0])
            out.best_threshold = terms.best_threshold()
        if self.keep_rows:
            parts = terms.rows
            values = np.concatenate([r[0] for r in parts])
            order = np.argsort(values, kind="stable")
            out.rows = (values[order], np.concatenate([r[1] for r in parts])[order],
                        np.concatenate([r[2] for r in parts])[order])
        return out


def rank_exact(read, windows, *, thresholds, executor=None, threads=None, budget_px: int | None = None,
               keep_rows: bool = False, check=None, dtype=None, expected_px: int | None = None, scratch=None,
               placed=None, presorted=None) -> ExactRanking:
    """Rank the scores ``read(window)`` gives for each of ``windows`` exactly (see the module).

    ``read(window) -> (raw, cls)`` or ``(raw, cls, whole)``: the window's scored values (1D, any
    real dtype; the pass clips them to [0, 1] as ScrollGT does), their classes (1D uint8, 1
    positive) and, optionally, the values whose range the first pass reports (the whole window,
    scored or not; default ``raw``). It is called once per window and pass, and must give the
    same values each time. ``thresholds``: the F1
    sweep's, counted with ``p >= t``. ``check(lo, hi, nonfinite)`` sees the raw values' range
    after the first pass and may raise; without it a NaN or infinite value raises ScoreError.
    ``keep_rows`` keeps every row for curves (memory then grows with the distinct scores).
    ``dtype``: the map's (float32 and float16 maps are ranked on float32 bits; None: float64).
    ``budget_px``: scores gathered per pass (default :data:`DEFAULT_BUDGET_BYTES` of them).
    ``expected_px``: how many scores ``read`` gives in all, when known: above the budget, the
    first pass does not try to gather them. ``scratch``: a :class:`Scratch` lending the buffer.
    ``placed``: ``(counts, read_placed, task)``, a first pass placed when it fits the budget
    (:meth:`ExactPass.place`: ``counts[i]`` scores in window ``i``; ``task(ep, tile,
    *read_placed(window))`` writes them into ``ep.slot(tile.index)`` and returns
    ``ep.placed(...)``); else, and for any later pass, ``read``. ``presorted``: ``(packed, tcount,
    lo, hi)``, a first pass of float64 scores the caller did itself (:meth:`ExactPass.adopt_sorted`:
    every score gathered and sorted, the threshold counts and the values' range); ``read`` then serves
    no pass (``check`` still sees the range). Engine options as :func:`segscore.engine.reduce`.
    """
    from segscore.engine import reduce

    ep = ExactPass(thresholds=thresholds, dtype=dtype, budget_px=budget_px, expected_px=expected_px,
                   keep_rows=keep_rows, executor=executor, scratch=scratch)
    windows = list(windows)
    engine = {"executor": executor, "threads": threads}
    if presorted is not None:
        total = ep.adopt_sorted(*presorted)
    elif placed is not None and ep.place(placed[0]):
        task = placed[2]
        total = reduce(placed[1], lambda tile, *r: task(ep, tile, *r), ep.merge, windows=windows, **engine)
    else:
        total = reduce(read, lambda tile, *r: ep.first(*r), ep.merge, windows=windows, **engine)
    return ep.finish(total, read, windows, check=check, **engine)


def warm_kernels(thresholds=(0.5,)) -> None:
    """Load every kernel of the exact ranking, for float64 and float32 maps (64- and 32-bit keys):
    a first pass, a collecting pass, both kinds of rows. The families' warm-ups call it."""
    cls = np.array([0, 1, 0, 1], np.uint8)
    thresholds = np.asarray(thresholds, np.float64)
    for dtype, eps in ((np.float64, 1e-12), (np.float32, 1e-6)):
        p = np.array([0.1, 0.1 + eps, 0.1 + 2 * eps, 0.9], dtype)
        rank_exact(lambda w, p=p: (p, cls), [(slice(0, 1),)], thresholds=thresholds, executor="synchronous",
                   dtype=None if dtype == np.float64 else dtype)
