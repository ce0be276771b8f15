"""The k-d tree replica against scipy's cKDTree: the same point order in the tree, the same
nearest point (ties included) and distance for every query."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.curvilinear.graph import PointTree
from segscore.kernels.kdtree import build_tree, introselect, nth_element, partition_below

cKDTree = pytest.importorskip("scipy.spatial").cKDTree


def _points(rng, n, m, span, frac):
    data = rng.integers(0, span, (n, m)).astype(float)
    if frac:
        data += rng.random((n, m)).round(1)
    return data


@pytest.mark.parametrize("seed", range(40))
def test_tree_layout_and_queries_equal_ckdtree(seed):
    rng = np.random.default_rng(seed)
    m = 2 + seed % 2
    n = int(rng.integers(1, 2500))
    span = [2, 5, 30, 300][seed % 4]  # few distinct values: ties everywhere
    data = _points(rng, n, m, span, seed % 5 == 0)
    ref = cKDTree(data)
    idx = np.arange(n, dtype=np.int64)
    build_tree(data, idx)
    np.testing.assert_array_equal(idx, ref.indices)
    tree = PointTree(data)
    q = _points(rng, 400, m, span + 4, seed % 3 == 0) - 2
    for bound in (1.0, 3.0, np.inf):
        d, j = tree.query(q, distance_upper_bound=bound)
        dr, jr = ref.query(q, distance_upper_bound=bound)
        np.testing.assert_array_equal(j, jr)
        np.testing.assert_array_equal(d, dr)


def test_queries_on_a_skeleton_equal_ckdtree():
    from tests.curvilinear.helpers import vessel_tree

    from segscore.curvilinear.graph import skeletonize
    from segscore.curvilinear.graph import nonzero_coords

    coords = nonzero_coords(skeletonize(vessel_tree((160, 160), seed=3)))
    rng = np.random.default_rng(0)
    q = coords[rng.choice(len(coords), 2000)] + rng.integers(-2, 3, (2000, 2))
    d, j = PointTree(coords).query(q, distance_upper_bound=3)
    dr, jr = cKDTree(coords.astype(float)).query(q.astype(float), distance_upper_bound=3)
    np.testing.assert_array_equal(j, jr)
    np.testing.assert_array_equal(d, dr)


def test_empty_and_single_point_trees():
    d, j = PointTree(np.zeros((0, 2))).query(np.array([[1.0, 2.0]]))
    assert np.isinf(d[0]) and j[0] == 0
    d, j = PointTree(np.array([[3.0, 4.0]])).query(np.array([[0.0, 0.0], [3.0, 4.0]]), distance_upper_bound=5.0)
    assert j.tolist() == [1, 0] and np.isinf(d[0]) and d[1] == 0.0  # strictly within the bound


@pytest.mark.parametrize("seed", range(30))
def test_nth_element_selects_and_partition_splits(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    data = rng.integers(0, [3, 50][seed % 2], (n, 1)).astype(float)
    idx = rng.permutation(n).astype(np.int64)
    nth = int(rng.integers(0, n))
    nth_element(idx, 0, nth, n, data, 0)
    k = data[idx, 0]
    assert sorted(idx.tolist()) == list(range(n))
    assert k[nth] == np.sort(data[:, 0])[nth]
    assert (k[:nth] <= k[nth]).all() and (k[nth + 1:] >= k[nth]).all()
    p = partition_below(idx, 0, n, data, 0, k[nth])
    k = data[idx, 0]
    assert p == int((data[:, 0] < np.sort(data[:, 0])[nth]).sum())
    assert (k[:p] < np.sort(data[:, 0])[nth]).all() and (k[p:] >= np.sort(data[:, 0])[nth]).all()


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_the_heap_selection_past_the_depth_limit_selects(depth):
    """Past its depth limit introselect finishes by a heap selection (rare on real data, so
    forced here): the nth key is in place, none before it larger, none after it smaller."""
    rng = np.random.default_rng(depth)
    for _ in range(200):
        n = int(rng.integers(4, 120))
        data = rng.integers(0, 6, (n, 2)).astype(float)
        idx = rng.permutation(n).astype(np.int64)
        nth = int(rng.integers(0, n))
        introselect(idx, 0, nth, n, depth, data, 1)
        k = data[idx, 1]
        assert sorted(idx.tolist()) == list(range(n))
        assert k[nth] == np.sort(data[:, 1])[nth]
        assert (k[:nth] <= k[nth]).all() and (k[nth + 1:] >= k[nth]).all()


def test_the_heap_selection_leaves_equal_keys_where_the_gnu_library_does():
    """Past the depth limit too, the index order is libstdc++'s own: its ``std::__introselect``
    with depth limits 0-3 on keys full of ties, recorded by benchmarks/introselect_fixtures.py."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[1] / "data" / "libstdcxx" / "introselect.json").read_text())
    assert len(doc["cases"]) >= 100
    certain = 0
    for c in doc["cases"]:
        n = len(c["keys"])
        data = np.asarray(c["keys"], float)[:, None]
        idx = np.arange(n, dtype=np.int64)
        introselect(idx, 0, c["nth"], n, c["depth"], data, 0)
        assert idx.tolist() == c["want"], c
        certain += n > 3 and c["depth"] == 0
    assert certain >= 30  # cases where the heap selection does all the work
