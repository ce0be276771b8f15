"""Sparse contingency table of two label images, in one pass, without a dense matrix.

``contingency(truth, pred)`` walks the pixels once (any shape, flattened in C order) and
returns, for arbitrary non-negative integer ids up to uint64:

* the ids present in ``truth`` (0 excluded) and their areas,
* the ids present in ``pred`` (0 excluded) and their areas,
* every overlapping pair ``(truth index, pred index)`` with its pixel count,
* each id's first pixel (its smallest flat index in C order): where an object is, which no
  relabelling changes, so ties can be broken by it.

Ids are kept in open-addressing hash tables keyed by the raw id, and runs of equal
``(truth, pred)`` pixels (the common case in a label image) cost one comparison each, so
the work is one pass over the pixels plus one hash probe per run. Memory is proportional
to the number of ids and overlapping pairs, never to ``max_label`` or its square.

The table is additive: :func:`merge_tables` adds tables computed on disjoint tiles.
Arrays in, arrays out; :mod:`segscore.objects.contingency` checks the inputs.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit

@jit
def _slot(key, mask):
    # Fibonacci hashing; everything stays uint64 (mixing int64 would promote to float64)
    h = key * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    return h & mask


@jit
def _grow_ids(keys, vals):
    cap = keys.shape[0] * 2
    nk = np.zeros(cap, dtype=np.uint64)
    nv = np.zeros(cap, dtype=np.int64)
    mask = np.uint64(cap - 1)
    for i in range(keys.shape[0]):
        k = keys[i]
        if k != np.uint64(0):
            s = _slot(k, mask)
            while nk[s] != np.uint64(0):
                s = (s + np.uint64(1)) & mask
            nk[s] = k
            nv[s] = vals[i]
    return nk, nv


@jit
def _grow_pairs(keys, vals):
    cap = keys.shape[0] * 2
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    nk = np.full(cap, empty, dtype=np.uint64)
    nv = np.zeros(cap, dtype=np.int64)
    mask = np.uint64(cap - 1)
    for i in range(keys.shape[0]):
        k = keys[i]
        if k != empty:
            s = _slot(k, mask)
            while nk[s] != empty:
                s = (s + np.uint64(1)) & mask
            nk[s] = k
            nv[s] = vals[i]
    return nk, nv


@jit
def _id_index(keys, key):
    """Slot of ``key`` (inserting it) in an id table; returns (slot, inserted)."""
    mask = np.uint64(keys.shape[0] - 1)
    s = _slot(key, mask)
    while True:
        k = keys[s]
        if k == key:
            return s, False
        if k == np.uint64(0):
            keys[s] = key
            return s, True
        s = (s + np.uint64(1)) & mask


@jit
def _add_id(keys, dense, ids, first, count, key, where):
    """Index of id ``key``, inserted with first pixel ``where`` if new; ``count`` (1,) holds the
    number of ids so far."""
    s, new = _id_index(keys, key)
    if new:
        dense[s] = count[0]
        ids[count[0]] = key
        first[count[0]] = where
        count[0] += 1
    return dense[s]


@jit
def _pass(t, p, offset, i, tk, ti, t_ids, t_area, t_first, pk, pi, p_ids, p_area, p_first, qk, qv, counts):
    """Add the runs of ``t``/``p`` from flat index ``i`` on to the tables until one of them
    could overflow with the next run; returns where it stopped (``t.shape[0]`` when done).

    ``counts`` (3,) int64 holds the numbers of truth ids, prediction ids and pairs. No array
    is reassigned here (the caller grows them between passes), so the loop keeps no
    reference counts (five times faster than reassigning them inside the loop).
    """
    n = t.shape[0]
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    zero = np.uint64(0)
    nt = counts[0:1]
    npr = counts[1:2]
    last_a = zero  # the previous run's ids and their indices: most runs repeat one of them
    last_ia = -1
    last_b = zero
    last_ib = -1
    qmask = np.uint64(qk.shape[0] - 1)
    while i < n:
        if (2 * (nt[0] + 1) > tk.shape[0] or nt[0] == t_ids.shape[0] or 2 * (npr[0] + 1) > pk.shape[0]
                or npr[0] == p_ids.shape[0] or 2 * (counts[2] + 1) > qk.shape[0]):
            return i
        a = np.uint64(t[i])
        b = np.uint64(p[i])
        j = i + 1
        while j < n and np.uint64(t[j]) == a and np.uint64(p[j]) == b:
            j += 1
        run = j - i
        ia = -1
        ib = -1
        if a != zero:
            if a != last_a:
                last_a, last_ia = a, _add_id(tk, ti, t_ids, t_first, nt, a, offset + i)
            ia = last_ia
            t_area[ia] += run
        if b != zero:
            if b != last_b:
                last_b, last_ib = b, _add_id(pk, pi, p_ids, p_first, npr, b, offset + i)
            ib = last_ib
            p_area[ib] += run
        i = j
        if ia >= 0 and ib >= 0:
            key = (np.uint64(ia) << np.uint64(32)) | np.uint64(ib)
            s = _slot(key, qmask)
            while True:
                k = qk[s]
                if k == key:
                    break
                if k == empty:
                    qk[s] = key
                    counts[2] += 1
                    break
                s = (s + np.uint64(1)) & qmask
            qv[s] += run
    return i


@jit
def _longer(a):
    out = np.zeros(2 * a.shape[0], a.dtype)
    out[:a.shape[0]] = a
    return out


@jit
def _contingency_flat(t, p, offset):
    """One pass over flattened ``t`` and ``p`` (same length, integer dtypes).

    Returns ``(t_ids, t_area, p_ids, p_area, pair_t, pair_p, pair_n, t_first, p_first)``: ids
    as uint64 in first-seen order, areas as int64, pairs as int64 indices into the id arrays,
    and each id's first flat index plus ``offset`` (int64).
    """
    n = t.shape[0]
    cap = 1024
    # id tables: key (0 = empty slot) -> dense index stored in ti / pi
    tk = np.zeros(cap, dtype=np.uint64)
    ti = np.zeros(cap, dtype=np.int64)
    pk = np.zeros(cap, dtype=np.uint64)
    pi = np.zeros(cap, dtype=np.int64)
    t_ids = np.zeros(64, dtype=np.uint64)
    t_area = np.zeros(64, dtype=np.int64)
    t_first = np.zeros(64, dtype=np.int64)
    p_ids = np.zeros(64, dtype=np.uint64)
    p_area = np.zeros(64, dtype=np.int64)
    p_first = np.zeros(64, dtype=np.int64)
    # pair table: key (t_index << 32 | p_index) -> count
    empty = np.uint64(0xFFFFFFFFFFFFFFFF)
    qk = np.full(cap, empty, dtype=np.uint64)
    qv = np.zeros(cap, dtype=np.int64)
    counts = np.zeros(3, np.int64)  # truth ids, prediction ids, pairs
    i = np.int64(0)  # not a literal 0: _pass is compiled once, for int64 (not also for Literal[int](0))
    while True:
        i = _pass(t, p, offset, i, tk, ti, t_ids, t_area, t_first, pk, pi, p_ids, p_area, p_first, qk, qv, counts)
        if i >= n:
            break
        nt, npr, nq = counts[0], counts[1], counts[2]
        if 2 * (nt + 1) > tk.shape[0]:
            tk, ti = _grow_ids(tk, ti)
        if nt == t_ids.shape[0]:
            t_ids, t_area, t_first = _longer(t_ids), _longer(t_area), _longer(t_first)
        if 2 * (npr + 1) > pk.shape[0]:
            pk, pi = _grow_ids(pk, pi)
        if npr == p_ids.shape[0]:
            p_ids, p_area, p_first = _longer(p_ids), _longer(p_area), _longer(p_first)
        if 2 * (nq + 1) > qk.shape[0]:
            qk, qv = _grow_pairs(qk, qv)
    nt, npr, nq = counts[0], counts[1], counts[2]
    pair_t = np.empty(nq, dtype=np.int64)
    pair_p = np.empty(nq, dtype=np.int64)
    pair_n = np.empty(nq, dtype=np.int64)
    m = 0
    low = np.uint64(0xFFFFFFFF)
    for s in range(qk.shape[0]):
        k = qk[s]
        if k != empty:
            pair_t[m] = np.int64(k >> np.uint64(32))
            pair_p[m] = np.int64(k & low)
            pair_n[m] = qv[s]
            m += 1
    return (t_ids[:nt].copy(), t_area[:nt].copy(), p_ids[:npr].copy(), p_area[:npr].copy(), pair_t, pair_p, pair_n,
            t_first[:nt].copy(), p_first[:npr].copy())


def contingency(truth: np.ndarray, pred: np.ndarray, offset: int = 0):
    """The sparse contingency table of two integer label arrays of the same shape.

    Parameters
    ----------
    truth, pred : ndarray of a non-negative integer dtype (any shape, the same for both)
        0 is background; any other value is an object id (non-consecutive, up to uint64).
    offset : the flat index of the arrays' first pixel in the whole image (a tile's start)

    Returns
    -------
    t_ids : (n_t,) uint64, sorted ascending;  t_area : (n_t,) int64
    p_ids : (n_p,) uint64, sorted ascending;  p_area : (n_p,) int64
    pair_t, pair_p : (n_pairs,) int64 indices into ``t_ids`` / ``p_ids``, sorted by
        (pair_t, pair_p);  pair_n : (n_pairs,) int64 overlapping pixels (> 0)
    t_first, p_first : (n_t,), (n_p,) int64: each id's first flat index (plus ``offset``)

    Notes
    -----
    Does not check dtypes, signs or shapes: the caller does (negative ids of a signed dtype
    would be read as huge unsigned ids).
    """
    t = np.ascontiguousarray(truth).reshape(-1)
    p = np.ascontiguousarray(pred).reshape(-1)
    return _sorted_table(*_contingency_flat(t, p, np.int64(offset)))


def _sorted_table(t_ids, t_area, p_ids, p_area, pair_t, pair_p, pair_n, t_first, p_first):
    to = np.argsort(t_ids, kind="stable")
    po = np.argsort(p_ids, kind="stable")
    t_rank = np.empty_like(to)
    t_rank[to] = np.arange(to.size)
    p_rank = np.empty_like(po)
    p_rank[po] = np.arange(po.size)
    pt, pp = t_rank[pair_t], p_rank[pair_p]
    order = np.lexsort((pp, pt))
    return (t_ids[to], t_area[to], p_ids[po], p_area[po], pt[order], pp[order], pair_n[order], t_first[to],
            p_first[po])


def merge_tables(tables):
    """Add contingency tables computed on disjoint tiles of the same pair of images.

    ``tables`` is an iterable of 9-tuples as :func:`contingency` returns (each tile's with its
    own ``offset``); the result has the same form, sorted, with each id's first pixel the
    smallest over the tiles. Tile tables are small (ids and pairs), so this is NumPy.
    """
    tables = list(tables)
    if not tables:
        e = np.zeros(0, dtype=np.int64)
        return (np.zeros(0, np.uint64), e, np.zeros(0, np.uint64), e.copy(), e.copy(), e.copy(), e.copy(), e.copy(),
                e.copy())
    t_all = np.concatenate([tb[0] for tb in tables]).astype(np.uint64)
    p_all = np.concatenate([tb[2] for tb in tables]).astype(np.uint64)
    t_ids, t_inv = np.unique(t_all, return_inverse=True)
    p_ids, p_inv = np.unique(p_all, return_inverse=True)
    t_area = np.zeros(t_ids.size, dtype=np.int64)
    p_area = np.zeros(p_ids.size, dtype=np.int64)
    np.add.at(t_area, t_inv, np.concatenate([tb[1] for tb in tables]).astype(np.int64))
    np.add.at(p_area, p_inv, np.concatenate([tb[3] for tb in tables]).astype(np.int64))
    big = np.iinfo(np.int64).max
    t_first = np.full(t_ids.size, big, dtype=np.int64)
    p_first = np.full(p_ids.size, big, dtype=np.int64)
    np.minimum.at(t_first, t_inv, np.concatenate([tb[7] for tb in tables]).astype(np.int64))
    np.minimum.at(p_first, p_inv, np.concatenate([tb[8] for tb in tables]).astype(np.int64))
    pt, pp, pn = [], [], []
    t_off = p_off = 0
    for tb in tables:
        pt.append(t_inv[t_off + tb[4]])
        pp.append(p_inv[p_off + tb[5]])
        pn.append(tb[6].astype(np.int64))
        t_off += tb[0].size
        p_off += tb[2].size
    pt = np.concatenate(pt).astype(np.int64)
    pp = np.concatenate(pp).astype(np.int64)
    pn = np.concatenate(pn)
    key = pt * max(p_ids.size, 1) + pp
    ukey, inv = np.unique(key, return_inverse=True)
    counts = np.zeros(ukey.size, dtype=np.int64)
    np.add.at(counts, inv, pn)
    div = max(p_ids.size, 1)
    return (t_ids, t_area, p_ids, p_area, (ukey // div).astype(np.int64), (ukey % div).astype(np.int64), counts,
            t_first, p_first)
