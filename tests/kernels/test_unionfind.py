"""The skeleton kernels' union-find against a plain set-merging oracle."""

from __future__ import annotations

import numpy as np
import pytest

from segscore.kernels.skelgraph import _find as find
from segscore.kernels.skelgraph import _union as union


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
