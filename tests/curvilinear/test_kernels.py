"""Kernels against brute-force NumPy/Python oracles on random and hand-drawn skeletons."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from segscore.curvilinear.graph import build_graph, skeletonize
from segscore.kernels import reach as R
from segscore.kernels import skelgraph as K
from tests.curvilinear.helpers import everywhere, random_blobs


def _pad_flat(skel):
    pad = np.pad(skel.astype(np.uint8), 1)
    return pad, pad.ravel()


# ----------------------------------------------------------------------------- degree
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (40, 33), (9, 8, 7)])
@pytest.mark.parametrize("seed", [0, 1])
def test_neighbour_degree_matches_convolution(shape, seed):
    skel = np.random.default_rng(seed).random(shape) < 0.4
    pad, flat = _pad_flat(skel)
    off, _ = K.neighbour_offsets(pad.shape)
    pix = np.flatnonzero(flat).astype(np.int64)
    out = np.empty(len(pix), np.int32)
    K.neighbour_degree(flat, pix, off, out)
    kern = np.ones((3,) * skel.ndim)
    kern[(1,) * skel.ndim] = 0
    conv = ndimage.convolve(pad.astype(int), kern.astype(int), mode="constant")
    np.testing.assert_array_equal(out, conv.ravel()[pix])


def test_offsets_are_lexicographic_and_unit_lengths():
    off, ln = K.neighbour_offsets((5, 6))
    assert off.tolist() == [-7, -6, -5, -1, 1, 5, 6, 7]
    np.testing.assert_allclose(ln, [2**0.5, 1, 2**0.5, 1, 1, 2**0.5, 1, 2**0.5])
    off3, ln3 = K.neighbour_offsets((4, 4, 4))
    assert len(off3) == 26 and np.isclose(ln3.max(), 3**0.5)


# ----------------------------------------------------------------------------- tracing oracle
def _oracle_graph(skel):
    """Plain-Python tracing from the definitions (graph.py docstring): returns sorted lists of
    node positions and (end pos, end pos, length, n voxels) per chain, loops as (pos, pos, n, n)."""
    nd = skel.ndim
    offs = [tuple(o) for o in (np.indices((3,) * nd).reshape(nd, -1).T - 1) if any(o)]
    on = {tuple(p) for p in np.argwhere(skel)}

    def nbrs(p):
        return [q for q in (tuple(a + b for a, b in zip(p, o)) for o in offs) if q in on]

    deg = {p: len(nbrs(p)) for p in on}
    junction = {p for p in on if deg[p] >= 3}
    node = {}
    clusters = []
    for p in sorted(junction):
        if p in node:
            continue
        comp, stack = [p], [p]
        node[p] = len(clusters)
        while stack:
            u = stack.pop()
            for v in nbrs(u):
                if v in junction and v not in node:
                    node[v] = len(clusters)
                    comp.append(v)
                    stack.append(v)
        clusters.append(sorted(comp))
    n = len(clusters)
    pos = [c[len(c) // 2] for c in clusters]
    for p in sorted(p for p in on if deg[p] == 1):
        node[p] = n
        pos.append(p)
        n += 1
    edges, walked, covered = [], set(), set()
    for p in sorted(node, key=lambda q: (node[q], q)):
        for q in nbrs(p):
            if node.get(q) == node[p] or (p, q) in walked:
                continue
            walked.add((p, q))
            path, prev, cur = [p, q], p, q
            while cur not in node:
                nxt = [x for x in nbrs(cur) if x != prev][0]
                prev, cur = cur, nxt
                path.append(cur)
            walked.add((cur, prev))
            covered.update(path)
            ln = sum(np.linalg.norm(np.subtract(a, b)) for a, b in zip(path[:-1], path[1:]))
            a, b = sorted([pos[node[p]], pos[node[cur]]])
            edges.append((a, b, round(ln, 9), len(path)))
    rest = on - covered - set(node)
    while rest:
        s = min(rest)
        comp, stack = {s}, [s]
        while stack:
            u = stack.pop()
            for v in nbrs(u):
                if v in rest and v not in comp:
                    comp.add(v)
                    stack.append(v)
        rest -= comp
        pos.append(min(comp))
        edges.append((min(comp), min(comp), float(len(comp)), len(comp)))
    return sorted(pos), sorted(edges)


def _ours(skel):
    g = build_graph(skel, everywhere(np.ones(skel.shape)), 0)
    pos = sorted(tuple(int(x) for x in p) for p in g.node_pos)
    edges = []
    for e in range(len(g.edge_u)):
        a, b = sorted([tuple(int(x) for x in g.node_pos[g.edge_u[e]]), tuple(int(x) for x in g.node_pos[g.edge_v[e]])])
        edges.append((a, b, round(float(g.edge_len[e]), 9), int(g.edge_ptr[e + 1] - g.edge_ptr[e])))
    return pos, sorted(edges)


@pytest.mark.parametrize("seed", range(6))
def test_trace_matches_python_oracle_2d(seed):
    skel = skeletonize(random_blobs((48, 48), seed))
    assert _ours(skel) == _oracle_graph(skel)


@pytest.mark.parametrize("seed", range(3))
def test_trace_matches_python_oracle_3d(seed):
    skel = skeletonize(random_blobs((16, 16, 16), seed, q=0.55, sigma=1.2))
    assert _ours(skel) == _oracle_graph(skel)


def test_trace_on_raw_random_voxels_matches_oracle():
    # not a skeleton at all: clusters, self-loops through clusters, lone voxels
    skel = np.random.default_rng(5).random((30, 30)) < 0.25
    assert _ours(skel) == _oracle_graph(skel)


def test_empty_and_single_voxel():
    g = build_graph(np.zeros((5, 5), bool), everywhere(np.zeros((5, 5))), 5)
    assert g.n_nodes == 0 and len(g.edge_u) == 0
    s = np.zeros((5, 5), bool)
    s[2, 2] = True
    g = build_graph(s, everywhere(np.ones((5, 5))), 5)
    assert g.n_nodes == 1 and g.edge_u.tolist() == [0] and g.edge_v.tolist() == [0] and g.edge_len.tolist() == [1.0]


# ----------------------------------------------------------------------------- hand-drawn
def test_line_and_diagonal_lengths():
    s = np.zeros((20, 30), bool)
    s[5, 2:27] = True
    s[np.arange(8, 18), np.arange(3, 13)] = True
    g = build_graph(s, everywhere(np.ones(s.shape)), 0)
    assert sorted(np.round(g.edge_len, 9).tolist()) == sorted([24.0, round(9 * 2**0.5, 9)])
    assert g.n_nodes == 4


def test_y_shape_has_one_junction_three_branches():
    s = np.zeros((40, 40), bool)
    s[20, 5:21] = True  # stem
    for i in range(1, 15):
        s[20 - i, 20 + i] = True
        s[20 + i, 20 + i] = True
    g = build_graph(s, everywhere(np.ones(s.shape)), 0)
    deg = g.degree()
    assert (deg >= 3).sum() == 1 and (deg == 1).sum() == 3 and len(g.edge_u) == 3
    assert np.isclose(g.edge_len.sum(), 15 + 2 * 14 * 2**0.5, atol=2.0)


def test_ring_is_one_loop_node():
    yy, xx = np.mgrid[:41, :41]
    ring = skeletonize(((yy - 20) ** 2 + (xx - 20) ** 2 <= 15**2) & ((yy - 20) ** 2 + (xx - 20) ** 2 >= 12**2))
    g = build_graph(ring, everywhere(np.ones(ring.shape)), 5)
    assert g.n_nodes == 1 and g.edge_u[0] == g.edge_v[0] and g.edge_len[0] == ring.sum()


def _helix_path():
    t = np.linspace(0, 4 * np.pi, 5000)
    raw = np.round(np.stack([3 * t / np.pi + 2, 8 * np.cos(t) + 12, 8 * np.sin(t) + 12], 1)).astype(int)
    keep = [raw[0]]
    for p in raw[1:]:
        if (p == keep[-1]).all():
            continue
        if len(keep) > 1 and np.abs(p - keep[-2]).max() <= 1:
            keep[-1] = p
        else:
            keep.append(p)
    return np.array(keep)


def test_3d_helix_length():
    path = _helix_path()
    vol = np.zeros((int(path[:, 0].max()) + 3, 25, 25), bool)
    vol[tuple(path.T)] = True
    g = build_graph(vol, everywhere(np.ones(vol.shape)), 0)
    assert len(g.edge_u) == 1 and g.n_nodes == 2
    expected = np.sqrt((np.diff(path, axis=0) ** 2).sum(1)).sum()
    assert np.isclose(g.edge_len[0], expected)


# ----------------------------------------------------------------------------- pruning oracle
def _prune_oracle(u, v, ln, n, m):
    alive = [True] * len(u)
    while True:
        deg = [0] * n
        for e in range(len(u)):
            if alive[e]:
                deg[u[e]] += 1
                deg[v[e]] += 1
        kill = [e for e in range(len(u)) if alive[e] and ln[e] < m and (deg[u[e]] == 1 or deg[v[e]] == 1)]
        if not kill:
            return alive
        for e in kill:
            alive[e] = False


@pytest.mark.parametrize("seed", range(10))
def test_prune_matches_oracle(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    E = int(rng.integers(0, 40))
    u = rng.integers(0, n, E).astype(np.int64)
    v = rng.integers(0, n, E).astype(np.int64)
    ln = rng.random(E) * 10
    alive = np.ones(E, bool)
    K.prune_spurs(u, v, ln, n, 5.0, alive)
    assert alive.tolist() == _prune_oracle(u.tolist(), v.tolist(), ln.tolist(), n, 5.0)


# ----------------------------------------------------------------------------- reach oracle
@pytest.mark.parametrize("seed", range(8))
def test_reach_kernels_match_bruteforce(seed):
    rng = np.random.default_rng(seed)
    K_ = int(rng.integers(0, 60))
    C = 5
    rl = rng.integers(1, C + 1, K_).astype(np.int64)
    pl = rng.integers(0, 4, K_).astype(np.int64)
    coords = rng.integers(0, 20, (K_, 2)).astype(float)
    root = np.full(C + 1, -1, np.int64)
    for c in range(1, C + 1):
        ks = np.flatnonzero(rl == c)
        if len(ks):
            root[c] = rng.choice(ks)
    wanted = root >= 0
    out = np.zeros(C + 1, np.int64)
    R.root_labels(rl, pl, coords, root, wanted, out)
    total = 0
    for c in range(1, C + 1):
        if root[c] < 0:
            assert out[c] == 0
            continue
        lab = pl[root[c]]
        if lab == 0:
            sel = np.flatnonzero((rl == c) & (pl > 0))
            lab = 0 if len(sel) == 0 else pl[sel[np.argmin(((coords[sel] - coords[root[c]]) ** 2).sum(1))]]
        assert out[c] == lab
        if lab:
            total += int(((rl == c) & (pl == lab)).sum())
    assert R.count_reached(rl, pl, out) == total


# ----------------------------------------------------------------------------- EDT at voxels
@pytest.mark.parametrize("shape", [(1, 1), (7, 9), (50, 61), (12, 15, 11), (1, 5, 4)])
@pytest.mark.parametrize("p", [0.3, 0.9, 0.995])
def test_edt_at_equals_scipy_bit_for_bit(shape, p):
    from segscore.kernels.edt import edt_at

    m = np.random.default_rng(hash((shape, p)) % 2**32).random(shape) < p
    m3 = m.reshape((1,) * (3 - m.ndim) + m.shape)
    c = np.argwhere(np.ones(m3.shape, bool)).astype(np.int64)
    out = np.empty(len(c))
    edt_at(m3.view(np.uint8), c, np.ones(3), out)
    if m.all():
        assert np.isinf(out).all()
    else:
        assert np.array_equal(out, ndimage.distance_transform_edt(m).ravel())


@pytest.mark.parametrize("shape", [(7, 9), (40, 33), (12, 15, 11), (1, 5, 4)])
@pytest.mark.parametrize("p", [0.5, 0.97])
@pytest.mark.parametrize("sp", [(0.3, 1.0, 2.5), (4.0, 0.5, 1.0), (1.0, 1.0, 0.1)])
def test_edt_at_with_a_spacing_equals_scipys_sampling(shape, p, sp):
    from segscore.curvilinear.graph import distance_at

    m = np.random.default_rng(hash((shape, p, sp)) % 2**32).random(shape) < p
    spacing = sp[3 - m.ndim:]
    got = distance_at(m, np.arange(m.size), spacing)
    want = ndimage.distance_transform_edt(m, sampling=spacing).ravel()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_radius_on_skeleton_matches_scipy_on_fives(shared_data):
    from segscore.curvilinear.graph import radius_on_skeleton
    from tests.curvilinear.helpers import FIVES, load_fives

    m = load_fives(shared_data, FIVES[1])
    sk = skeletonize(m)
    r = radius_on_skeleton(m, sk)
    assert np.array_equal(r.idx, np.flatnonzero(sk))
    assert np.array_equal(r.val, ndimage.distance_transform_edt(m)[sk])
    assert np.array_equal(r.at(r.idx[::-1]), r.val[::-1])


@pytest.mark.parametrize("shape", [(1, 1), (6, 5), (40, 37), (9, 11, 8)])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.6, 1.0])
def test_label_equals_scipy(shape, p):
    from segscore.curvilinear.graph import label

    m = np.random.default_rng(7).random(shape) < p
    ours, n = label(m)
    ref, nr = ndimage.label(m, np.ones((3,) * m.ndim))
    assert n == nr and np.array_equal(ours, ref)


@pytest.mark.parametrize("shape", [(1, 1), (6, 5), (40, 37), (9, 11, 8)])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.6, 1.0])
def test_count_components_and_coordinates_equal_scipy_and_numpy(shape, p):
    from segscore.curvilinear.graph import count_components, label, nonzero_coords

    rng = np.random.default_rng(11)
    m = rng.random(shape) < p
    assert count_components(m) == ndimage.label(m, np.ones((3,) * m.ndim))[1]
    assert np.array_equal(nonzero_coords(m), np.argwhere(m))
    assert np.array_equal(nonzero_coords(m.astype(np.uint8) * 3), np.argwhere(m))
    # the per-thread scratch is reused across shapes and calls: a second mask of the same
    # shape, then one of another, label as a fresh call would
    m2 = rng.random(shape) < 0.5
    for x in (m2, m, m2[..., :-1] if shape[-1] > 1 else m2):
        ours, n = label(x)
        ref, nr = ndimage.label(x, np.ones((3,) * x.ndim))
        assert n == nr and np.array_equal(ours, ref)


def test_label_keeps_no_large_scratch(monkeypatch):
    """A mask beyond SCRATCH_KEEP labels the same and leaves no buffer in its thread."""
    import threading

    import segscore.curvilinear.graph as G

    monkeypatch.setattr(G, "SCRATCH_KEEP", 100)
    monkeypatch.setattr(G, "_scratch", threading.local())  # none left by earlier tests
    m = np.random.default_rng(4).random((30, 31)) < 0.4
    for _ in range(2):
        ours, n = G.label(m)
        ref, nr = ndimage.label(m, np.ones((3, 3)))
        assert n == nr and np.array_equal(ours, ref)
    assert getattr(G._scratch, "pad", None) is None and getattr(G._scratch, "slots", None) is None


def test_graph_components_and_pruning_on_hand_drawn():
    s = np.zeros((40, 60), bool)
    s[20, 5:21] = True  # a Y ...
    for i in range(1, 15):
        s[20 - i, 20 + i] = True
        s[20 + i, 20 + i] = True
    s[5, 45:58] = True  # ... and a separate line
    s[30:33, 50] = True  # ... and a 3-voxel stub, pruned at 5
    g = build_graph(s, everywhere(np.ones(s.shape)), 5)
    comp = g.components()
    alive = g.alive_nodes()
    assert len(set(comp[alive].tolist())) == 2 and len(g.alive_edges()) == 4
    assert not g.node_alive[~np.isin(np.arange(g.n_nodes), alive)].any()
    g0 = build_graph(s, everywhere(np.ones(s.shape)), 0)
    assert len(set(g0.components()[g0.alive_nodes()].tolist())) == 3


@pytest.mark.parametrize("shape", [(7, 9), (5, 6, 4)])
def test_radius_on_skeleton_without_background_follows_scipy(shape):
    from segscore.curvilinear.graph import radius_on_skeleton

    m = np.ones(shape, bool)  # no background anywhere: scipy measures to the array's edge
    sk = np.zeros(shape, bool)
    sk[tuple(s // 2 for s in shape)] = True
    r = radius_on_skeleton(m, sk)
    assert np.array_equal(r.val, ndimage.distance_transform_edt(m)[sk])


@pytest.mark.parametrize("shape", [(1, 1), (9, 7), (40, 33), (12, 15, 11), (1, 5, 4)])
@pytest.mark.parametrize("p", [0.5, 0.95, 1.0])
def test_window_max_equals_the_window_maximum_of_scipys_map(shape, p):
    from segscore.curvilinear.metrics import window_max

    rng = np.random.default_rng(hash((shape, p)) % 2**32)
    m = rng.random(shape) < p
    coords = np.argwhere(np.ones(shape, bool))[rng.permutation(int(np.prod(shape)))[:50]]
    d = ndimage.distance_transform_edt(m)
    pad = np.pad(d, 1, constant_values=-1.0)  # outside the array: never the maximum
    want = []
    for c in coords:
        win = pad[tuple(slice(x, x + 3) for x in c)]
        want.append(max(win.max(), 0.0))
    assert np.array_equal(window_max(m, coords), np.array(want))


@pytest.mark.parametrize("shape", [(9, 7), (40, 33), (12, 15, 11)])
def test_window_max_from_known_values_equals_the_search(shape):
    """cbdice_star reads the truth's radii at the voxels the two skeletons share: the values
    are the same function of the same mask, so the result equals searching every voxel."""
    from segscore.curvilinear.metrics import _window_max_known, window_max

    rng = np.random.default_rng(sum(shape))
    m = rng.random(shape) < 0.7
    every = np.argwhere(np.ones(shape, bool))
    for trial in range(5):
        known = every[np.sort(rng.permutation(len(every))[: int(rng.integers(0, len(every)))])]
        asked = every[np.sort(rng.permutation(len(every))[: int(rng.integers(1, 40))])]
        vals = window_max(m, known) if len(known) else np.zeros(0)
        assert np.array_equal(_window_max_known(m, asked, known, vals), window_max(m, asked))
