"""Functional costs on a skeleton graph: reachable length and Kirchhoff conductance.

* :func:`reach_multi` / :func:`reach_single` count reference-skeleton voxels through the
  prediction's connected components (invariant 4), from every reference component's root or
  from the pinned source.
* :func:`kirchhoff` solves the resistor network of a graph: unit pressure at the source, zero
  at every sink that survives, edge resistance integrated voxel by voxel as dl / r^4.
"""

from __future__ import annotations

import numpy as np

from segscore.curvilinear.graph import SkeletonGraph, SkeletonRadius, nearest_voxels

#: a sink attaches to a skeleton voxel strictly closer than this (voxels)
SINK_MATCH_RADIUS = 3.0
_SINK_D2 = int(np.ceil(SINK_MATCH_RADIUS**2)) - 1  # the largest integer squared distance below it
_EPS = 1e-9


def reach_multi(ref_rl, ref_coords, root_k, pred_pl, weights=None):
    """Reference-skeleton voxels in the prediction component reached from their own root: their
    count (int), or with ``weights`` (each voxel's physical length) the sum of their weights."""
    from segscore.kernels.reach import count_reached, root_labels

    C1 = len(root_k)
    wanted = root_k >= 0
    target = np.zeros(C1, dtype=np.int64)
    root_labels(ref_rl, pred_pl, ref_coords, root_k, wanted, target)
    if weights is not None:
        t = target[ref_rl]
        return float(np.sum(weights[(t != 0) & (pred_pl == t)]))
    return int(count_reached(ref_rl, pred_pl, target))


def reach_single(ref_rl, ref_coords, src_k, pred_pl, weights=None):
    """Reference-skeleton voxels (of any component) in the prediction component reached from
    the pinned source voxel ``src_k`` (or, where it is background, from the nearest surviving
    voxel of the source's reference component); with ``weights``, the sum of their weights."""
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
        return 0 if weights is None else 0.0
    if weights is not None:
        return float(np.sum(weights[pred_pl == lab]))
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


def kirchhoff(g: SkeletonGraph, src: int, sinks: np.ndarray, lab: np.ndarray, radius: SkeletonRadius) -> float:
    """Effective conductance from node ``src`` to the surviving ``sinks`` (reference terminal
    positions), on ``g``'s alive edges.

    A sink survives when a voxel of its 3x3(x3) neighbourhood lies in the mask component
    (``lab``) holding the source, and a skeleton voxel of ``g`` lies closer than
    :data:`SINK_MATCH_RADIUS`; sinks attach one-to-one, closest first, to a node or to an
    interior chain voxel (which splits the chain there). Edge conductance is
    1 / sum(dl / max(r, half a voxel)^4) over the chain's steps, r read from ``radius`` (covering the
    graph's voxels) at each step's far voxel; parallel edges add; self-loops carry no flow.
    """
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
    vox_xyz = np.array(np.unravel_index(vox, shape), dtype=float).T.reshape(-1, len(shape))
    cand = np.concatenate([g.node_pos[nodes].astype(float), vox_xyz])
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

    # nearest candidate of each sink: segscore's voxel search, unless two candidates of different
    # attachments tie for a surviving sink: then the choice cKDTree (curvicost's search) makes
    key = np.where(c_node >= 0, c_node, -1 - np.arange(len(c_node)))
    found = nearest_voxels(cand, sinks, shape, _SINK_D2, key)
    if found is not None and not (found[2] & alive).any():
        d2, j, _ = found
        dist = np.full(len(sinks), np.inf)
        dist[j >= 0] = np.sqrt(d2[j >= 0].astype(float))
    else:
        from segscore.curvilinear.graph import PointTree

        dist, j = PointTree(cand).query(sinks, distance_upper_bound=SINK_MATCH_RADIUS)
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
    r_floor = 0.5 if g.spacing is None else 0.5 * min(g.spacing)  # half a voxel, in the radii's unit
    # every chain's step resistances dl / max(r, floor)^4 at once (r at each step's far voxel),
    # over the chains' voxels in edge order (``vox``), each chain's steps from its first voxel
    xyz = vox_xyz
    if g.spacing is not None:  # physical step lengths (radii are physical too: radius_on_skeleton)
        xyz = xyz * np.asarray(g.spacing)
    step_res = np.zeros(len(vox))
    if len(vox) > 1:
        dl = np.sqrt(((xyz[1:] - xyz[:-1]) ** 2).sum(axis=1))
        r = np.maximum(radius.at(vox[1:]), r_floor)
        step_res[:-1] = dl / r ** 4  # step_res[k]: from voxel k to k + 1 (across chains: never read)
    for e, k0, npx in zip(edges, (np.cumsum(cnt) - cnt).tolist(), cnt.tolist()):
        u, v = int(g.edge_u[e]), int(g.edge_v[e])
        if u == v:
            continue
        res = step_res[k0:k0 + npx - 1]
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
            rows.append(prev)
            cols.append(nxt)
            vals.append(gval)
            prev = nxt
    return network_conductance(n, rows, cols, vals, int(index[src]), sorted(sink_ids))


#: a reduced network with at most this many free nodes is solved densely (8 MB at most)
_DENSE_MAX = 1000


def network_conductance(n: int, u, v, g, src: int, sinks) -> float:
    """Current out of node ``src`` at unit pressure with every node of ``sinks`` at zero, on
    the network of ``n`` nodes and edges ``u[e] - v[e]`` of conductance ``g[e]`` (parallel
    edges add, self-loops carry nothing); 0 when no sink is connected to the source.

    The sinks are one node at one pressure, so this is the effective conductance between the
    source and the merged sinks. Dead ends, series joints and parallel edges are reduced
    exactly first (:func:`segscore.kernels.network.reduce_network`); what remains (nothing
    on a tree, a small core on most skeleton graphs) is solved for its pressures, densely when
    small, else with scipy.sparse's direct solver.
    """
    from segscore.kernels.network import reduce_network

    sinks = np.asarray(sinks, dtype=np.int64)
    sinks = sinks[sinks != src]
    if len(sinks) == 0:
        return 0.0
    merged = np.arange(n + 1, dtype=np.int64)
    merged[sinks] = n  # one ground node
    eu = merged[np.asarray(u, dtype=np.int64)]
    ev = merged[np.asarray(v, dtype=np.int64)]
    eg = np.asarray(g, dtype=np.float64)
    ru, rv, rg = np.empty_like(eu), np.empty_like(ev), np.empty_like(eg)
    m = reduce_network(n + 1, eu, ev, eg, src, n, ru, rv, rg)
    ru, rv, rg = ru[:m], rv[:m], rg[:m]
    nodes = np.unique(np.concatenate([ru, rv, [src, n]]))
    free = nodes[(nodes != src) & (nodes != n)]
    if len(free) == 0:  # one edge (or none) joins the source to the ground
        return max(float(rg.sum()), 0.0)
    k = len(free)
    pos = np.full(n + 1, -1, dtype=np.int64)
    pos[free] = np.arange(k)
    pu, pv = pos[ru], pos[rv]
    # pressures of the free nodes: L_ff p = g_f,src (the source at 1, the ground at 0)
    both = (pu >= 0) & (pv >= 0)
    diag = np.bincount(pu[pu >= 0], rg[pu >= 0], minlength=k) + np.bincount(pv[pv >= 0], rg[pv >= 0], minlength=k)
    rhs = np.zeros(k)
    np.add.at(rhs, pu[(rv == src) & (pu >= 0)], rg[(rv == src) & (pu >= 0)])
    np.add.at(rhs, pv[(ru == src) & (pv >= 0)], rg[(ru == src) & (pv >= 0)])
    # L_ff as coordinate triplets (repeated entries add)
    li = np.r_[np.arange(k), pu[both], pv[both]]
    lj = np.r_[np.arange(k), pv[both], pu[both]]
    lv = np.r_[diag, -rg[both], -rg[both]]
    if k <= _DENSE_MAX:
        L = np.zeros((k, k))
        np.add.at(L, (li, lj), lv)
        p = np.linalg.solve(L, rhs)
    else:
        import scipy.sparse as sp
        from scipy.sparse.linalg import spsolve

        p = spsolve(sp.coo_matrix((lv, (li, lj)), shape=(k, k)).tocsc(), rhs)
    pressure = np.zeros(n + 1)
    pressure[src] = 1.0
    pressure[free] = p
    at_src = (ru == src) | (rv == src)
    other = np.where(ru == src, rv, ru)[at_src]
    return max(float(np.sum(rg[at_src] * (1.0 - pressure[other]))), 0.0)
