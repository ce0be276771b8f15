"""Resistor-network kernel: series-parallel reduction.

:func:`reduce_network` removes, exactly, every node of degree 1 (a dead end carries no
current) or 2 (two edges in series are one edge of conductance ``w0 w1 / (w0 + w1)``), keeping
the two terminals, and merges parallel edges. A skeleton graph is mostly such nodes: a tree
reduces to one edge, and a graph with a few cycles to a small core, whose pressures the caller
then solves. The reduction only adds, multiplies and divides positive numbers.
"""

from __future__ import annotations

import numpy as np

from segscore.kernels._jit import jit


@jit
def _link(i, j, w, start, cnt, nb, wt):
    """Add conductance ``w`` to the entry ``j`` of node ``i``'s list, appending it if absent
    (the caller guarantees the room)."""
    s = start[i]
    for q in range(s, s + cnt[i]):
        if nb[q] == j:
            wt[q] += w
            return
    nb[s + cnt[i]] = j
    wt[s + cnt[i]] = w
    cnt[i] += 1


@jit
def _unlink(i, j, start, cnt, nb, wt):
    """Remove the entry ``j`` from node ``i``'s list (the last entry takes its place)."""
    s = start[i]
    last = s + cnt[i] - 1
    for q in range(s, last + 1):
        if nb[q] == j:
            nb[q] = nb[last]
            wt[q] = wt[last]
            cnt[i] -= 1
            return


@jit
def reduce_network(n, eu, ev, eg, a, b, out_u, out_v, out_g):
    """Series, parallel and dead-end reduction of a resistor network, keeping nodes ``a``, ``b``.

    Parameters
    ----------
    n : number of nodes (ids 0..n-1).
    eu, ev : (E,) int64 edge ends; self-loops are ignored, parallel edges add.
    eg : (E,) float64 edge conductances, > 0.
    a, b : the two terminals, ``a != b``.
    out_u, out_v, out_g : (E,) output: the edges of the reduced network (``u < v``), in which
        every node but ``a`` and ``b`` joins three or more others; the network between ``a``
        and ``b`` conducts exactly as the given one.

    Returns
    -------
    The number of edges written: 0 when ``b`` is not connected to ``a``.

    Notes
    -----
    Does not check ids, signs or ``a != b``. Nodes not connected to ``a`` are dropped. A node
    of degree 1 carries no current and is removed; one of degree 2 is replaced by a single edge
    of the series conductance between its neighbours (added to an edge already joining them),
    so the lists never grow.
    """
    cnt = np.zeros(n, dtype=np.int64)
    for e in range(eu.shape[0]):
        if eu[e] != ev[e]:
            cnt[eu[e]] += 1
            cnt[ev[e]] += 1
    start = np.empty(n, dtype=np.int64)
    top = 0
    for i in range(n):
        start[i] = top
        top += cnt[i]
        cnt[i] = 0
    nb = np.empty(top, dtype=np.int64)
    wt = np.empty(top, dtype=np.float64)
    for e in range(eu.shape[0]):
        u, v = eu[e], ev[e]
        if u != v:
            _link(u, v, eg[e], start, cnt, nb, wt)
            _link(v, u, eg[e], start, cnt, nb, wt)

    # the nodes connected to a (breadth first)
    seen = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    queue[0] = a
    seen[a] = True
    qn = 1
    qi = 0
    while qi < qn:
        i = queue[qi]
        qi += 1
        for q in range(start[i], start[i] + cnt[i]):
            j = nb[q]
            if not seen[j]:
                seen[j] = True
                queue[qn] = j
                qn += 1
    if not seen[b]:
        return 0

    gone = np.zeros(n, dtype=np.bool_)
    stack = np.empty(3 * n + 1, dtype=np.int64)  # pushes: each node once, then per degree drop
    sn = 0
    for qi in range(qn):
        k = queue[qi]
        if k != a and k != b and cnt[k] <= 2:
            stack[sn] = k
            sn += 1
    while sn > 0:
        sn -= 1
        k = stack[sn]
        if gone[k] or cnt[k] > 2:
            continue
        gone[k] = True
        m = cnt[k]
        s = start[k]
        i0 = nb[s] if m > 0 else -1
        i1 = nb[s + 1] if m > 1 else -1
        w0 = wt[s] if m > 0 else 0.0
        w1 = wt[s + 1] if m > 1 else 0.0
        cnt[k] = 0
        if i0 >= 0:
            _unlink(i0, k, start, cnt, nb, wt)
        if i1 >= 0:
            _unlink(i1, k, start, cnt, nb, wt)
            w = w0 * w1 / (w0 + w1)
            _link(i0, i1, w, start, cnt, nb, wt)  # into the slot k left
            _link(i1, i0, w, start, cnt, nb, wt)
        for i in (i0, i1):
            if i >= 0 and i != a and i != b and not gone[i] and cnt[i] <= 2:
                stack[sn] = i
                sn += 1

    m_out = 0
    for qi in range(qn):
        i = queue[qi]
        if gone[i]:
            continue
        for q in range(start[i], start[i] + cnt[i]):
            j = nb[q]
            if i < j:
                out_u[m_out] = i
                out_v[m_out] = j
                out_g[m_out] = wt[q]
                m_out += 1
    return m_out
