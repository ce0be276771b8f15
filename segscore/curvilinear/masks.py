"""Reading and checking binary curvilinear masks (2D or 3D).

Binary means exactly the values {0, v} in an integer or bool array (one of them may be
absent), or {0.0, 1.0} in a float array. Probability maps and multi-label images are refused
with the reason: the threshold or the label choice changes the score and is not ours to make.
"""

from __future__ import annotations

import os

import numpy as np

from segscore.errors import ScoreError


def as_binary(arr, name: str = "mask") -> np.ndarray:
    """``arr`` as a bool array, or a :class:`ScoreError` saying why it is not a binary mask."""
    a = np.asarray(arr)
    if a.ndim not in (2, 3):
        raise ScoreError(f"{name}: expected a 2D or 3D mask, got shape {a.shape}; give one image or volume")
    if a.dtype == bool:
        return a
    if a.dtype.kind in "iu":
        if _at_most_one_nonzero_value(a):
            return a != 0
        vals = np.unique(a)
        raise ScoreError(f"{name}: has {len(vals)} distinct values {_few(vals)}; a binary mask has two (0 and one "
                         "other). Multi-label images are out of scope: extract one structure first")
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise ScoreError(f"{name}: holds NaN or infinite values; a binary float mask holds only 0.0 and 1.0")
        bad = (a != 0.0) & (a != 1.0)
        if bad.any():
            raise ScoreError(f"{name}: float values other than 0.0 and 1.0 (e.g. {float(a[bad].flat[0]):g}): this looks "
                             "like a probability map; threshold it first (segscore will not pick a threshold for you)")
        return a == 1.0
    raise ScoreError(f"{name}: holds {a.dtype} values; give a bool, integer or 0/1 float mask")


def _at_most_one_nonzero_value(a) -> bool:
    """Whether an integer array holds no two different non-zero values (without sorting it)."""
    if a.size == 0:
        return True
    if a.dtype.itemsize <= 2:  # a histogram is one pass
        counts = np.bincount(a.ravel().view(np.uint8 if a.dtype.itemsize == 1 else np.uint16))
        return np.count_nonzero(counts[1:]) <= 1
    lo, hi = a.min(), a.max()
    if lo > 0 or hi < 0:
        return lo == hi
    if lo < 0 < hi:
        return False
    v = hi if hi != 0 else lo
    return v == 0 or int(np.count_nonzero(a)) == int(np.count_nonzero(a == v))


def _few(vals) -> str:
    v = list(vals[:4])
    return "{" + ", ".join(str(x) for x in v) + (", ...}" if len(vals) > 4 else "}")


def load_mask(path, *, what: str = "mask", raw: bool = False):
    """(bool mask, voxel size or None) from a PNG, TIFF, NIfTI, .npy or zarr file (read by
    :func:`segscore.io.readers.open_labels`, the label-image reader every family uses); with
    ``raw``, the values as read (not yet checked binary: ``curve --ignore-label`` first zeroes the
    ignored voxels, then checks)."""
    from segscore.io.readers import open_labels

    with open_labels(path, what=what, ndims=(2, 3), grey_rgb=True) as src:
        arr = np.asarray(src.read_all())
        vox = getattr(src, "voxel_size", None)
        if vox is None and getattr(src, "base", None) is not None:
            vox = getattr(src.base, "voxel_size", None)
    from segscore.io.readers import input_name

    mask = arr if raw else as_binary(arr, input_name(path, what))
    if vox is not None:
        vox = tuple(float(v) for v in vox[: mask.ndim])
    return mask, vox


def save_mask(mask, path, voxel_size=None) -> None:
    """Write a bool mask: .npy (bool), .tif/.png (0/255 uint8) or NIfTI (uint8 0/1)."""
    from segscore.io.readers import format_of

    p = os.fspath(path)
    arr = np.asarray(mask, dtype=bool)
    kind = format_of(p)
    d = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(d):
        raise ScoreError(f"{p}: the folder {d} does not exist; create it first")
    if kind == "npy":
        np.save(p, arr)
    elif kind == "tiff":
        import tifffile

        tifffile.imwrite(p, arr.astype(np.uint8) * 255)
    elif kind == "nifti":
        import nibabel

        aff = np.eye(4)
        if voxel_size is not None:
            for i, z in enumerate(list(voxel_size)[:3]):
                aff[i, i] = z
        nibabel.save(nibabel.Nifti1Image(arr.astype(np.uint8), aff), p)
    elif kind == "pillow" and p.lower().endswith(".png"):
        if arr.ndim != 2:
            raise ScoreError(f"{p}: a PNG holds one 2D image; write a 3D mask as .tif, .nii.gz or .npy")
        from PIL import Image

        Image.fromarray(arr.astype(np.uint8) * 255).save(p)
    else:
        raise ScoreError(f"{p}: unsupported output format; use .png, .tif, .nii.gz or .npy")
