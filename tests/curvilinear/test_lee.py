"""3D thinning (Lee's method): the voxel tests against brute-force definitions, the kernel
against a plain full-scan oracle of the procedure, and the result against scikit-image."""

import numpy as np
import pytest
from scipy import ndimage

from segscore.curvilinear import thinning as T
from segscore.curvilinear.thinning import skeletonize as skeletonize3d
from segscore.curvilinear.thinning import thin_lee
from segscore.kernels import lee


def euler_of_cubes(v):
    """Euler characteristic of the union of the closed unit cubes of a 3x3x3 block's foreground,
    by counting the cells of the cubical complex (dimension = number of odd coordinates)."""
    cells = np.zeros((7, 7, 7), bool)
    for i, j, k in zip(*np.nonzero(v)):
        cells[2 * i:2 * i + 3, 2 * j:2 * j + 3, 2 * k:2 * k + 3] = True
    dim = sum(np.indices((7, 7, 7)) % 2)
    return int(((-1) ** dim)[cells].sum())


def components26(v):
    w = v.copy()
    w[1, 1, 1] = 0
    return ndimage.label(w, np.ones((3, 3, 3)))[1]


def random_blocks(n, seed):
    rng = np.random.default_rng(seed)
    v = (rng.random((n, 3, 3, 3)) < rng.uniform(0.1, 0.9, (n, 1, 1, 1))).astype(np.uint8)
    v[:, 1, 1, 1] = 1
    return v


def test_euler_test_equals_counting_the_cells():
    for v in random_blocks(1500, 0):
        without = v.copy()
        without[1, 1, 1] = 0
        expect = euler_of_cubes(v) == euler_of_cubes(without)
        assert lee.keeps_euler(v.ravel().copy(), lee.CELL_SIGN, lee.CELL_SHARE) == expect


def test_simple_test_equals_labelling_the_neighbours():
    stack, seen = np.zeros(27, np.int64), np.zeros(27, np.uint8)
    for v in random_blocks(1500, 1):
        assert lee.is_simple(v.ravel().copy(), lee.ADJ, lee.NADJ, stack, seen) == (components26(v) <= 1)


def test_endpoint_is_one_neighbour():
    for v in random_blocks(300, 2):
        assert lee.is_endpoint(v.ravel().copy()) == (v.sum() == 2)


def oracle_lee(a):
    """The procedure, scanning the whole volume for every direction, with the brute-force tests."""
    img = np.pad(np.asarray(a, dtype=np.uint8), 1)
    dirs = [(0, -1, 0), (0, 1, 0), (0, 0, 1), (0, 0, -1), (1, 0, 0), (-1, 0, 0)]
    dirs = dirs[:4] if img.shape[0] == 3 else dirs

    def block(p, r, c):
        return img[p - 1:p + 2, r - 1:r + 2, c - 1:c + 2].copy()

    def candidate(p, r, c):
        v = block(p, r, c)
        without = v.copy()
        without[1, 1, 1] = 0
        return v.sum() != 2 and euler_of_cubes(v) == euler_of_cubes(without) and components26(v) <= 1

    unchanged = 0
    while unchanged < len(dirs):
        unchanged = 0
        for dz, dy, dx in dirs:
            cand = [(p, r, c) for p, r, c in zip(*np.nonzero(img))
                    if img[p + dz, r + dy, c + dx] == 0 and candidate(p, r, c)]
            removed = False
            for p, r, c in cand:
                if components26(block(p, r, c)) <= 1:
                    img[p, r, c] = 0
                    removed = True
            unchanged += not removed
    return img[1:-1, 1:-1, 1:-1].astype(bool)


@pytest.mark.parametrize("seed", range(4))
def test_kernel_equals_full_scan_oracle(seed):
    rng = np.random.default_rng(seed)
    for shape in ((1, 6, 7), (4, 5, 6), (6, 6, 6)):
        a = rng.random(shape) < rng.uniform(0.3, 0.9)
        assert np.array_equal(thin_lee(a), oracle_lee(a))


def test_skeletonize3d_equals_scikit_image_on_random_volumes():
    from skimage.morphology import skeletonize

    rng = np.random.default_rng(5)
    for i in range(40):
        shape = tuple(rng.integers(1, 24, 3))
        if i % 2:
            a = ndimage.gaussian_filter(rng.random(shape), 1.5) > rng.uniform(0.45, 0.55)
        else:
            a = rng.random(shape) < rng.uniform(0.2, 0.95)
        assert np.array_equal(skeletonize3d(a), skeletonize(a))


def test_skeletonize3d_equals_scikit_image_on_trees_and_a_helix():
    from skimage.morphology import skeletonize
    from tests.curvilinear.helpers import helix, vessel_tree

    vols = [vessel_tree((64, 64, 64), seed=s, depth=4, r0=4.0) for s in range(3)]
    vols.append(ndimage.binary_dilation(helix(), iterations=1))
    vols.append(np.ones((7, 9, 11), bool))
    for v in vols:
        assert np.array_equal(skeletonize3d(v), skeletonize(v))


def test_the_installed_scikit_image_is_checked_once_and_matches():
    assert T.lee_matches_skimage()


def test_a_scikit_image_that_thins_otherwise_is_called_itself(tmp_path, monkeypatch):
    import skimage.morphology

    from segscore import cachedir

    monkeypatch.setenv("SEGSCORE_CACHE_DIR", str(tmp_path / "home"))
    monkeypatch.setattr(cachedir, "fallback_cache_dir", lambda: tmp_path / "fallback")
    monkeypatch.setattr(T, "_memo", {})
    monkeypatch.setattr(T, "_check_lee", lambda: np.zeros(1, np.uint8))
    calls = []
    real = skimage.morphology.skeletonize
    monkeypatch.setattr(skimage.morphology, "skeletonize", lambda im: calls.append(im.shape) or real(im))
    vol = np.zeros((5, 6, 7), bool)
    vol[2, 1:5, 1:6] = True
    assert np.array_equal(skeletonize3d(vol), real(vol)) and calls == [vol.shape]
    monkeypatch.setattr(T, "_memo", {})
    monkeypatch.setattr(T, "_check_lee", lambda: pytest.fail("checked again"))
    assert not T.lee_matches_skimage()  # the verdict is kept on disk
