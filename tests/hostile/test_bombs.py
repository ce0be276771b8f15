"""Decompression and size bombs built small: headers that declare huge images.

Each is refused before anything is decoded, by the read budget (segscore.io.budget), in one line
naming the file and the fix ("needs 4.2 GB, 1.1 GB available: ..."), never as "truncated or
corrupt" and never with a MemoryError; the process stays under 1 GB; the inputs are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.hostile import bombs

BUDGET = "1G"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from PIL import Image

    d = tmp_path_factory.mktemp("bombs")
    bombs.png(d / "grey46k.png", 46_000, 46_000)
    bombs.png(d / "rgba30k.png", 30_000, 30_000, color_type=6)
    bombs.nifti_gz(d / "cube1000.nii.gz", (1000, 1000, 1000), slope=2.0)
    bombs.tiff(d / "strip60k.tif", 60_000, 60_000)
    bombs.tiff(d / "tiled60k.tif", 60_000, 60_000, tile=256)
    m = np.zeros((64, 64), np.uint8)
    m[30:34, 4:60] = 255
    Image.fromarray(m).save(d / "ok.png")
    return d


CASES = [  # (bomb, what the refusal says it needs)
    ("grey46k.png", "needs 4.2 GB"),  # 2.1 G pixels: Pillow's buffer and the array
    ("rgba30k.png", "needs 9.9 GB"),  # 900 M pixels of RGBA, converted to RGB, then the array
    ("cube1000.nii.gz", "needs 12 GB"),  # 2 GB of int16 (twice, as gzip is read) and 8 GB of float64
    ("strip60k.tif", "needs 7.2 GB"),  # one strip of 3.6 GB, decoded and copied
    ("tiled60k.tif", "needs 3.6 GB"),  # tiles of 256 x 256 are fine; the whole image read at once is not
]


@pytest.mark.parametrize("bomb, need", CASES, ids=[c[0] for c in CASES])
def test_a_bomb_is_refused_as_too_large_before_it_is_decoded(folder, bomb, need):
    path = folder / bomb
    before = bombs.digests([path, folder / "ok.png"])
    r = bombs.run_measured(["curve", path, "--gt", folder / "ok.png"], budget=BUDGET)
    line = bombs.refused_in_one_line(r, path)
    assert need in line and "available" in line, line
    assert "corrupt" not in line and "truncated" not in line, line
    assert r["peak"] < bombs.PEAK_LIMIT, f"peak {r['peak'] / 1e6:.0f} MB"
    assert bombs.digests([path, folder / "ok.png"]) == before


def test_the_default_budget_refuses_them_too(folder):
    """Without SEGSCORE_READ_BUDGET: a fraction of this machine's memory. The RGBA PNG and the
    NIfTI need 9.9 and 12 GB, more than an eighth of any machine this suite runs on."""
    from segscore.io import budget

    if budget.available_memory() * budget.DEFAULT_FRACTION >= 9.9e9:
        pytest.skip("this machine's default read budget is larger than the bomb")
    for bomb in ("rgba30k.png", "cube1000.nii.gz"):
        r = bombs.run_measured(["curve", folder / bomb, "--gt", folder / "ok.png"], budget=None)
        line = bombs.refused_in_one_line(r, folder / bomb)
        assert "needs" in line and "available" in line
        assert r["peak"] < bombs.PEAK_LIMIT


def test_a_bomb_in_the_api_is_a_too_large_error(folder):
    from segscore.errors import ScoreError
    from segscore.io import budget
    from segscore.io.readers import open_image

    budget.set_read_budget("1G")
    try:
        for bomb, need in CASES:
            with pytest.raises(budget.TooLargeError, match=need):
                with open_image(folder / bomb) as src:
                    src.read_all()
        assert issubclass(budget.TooLargeError, ScoreError)
    finally:
        budget.set_read_budget(None)


def test_objects_refuses_a_bomb_as_truth_or_prediction(folder):
    a, b = folder / "grey46k.png", folder / "ok.png"
    for argv in (["objects", a, b], ["objects", b, a]):
        r = bombs.run_measured(argv, budget=BUDGET)
        assert "needs 4.2 GB" in bombs.refused_in_one_line(r, a)
        assert r["peak"] < bombs.PEAK_LIMIT


def test_a_memory_error_is_too_large_not_corrupt(folder, monkeypatch):
    """A file whose declared size fits the budget but not the memory left (a MemoryError in the
    decoder) is refused as too large: the readers' broad except blocks no longer call it corrupt."""
    from PIL import Image

    from segscore.io import budget, readers

    small = folder / "ok.png"

    def no_memory(img):
        raise MemoryError

    monkeypatch.setattr(readers, "_pillow_array", no_memory)
    with pytest.raises(budget.TooLargeError, match="needs more memory than is available") as err:
        readers.open_pillow(small)
    assert "corrupt" not in str(err.value) and str(small) in str(err.value)
    assert Image.MAX_IMAGE_PIXELS is not None  # nothing set process-wide


def test_a_valid_image_within_the_budget_still_reads(folder, tmp_path):
    import nibabel
    import tifffile

    from segscore.io import budget
    from segscore.io.readers import open_image

    budget.set_read_budget("64M")
    try:
        a = (np.arange(200 * 300) % 7).astype(np.int16).reshape(200, 300)
        tifffile.imwrite(tmp_path / "s.tif", a, compression="zlib", rowsperstrip=200)
        tifffile.imwrite(tmp_path / "t.tif", a, compression="zlib", tile=(64, 64))
        img = nibabel.Nifti1Image(a[..., None], np.eye(4))
        img.header.set_slope_inter(2.0, 1.0)
        nibabel.save(img, tmp_path / "v.nii.gz")
        for name in ("s.tif", "t.tif"):
            with open_image(tmp_path / name) as src:
                assert np.array_equal(src.read_all(), a)
        with open_image(tmp_path / "v.nii.gz") as src:
            got = src.read_all()
        assert got.dtype == np.float64 and np.array_equal(got[..., 0], a * 2.0 + 1.0)
    finally:
        budget.set_read_budget(None)


def test_a_sparse_npy_declaring_a_huge_array_is_refused_when_read_whole(tmp_path, folder):
    """A .npy of 60,000 x 60,000 uint8 whose data is a hole in the file (3.6 GB declared, nothing
    on disk): windows read fine, reading it whole (curve builds the mask whole) is refused."""
    path = tmp_path / "sparse.npy"
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1, 1), np.uint8))
    header["shape"] = (60_000, 60_000)
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        fh.truncate(fh.tell() + 60_000 * 60_000)
    before = bombs.digests([path])
    r = bombs.run_measured(["curve", path, "--gt", folder / "ok.png"], budget=BUDGET)
    assert "needs 3.6 GB" in bombs.refused_in_one_line(r, path)
    assert r["peak"] < bombs.PEAK_LIMIT
    assert bombs.digests([path]) == before
