"""The nearest-feature transform against scipy's ``distance_transform_edt(return_indices=True)``
(ties between equidistant features included), and the operators' other scipy-free pieces
against the scipy calls they replace."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels.edt import nearest_feature

ndimage = pytest.importorskip("scipy.ndimage")


def _scipy_owner(feat):
    inds = ndimage.distance_transform_edt(~feat, return_distances=False, return_indices=True)
    flat = np.ravel_multi_index(tuple(inds), feat.shape).ravel()
    rank = np.full(feat.size, -1, np.int64)
    sk = np.flatnonzero(feat.ravel())
    rank[sk] = np.arange(len(sk))
    return rank[flat]


def _ours(feat):
    sk = np.flatnonzero(feat.ravel()).astype(np.int64)
    out = np.empty(feat.size, np.int32)
    nearest_feature(np.array((1,) * (3 - feat.ndim) + feat.shape, np.int64), sk, out)
    return out


@pytest.mark.parametrize("seed", range(60))
def test_nearest_feature_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    nd = 2 + seed % 2
    shape = tuple(int(s) for s in rng.integers(1, 48 if nd == 2 else 14, nd))
    density = [0.002, 0.01, 0.05, 0.3, 0.9][seed % 5]  # sparse features: many equidistant pairs
    feat = rng.random(shape) < density
    if not feat.any():
        feat.flat[int(rng.integers(feat.size))] = True
    np.testing.assert_array_equal(_ours(feat), _scipy_owner(feat))


def test_nearest_feature_on_a_skeleton_equals_scipy():
    from tests.curvilinear.helpers import vessel_tree

    from segscore.curvilinear.graph import skeletonize

    feat = skeletonize(vessel_tree((200, 180), seed=1))
    np.testing.assert_array_equal(_ours(feat), _scipy_owner(feat))


@pytest.mark.parametrize("seed", range(10))
def test_unit_length_shortest_paths_equal_scipy_hop_counts(seed):
    """The bridge operator's hop counts (shortest paths with every edge of length 1) against
    ``scipy.sparse.csgraph.shortest_path(..., unweighted=True)``."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    from segscore.kernels.graphmatch import dijkstra_to_targets

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    e = int(rng.integers(0, 2 * n))
    u, v = rng.integers(0, n, e), rng.integers(0, n, e)
    src = np.unique(rng.integers(0, n, 5)).astype(np.int64)
    want = shortest_path(coo_matrix((np.ones(e), (u, v)), shape=(n, n)), directed=False, unweighted=True, indices=src)
    a, b = np.r_[u, v], np.r_[v, u]
    o = np.argsort(a, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(a, minlength=n))]).astype(np.int64)
    got = np.empty((len(src), n))
    dijkstra_to_targets(indptr, b[o].astype(np.int64), np.ones(len(o)), src, np.arange(n, dtype=np.int64), got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(6))
def test_bridge_pairs_equal_ckdtree_query_pairs(seed):
    """The bridge operator's candidate pairs, and so its draws, are those of
    ``sorted(cKDTree(ends).query_pairs(BRIDGE_GAP))``."""
    from scipy.spatial import cKDTree

    from segscore.curvilinear.operators import BRIDGE_GAP, close_point_pairs

    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 40, (int(rng.integers(2, 80)), 2 + seed % 2)).astype(float)
    want = np.array(sorted(cKDTree(pos).query_pairs(BRIDGE_GAP)), dtype=np.int64).reshape(-1, 2)
    np.testing.assert_array_equal(close_point_pairs(pos, BRIDGE_GAP), want)
