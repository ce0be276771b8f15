"""Nearest-voxel search against brute force; the Kirchhoff sink attachment and DIADEM match it
reproduces against scipy's cKDTree."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.curvilinear import costs as C
from segscore.curvilinear import metrics as M
from segscore.curvilinear.graph import nearest_voxels
from tests.curvilinear.helpers import everywhere, random_blobs


def brute(cand, queries, max_d2, key):
    d2 = ((queries[:, None, :] - cand[None, :, :]) ** 2).sum(-1) if len(cand) else np.zeros((len(queries), 0), int)
    out_d2, out_i, out_t = [], [], []
    for row in d2:
        near = np.flatnonzero(row == row.min()) if len(row) and row.min() <= max_d2 else []
        out_d2.append(int(row.min()) if len(near) else -1)
        out_i.append(int(near[0]) if len(near) else -1)
        out_t.append(len(set(key[near].tolist())) > 1 if len(near) else False)
    return np.array(out_d2), np.array(out_i), np.array(out_t, bool)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("seed", range(12))
def test_nearest_voxels_matches_brute_force(nd, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 14, nd))
    n = int(rng.integers(0, 40))
    cand = np.stack([rng.integers(0, s, n) for s in shape], axis=1).reshape(n, nd)
    if seed % 3 == 0 and len(cand):  # duplicated positions, as nodes and chain ends share voxels
        cand = np.concatenate([cand, cand[: len(cand) // 2]])
    queries = np.stack([rng.integers(0, s, 25) for s in shape], axis=1)
    key = rng.integers(0, 3 if seed % 2 else 1000, len(cand))
    max_d2 = int(rng.integers(0, 40))
    d2, idx, tied = nearest_voxels(cand, queries, shape, max_d2, key)
    w_d2, w_i, w_t = brute(cand, queries, max_d2, key)
    np.testing.assert_array_equal(d2, w_d2)
    np.testing.assert_array_equal(idx, w_i)
    np.testing.assert_array_equal(tied, w_t)


def test_nearest_voxels_refuses_what_it_cannot_search():
    cand = np.array([[1, 1]])
    assert nearest_voxels(cand, np.array([[0.5, 1.0]]), (4, 4), 8) is None  # not a voxel
    assert nearest_voxels(cand, np.array([[4, 1]]), (4, 4), 8) is None  # outside the array
    d2, idx, tied = nearest_voxels(np.zeros((0, 2)), np.array([[0, 0]]), (4, 4), 8)
    assert (d2.tolist(), idx.tolist(), tied.tolist()) == ([-1], [-1], [False])


@pytest.mark.parametrize("nd", [2, 3])
def test_ball_offsets_complete_and_sorted(nd):
    from segscore.kernels.fibers import ball_offsets

    off = ball_offsets(np.sqrt(8))  # the sink ball of nearest_voxels: squared length <= 8
    if nd == 2:
        off = off[off[:, 0] == 0]
    d2 = (off**2).sum(1)
    assert (np.diff(d2) >= 0).all()
    assert (off[:, : 3 - nd] == 0).all()
    assert len(off) == len({tuple(o) for o in off}) == sum(1 for o in np.ndindex(*(7,) * nd)
                                                           if sum((np.array(o) - 3) ** 2) <= 8)


class ScipyTree:
    """scipy's cKDTree behind :class:`segscore.curvilinear.graph.PointTree`'s interface."""

    def __init__(self, points):
        from scipy.spatial import cKDTree

        self.tree = cKDTree(np.asarray(points, dtype=float))

    def query(self, x, distance_upper_bound=np.inf):
        return self.tree.query(np.asarray(x, dtype=float), distance_upper_bound=distance_upper_bound)


def _force_kdtree(monkeypatch):
    """Every nearest search of the costs and metrics by scipy's cKDTree itself."""
    import segscore.curvilinear.graph as G

    monkeypatch.setattr(C, "nearest_voxels", lambda *a, **k: None)
    monkeypatch.setattr(G, "PointTree", ScipyTree)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_kirchhoff_attaches_sinks_as_cKDTree_does(monkeypatch, nd, seed):
    from segscore.curvilinear.scoring import prepare_reference, score

    shape = (72, 72) if nd == 2 else (24, 24, 24)
    gt = random_blobs(shape, seed=seed)
    pred = random_blobs(shape, seed=seed + 100) | gt
    pred[tuple(slice(s // 3, s // 3 + 2) for s in shape)] = False
    ours = score(None, pred, reference=prepare_reference(gt, prune_px=2))
    _force_kdtree(monkeypatch)
    theirs = score(None, pred, reference=prepare_reference(gt, prune_px=2))
    for k in ("conductance", "conductance_ref", "conductance_frac", "diadem_like"):
        assert ours[k] == theirs[k], k


def test_diadem_like_over_integer_and_float_positions():
    rng = np.random.default_rng(5)
    ref = rng.integers(0, 60, (40, 2))
    pred = rng.integers(0, 60, (30, 2))
    w = rng.random(40)
    assert M.diadem_like(ref, w, pred) == M.diadem_like(ref.astype(float), w, pred.astype(float))


def test_a_tied_sink_is_attached_as_cKDTree_attaches_it(monkeypatch):
    import segscore.curvilinear.graph as G
    from tests.curvilinear.test_costs import ONE, SHAPE, make_graph, row

    calls = []
    real = G.PointTree
    monkeypatch.setattr(G, "PointTree", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = make_graph(SHAPE, [(5, 2), (5, 22), (7, 2), (7, 22)], [(0, 1, row(5, 2, 22)), (2, 3, row(7, 2, 22))])
    C.kirchhoff(g, 0, np.array([[5, 22]]), ONE, everywhere(np.ones(SHAPE)))
    assert calls == []  # on the skeleton: no tie, no k-d tree
    ours = C.kirchhoff(g, 0, np.array([[6, 12]]), ONE, everywhere(np.ones(SHAPE)))  # (5, 12) and (7, 12) both at 1
    assert calls == [1]
    monkeypatch.setattr(G, "PointTree", ScipyTree)
    assert ours == C.kirchhoff(g, 0, np.array([[6, 12]]), ONE, everywhere(np.ones(SHAPE)))
