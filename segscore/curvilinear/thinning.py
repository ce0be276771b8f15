"""Skeletons identical to ``skimage.morphology.skeletonize``, from numba kernels.

3D (Lee's method): :func:`skeletonize` runs :func:`segscore.kernels.lee.thin_lee`, whose
simple-point and Euler tests are written from their definitions and whose order is the
installed scikit-image's. That is checked on random volumes once per scikit-image version
(the verdict is cached beside the 2D table); a release that thins otherwise gets
scikit-image's own ``skeletonize``.

2D: scikit-image's 2D skeletonize (Zhang and Suen's method) is a parallel thinning: each
iteration runs two sub-passes, and each sub-pass removes, all at once, the foreground pixels
whose 3x3 neighbourhood a 256-entry table marks removable in that sub-pass; it stops when an
iteration removes nothing. The table cannot be rebuilt from the paper (scikit-image issue
#6175: it carries hand corrections), so segscore keeps :data:`ZHANG_TABLE`, measured from
scikit-image's answers (tests/curvilinear/thinning_measure.py) and pinned by a test that measures
it again against the installed scikit-image. At run time the table is checked against
``skeletonize`` on a few random images once per scikit-image version (well under a second; the
verdict cached on disk, :mod:`segscore.cachedir`); should a future release thin otherwise,
:func:`skeletonize` calls scikit-image instead.

The kernel (:func:`segscore.kernels.thin.thin_table`) revisits only pixels whose neighbourhood
changed, so a mask whose thinning needs hundreds of iterations (a long tail of single-pixel
removals) costs about as much as one scan.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np

TABLE_FORMAT = 2  # bump when what is cached changes

_memo: dict = {}
_lock = threading.Lock()


#: scikit-image's 2D removal table (Zhang and Suen with scikit-image's corrections), measured
#: from its answers: entry ``c`` says in which sub-pass a foreground pixel whose 3x3 neighbourhood
#: has code ``c`` (bits NW N NE E SE S SW W) is removed (1 the first, 2 the second, 3 both, 0 never).
#: Pinned to the installed scikit-image by tests/curvilinear/test_thinning.py (measured again
#: there, and thinned alike on random images).
ZHANG_TABLE = np.frombuffer(b"0001001300111013000000002020303300000000300000000000000020003022000000000000000000000000000000002000000020002000300000003000302000310013000000010000000000000001310000000000000020000000000000002313001300000001000000000000000023010001000000003301000022002000", dtype=np.uint8) - ord("0")


def thin_with_table(mask: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Thin a 2D mask with a removal table (the numba kernel), as a bool array."""
    from segscore.kernels.thin import thin_table

    m = np.asarray(mask, dtype=bool)
    img = np.zeros((m.shape[0] + 2, m.shape[1] + 2), np.uint8)
    img[1:-1, 1:-1] = m
    flat = img.ravel()
    thin_table(flat, img.shape[1], table)
    return img[1:-1, 1:-1].astype(bool)


def _thins_alike(ours, skeletonize, shapes, per_shape, seed) -> bool:
    """Whether ``ours`` and ``skeletonize`` give the same skeleton on random masks of each
    shape, at densities from sparse to nearly full (borders included)."""
    rng = np.random.default_rng(seed)
    for shape in shapes:
        for _ in range(per_shape):
            m = rng.random(shape) < rng.uniform(0.15, 0.95)
            if not np.array_equal(ours(m), np.asarray(skeletonize(m), dtype=bool)):
                return False
    return True


@functools.lru_cache(maxsize=None)
def _skimage_version() -> str:
    """The installed scikit-image's version, read once per process (reading a package's
    metadata parses its METADATA file, which every skeleton would pay again)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scikit-image")
    except PackageNotFoundError:  # pragma: no cover - scikit-image is a dependency
        return "unknown"


def _once_per_version(kind: str, compute) -> np.ndarray:
    """``compute()`` (an array) for the installed scikit-image, kept in memory and on disk."""
    key = (kind, _skimage_version())
    if key not in _memo:
        with _lock:  # two threads scoring a pair compute it once
            if key not in _memo:
                _memo[key] = _load_or_compute(f"{kind}-skimage-{key[1]}-v{TABLE_FORMAT}.npy", compute)
    return _memo[key]


def _load_or_compute(name: str, compute) -> np.ndarray:
    from segscore.cachedir import cache_dirs, writable_cache_dir

    for d in cache_dirs():
        try:
            return np.load(d / name)
        except (OSError, ValueError):
            continue
    value = compute()
    d = writable_cache_dir()
    if d is not None:
        tmp = d / f"{name}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                np.save(f, value)
            os.replace(tmp, d / name)
        except OSError:
            pass  # computed again next time
    return value


def _check_zhang() -> np.ndarray:
    """[1] when :data:`ZHANG_TABLE` thins like the installed scikit-image on random images (under
    a second, once per version), else [0]."""
    from skimage.morphology import skeletonize

    same = _thins_alike(lambda m: thin_with_table(m, ZHANG_TABLE), skeletonize, ((8, 8), (17, 13), (40, 40)), 8,
                        seed=1)
    return np.ones(1, np.uint8) if same else np.zeros(1, np.uint8)


def skimage_table() -> np.ndarray | None:
    """The 2D removal table when it thins like the installed scikit-image (checked once per
    version and cached); None when it does not (scikit-image's own skeletonize is then used)."""
    return ZHANG_TABLE if bool(_once_per_version("zhang-check", _check_zhang)[0]) else None


def thin_lee(mask: np.ndarray) -> np.ndarray:
    """Lee's thinning of a 3D mask by :func:`segscore.kernels.lee.thin_lee`, as a bool array."""
    from segscore.kernels import lee

    m = np.asarray(mask, dtype=bool)
    img = np.zeros(tuple(s + 2 for s in m.shape), np.uint8)
    img[1:-1, 1:-1, 1:-1] = m
    lee.thin_lee(img.ravel(), img.shape[0], img.shape[1], img.shape[2], lee.ADJ, lee.NADJ, lee.CELL_SIGN,
                 lee.CELL_SHARE)
    return img[1:-1, 1:-1, 1:-1].astype(bool)


def _check_lee() -> np.ndarray:
    """[1] when the kernel thins like the installed scikit-image on random volumes, else [0]."""
    from skimage.morphology import skeletonize

    same = _thins_alike(thin_lee, skeletonize, ((1, 9, 9), (6, 7, 8), (12, 12, 12), (20, 16, 12)), 6, seed=2)
    return np.ones(1, np.uint8) if same else np.zeros(1, np.uint8)


def lee_matches_skimage() -> bool:
    """Whether the kernel's Lee thinning is the installed scikit-image's (checked once per
    version: a release that changes its order or its re-check gets scikit-image itself)."""
    return bool(_once_per_version("lee-check", _check_lee)[0])


def skeletonize(mask: np.ndarray) -> np.ndarray:
    """``skimage.morphology.skeletonize(mask)`` for a 2D or 3D mask, voxel for voxel, as a bool
    array: segscore's kernel where it reproduces the installed scikit-image (the measured 2D
    table, the checked 3D procedure), else scikit-image itself.

    Global by nature (a voxel's fate depends on the whole mask), so it is built whole, not by
    tiles: it holds the mask, a padded uint8 working copy and the bool result, about 3 bytes
    per voxel (0.15 GB for a 5,980 x 8,240 mask, 0.4 GB for a 512^3 cube)."""
    m = np.asarray(mask, dtype=bool)
    if m.ndim == 2:
        table = skimage_table()
        if table is not None:
            return thin_with_table(m, table)
    elif lee_matches_skimage():
        return thin_lee(m)
    from skimage.morphology import skeletonize as skimage_skeletonize

    return np.asarray(skimage_skeletonize(m), dtype=bool)
