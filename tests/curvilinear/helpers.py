"""Hand-drawn skeletons and synthetic vessel trees for the curvilinear tests."""

from __future__ import annotations

import numpy as np


def disk_line(mask, a, b, r):
    """Stamp balls of radius r along a -> b (2D or 3D)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    n = max(int(np.ceil(np.linalg.norm(b - a) * 2)), 1)
    for t in np.linspace(0, 1, n + 1):
        c = a + (b - a) * t
        lo = [max(int(np.floor(x - r)), 0) for x in c]
        hi = [min(int(np.ceil(x + r)) + 1, s) for x, s in zip(c, mask.shape)]
        sl = tuple(slice(p, q) for p, q in zip(lo, hi))
        sub = sum((g - x) ** 2 for g, x in zip(np.ogrid[sl], c)) <= r * r
        mask[sl] |= sub
    return mask


def vessel_tree(shape=(128, 128), seed=0, depth=4, r0=4.0, reach=0.35):
    """A random branching tree of tubes (2D or 3D), radii shrinking by 0.75 per level; the first
    branch is ``reach`` of the shortest side long, each level 0.8 times shorter."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(shape, dtype=bool)
    nd = len(shape)
    start = np.array([s * 0.5 for s in shape])
    start[0] = 2
    direction = np.zeros(nd)
    direction[0] = 1.0

    def grow(p, d, r, level):
        length = min(shape) * reach * (0.8**level)
        q = p + d * length
        q = np.clip(q, 1, np.array(shape) - 2)
        disk_line(mask, p, q, max(r, 1.0))
        if level >= depth:
            return
        for sgn in (-1, 1):
            v = rng.normal(size=nd)
            v -= v.dot(d) * d
            v /= np.linalg.norm(v) + 1e-12
            nd_ = d * 0.7 + sgn * v * 0.7
            nd_ /= np.linalg.norm(nd_)
            grow(q, nd_, r * 0.75, level + 1)

    grow(start, direction, r0, 0)
    return mask


def random_blobs(shape, seed, q=0.6, sigma=1.5):
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    f = ndimage.gaussian_filter(rng.random(shape), sigma)
    return f > np.quantile(f, q)


def helix(n=40, radius=8.0, pitch=6.0, turns=2.0):
    """A 3D one-voxel-thick helix skeleton (26-connected) and its voxel count."""
    t = np.linspace(0, 2 * np.pi * turns, 4000)
    pts = np.stack([pitch * t / (2 * np.pi) + 2, radius * np.cos(t) + n / 2, radius * np.sin(t) + n / 2], 1)
    pts = np.unique(np.round(pts).astype(int), axis=0)
    vol = np.zeros((int(pts[:, 0].max()) + 3, n, n), dtype=bool)
    vol[tuple(pts.T)] = True
    return vol


def load_fives(shared, name):
    from PIL import Image

    return np.asarray(Image.open(shared / "fives" / name)) > 0


FIVES = ("fives_100_D_ds3.png", "fives_101_G_ds3.png")


def everywhere(radius_map):
    """A SkeletonRadius holding ``radius_map`` at every voxel (for hand-made graphs)."""
    from segscore.curvilinear.graph import SkeletonRadius

    m = np.asarray(radius_map, dtype=np.float64)
    return SkeletonRadius(np.arange(m.size, dtype=np.int64), m.ravel().copy())
