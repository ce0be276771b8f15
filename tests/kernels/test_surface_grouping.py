"""``segscore.kernels.surface.group_by_id`` (an id table, or a binary search when ids are large)
and ``cell_items`` (cell numbers by shifts) against NumPy oracles."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels.surface import CELL, cell_items, group_by_id


@pytest.mark.parametrize("scale", [1, 10**12])  # small ids: the table; huge ids: the binary search
def test_group_by_id_equals_stable_sort(scale):
    rng = np.random.default_rng(3)
    object_ids = np.unique(rng.integers(1, 500, 60)).astype(np.uint64) * np.uint64(scale)
    ids = object_ids[rng.integers(0, object_ids.size, 5000)]
    ids[100:140] = object_ids[7]  # runs of one id, as a surface walked in C order has
    coords = rng.integers(0, 1000, (ids.size, 3)).astype(np.int32)
    start = np.empty(object_ids.size + 1, np.int64)
    out = np.empty_like(coords)
    group_by_id(coords, ids, object_ids, start, out)

    order = np.argsort(np.searchsorted(object_ids, ids), kind="stable")
    np.testing.assert_array_equal(out, coords[order])
    counts = np.array([(ids == g).sum() for g in object_ids])
    np.testing.assert_array_equal(start, np.concatenate([[0], np.cumsum(counts)]))


@pytest.mark.parametrize("dims", [(40, 50, 60), (1, 300, 200), (3, 1000, 1000)])
def test_cell_items_equals_floor_division(dims):
    rng = np.random.default_rng(4)
    lo = np.array([5, -7, 11], np.int64)
    dims = np.array(dims, np.int64)
    pts = (lo + rng.integers(0, dims, (400, 3))).astype(np.int32)
    pts[0], pts[1] = lo, lo + dims - 1  # the box's corners
    sorted_pts = np.empty_like(pts)
    items = cell_items(pts, lo, dims, sorted_pts)

    # the oracle: cells of CELL voxels a side (1 along an extent-1 axis), doubled until at most 4 n + 64
    c = np.where(dims > 1, CELL, 1)
    while np.prod(-(-dims // c)) > 4 * len(pts) + 64:
        c = np.where(dims > 1, 2 * c, 1)
    g = -(-dims // c)
    cell = (pts - lo) // c
    k = (cell[:, 0] * g[1] + cell[:, 1]) * g[2] + cell[:, 2]
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(sorted_pts, pts[order])
    cells = np.unique(k)
    assert items.shape == (cells.size, 8)
    for row, cid in zip(items, cells):
        members = pts[k == cid]
        np.testing.assert_array_equal(row[:3], members.min(0))
        np.testing.assert_array_equal(row[3:6], members.max(0))
        np.testing.assert_array_equal(sorted_pts[row[6]:row[7]], members)
