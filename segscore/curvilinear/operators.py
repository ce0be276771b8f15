"""Five typed, graded error operators on a binary curvilinear mask (2D or 3D).

``perturb(mask, operator, severity, seed=0, prune_px=5) -> (mask, info)``

=========  ==========================================  =========================================
operator   severity                                     what moves (and what must not)
=========  ==========================================  =========================================
break      fraction of the edges of the pruned graph    connectivity lost, few voxels removed;
           (loops included, as curvicost counts them)   nothing added
bridge     fraction of the terminal nodes (pairs are    connectivity invented; nothing removed
           drawn from terminals within 12 voxels and
           >= 6 hops apart or in other components)
truncate   fraction of the terminal chains              extent lost at free ends; Betti-0 kept
radius     scale factor of every radius (1.0: the       calibre; Betti-0 kept (a voxel is painted
           reference redraw a radius arm is scored      only by its own skeleton component)
           against)
boundary   fraction of the foreground voxels            surface voxels removed; Betti-0 kept
=========  ==========================================  =========================================

The draws are curvicost 0.3.1's: one ``numpy.random.Generator`` seeded with ``seed``, drawing from
the same populations in the same order (the graph's edges as networkx iterates curvicost's graph,
its terminal nodes and chains, the shell voxels in C order), so for the same mask, severity and
seed each operator damages the voxels curvicost's damages (tests/curvilinear/test_audit_parity.py
compares the audits' cases). Counts are ``max(1, round(severity * population))``, as in curvicost.
"""

from __future__ import annotations

import numpy as np

from segscore.curvilinear.graph import build_graph, count_components, csr_order, label, radius_on_skeleton, skeletonize
from segscore.curvilinear.masks import as_binary
from segscore.errors import ScoreError

OPERATORS = ("break", "bridge", "truncate", "radius", "boundary")
BRIDGE_GAP = 12.0
BRIDGE_MIN_HOPS = 6
BREAK_MAX_GROW = 6
TRUNCATE_FRACTION = 0.5


def _count(severity, population):
    return max(1, int(round(severity * population))) if population else 0


def _ball_slices(centre, r, shape):
    lo = [max(int(np.floor(c - r)), 0) for c in centre]
    hi = [min(int(np.ceil(c + r)) + 1, s) for c, s in zip(centre, shape)]
    sl = tuple(slice(a, b) for a, b in zip(lo, hi))
    grids = np.ogrid[sl]
    ball = sum((gg - c) ** 2 for gg, c in zip(grids, centre)) <= r * r
    return sl, ball


def perturb(mask, operator: str, severity: float, *, seed: int = 0, prune_px: float = 5, name: str = "mask",
            analysis=None):
    """Apply one operator; returns ``(perturbed bool mask, info dict)``. ``name`` (the mask's
    path, say) starts the message of a refusal about the mask. ``analysis``: the mask's own
    ``(skeleton, radius on it, graph pruned at prune_px, cache)`` in voxel units, when already
    made (an audit perturbs one reference dozens of times): read, never changed; ``cache`` (a
    dict, or None) keeps what the operators derive from the skeleton alone (each voxel's nearest
    skeleton voxel) for the next call."""
    if operator not in OPERATORS:
        raise ScoreError(f"operator: {operator!r} is not one of {', '.join(OPERATORS)}")
    try:
        severity = float(severity)
    except (TypeError, ValueError):
        raise ScoreError(f"severity: {severity!r} is not a number") from None
    if operator == "radius":
        if not (0.0 < severity <= 3.0):
            raise ScoreError(f"severity: the radius operator takes a scale factor in (0, 3], got {severity:g}")
    elif not (0.0 <= severity <= 1.0):
        raise ScoreError(f"severity: {operator} takes a fraction in [0, 1], got {severity:g}")
    mask = as_binary(mask, name)
    if not mask.any():
        raise ScoreError(f"{name}: the mask is empty; an operator needs a structure to act on")
    rng = np.random.default_rng(seed)
    if operator == "boundary":
        return _boundary(mask, severity, rng)
    if analysis is not None:
        skel, edt, g, cache = analysis
    else:
        skel = skeletonize(mask)
        edt = radius_on_skeleton(mask, skel)
        g, cache = None, None
    if operator == "radius":
        return _radius(mask, skel, edt, severity, cache)
    if g is None:
        g = build_graph(skel, edt, prune_px)
    if operator == "break":
        out, info = _break(mask, g, edt, severity, rng)
    elif operator == "bridge":
        out, info = _bridge(mask, g, severity, rng)
    else:
        out, info = _truncate(mask, skel, g, severity, rng, cache)
    info.update(operator=operator, severity=severity, seed=seed, prune_px=prune_px)
    return out, info


# ---------------------------------------------------------------- break
def _break(mask, g, edt, severity, rng):
    # curvicost's population and order: every edge (a loop too) as networkx iterates its graph
    e = g.edge_order()
    n = _count(severity, len(e))
    out = mask.copy()
    info = {"population": int(len(e)), "n_applied": 0, "voxels": 0, "unsevered": 0}
    if n == 0:
        return out, info
    pick = rng.choice(len(e), size=min(n, len(e)), replace=False)
    removed = unsevered = 0
    for i in pick:
        ed = e[i]
        px = np.array(np.unravel_index(g.path[g.edge_ptr[ed]:g.edge_ptr[ed + 1]], mask.shape)).T
        mid = px[len(px) // 2]
        r = max(float(edt.at(np.ravel_multi_index(tuple(mid), mask.shape))), float(g.edge_rad[ed])) + 1.0
        v, ok = _sever(out, mid, r, px)
        removed += v
        unsevered += not ok
    info.update(n_applied=int(len(pick)), voxels=int(removed), unsevered=int(unsevered))
    return out, info


def _sever(out, mid, r, px):
    """Clear a ball at ``mid`` and check the cut as curvicost 0.3.1 checks it: the chain's first
    and last voxels outside the ball (its two ends, as far as the ball left them) must end up in
    different components of a crop of half-size ``ceil(r) + 4`` around ``mid``; while they do
    not, the ball grows by one voxel (at most ``BREAK_MAX_GROW`` times). An end outside the crop,
    or fewer than two voxels of the chain outside the ball, counts as severed. Returns (voxels
    removed, severed)."""
    d = np.sqrt(((px - mid) ** 2).sum(axis=1))
    r = max(float(r), 1.0)
    removed = 0
    for _ in range(BREAK_MAX_GROW + 1):
        sl, ball = _ball_slices(mid, r, out.shape)
        before = int(np.count_nonzero(out[sl]))
        out[sl] &= ~ball
        removed += before - int(np.count_nonzero(out[sl]))
        outside = np.flatnonzero(d > r + 0.5)
        if len(outside) < 2:
            return removed, True  # the chain is inside the ball but for at most one voxel
        a, b = px[outside[0]], px[outside[-1]]
        half = int(np.ceil(r)) + 4
        lo = np.maximum(mid - half, 0)
        hi = np.minimum(mid + half + 1, out.shape)
        if np.any(a < lo) or np.any(a >= hi) or np.any(b < lo) or np.any(b >= hi):
            return removed, True  # an end beyond the crop: not checked, counted as severed
        crop = out[tuple(slice(x, y) for x, y in zip(lo, hi))]
        lab, _ = label(crop)
        la, lb = lab[tuple(a - lo)], lab[tuple(b - lo)]
        if la == 0 or lb == 0 or la != lb:
            return removed, True
        r += 1.0
    return removed, False


# ---------------------------------------------------------------- bridge
def close_point_pairs(pos, gap):
    """Every pair ``(i, j)``, ``i < j``, of points at most ``gap`` apart, ascending: the pairs,
    in their order, of ``sorted(cKDTree(pos).query_pairs(gap))``."""
    from segscore.kernels.graphmatch import close_pairs

    pos = np.ascontiguousarray(pos, dtype=np.float64)
    order = np.argsort(pos[:, 0], kind="stable").astype(np.int64)
    none = np.zeros(0, np.int64)
    c = close_pairs(pos, pos, order, gap**2, none, none, np.zeros(0))
    pi, pj, d2 = np.empty(c, np.int64), np.empty(c, np.int64), np.empty(c)
    if c:
        close_pairs(pos, pos, order, gap**2, pi, pj, d2)
    keep = pi < pj
    return np.unique(np.stack([pi[keep], pj[keep]], axis=1), axis=0).reshape(-1, 2)


def _bridge(mask, g, severity, rng):
    from segscore.kernels.graphmatch import dijkstra_to_targets

    deg = g.degree()
    ends = np.flatnonzero(g.node_alive & (deg == 1))
    n = _count(severity, len(ends))
    out = mask.copy()
    info = {"population": int(len(ends)), "candidates": 0, "n_applied": 0, "voxels": 0}
    if len(ends) < 2:
        return out, info
    pos = g.node_pos[ends].astype(float)
    pairs = close_point_pairs(pos, BRIDGE_GAP)
    if len(pairs):
        dd = np.sqrt(((pos[pairs[:, 0]] - pos[pairs[:, 1]]) ** 2).sum(axis=1))
        pairs = pairs[dd >= 1.0]
    if len(pairs):
        e = g.alive_edges()
        u = np.concatenate([g.edge_u[e], g.edge_v[e]]).astype(np.int64)
        v = np.concatenate([g.edge_v[e], g.edge_u[e]]).astype(np.int64)
        indptr, o = csr_order(u, g.n_nodes)
        src = np.unique(pairs[:, 0])
        # hops: shortest paths with every edge of length 1 (integers, exact in float)
        hops = np.empty((len(src), len(pairs)))
        dijkstra_to_targets(indptr, np.ascontiguousarray(v[o]), np.ones(len(o)),
                            np.ascontiguousarray(ends[src], dtype=np.int64),
                            np.ascontiguousarray(ends[pairs[:, 1]], dtype=np.int64), hops)
        h = hops[np.searchsorted(src, pairs[:, 0]), np.arange(len(pairs))]
        pairs = pairs[h >= BRIDGE_MIN_HOPS]  # inf (other component) passes
    info["candidates"] = int(len(pairs))
    if len(pairs) == 0 or n == 0:
        return out, info
    pick = rng.choice(len(pairs), size=min(n, len(pairs)), replace=False)
    before = int(np.count_nonzero(out))
    for i in pick:
        u, v = ends[pairs[i, 0]], ends[pairs[i, 1]]
        r = max(min(g.node_radius[u], g.node_radius[v]), 1.0)
        _tube(out, g.node_pos[u].astype(float), g.node_pos[v].astype(float), r)
    info.update(n_applied=int(len(pick)), voxels=int(np.count_nonzero(out)) - before)
    return out, info


def _tube(out, a, b, r):
    steps = max(int(np.ceil(np.linalg.norm(b - a) * 2)), 1)
    for t in np.linspace(0.0, 1.0, steps + 1):
        sl, ball = _ball_slices(a + (b - a) * t, r, out.shape)
        out[sl] |= ball


# ---------------------------------------------------------------- truncate
def _owner(skel, cache=None):
    """Index (into the C-ordered skeleton voxels) of every voxel's nearest skeleton voxel (int32;
    equidistant ones resolved as scipy's feature transform of the skeleton resolves them,
    :func:`segscore.kernels.edt.nearest_feature`), and the skeleton's flat indices; kept in
    ``cache``."""
    if cache is not None and "owner" in cache:
        return cache["owner"]
    from segscore.kernels.edt import nearest_feature

    sk = np.flatnonzero(skel.ravel()).astype(np.int64)
    rank = np.empty(skel.size, dtype=np.int32)
    nearest_feature(np.array((1,) * (3 - skel.ndim) + skel.shape, dtype=np.int64), sk, rank)
    found = rank.reshape(skel.shape), sk
    if cache is not None:
        cache["owner"] = found
    return found


def _truncate(mask, skel, g, severity, rng, cache=None):
    deg = g.degree()
    e = g.alive_edges()
    term = e[(deg[g.edge_u[e]] == 1) != (deg[g.edge_v[e]] == 1)]
    n = _count(severity, len(term))
    out = mask.copy()
    info = {"population": int(len(term)), "n_applied": 0, "voxels": 0, "skipped": 0}
    if n == 0:
        return out, info
    owner, sk = _owner(skel, cache)
    pick = rng.choice(len(term), size=min(n, len(term)), replace=False)
    doomed_sets = []
    for i in pick:
        ed = term[i]
        px = g.path[g.edge_ptr[ed]:g.edge_ptr[ed + 1]]
        n_cut = max(int(len(px) * TRUNCATE_FRACTION), 1)
        cut = px[:n_cut] if deg[g.edge_u[ed]] == 1 else px[-n_cut:]
        ids = np.searchsorted(sk, cut)
        doomed_sets.append(ids)
    base = count_components(mask)
    # apply all at once; fall back to one by one if that changed the component count
    allids = np.zeros(len(sk), dtype=bool)
    for ids in doomed_sets:
        allids[ids] = True
    trial = mask & ~allids[np.maximum(owner, 0)]
    nc = count_components(trial)
    if nc == base:
        applied, skipped, out = len(doomed_sets), 0, trial
    else:
        applied = skipped = 0
        for ids in doomed_sets:
            sel = np.zeros(len(sk), dtype=bool)
            sel[ids] = True
            t = out & ~sel[np.maximum(owner, 0)]
            if count_components(t) != base:
                skipped += 1
                continue
            out = t
            applied += 1
    info.update(n_applied=int(applied), skipped=int(skipped),
                voxels=int(np.count_nonzero(mask)) - int(np.count_nonzero(out)))
    return out, info


# ---------------------------------------------------------------- radius
def _radius(mask, skel, edt, scale, cache=None):
    from segscore.curvilinear.graph import voxel_components
    from segscore.kernels.operators import paint_balls

    rank, sk = _owner(skel, cache)  # each voxel's nearest skeleton voxel, and so its skeleton component
    sk_comp = voxel_components(skel)  # component of each skeleton voxel, in the order of sk
    centres = np.array(np.unravel_index(edt.idx, skel.shape)).T
    radii = np.maximum(edt.val * scale, 1.0)
    cc = sk_comp[np.searchsorted(sk, edt.idx)]
    shape3 = np.array((1,) * (3 - mask.ndim) + mask.shape, dtype=np.int64)
    c3 = np.zeros((len(centres), 3), dtype=np.int64)
    c3[:, 3 - mask.ndim:] = centres
    out = np.zeros(mask.size, dtype=bool)
    paint_balls(shape3, c3, radii.astype(np.float64), cc, rank.ravel(), sk_comp, out)
    out = out.reshape(mask.shape)
    return out, {"operator": "radius", "severity": scale, "scale": scale,
                 "voxels": int(np.count_nonzero(out)) - int(np.count_nonzero(mask))}


# ---------------------------------------------------------------- boundary
def _boundary(mask, frac, rng):
    from segscore.kernels.operators import erode_surface
    from segscore.kernels.skelgraph import neighbour_offsets
    from segscore.metrics.surface import mask_surface

    total = int(np.count_nonzero(mask))
    target = int(frac * total)
    pad = np.pad(mask.astype(np.uint8), 2)
    offsets, _ = neighbour_offsets(pad.shape)
    pshape = pad.shape
    # the shell, mask & ~binary_erosion(mask), in C order
    idx = mask_surface(mask)[:, 3 - mask.ndim:].astype(np.int64) + 2
    order = np.ravel_multi_index(tuple(idx.T), pshape).astype(np.int64)
    order = order[rng.permutation(len(order))]
    flat = pad.ravel()
    done = erode_surface(flat, order, offsets, target) if target > 0 else 0
    out = flat.reshape(pshape)[(slice(2, -2),) * mask.ndim].astype(bool)
    return out, {"operator": "boundary", "severity": frac, "requested_voxels": target, "voxels_moved": int(done),
                 "population": total}
