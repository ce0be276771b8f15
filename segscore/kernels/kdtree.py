"""Nearest-point queries on a k-d tree laid out as ``scipy.spatial.cKDTree(data)`` lays out its
default tree, so that a tie between equidistant points goes the way cKDTree sends it.

Why a replica: curvicost snaps points with ``cKDTree.query``, and where two points are equally
near, which one it returns depends on the tree's layout (the order of the points in each leaf)
and on the order the search visits the cells. On integer voxel positions such ties are the rule:
a tie-breaking rule of our own (lowest index, say) differs from cKDTree on about 40 % of
curvicost's APLS cases. So this module builds the same tree and searches it the same way,
following the definitions in scipy's ``ckdtree/src/build.cxx`` and ``query.cxx`` (defaults
``leafsize=16, compact_nodes=True, balanced_tree=True``, Euclidean, ``k=1``, ``eps=0``):

- a node of more than 16 points splits on the dimension of largest spread of its own points
  (the first such dimension); none if that spread is 0;
- the split point is the median found by C++'s ``std::nth_element`` (introselect, as the GNU
  C++ library implements it: median-of-three pivots, a heap selection past the depth limit, an
  insertion sort for the last three or fewer), the points below it gathered by
  ``std::partition`` (the bidirectional form); when none is below, the split slides just past
  the minimum;
- the search descends to the near child, queues the far one by its distance lower bound in a
  binary heap that orders equal bounds as scipy's does (:func:`segscore.kernels.graphmatch.heap_push`),
  scans leaves in their stored order, and replaces the best point only by
  a strictly nearer one.

The point order inside the tree (``idx``) equals ``cKDTree(data).indices``, and the queries
return cKDTree's indices and squared distances; both are pinned by tests against scipy on
inputs full of ties. Everything here is arrays in, arrays out.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.graphmatch import heap_pop, heap_push

LEAFSIZE = 16


# ---- the GNU C++ library's selection and partition, on idx[...] keyed by data[idx[i], d] ------

@jit
def _swap(idx, i, j):
    t = idx[i]
    idx[i] = idx[j]
    idx[j] = t


@jit
def _median_to_first(idx, result, a, b, c, data, d):
    ka, kb, kc = data[idx[a], d], data[idx[b], d], data[idx[c], d]
    if ka < kb:
        if kb < kc:
            _swap(idx, result, b)
        elif ka < kc:
            _swap(idx, result, c)
        else:
            _swap(idx, result, a)
    elif ka < kc:
        _swap(idx, result, a)
    elif kb < kc:
        _swap(idx, result, c)
    else:
        _swap(idx, result, b)


@jit
def _unguarded_partition(idx, first, last, pivot, data, d):
    pv = data[idx[pivot], d]
    while True:
        while data[idx[first], d] < pv:
            first += 1
        last -= 1
        while pv < data[idx[last], d]:
            last -= 1
        if not first < last:
            return first
        _swap(idx, first, last)
        first += 1


@jit
def _insertion_sort(idx, first, last, data, d):
    if first == last:
        return
    for i in range(first + 1, last):
        v = idx[i]
        kv = data[v, d]
        if kv < data[idx[first], d]:
            for j in range(i, first, -1):
                idx[j] = idx[j - 1]
            idx[first] = v
        else:
            j = i
            while kv < data[idx[j - 1], d]:
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = v


@jit
def _adjust_heap(idx, first, hole, length, value, data, d):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if data[idx[first + second], d] < data[idx[first + second - 1], d]:
            second -= 1
        idx[first + hole] = idx[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        idx[first + hole] = idx[first + second - 1]
        hole = second - 1
    kv = data[value, d]
    while hole > top:
        parent = (hole - 1) // 2
        if not data[idx[first + parent], d] < kv:
            break
        idx[first + hole] = idx[first + parent]
        hole = parent
    idx[first + hole] = value


@jit
def _heap_select(idx, first, middle, last, data, d):
    length = middle - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            _adjust_heap(idx, first, parent, length, idx[first + parent], data, d)
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if data[idx[i], d] < data[idx[first], d]:
            value = idx[i]
            idx[i] = idx[first]
            _adjust_heap(idx, first, 0, length, value, data, d)


@jit
def _floor_log2(n):
    k = 0
    while n > 1:
        n >>= 1
        k += 1
    return k


@jit
def nth_element(idx, first, nth, last, data, d):
    """``std::nth_element(idx + first, idx + nth, idx + last)`` ordering by ``data[., d]``, as
    the GNU C++ library runs it (so equal keys end where its introselect leaves them)."""
    if first == last or nth == last:
        return
    introselect(idx, first, nth, last, 2 * _floor_log2(last - first), data, d)


@jit
def introselect(idx, first, nth, last, depth, data, d):
    """:func:`nth_element`'s loop with ``depth`` partitions allowed before the heap selection."""
    while last - first > 3:
        if depth == 0:
            _heap_select(idx, first, nth + 1, last, data, d)
            _swap(idx, first, nth)
            return
        depth -= 1
        mid = first + (last - first) // 2
        _median_to_first(idx, first, first + 1, mid, last - 1, data, d)
        cut = _unguarded_partition(idx, first + 1, last, first, data, d)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(idx, first, last, data, d)


@jit
def partition_below(idx, first, last, data, d, pivot):
    """``std::partition`` (bidirectional form) of ``idx[first:last]`` by ``data[., d] < pivot``;
    returns the first position of the second group."""
    while True:
        while True:
            if first == last:
                return first
            if data[idx[first], d] < pivot:
                first += 1
            else:
                break
        last -= 1
        while True:
            if first == last:
                return first
            if not data[idx[last], d] < pivot:
                last -= 1
            else:
                break
        _swap(idx, first, last)
        first += 1


# ---- the tree -----------------------------------------------------------------------------------

@jit
def _grow(a, n):
    out = np.empty(n, a.dtype)
    out[:a.shape[0]] = a
    return out


@jit
def build_tree(data, idx):
    """Build the tree over ``data`` ((N, M) float64, N >= 1) in place of ``idx`` (N int64,
    ``arange(N)`` on entry; ``cKDTree(data).indices`` on return).

    Returns the nodes ``(start, end, split_dim, split, less, greater)``, node 0 the root;
    ``split_dim`` is -1 at a leaf, which holds ``idx[start:end]``.
    """
    n, m = data.shape
    cap = 2 * (n // (LEAFSIZE // 2)) + 16
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    sdim = np.empty(cap, np.int64)
    split = np.empty(cap, np.float64)
    less = np.empty(cap, np.int64)
    greater = np.empty(cap, np.int64)
    maxes = np.empty(m)
    mins = np.empty(m)
    count = 1
    start[0], end[0] = 0, n
    stack = np.empty(64, np.int64)
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        node = stack[top]
        s, e = start[node], end[node]
        sdim[node] = -1
        less[node] = -1
        greater[node] = -1
        split[node] = 0.0
        if e - s <= LEAFSIZE:
            continue
        for i in range(m):
            maxes[i] = data[idx[s], i]
            mins[i] = data[idx[s], i]
        for j in range(s + 1, e):
            for i in range(m):
                t = data[idx[j], i]
                if t > maxes[i]:
                    maxes[i] = t
                if t < mins[i]:
                    mins[i] = t
        d = 0
        size = 0.0
        for i in range(m):
            if maxes[i] - mins[i] > size:
                d = i
                size = maxes[i] - mins[i]
        if maxes[d] == mins[d]:
            continue  # every point equal: a leaf
        mid = s + (e - s) // 2
        nth_element(idx, s, mid, e, data, d)
        sp = data[idx[mid], d]
        p = partition_below(idx, s, mid, data, d, sp)
        if p == s:  # nothing below the median: slide past the minimum
            lo = data[idx[s], d]
            for j in range(s + 1, e):
                if data[idx[j], d] < lo:
                    lo = data[idx[j], d]
            sp = np.nextafter(lo, np.inf)
            p = partition_below(idx, s, e, data, d, sp)
        elif p == e:  # (not reached with a median split; scipy's rule kept for completeness)
            hi = data[idx[s], d]
            for j in range(s + 1, e):
                if hi < data[idx[j], d]:
                    hi = data[idx[j], d]
            sp = hi
            p = partition_below(idx, s, e, data, d, sp)
        if count + 2 > cap:
            cap *= 2
            start, end, sdim = _grow(start, cap), _grow(end, cap), _grow(sdim, cap)
            split, less, greater = _grow(split, cap), _grow(less, cap), _grow(greater, cap)
        a, b = count, count + 1
        count += 2
        start[a], end[a], start[b], end[b] = s, p, p, e
        sdim[node], split[node], less[node], greater[node] = d, sp, a, b
        if top + 2 > stack.shape[0]:
            stack = _grow(stack, 2 * stack.shape[0])
        stack[top] = b
        stack[top + 1] = a
        top += 2
    return start[:count], end[:count], sdim[:count], split[:count], less[:count], greater[:count]


@jit
def query_nearest(data, idx, start, end, sdim, split, less, greater, queries, bound2, out_d2, out_j):
    """The nearest point of each query strictly within ``sqrt(bound2)``, as
    ``cKDTree(data).query(queries, distance_upper_bound=sqrt(bound2))`` finds it.

    Parameters
    ----------
    data, idx, start ... greater : the points and :func:`build_tree`'s tree over them.
    queries : (Q, M) float64.
    bound2 : squared distance bound (inf for none); only points strictly nearer count.
    out_d2 : (Q,) float64 output, the squared distance (inf where none is within the bound).
    out_j : (Q,) int64 output, the point's index into ``data`` (N where none).
    """
    n, m = data.shape
    nn = start.shape[0]
    mins = np.empty(m)
    maxes = np.empty(m)
    for i in range(m):
        mins[i] = data[0, i]
        maxes[i] = data[0, i]
    for j in range(1, n):
        for i in range(m):
            t = data[j, i]
            if t > maxes[i]:
                maxes[i] = t
            if t < mins[i]:
                mins[i] = t
    # node records of one query (scipy's nodeinfo pool) and its heap of far cells
    side = np.empty((nn + 2, m))
    mind = np.empty(nn + 2)
    at = np.empty(nn + 2, np.int64)
    hprio = np.empty(nn + 2)
    hitem = np.empty(nn + 2, np.int64)
    for q in range(queries.shape[0]):
        used = 1
        ni1 = 0
        at[0] = 0
        mind[0] = 0.0
        for i in range(m):
            x = queries[q, i]
            s = 0.0
            t = x - maxes[i]
            if t > s:
                s = t
            else:
                t = mins[i] - x
                if t > s:
                    s = t
            s = s * s
            side[0, i] = 0.0
            mind[0] += s - side[0, i]
            side[0, i] = s
        dub = bound2
        best_d = np.inf
        best_j = n
        hn = 0
        while True:
            node = at[ni1]
            if sdim[node] == -1:
                for i in range(start[node], end[node]):
                    p = idx[i]
                    dd = 0.0
                    for c in range(m):
                        t = data[p, c] - queries[q, c]
                        dd += t * t
                    if dd < dub:
                        best_d = dd
                        best_j = p
                        dub = dd
                if hn == 0:
                    break
                ni1 = hitem[0]
                hn = heap_pop(hprio, hitem, hn)
            else:
                if mind[ni1] > dub:
                    break
                sd_ = sdim[node]
                ni2 = used
                used += 1
                for i in range(m):
                    side[ni2, i] = side[ni1, i]
                mind[ni2] = mind[ni1]
                x = queries[q, sd_]
                if x < split[node]:
                    at[ni1] = less[node]
                    at[ni2] = greater[node]
                    s = split[node] - x
                else:
                    at[ni1] = greater[node]
                    at[ni2] = less[node]
                    s = x - split[node]
                s = s * s
                mind[ni2] += s - side[ni2, sd_]
                side[ni2, sd_] = s
                if mind[ni1] > mind[ni2]:
                    ni1, ni2 = ni2, ni1
                if mind[ni2] <= dub:
                    hn = heap_push(hprio, hitem, hn, mind[ni2], ni2)
        out_d2[q] = best_d
        out_j[q] = best_j
