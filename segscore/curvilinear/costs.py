"""Functional costs on a skeleton graph: reachable length and Kirchhoff conductance.

* :func:`reach_multi` / :func:`reach_single` count reference-skeleton voxels through the
  prediction's connected components (invariant 4), from every reference component's root or
  from the pinned source.
* :func:`kirchhoff` solves the resistor network of a graph: unit pressure at the source, zero
  at every sink that survives, edge resistance integrated voxel by voxel as dl / r^4.
"""

from __future__ import annotations

import numpy as np

from segscore.curvilinear.graph import SkeletonGraph

#: a sink attaches to a skeleton voxel strictly closer than this (voxels)
SINK_MATCH_RADIUS = 3.0
_EPS = 1e-9


def reach_multi(ref_rl, ref_coords, root_k, pred_pl) -> int:
    """Reference-skeleton voxels in the prediction component reached from their own root."""
    from segscore.kernels.reach import count_reached, root_labels

    C1 = len(root_k)
    wanted = root_k >= 0
    target = np.zeros(C1, dtype=np.int64)
    root_labels(ref_rl, pred_pl, ref_coords, root_k, wanted, target)
    return int(count_reached(ref_rl, pred_pl, target))


def reach_single(ref_rl, ref_coords, src_k, pred_pl) -> int:
    """Reference-skeleton voxels (of any component) in the prediction component reached from
    the pinned source voxel ``src_k`` (or, where it is background, from the nearest surviving
    voxel of the source's reference component)."""
    from segscore.kernels.reach import root_labels

    C1 = int(ref_rl.max()) + 1 if len(ref_rl) else 1
    root_k = np.full(C1, -1, dtype=np.int64)
    c = int(ref_rl[src_k])
    root_k[c] = src_k
    wanted = np.zeros(C1, dtype=bool)
    wanted[c] = True
    target = np.zeros(C1, dtype=np.int64)
    root_labels(ref_rl, pred_pl, ref_coords, root_k, wanted, target)
    lab = target[c]
    if lab == 0:
        return 0
    return int(np.count_nonzero(pred_pl == lab))


def pick_source(g: SkeletonGraph) -> int:
    """The alive node of largest radius (first in node order on ties)."""
    nodes = g.alive_nodes()
    return int(nodes[np.argmax(g.node_radius[nodes])])


def nearest_node(g: SkeletonGraph, pos) -> int:
    """The alive node nearest to ``pos`` (first in node order on ties)."""
    nodes = g.alive_nodes()
    d2 = ((g.node_pos[nodes].astype(float) - np.asarray(pos, float)) ** 2).sum(axis=1)
    return int(nodes[np.argmin(d2)])


def terminal_positions(g: SkeletonGraph) -> np.ndarray:
    deg = g.degree()
    t = np.flatnonzero(g.node_alive & (deg == 1))
    return g.node_pos[t].astype(float)


def perfused_of_self(g: SkeletonGraph, src: int) -> float:
    """Length of the edges in the source's graph component over the graph's total length."""
    e = g.alive_edges()
    total = float(np.sum(g.edge_len[e]))
    if total <= 0:
        return 0.0
    comp = g.components()
    mine = comp[g.edge_u[e]] == comp[src]
    return float(np.sum(g.edge_len[e][mine])) / total


def _box(lab, centre, lo_off, hi_off):
    sl = tuple(slice(max(c - lo_off, 0), min(c + hi_off, s)) for c, s in zip(centre, lab.shape))
    return lab[sl]


def kirchhoff(g: SkeletonGraph, src: int, sinks: np.ndarray, lab: np.ndarray, radius_map: np.ndarray) -> float:
    """Effective conductance from node ``src`` to the surviving ``sinks`` (reference terminal
    positions), on ``g``'s alive edges.

    A sink survives when a voxel of its 3x3(x3) neighbourhood lies in the mask component
    (``lab``) holding the source, and a skeleton voxel of ``g`` lies closer than
    :data:`SINK_MATCH_RADIUS`; sinks attach one-to-one, closest first, to a node or to an
    interior chain voxel (which splits the chain there). Edge conductance is
    1 / sum(dl / max(r, 0.5)^4) over the chain's steps, r read from ``radius_map`` at each
    step's far voxel; parallel edges add; self-loops carry no flow.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    sinks = np.asarray(sinks, dtype=float).reshape(-1, len(g.shape))
    if len(sinks) == 0 or not g.node_alive[src]:
        return 0.0
    shape = g.shape
    nodes = g.alive_nodes()
    edges = g.edge_order()
    # candidate attachment voxels: nodes, then every voxel of every edge (ends are their nodes)
    cnt = np.diff(g.edge_ptr)[edges]
    vox = np.concatenate([g.path[g.edge_ptr[e]:g.edge_ptr[e + 1]] for e in edges]) if len(edges) else np.zeros(0, np.int64)
    own_edge = np.repeat(edges, cnt)
    pos_in = np.concatenate([np.arange(c) for c in cnt]) if len(edges) else np.zeros(0, np.int64)
    is_first = pos_in == 0
    is_last = pos_in == np.repeat(cnt, cnt) - 1
    ref_node = np.where(is_first, g.edge_u[own_edge], np.where(is_last, g.edge_v[own_edge], -1))
    cand = np.concatenate([g.node_pos[nodes].astype(float),
                           np.array(np.unravel_index(vox, shape), dtype=float).T.reshape(-1, len(shape))])
    c_node = np.concatenate([nodes, ref_node])
    c_edge = np.concatenate([np.full(len(nodes), -1), np.where(ref_node < 0, own_edge, -1)])
    c_idx = np.concatenate([np.full(len(nodes), -1), pos_in])

    # survival through the mask: same component as the source
    sq = tuple(int(c) for c in g.node_pos[src])
    src_lab = int(lab[sq])
    if src_lab == 0:
        src_lab = int(_box(lab, sq, 2, 3).max())
    alive = np.zeros(len(sinks), dtype=bool)
    if src_lab:
        for i, s in enumerate(sinks):
            q = tuple(int(round(c)) for c in s)
            box = _box(lab, q, 1, 2)
            alive[i] = box.size > 0 and bool((box == src_lab).any())
    if not alive.any():
        return 0.0

    dist, j = cKDTree(cand).query(sinks, distance_upper_bound=SINK_MATCH_RADIUS)
    used = set()
    node_sinks = set()
    splits: dict[int, list[int]] = {}
    for i in np.argsort(dist):
        if not alive[i] or not np.isfinite(dist[i]):
            continue
        k = int(j[i])
        key = ("n", int(c_node[k])) if c_node[k] >= 0 else ("e", int(c_edge[k]), int(c_idx[k]))
        if key in used:
            continue
        used.add(key)
        if key[0] == "n":
            node_sinks.add(key[1])
        else:
            splits.setdefault(key[1], []).append(key[2])
    if not used:
        return 0.0

    index = np.full(g.n_nodes, -1, dtype=np.int64)
    index[nodes] = np.arange(len(nodes))
    n = len(nodes)
    sink_ids = {int(index[x]) for x in node_sinks}
    rows, cols, vals = [], [], []
    coords_cache = {}
    rflat = radius_map.ravel()

    def step_resistance(e):
        if e not in coords_cache:
            px = g.path[g.edge_ptr[e]:g.edge_ptr[e + 1]]
            xyz = np.array(np.unravel_index(px, shape), dtype=float).T
            dl = np.sqrt(((xyz[1:] - xyz[:-1]) ** 2).sum(axis=1))
            r = np.maximum(rflat[px[1:]], 0.5)
            coords_cache[e] = dl / r ** 4
        return coords_cache[e]

    for e in edges:
        u, v = int(g.edge_u[e]), int(g.edge_v[e])
        if u == v:
            continue
        npx = int(g.edge_ptr[e + 1] - g.edge_ptr[e])
        res = step_resistance(e)
        cuts = sorted(i for i in set(splits.get(int(e), [])) if 0 < i < npx - 1)
        bounds = [0, *cuts, npx - 1]
        prev = int(index[u])
        for b0, b1 in zip(bounds[:-1], bounds[1:]):
            if b1 == npx - 1:
                nxt = int(index[v])
            else:
                nxt = n
                n += 1
                sink_ids.add(nxt)
            R = float(np.sum(res[b0:b1]))
            gval = 1.0 / max(R, _EPS)
            rows += [prev, nxt]
            cols += [nxt, prev]
            vals += [gval, gval]
            prev = nxt
    A = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    _, comp = connected_components(A, directed=False)
    s = int(index[src])
    keep = np.flatnonzero(comp == comp[s])
    sink_list = [t for t in sink_ids if comp[t] == comp[s] and t != s]
    if not sink_list:
        return 0.0
    deg = np.asarray(A.sum(axis=1)).ravel()
    lap = (sp.diags(deg) - A).tocsr()
    fixed = np.zeros(n, dtype=bool)
    fixed[s] = True
    fixed[sink_list] = True
    pval = np.zeros(n)
    pval[s] = 1.0
    free = keep[~fixed[keep]]
    fix = keep[fixed[keep]]
    pres = pval.copy()
    if len(free):
        lff = lap[free][:, free].tocsc()
        rhs = -(lap[free][:, fix] @ pval[fix])
        pres[free] = spla.spsolve(lff, rhs)
    row = A.getrow(s)
    return max(float(np.sum(row.data * (1.0 - pres[row.indices]))), 0.0)
