"""Readers: every format opens as a windowed source, with clear refusals."""

import numpy as np
import pytest
import tifffile

from segscore.io.sources import RawFileSource, ZarrSource
from segscore.errors import InputFileError, ScoreError
from segscore.io.readers import open_image, open_map, open_zarr, read_image

RNG = np.random.default_rng(0)
A = RNG.integers(0, 60000, (37, 53)).astype(np.uint16)
WIN = (slice(5, 30), slice(7, 41))


def check(source, data):
    assert source.shape == data.shape and source.dtype == data.dtype
    np.testing.assert_array_equal(source.read(WIN), data[WIN])
    np.testing.assert_array_equal(source.read_all(), data)


@pytest.mark.parametrize("kw", [{}, {"compression": "lzw"}, {"compression": "zstd"},
                                {"tile": (16, 16), "compression": "zlib"}, {"rowsperstrip": 5}])
def test_tiff_plain_compressed_tiled(tmp_path, kw):
    p = tmp_path / "a.tif"
    tifffile.imwrite(p, A, **kw)
    with open_image(p) as s:
        check(s, A)
        if not kw:
            assert isinstance(s, RawFileSource)
        elif "compression" in kw:
            assert isinstance(s, ZarrSource)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8, np.bool_])
def test_tiff_any_dtype_and_big_endian(tmp_path, dtype):
    data = (A % 2 if dtype == np.bool_ else A % 120).astype(dtype)
    p = tmp_path / "b.tif"
    tifffile.imwrite(p, data, byteorder=">")
    with open_image(p) as s:
        check(s, data)


def test_npy_c_and_fortran_order(tmp_path):
    np.save(tmp_path / "c.npy", A)
    np.save(tmp_path / "f.npy", np.asfortranarray(A))
    for name in ("c.npy", "f.npy"):
        with open_image(tmp_path / name) as s:
            check(s, A)


def test_png_8_and_16_bit(tmp_path):
    from PIL import Image

    a8 = (A % 256).astype(np.uint8)
    Image.fromarray(a8).save(tmp_path / "a.png")
    Image.fromarray(A).save(tmp_path / "b.png")
    check(open_image(tmp_path / "a.png"), a8)
    assert read_image(tmp_path / "b.png").max() == A.max()


def test_nifti_with_voxel_size(tmp_path):
    import nibabel

    vol = RNG.integers(0, 2, (6, 7, 8)).astype(np.uint8)
    img = nibabel.Nifti1Image(vol, np.diag([0.5, 0.5, 2.0, 1.0]))
    nibabel.save(img, tmp_path / "v.nii.gz")
    s = open_image(tmp_path / "v.nii.gz")
    assert s.voxel_size == (0.5, 0.5, 2.0)
    np.testing.assert_array_equal(s.read_all(), vol)


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_array_group_key_and_levels(tmp_path, fmt):
    import zarr

    arr = zarr.create_array(str(tmp_path / "a.zarr"), shape=A.shape, dtype=A.dtype, chunks=(10, 20), zarr_format=fmt)
    arr[...] = A
    check(open_image(tmp_path / "a.zarr"), A)
    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=fmt)
    g.create_array("2", shape=A.shape, dtype=A.dtype, chunks=(8, 8))[...] = A
    check(open_image(tmp_path / "g.zarr" / "2"), A)
    check(open_zarr(tmp_path / "g.zarr", level="2"), A)
    with pytest.raises(ScoreError, match=r"g.zarr: no level '0'; levels: \['2'\]"):
        open_zarr(tmp_path / "g.zarr", level="0")
    with pytest.raises(ScoreError, match="is a zarr group, not an array"):
        open_image(tmp_path / "g.zarr")


def test_open_map_squeezes_and_refuses_not_2d(tmp_path):
    np.save(tmp_path / "s.npy", A[None, :, :, None])
    s = open_map(tmp_path / "s.npy")
    assert s.shape == A.shape
    np.testing.assert_array_equal(s.read(WIN), A[WIN])
    tifffile.imwrite(tmp_path / "rgb.tif", np.zeros((10, 12, 3), np.uint8), photometric="rgb")
    with pytest.raises(ScoreError, match=r"rgb.tif: expected a 2D map, got shape \(10, 12, 3\)"):
        open_map(tmp_path / "rgb.tif")
    with pytest.raises(ScoreError, match="expected a 3D volume"):
        open_map(A, what="volume", ndim=3)


def test_open_map_takes_arrays_memmaps_and_dask():
    da = pytest.importorskip("dask.array")
    for obj in (A, np.asfortranarray(A), da.from_array(A, chunks=(9, 9))):
        s = open_map(obj)
        np.testing.assert_array_equal(s.read(WIN), A[WIN])


def test_missing_files_are_input_errors(tmp_path):
    for name in ("x.npy", "x.tif", "x.png", "x.nii"):
        with pytest.raises(InputFileError, match=f"{name}: no such file"):
            open_image(tmp_path / name)
    with pytest.raises(FileNotFoundError):  # kit's API raised this for a missing .npy
        open_image(tmp_path / "x.npy")


def test_garbage_is_refused(tmp_path):
    for name in ("g.tif", "g.npy", "g.png"):
        (tmp_path / name).write_bytes(b"garbage" * 10)
        with pytest.raises(ScoreError, match=f"{name}: not a"):
            open_image(tmp_path / name)


@pytest.mark.parametrize("suffix", [".npy", ".tif"])
def test_a_truncated_file_is_refused_at_open(tmp_path, suffix):
    import tifffile

    from segscore.errors import ScoreError
    from segscore.io.readers import open_image

    arr = np.arange(40 * 50, dtype=np.uint16).reshape(40, 50)
    path = tmp_path / f"a{suffix}"
    np.save(path, arr) if suffix == ".npy" else tifffile.imwrite(path, arr)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 300] if suffix == ".npy" else data[:2000])
    with pytest.raises(ScoreError) as err:
        open_image(path).read_all()
    msg = str(err.value)
    assert msg.startswith(str(path)) or str(path) in msg
    assert "\n" not in msg and ("truncated" in msg or "not a readable" in msg or "cannot be read" in msg)
