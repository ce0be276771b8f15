"""Resistor-network kernels against a dense Laplacian solve and scipy's connected components."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from segscore.curvilinear.costs import network_conductance
from segscore.kernels.network import reduce_network
from segscore.kernels.skelgraph import node_components


def dense_current(n, u, v, g, src, sinks):
    """Oracle: pressures from the dense Laplacian (1 at src, 0 at the sinks connected to it),
    then the current out of src."""
    L = np.zeros((n, n))
    for a, b, w in zip(u, v, g):
        if a != b:
            L[a, b] -= w
            L[b, a] -= w
            L[a, a] += w
            L[b, b] += w
    _, comp = connected_components(coo_matrix((np.ones(len(u)), (u, v)), shape=(n, n)), directed=False)
    mine = comp == comp[src]
    sinks = [t for t in set(sinks) if t != src and mine[t]]
    if not sinks:
        return 0.0
    fixed = np.zeros(n, bool)
    fixed[src] = True
    fixed[sinks] = True
    p = np.zeros(n)
    p[src] = 1.0
    free = np.flatnonzero(mine & ~fixed)
    if len(free):
        p[free] = np.linalg.solve(L[np.ix_(free, free)], -L[np.ix_(free, np.flatnonzero(fixed))] @ p[fixed])
    return float(L[src] @ p)


def random_network(rng, n, m, loops=True):
    u = rng.integers(0, n, m)
    v = rng.integers(0, n, m)
    if not loops:
        keep = u != v
        u, v = u[keep], v[keep]
    g = rng.uniform(0.01, 10.0, len(u)) ** rng.choice([1, 3], len(u))  # conductances over 6 decades
    return u.astype(np.int64), v.astype(np.int64), g


@pytest.mark.parametrize("seed", range(40))
def test_conductance_matches_dense_solve(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    u, v, g = random_network(rng, n, int(rng.integers(0, 3 * n)))
    src = int(rng.integers(n))
    sinks = rng.choice(n, size=int(rng.integers(0, min(n, 6) + 1)), replace=False)
    want = dense_current(n, u, v, g, src, sinks)
    got = network_conductance(n, u, v, g, src, sinks)
    assert got == pytest.approx(max(want, 0.0), rel=1e-10, abs=1e-12)


def test_tree_like_chain_graph_with_cycles():
    # a long path (series) with side spurs and a few chords: what a skeleton graph looks like
    rng = np.random.default_rng(7)
    n = 400
    u = list(range(n - 1))
    v = list(range(1, n))
    for _ in range(60):  # dead-end spurs
        u.append(int(rng.integers(n)))
        v.append(n)
        n += 1
    for _ in range(8):  # chords making cycles
        a, b = rng.choice(400, 2, replace=False)
        u.append(int(a))
        v.append(int(b))
    u, v = np.array(u), np.array(v)
    g = rng.uniform(0.1, 5.0, len(u))
    sinks = [399, 250, n - 1]
    assert network_conductance(n, u, v, g, 0, sinks) == pytest.approx(dense_current(n, u, v, g, 0, sinks), rel=1e-10)


def test_closed_forms():
    # series 1 + 1 -> 1/2; parallel edges 2 + 3 -> 5; a self-loop carries nothing
    assert network_conductance(3, [0, 1], [1, 2], [1.0, 1.0], 0, [2]) == pytest.approx(0.5)
    assert network_conductance(2, [0, 0, 1], [1, 1, 1], [2.0, 3.0, 9.0], 0, [1]) == pytest.approx(5.0)
    # two sinks at one pressure are in parallel: 1/(1+1) + 1/1
    assert network_conductance(4, [0, 1, 0], [1, 2, 3], [1.0, 1.0, 1.0], 0, [2, 3]) == pytest.approx(1.5)
    # balanced Wheatstone bridge: the bridge edge carries nothing, 2 parallel paths of 2 -> 1
    u, v = [0, 0, 1, 2, 1], [1, 2, 3, 3, 2]
    assert network_conductance(4, u, v, [1.0, 1.0, 1.0, 1.0, 7.0], 0, [3]) == pytest.approx(1.0)


def test_no_connected_sink_and_source_as_sink():
    assert network_conductance(4, [0, 2], [1, 3], [1.0, 1.0], 0, [3]) == 0.0
    assert network_conductance(2, [0], [1], [1.0], 0, [0]) == 0.0
    assert network_conductance(1, [], [], [], 0, []) == 0.0


def _reduce(n, u, v, g, a, b):
    u, v, g = np.asarray(u, np.int64), np.asarray(v, np.int64), np.asarray(g, float)
    out = np.empty_like(u), np.empty_like(v), np.empty_like(g)
    m = reduce_network(n, u, v, g, a, b, *out)
    return tuple(x[:m] for x in out)


@pytest.mark.parametrize("seed", range(30))
def test_reduction_keeps_the_conductance_and_leaves_only_junctions(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 50))
    u, v, g = random_network(rng, n, int(rng.integers(1, 2 * n)))
    ru, rv, rg = _reduce(n, u, v, g, 0, 1)
    assert dense_current(n, ru, rv, rg, 0, [1]) == pytest.approx(dense_current(n, u, v, g, 0, [1]), rel=1e-10, abs=1e-13)
    assert (ru < rv).all() and len(set(zip(ru.tolist(), rv.tolist()))) == len(ru)  # merged, one entry each
    deg = np.bincount(np.r_[ru, rv], minlength=n)
    inner = np.setdiff1d(np.r_[ru, rv], [0, 1])
    assert (deg[inner] >= 3).all()


def test_a_tree_reduces_to_one_edge_and_a_grid_stays():
    # a path with spurs: 0 - 2 - 3 - 1, spur 3 - 4 - 5, conductances 1, 2, 4 in series: 4/7
    ru, rv, rg = _reduce(6, [0, 2, 3, 3, 4], [2, 3, 1, 4, 5], [1.0, 2.0, 4.0, 9.0, 9.0], 0, 1)
    assert (ru.tolist(), rv.tolist()) == ([0], [1]) and rg[0] == pytest.approx(4 / 7)
    k = 6
    idx = np.arange(k * k).reshape(k, k)
    u = np.r_[idx[:, :-1].ravel(), idx[:-1, :].ravel()]
    v = np.r_[idx[:, 1:].ravel(), idx[1:, :].ravel()]
    g = np.linspace(0.5, 2.0, len(u))
    ru, rv, rg = _reduce(k * k, u, v, g, 0, k * k - 1)
    assert 0 < len(ru) < len(u)  # the corners go, the mesh stays
    want = dense_current(k * k, u, v, g, 0, [k * k - 1])
    assert network_conductance(k * k, u, v, g, 0, [k * k - 1]) == pytest.approx(want, rel=1e-12)
    assert len(_reduce(4, [0, 2], [1, 3], [1.0, 1.0], 0, 3)[0]) == 0  # not connected: nothing


def test_a_large_core_is_solved_sparsely(monkeypatch):
    from segscore.curvilinear import costs as C

    k = 12
    idx = np.arange(k * k).reshape(k, k)
    u = np.r_[idx[:, :-1].ravel(), idx[:-1, :].ravel()]
    v = np.r_[idx[:, 1:].ravel(), idx[1:, :].ravel()]
    g = np.random.default_rng(1).uniform(0.5, 2.0, len(u))
    dense = network_conductance(k * k, u, v, g, 0, [k * k - 1])
    monkeypatch.setattr(C, "_DENSE_MAX", 10)
    assert network_conductance(k * k, u, v, g, 0, [k * k - 1]) == pytest.approx(dense, rel=1e-12)


def test_complete_graph_closed_form():
    n = 8  # K_n with unit edges: effective conductance n / 2 between any two nodes
    u, v = np.triu_indices(n, 1)
    assert network_conductance(n, u, v, np.ones(len(u)), 0, [1]) == pytest.approx(n / 2)


def test_conductances_over_many_decades_stay_accurate():
    # a ladder whose rungs span 1e-8 .. 1e4: elimination never subtracts, so it stays exact
    rng = np.random.default_rng(3)
    k = 30
    u = np.r_[np.arange(k - 1), np.arange(k, 2 * k - 1), np.arange(k)]
    v = np.r_[np.arange(1, k), np.arange(k + 1, 2 * k), np.arange(k, 2 * k)]
    g = 10.0 ** rng.uniform(-8, 4, len(u))
    want = dense_current(2 * k, u, v, g, 0, [2 * k - 1])
    assert network_conductance(2 * k, u, v, g, 0, [2 * k - 1]) == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize("seed", range(20))
def test_node_components_match_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    m = int(rng.integers(0, n + 5))
    u, v = rng.integers(0, n, m).astype(np.int64), rng.integers(0, n, m).astype(np.int64)
    out = np.empty(n, np.int64)
    node_components(n, u, v, out)
    _, ref = connected_components(coo_matrix((np.ones(m), (u, v)), shape=(n, n)), directed=False)
    # the same partition, each part named by its smallest node
    for c in np.unique(ref):
        members = np.flatnonzero(ref == c)
        assert (out[members] == members.min()).all()


def sparse_current(n, u, v, g, src, sinks):
    """Oracle at scale: the pressures from scipy.sparse's direct solver."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    A = sp.coo_matrix((np.r_[g, g], (np.r_[u, v], np.r_[v, u])), shape=(n, n)).tocsr()
    L = (sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A).tocsr()
    fixed = np.zeros(n, bool)
    fixed[src] = True
    fixed[sinks] = True
    p = np.zeros(n)
    p[src] = 1.0
    free = np.flatnonzero(~fixed)
    p[free] = spsolve(L[free][:, free].tocsc(), -(L[free][:, np.flatnonzero(fixed)] @ p[fixed]))
    return float((L.getrow(src) @ p)[0])


@pytest.mark.parametrize("seed", range(3))
def test_large_skeleton_like_network_matches_scipy_sparse(seed):
    # a random tree of 20,000 nodes (each joins an earlier one) with 300 chords making cycles
    rng = np.random.default_rng(seed)
    n = 20_000
    u = np.r_[np.arange(1, n), rng.integers(0, n, 300)]
    v = np.r_[(rng.random(n - 1) * np.arange(1, n)).astype(np.int64), rng.integers(0, n, 300)]
    keep = u != v
    u, v = u[keep], v[keep]
    g = 1.0 / rng.uniform(0.5, 40.0, len(u))
    leaves = np.flatnonzero(np.bincount(np.r_[u, v], minlength=n) == 1)
    sinks = rng.choice(leaves, 50, replace=False)
    want = sparse_current(n, u, v, g, 0, sinks)
    assert network_conductance(n, u, v, g, 0, sinks) == pytest.approx(want, rel=1e-9)
