"""The shared union-find (kernels.components) against a plain set-merging oracle."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels.components import find
from segscore.kernels.components import union


@pytest.mark.parametrize("seed", range(10))
def test_union_find_matches_set_merging(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    parent = np.arange(n)
    sets = [{i} for i in range(n)]
    for _ in range(int(rng.integers(0, 2 * n))):
        a, b = (int(x) for x in rng.integers(0, n, 2))
        union(parent, a, b)
        if sets[a] is not sets[b]:
            merged = sets[a] | sets[b]
            for i in merged:
                sets[i] = merged
        assert (parent <= np.arange(n)).all()  # a parent is never larger than its child
    for i in range(n):
        assert find(parent, i) == min(sets[i])  # the root is the smallest member


@pytest.mark.parametrize("n", [1, 2, 7])
def test_union_find_on_a_strided_parent_and_a_single_set(n):
    store = np.full(3 * n, -1, np.int64)
    parent = store[::3]  # non-contiguous
    parent[:] = np.arange(n)
    for a in range(n - 1, 0, -1):  # join everything, largest first
        union(parent, a, a - 1)
    assert [find(parent, i) for i in range(n)] == [0] * n
    assert (store.reshape(n, 3)[:, 1:] == -1).all()
    one = np.zeros(1, np.int32)  # one element: its own root
    assert find(one, 0) == 0 and union(one, 0, 0) == 0 and one.tolist() == [0]
