"""2D thinning: the kernel against a full-scan NumPy oracle, the table measurement against
thinnings whose table is known, and the measured table against scikit-image itself."""

import numpy as np
import pytest

from segscore.curvilinear import thinning as T
from segscore.kernels.thin import thin_table
from tests.curvilinear import thinning_measure as M

SHIFTS = ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))  # code bits 0..7


def oracle_thin(img, table):
    """Full scans: every pixel in every sub-pass, judged on the image before the sub-pass."""
    a = np.pad(np.asarray(img, dtype=bool), 1).astype(np.int64)
    h, w = a.shape
    while True:
        removed = False
        for want in (1, 2):
            code = np.zeros_like(a)
            for b, (dr, dc) in enumerate(SHIFTS):
                code[1:-1, 1:-1] += a[1 + dr:h - 1 + dr, 1 + dc:w - 1 + dc] << b
            v = table[code]
            gone = (a == 1) & ((v == 3) | (v == want))
            if gone.any():
                a[gone] = 0
                removed = True
        if not removed:
            return a[1:-1, 1:-1].astype(bool)


def paper_table():
    """Zhang and Suen's 1984 conditions, written out: 2 <= B <= 6 neighbours, one 0->1
    transition around the ring, and the sub-pass's two products of N/E/S/W zero."""
    t = np.zeros(256, np.uint8)
    ring = (1, 2, 3, 4, 5, 6, 7, 0)  # N NE E SE S SW W NW, clockwise from N
    for c in range(256):
        bit = [(c >> b) & 1 for b in range(8)]
        n, e, s, w = bit[1], bit[3], bit[5], bit[7]
        seq = [bit[k] for k in ring]
        a = sum(seq[k] == 0 and seq[(k + 1) % 8] == 1 for k in range(8))
        if 2 <= sum(bit) <= 6 and a == 1:
            t[c] |= 1 if (n * e * s == 0 and e * s * w == 0) else 0
            t[c] |= 2 if (n * e * w == 0 and n * s * w == 0) else 0
    return t


@pytest.mark.parametrize("seed", range(6))
def test_kernel_equals_full_scan_oracle_for_any_table(seed):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 4, 256).astype(np.uint8)
    table[255] = 0
    for shape in ((1, 1), (1, 9), (12, 7), (33, 40)):
        img = rng.random(shape) < rng.uniform(0.2, 0.95)
        assert np.array_equal(T.thin_with_table(img, table), oracle_thin(img, table))


def test_kernel_reports_iterations_and_thins_in_place():
    img = np.zeros((7, 12), np.uint8)
    img[2:5, 1:11] = 1
    flat = img.ravel().copy()
    iters = thin_table(flat, 12, paper_table())
    assert iters >= 2 and flat.sum() < img.sum()


@pytest.mark.parametrize("seed", [0, 1])
def test_measurement_recovers_a_known_table_up_to_behaviour(seed):
    """The black box is the full-scan oracle with a known table (scikit-image's, as measured,
    with a few removable codes switched to the other sub-pass): the measured table thins
    alike on random images, and equals the known one wherever the measurement decided."""
    truth = T.skimage_table().copy()
    rng = np.random.default_rng(seed)
    flip = rng.choice(np.flatnonzero((truth == 1) | (truth == 2)), 6, replace=False)
    truth[flip] = 3 - truth[flip]
    table, undecided = M.measure_table(lambda im: oracle_thin(im, truth))
    assert undecided <= 4
    assert (table != truth).sum() <= undecided
    for _ in range(60):
        img = rng.random((30, 30)) < rng.uniform(0.2, 0.95)
        assert np.array_equal(oracle_thin(img, table), oracle_thin(img, truth))


def test_measurement_refuses_a_thinning_no_table_reproduces():
    with pytest.raises(ValueError, match="no removal table"):
        M.measure_table(lambda im: np.roll(im, 1, axis=1))  # adds pixels: no thinning does


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    from segscore import cachedir

    monkeypatch.setenv("SEGSCORE_CACHE_DIR", str(tmp_path / "home"))
    monkeypatch.setattr(cachedir, "fallback_cache_dir", lambda: tmp_path / "fallback")
    monkeypatch.setattr(T, "_memo", {})
    return tmp_path / "home"


def test_skeletonize2d_equals_scikit_image_on_random_masks():
    from skimage.morphology import skeletonize

    rng = np.random.default_rng(11)
    for shape in ((5, 5), (40, 31), (96, 96)):
        for _ in range(8):
            img = rng.random(shape) < rng.uniform(0.1, 0.95)
            assert np.array_equal(T.skeletonize(img), skeletonize(img))


def test_skeletonize2d_equals_scikit_image_on_thick_shapes():
    from skimage.morphology import skeletonize
    from tests.curvilinear.helpers import vessel_tree

    yy, xx = np.mgrid[:200, :220]
    shapes = [vessel_tree((300, 300), seed=s, depth=5, r0=9.0) for s in range(3)]
    shapes.append((yy - 100) ** 2 / 90**2 + (xx - 110) ** 2 / 60**2 < 1)
    shapes.append(np.ones((50, 60), bool))
    for m in shapes:
        assert np.array_equal(T.skeletonize(m), skeletonize(m))


def test_skeletonize2d_equals_scikit_image_on_fives(shared_data):
    from PIL import Image
    from skimage.morphology import skeletonize

    for name in ("fives_100_D_ds3.png", "fives_101_G_ds3.png"):
        m = np.asarray(Image.open(shared_data / "fives" / name)) > 0
        assert np.array_equal(T.skeletonize(m), skeletonize(m))
        big = np.repeat(np.repeat(m, 3, 0), 3, 1)
        assert np.array_equal(T.skeletonize(big), skeletonize(big))


def test_the_pinned_table_is_the_installed_scikit_images():
    """ZHANG_TABLE is what measuring the installed scikit-image gives, wherever the measurement
    decides (and thins alike where it does not)."""
    from skimage.morphology import skeletonize

    table, undecided = M.measure_table(skeletonize)
    decided = table == T.ZHANG_TABLE
    assert (~decided).sum() <= undecided
    rng = np.random.default_rng(3)
    for _ in range(60):
        img = rng.random((30, 30)) < rng.uniform(0.2, 0.95)
        assert np.array_equal(T.thin_with_table(img, T.ZHANG_TABLE), np.asarray(skeletonize(img), bool))


def test_the_check_is_cached_per_scikit_image_version(fresh_cache, monkeypatch):
    import time

    t0 = time.perf_counter()
    first = T.skimage_table()
    assert first is not None and time.perf_counter() - t0 < 5  # under a second on an idle machine
    files = list(fresh_cache.glob("zhang-check-skimage-*.npy"))
    assert len(files) == 1
    monkeypatch.setattr(T, "_memo", {})
    monkeypatch.setattr(T, "_check_zhang", lambda *a, **k: pytest.fail("checked again"))
    assert np.array_equal(T.skimage_table(), first)


def test_a_damaged_cache_file_is_checked_again(fresh_cache, monkeypatch):
    fresh_cache.mkdir()
    path = fresh_cache / f"zhang-check-skimage-{T._skimage_version()}-v{T.TABLE_FORMAT}.npy"
    path.write_bytes(b"not a verdict")
    good = T.skimage_table()
    assert good is not None and np.load(path).tolist() == [1]


def test_an_unreproducible_skeletonize_falls_back_to_scikit_image(fresh_cache, monkeypatch):
    from skimage.morphology import skeletonize

    monkeypatch.setattr(T, "_check_zhang", lambda: np.zeros(1, np.uint8))  # a release that thins otherwise
    assert T.skimage_table() is None
    img = np.random.default_rng(0).random((30, 30)) < 0.6
    assert np.array_equal(T.skeletonize(img), skeletonize(img))
    monkeypatch.setattr(T, "_memo", {})  # remembered on disk as "not reproducible"
    assert T.skimage_table() is None


def test_an_unwritable_cache_falls_back_to_the_temporary_folder(fresh_cache, monkeypatch):
    from segscore import cachedir

    fresh_cache.parent.joinpath("home").write_text("a file where the folder should be")
    first = T.skimage_table()
    assert first is not None
    assert list((fresh_cache.parent / "fallback").glob("zhang-check-skimage-*.npy"))
    monkeypatch.setattr(T, "_memo", {})
    monkeypatch.setattr(T, "_check_zhang", lambda *a, **k: pytest.fail("checked again"))
    assert np.array_equal(T.skimage_table(), first)
    assert cachedir.writable_cache_dir("numba") == fresh_cache.parent / "fallback" / "numba"
