"""Kernels for the path- and point-matching metrics (APLS, junction F1) on skeleton voxels.

The skeleton is the voxel graph of its own voxels: each voxel joins its 8 (2D) or 26 (3D)
skeleton neighbours with an edge as long as the step (1, sqrt 2, sqrt 3). The voxels are given
as ascending flat indices into the skeleton array padded by one voxel on every side (the layout
of :mod:`segscore.kernels.skelgraph`), so a neighbour of voxel ``p`` is ``p + offsets[m]`` and a
step off the image lands on the padding, where no voxel is. Memory is proportional to the
skeleton, not the image: neighbours are found by merging the sorted voxel list with itself
shifted by each offset.

- :func:`neighbour_counts` and :func:`neighbour_lists`: the voxel graph as CSR (two passes: the
  caller sizes the lists from the counts).
- :func:`contract_chains`: the same graph between chosen nodes, its degree-2 runs (most of a
  skeleton) contracted into single edges; :func:`dijkstra_to_targets`: shortest path lengths
  from each source to a set of targets, stopping each search once every target is settled.
- :func:`close_pairs` and :func:`greedy_match`: the pairs of two point sets within a radius, and
  a one-to-one matching taking pairs in the order given (the caller sorts them by distance).
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit
from segscore.kernels.nearest import search_left


@jit
def _neighbours(pixels, offsets, step_len, indptr, indices, weights, counts):
    """Both passes of the CSR build: with ``counts`` non-empty, count; else fill the lists.

    ``pixels[i] + offsets[m]`` increases with ``i``, so one pointer per offset walks the sorted
    voxel list once: a merge, not a search per neighbour.
    """
    n = pixels.shape[0]
    n_off = offsets.shape[0]
    ptr = np.zeros(n_off, dtype=np.int64)
    count = counts.shape[0] > 0
    for i in range(n):
        w = 0 if count else indptr[i]
        for m in range(n_off):
            q = pixels[i] + offsets[m]
            j = ptr[m]
            while j < n and pixels[j] < q:
                j += 1
            ptr[m] = j
            if j < n and pixels[j] == q:
                if not count:
                    indices[w] = j
                    weights[w] = step_len[m]
                w += 1
        if count:
            counts[i] = w


@jit
def neighbour_counts(pixels, offsets, counts):
    """Number of skeleton neighbours of every skeleton voxel.

    Parameters
    ----------
    pixels : (N,) int64, ascending flat indices of the skeleton voxels in the padded array.
    offsets : (M,) int64, flat neighbour offsets in that array
        (:func:`segscore.kernels.components.neighbour_offsets`).
    counts : (N,) int64 output.

    Notes
    -----
    Does not check that ``pixels`` is sorted, unique, or clear of the padding.
    """
    if pixels.shape[0]:
        _neighbours(pixels, offsets, np.zeros(offsets.shape[0], np.float64), np.zeros(1, np.int64), np.zeros(0, np.int64),
                    np.zeros(0, np.float64), counts)


@jit
def neighbour_lists(pixels, offsets, step_len, indptr, indices, weights):
    """Fill the CSR lists of the skeleton voxel graph.

    Parameters
    ----------
    pixels, offsets : as :func:`neighbour_counts`.
    step_len : (M,) float64, the Euclidean length of each offset.
    indptr : (N + 1,) int64, ``0`` then the cumulative :func:`neighbour_counts`.
    indices : (indptr[N],) int64 output: neighbour positions in ``pixels``, in offset order.
    weights : (indptr[N],) float64 output: the step length to each.

    Notes
    -----
    Does not check that ``indptr`` matches the counts.
    """
    _neighbours(pixels, offsets, step_len, indptr, indices, weights, np.zeros(0, np.int64))


@jit
def dijkstra_to_targets(indptr, indices, weights, sources, targets, out):
    """Shortest path lengths from every source to every target of a weighted graph.

    Parameters
    ----------
    indptr, indices, weights : the graph as CSR (:func:`neighbour_lists`); weights > 0.
    sources : (S,) int64 node ids.
    targets : (T,) int64 node ids (repeats allowed).
    out : (S, T) float64 output: ``out[s, t]`` is the length of a shortest path from
        ``sources[s]`` to ``targets[t]``, ``inf`` when none exists, 0 for the source itself.

    Notes
    -----
    Does not check ids or signs. Each search stops once every target is settled; lengths are
    sums of the edge weights along the path, taken from the source outwards.
    """
    n = indptr.shape[0] - 1
    dist = np.empty(n, np.float64)  # not np.full: its overload compiles on a first run
    for i in range(n):
        dist[i] = np.inf
    done = np.zeros(n, dtype=np.bool_)
    is_t = np.zeros(n, dtype=np.bool_)
    n_targets = 0
    for t in range(targets.shape[0]):
        if not is_t[targets[t]]:
            is_t[targets[t]] = True
            n_targets += 1
    cap = indices.shape[0] + 1
    hd = np.empty(cap, np.float64)
    hn = np.empty(cap, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    for s in range(sources.shape[0]):
        src = sources[s]
        nt = 0
        dist[src] = 0.0
        touched[nt] = src
        nt += 1
        # a binary min-heap hd/hn written out here (helper kernels would each compile on a first
        # run): an entry rises while strictly below its parent; a pop sinks the last entry toward
        # the smaller child (the first on a tie) while strictly above it
        hd[0] = 0.0
        hn[0] = src
        size = 1
        left = n_targets
        while size > 0 and left > 0:
            d = hd[0]
            u = hn[0]
            size -= 1  # pop the root
            hd[0] = hd[size]
            hn[0] = hn[size]
            i = 0
            while True:
                a = 2 * i + 1
                if a >= size:
                    break
                b = a + 1
                c = b if b < size and hd[b] < hd[a] else a
                if hd[i] <= hd[c]:
                    break
                hd[c], hd[i] = hd[i], hd[c]
                hn[c], hn[i] = hn[i], hn[c]
                i = c
            if done[u]:
                continue
            done[u] = True
            if is_t[u]:
                left -= 1
            for q in range(indptr[u], indptr[u + 1]):
                v = indices[q]
                nd = d + weights[q]
                if nd < dist[v]:
                    if dist[v] == np.inf:
                        touched[nt] = v
                        nt += 1
                    dist[v] = nd
                    i = size  # push (nd, v)
                    hd[i] = nd
                    hn[i] = v
                    while i > 0:
                        p = (i - 1) >> 1
                        if hd[p] <= hd[i]:
                            break
                        hd[p], hd[i] = hd[i], hd[p]
                        hn[p], hn[i] = hn[i], hn[p]
                        i = p
                    size += 1
        for t in range(targets.shape[0]):
            out[s, t] = dist[targets[t]]
        for i in range(nt):
            dist[touched[i]] = np.inf
            done[touched[i]] = False


@jit
def contract_chains(indptr, indices, weights, keep, out_u, out_v, out_w):
    """The graph between the ``keep`` nodes, with every other node of degree 2 contracted away;
    returns the number of (directed) edges written.

    Parameters
    ----------
    indptr, indices, weights : an undirected graph as CSR (each edge listed from both ends).
    keep : (N,) bool; every node whose degree is not 2 must be kept.
    out_u, out_v : (C,) int64 outputs (node ids of the given graph); out_w : (C,) float64 output,
        C at least ``indptr[N]``.

    Notes
    -----
    From each kept node, each neighbour starts a walk that follows the degree-2 nodes (each has
    one way on) to the next kept node: an edge ``u -> v`` as long as the walk (the sum of its
    weights, in walking order). Every path between kept nodes runs along such walks, so path
    lengths between kept nodes are those of the given graph. Each walk is written from both of
    its ends; a walk returning to its own start is dropped. Does not check that the unkept nodes
    have degree 2.
    """
    n = indptr.shape[0] - 1
    c = 0
    for u in range(n):
        if not keep[u]:
            continue
        for q in range(indptr[u], indptr[u + 1]):
            prev = u
            cur = indices[q]
            length = weights[q]
            while not keep[cur]:
                a = indptr[cur]
                if indices[a] != prev:
                    nxt, w = indices[a], weights[a]
                else:
                    nxt, w = indices[a + 1], weights[a + 1]
                prev = cur
                cur = nxt
                length += w
            if cur != u:
                out_u[c] = u
                out_v[c] = cur
                out_w[c] = length
                c += 1
    return c


@jit
def close_pairs(a, b, b_order, r2, out_i, out_j, out_d2):
    """Pairs (i, j) with squared distance ``|a[i] - b[j]|^2 <= r2``; returns how many there are.

    Parameters
    ----------
    a : (A, D) float64 points; b : (B, D) float64 points.
    b_order : (B,) int64, the order sorting ``b`` by its first coordinate.
    r2 : float, the squared radius.
    out_i, out_j : (C,) int64 outputs; out_d2 : (C,) float64 output. With ``C == 0`` nothing is
        written and only the count is returned (a first pass sizes the outputs).

    Notes
    -----
    Pairs come out by ``i``, then by ``b``'s first coordinate. The squared distance is summed
    over the coordinates in order. Does not check shapes.
    """
    nb = b.shape[0]
    first = np.empty(nb, np.float64)
    for k in range(nb):
        first[k] = b[b_order[k], 0]
    r = np.sqrt(r2)
    c = 0
    write = out_i.shape[0] > 0
    for i in range(a.shape[0]):
        k = search_left(first, a[i, 0] - r - 1e-9)  # the first k with first[k] >= the window's start
        while k < nb and first[k] <= a[i, 0] + r + 1e-9:
            j = b_order[k]
            d2 = 0.0
            for x in range(a.shape[1]):
                t = a[i, x] - b[j, x]
                d2 += t * t
            if d2 <= r2:
                if write:
                    out_i[c] = i
                    out_j[c] = j
                    out_d2[c] = d2
                c += 1
            k += 1
    return c


@jit
def greedy_match(pi, pj, na, nb):
    """One-to-one matching taking the pairs ``(pi[k], pj[k])`` in order, each point once; returns
    the number of pairs matched.

    Parameters
    ----------
    pi : (C,) int64 ids in 0..na-1; pj : (C,) int64 ids in 0..nb-1.

    Notes
    -----
    Does not check ids.
    """
    ua = np.zeros(na, dtype=np.bool_)
    ub = np.zeros(nb, dtype=np.bool_)
    tp = 0
    for k in range(pi.shape[0]):
        i = pi[k]
        j = pj[k]
        if ua[i] or ub[j]:
            continue
        ua[i] = True
        ub[j] = True
        tp += 1
    return tp

