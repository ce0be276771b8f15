"""kernels.nearest.search_left against np.searchsorted(side="left") on random sorted arrays with
repeats, for integer and float keys, values below, inside and above the range."""

import numpy as np
import pytest

from segscore.kernels.nearest import search_left


@pytest.mark.parametrize("seed", range(20))
def test_search_left_is_numpy_searchsorted_left(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    for values, probes in (
        (np.sort(rng.integers(-5, 6, n)).astype(np.int64), rng.integers(-8, 9, 30).astype(np.int64)),
        (np.sort(rng.choice([-1.5, 0.0, 0.25, 2.0, 7.0], n)), rng.uniform(-3, 9, 30)),
    ):
        for x in list(probes) + list(values[:3]):
            assert search_left(values, x) == int(np.searchsorted(values, x, side="left"))
