"""Hand-drawn skeletons and synthetic vessel trees for the curvilinear tests."""

from __future__ import annotations

import numpy as np

from segscore.io.samples import disk_line, vessel_tree  # noqa: F401 - the package's sample generators


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
