"""The voxel spacing a file states (segscore.io.spacing): NIfTI, OME-Zarr 0.4/0.5, TIFF, ImageJ."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segscore.errors import ScoreError
from segscore.io.spacing import Spacing, read_spacing, resolve_spacing


def _nifti(path, arr, zooms, unit="mm"):
    nib = pytest.importorskip("nibabel")
    img = nib.Nifti1Image(arr, np.diag([*zooms, 1.0][:4] + [1.0] * (4 - len(zooms) - 1)))
    img.header.set_zooms(zooms)
    img.header.set_xyzt_units(unit)
    nib.save(img, path)
    return path


def test_nifti_pixdim_in_array_order_with_its_unit(tmp_path):
    p = _nifti(tmp_path / "a.nii.gz", np.zeros((4, 5, 6), np.uint8), (0.5, 0.75, 2.0))
    assert read_spacing(p) == Spacing((0.5, 0.75, 2.0), "nifti", "mm")
    q = _nifti(tmp_path / "b.nii", np.zeros((4, 1, 6), np.uint8), (0.5, 9.0, 2.0), unit="micron")
    assert read_spacing(q) == Spacing((0.5, 2.0), "nifti", "micron")  # the singleton axis dropped, as read
    u = _nifti(tmp_path / "c.nii", np.zeros((4, 6), np.uint8), (1.5, 2.5), unit="unknown")
    assert read_spacing(u) == Spacing((1.5, 2.5), "nifti", None)


def _ome(folder, shape, scale, axes, version="0.4", outer=None):
    import zarr

    root = zarr.open_group(str(folder), mode="w", zarr_format=2 if version == "0.4" else 3)
    root.create_array("0", shape=shape, dtype="u1", chunks=shape)
    ms = {"axes": axes, "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": scale}]}]}
    if outer is not None:
        ms["coordinateTransformations"] = [{"type": "scale", "scale": outer}]
    if version == "0.4":
        ms["version"] = "0.4"
        root.attrs["multiscales"] = [ms]
    else:
        root.attrs["ome"] = {"version": "0.5", "multiscales": [ms]}
    return folder


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_ome_zarr_multiscales_scale(tmp_path, version):
    axes = [{"name": "z", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    store = _ome(tmp_path / "img.zarr", (3, 4, 5), [2.0, 0.5, 0.5], axes, version)
    assert read_spacing(store / "0") == Spacing((2.0, 0.5, 0.5), "ome-zarr", "micrometer")
    assert read_spacing(store, level="0") == Spacing((2.0, 0.5, 0.5), "ome-zarr", "micrometer")
    withc = [{"name": "c", "type": "channel"}] + axes[1:]
    store2 = _ome(tmp_path / "c.zarr", (1, 4, 5), [1.0, 0.25, 0.5], withc, version, outer=[1.0, 2.0, 2.0])
    assert read_spacing(store2 / "0") == Spacing((0.5, 1.0), "ome-zarr", "micrometer")  # singleton channel dropped


def test_ome_zarr_bad_scale_is_refused_naming_the_store(tmp_path):
    axes = [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}]
    store = _ome(tmp_path / "bad.zarr", (4, 5), [0.0, 1.0], axes)
    with pytest.raises(ScoreError, match="bad.zarr.*voxel size"):
        read_spacing(store / "0")
    store = _ome(tmp_path / "short.zarr", (4, 5), [1.0], axes)
    with pytest.raises(ScoreError, match="short.zarr.*one value per axis"):
        read_spacing(store / "0")


def test_tiff_resolution_and_imagej_spacing(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    a = np.zeros((6, 8), np.uint8)
    tifffile.imwrite(tmp_path / "cm.tif", a, resolution=(4.0, 2.0), resolutionunit="CENTIMETER")
    assert read_spacing(tmp_path / "cm.tif") == Spacing((0.5, 0.25), "tiff", "cm")  # (Y, X) = 1/yres, 1/xres
    tifffile.imwrite(tmp_path / "none.tif", a, resolution=(4.0, 2.0), resolutionunit="NONE")
    assert read_spacing(tmp_path / "none.tif") is None  # an aspect ratio, no unit: not read
    tifffile.imwrite(tmp_path / "plain.tif", a)
    assert read_spacing(tmp_path / "plain.tif") is None
    tifffile.imwrite(tmp_path / "dpi.tif", a, resolution=(72.0, 72.0), resolutionunit="INCH")
    assert read_spacing(tmp_path / "dpi.tif") is None  # display resolution, not a voxel size
    hyper = np.zeros((3, 6, 8), np.uint8)  # channels, not Z: ImageJ's spacing is no channel step
    tifffile.imwrite(tmp_path / "cyx.tif", hyper, imagej=True, resolution=(2.0, 2.0),
                     metadata={"spacing": 5.0, "unit": "micron", "axes": "CYX"})
    assert read_spacing(tmp_path / "cyx.tif") is None
    stack = np.zeros((3, 6, 8), np.uint8)
    tifffile.imwrite(tmp_path / "ij.tif", stack, imagej=True, resolution=(2.0, 2.0),
                     metadata={"spacing": 3.0, "unit": "micron", "axes": "ZYX"})
    assert read_spacing(tmp_path / "ij.tif") == Spacing((3.0, 0.5, 0.5), "imagej", "micron")


def test_resolve_spacing_given_file_default_and_disagreement(tmp_path):
    a = _nifti(tmp_path / "a.nii", np.zeros((4, 6), np.uint8), (1.5, 2.5))
    b = _nifti(tmp_path / "b.nii", np.zeros((4, 6), np.uint8), (1.5, 3.0))
    np.save(tmp_path / "c.npy", np.zeros((4, 6), np.uint8))
    assert resolve_spacing(None, [a, tmp_path / "c.npy"], 2).source == "nifti"
    assert resolve_spacing(None, [tmp_path / "c.npy"], 2) == Spacing((1.0, 1.0), "default", None)
    assert resolve_spacing([2, 3], [a, b], 2) == Spacing((2.0, 3.0), "given", None)  # given wins, no check
    with pytest.raises(ScoreError, match=r"b.nii: states a voxel spacing \[1.5, 3.0\] mm, .*a.nii states"):
        resolve_spacing(None, [a, b], 2)
    um = _nifti(tmp_path / "um.nii", np.zeros((4, 6), np.uint8), (1.5, 2.5), unit="micron")
    with pytest.raises(ScoreError, match="micron.*mm"):
        resolve_spacing(None, [a, um], 2)  # the same numbers in another unit
    with pytest.raises(ScoreError, match="--spacing 1: 1 numbers for a 2D image"):
        resolve_spacing([1], [a], 2)


def test_objects_reads_the_truth_spacing_and_records_its_source(tmp_path, capsys):
    from segscore.cli.main import main

    t = np.zeros((20, 30), np.uint8)
    t[2:8, 3:9], t[10:18, 12:25] = 1, 2
    a = _nifti(tmp_path / "t.nii", t, (0.5, 2.0), unit="mm")
    np.save(tmp_path / "p.npy", t)
    assert main(["objects", str(a), str(tmp_path / "p.npy"), "--json", "--per-object", str(tmp_path / "o.csv")]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["spacing"] == [0.5, 2.0] and r["spacing_source"] == "nifti" and r["spacing_unit"] == "mm"
    rows = (tmp_path / "o.csv").read_text().splitlines()
    vol = rows[0].split(",").index("volume_truth")
    assert float(rows[1].split(",")[vol]) == pytest.approx(36 * 1.0)  # 36 voxels of 0.5 x 2.0
    assert main(["objects", str(tmp_path / "p.npy"), str(tmp_path / "p.npy"), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "spacing" not in plain and "spacing_source" not in plain  # nothing stated, nothing asked: unchanged
    b = _nifti(tmp_path / "b.nii", t, (0.5, 3.0), unit="mm")
    assert main(["objects", str(a), str(b), "--json"]) == 0  # the default card reads no header: no conflict
    assert "spacing" not in json.loads(capsys.readouterr().out)
    assert main(["objects", str(a), str(b), "--surface", "--json"]) == 2  # distances in which unit?
    assert "states a voxel spacing" in capsys.readouterr().err


def test_surface_distances_reads_the_spacing_a_header_states(tmp_path):
    from segscore.objects import surface_distances

    a = np.zeros((12, 16), np.uint8)
    a[2:6, 3:8] = 1
    b = np.zeros_like(a)
    b[2:6, 5:10] = 1
    ta = _nifti(tmp_path / "a.nii", a, (0.5, 2.0), unit="mm")
    np.save(tmp_path / "b.npy", b)
    r = surface_distances(ta, tmp_path / "b.npy")
    assert r["spacing"] == [0.5, 2.0] and r["spacing_source"] == "nifti" and r["spacing_unit"] == "mm"
    assert r == surface_distances(a, b, spacing=(0.5, 2.0)) | {"spacing_source": "nifti", "spacing_unit": "mm"}
    assert r["hd"] == pytest.approx(4.0)  # two columns of 2.0 apart along x
    plain = surface_distances(a, b)
    assert plain["spacing"] == [1.0, 1.0] and plain["spacing_source"] == "default" and plain["hd"] == 2.0
    given = surface_distances(ta, b, spacing=(1.0, 1.0))
    assert given["spacing_source"] == "given" and given["hd"] == 2.0
    other = _nifti(tmp_path / "o.nii", b, (0.5, 3.0), unit="mm")
    with pytest.raises(ScoreError, match="states a voxel spacing"):
        surface_distances(ta, other)
