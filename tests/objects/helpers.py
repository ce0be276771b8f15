"""Synthetic instance segmentations for the objects tests (and the benchmark)."""

from __future__ import annotations

import numpy as np

from segscore.io.samples import synthetic_pair  # noqa: F401 - the package's sample generator


def disk(shape, center, radius):
    """Boolean mask of the ball of ``radius`` around ``center`` (any dimension)."""
    grids = np.ogrid[tuple(slice(0, s) for s in shape)]
    d2 = sum((g - c) ** 2 for g, c in zip(grids, center))
    return d2 <= radius ** 2


def relabel(labels, seed):
    """The same segmentation with its ids permuted to other, random non-zero ids."""
    rng = np.random.default_rng(seed)
    ids = np.unique(labels)
    ids = ids[ids != 0]
    new = rng.choice(np.arange(1, 10 * (ids.size + 1)), size=ids.size, replace=False)
    out = np.zeros(labels.shape, np.int64)
    for a, b in zip(ids, new):
        out[labels == a] = b
    return out
