"""Synthetic instance segmentations for the objects tests (and the benchmark)."""

from __future__ import annotations

import numpy as np


def disk(shape, center, radius):
    grids = np.ogrid[tuple(slice(0, s) for s in shape)]
    d2 = sum((g - c) ** 2 for g, c in zip(grids, center))
    return d2 <= radius ** 2


def synthetic_pair(shape=(256, 256), n=60, seed=0, r=(4, 10), p_miss=0.1, p_split=0.1, p_merge=0.1,
                   n_fp=5, jitter=2, dtype=np.int32):
    """``(truth, pred)`` label images of ~``n`` balls with misses, splits, merges and false positives.

    Objects are painted in turn (later ones over earlier), ids shuffled and non-consecutive.
    """
    rng = np.random.default_rng(seed)
    nd = len(shape)
    truth = np.zeros(shape, dtype)
    pred = np.zeros(shape, dtype)
    t_ids = rng.choice(np.arange(1, 50 * n), size=n, replace=False)
    p_next = iter(rng.choice(np.arange(1, 100 * n), size=4 * n + n_fp, replace=False))
    centers = [rng.integers(0, s, n) for s in shape]
    radii = rng.integers(r[0], r[1] + 1, n)
    prev = None
    for k in range(n):
        c = tuple(int(cc[k]) for cc in centers)
        rad = int(radii[k])
        m = disk(shape, c, rad)
        truth[m] = t_ids[k]
        u = rng.random()
        if u < p_miss:
            continue
        c2 = tuple(int(x + rng.integers(-jitter, jitter + 1)) for x in c)
        m2 = disk(shape, c2, max(1, rad + int(rng.integers(-1, 2))))
        if u < p_miss + p_split:  # split along the first axis through the centre
            grid = np.ogrid[tuple(slice(0, s) for s in shape)][0]
            pred[m2 & (grid < c2[0])] = next(p_next)
            pred[m2 & (grid >= c2[0])] = next(p_next)
        elif u < p_miss + p_split + p_merge and prev is not None:  # merged with the previous prediction
            pred[m2] = prev
        else:
            prev = next(p_next)
            pred[m2] = prev
    for _ in range(n_fp):
        c = tuple(int(rng.integers(0, s)) for s in shape)
        pred[disk(shape, c, int(rng.integers(r[0], r[1] + 1)))] = next(p_next)
    return truth, pred


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
