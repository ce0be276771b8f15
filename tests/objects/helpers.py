"""Synthetic instance segmentations for the objects tests (and the benchmark)."""

from __future__ import annotations

import numpy as np


def disk(shape, center, radius):
    """Boolean mask of the ball of ``radius`` around ``center`` (any dimension)."""
    grids = np.ogrid[tuple(slice(0, s) for s in shape)]
    d2 = sum((g - c) ** 2 for g, c in zip(grids, center))
    return d2 <= radius ** 2


def _paint(image, center, radius, value, half=None):
    """Set the ball to ``value`` (only its part with first coordinate below the centre when
    ``half == "low"``, the rest when ``"high"``), touching only its bounding box."""
    box = tuple(slice(max(0, c - radius), min(s, c + radius + 1)) for c, s in zip(center, image.shape))
    if any(b.start >= b.stop for b in box):
        return
    grids = np.ogrid[box]
    m = sum((g - c) ** 2 for g, c in zip(grids, center)) <= radius ** 2
    if half is not None:
        m = m & ((grids[0] < center[0]) if half == "low" else (grids[0] >= center[0]))
    image[box][m] = value


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
        _paint(truth, c, rad, t_ids[k])
        u = rng.random()
        if u < p_miss:
            continue
        c2 = tuple(int(x + rng.integers(-jitter, jitter + 1)) for x in c)
        r2 = max(1, rad + int(rng.integers(-1, 2)))
        if u < p_miss + p_split:  # split along the first axis through the centre
            _paint(pred, c2, r2, next(p_next), half="low")
            _paint(pred, c2, r2, next(p_next), half="high")
        elif u < p_miss + p_split + p_merge and prev is not None:  # merged with the previous prediction
            _paint(pred, c2, r2, prev)
        else:
            prev = next(p_next)
            _paint(pred, c2, r2, prev)
    for _ in range(n_fp):
        c = tuple(int(rng.integers(0, s)) for s in shape)
        _paint(pred, c, int(rng.integers(r[0], r[1] + 1)), next(p_next))
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
