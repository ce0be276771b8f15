"""The voxel spacing an image file states: NIfTI headers, OME-Zarr multiscales, TIFF resolution.

:func:`read_spacing` returns a :class:`Spacing` (one voxel size per axis of the image as the
families see it, singleton axes dropped, in array order), or None when the file states none.
The unit is kept as the file spells it (``mm``, ``micrometer``, ``cm``); nothing is converted.

* NIfTI: ``pixdim`` (nibabel's ``get_zooms``), whose order is the data array's axis order
  (nibabel indexes voxels ``[i, j, k]`` as the file stores them), unit from ``xyzt_units``
  (``None`` when the header says "unknown").
* OME-Zarr (NGFF 0.4 ``.zattrs`` / 0.5 ``zarr.json`` ``attributes.ome``): the ``scale``
  coordinate transformation of the dataset the array is (``store.zarr/0`` or a level inside a
  group), times the multiscale's own ``scale`` if it has one; units from ``axes[].unit``.
  A scale over non-space axes (time, channel) is read only where those axes are singletons.
* TIFF: ``XResolution``/``YResolution`` (pixels per unit: the spacing is their inverse) with
  ``ResolutionUnit`` centimetre, or with ImageJ's ``unit`` (and its ``spacing``, the Z step of a
  stack, on the axis ImageJ calls Z). Not read: ``ResolutionUnit`` "none" (an aspect ratio) and
  inch, which is display resolution (72 or 300 dpi, what image editors and Pillow write by
  default; reading it would make a 1-pixel tolerance 1/72 inch), nor a 3D stack without a Z step
  (its spacing would be a guess).
A file that states a spacing which is not a positive finite number per axis is refused.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from segscore.errors import ScoreError


#: the voxel sizes segscore scores with: a spacing outside this range makes lengths, areas and
#: conductances (which scale as the spacing cubed) underflow to 0 or overflow to inf (`--spacing
#: 1e-300 1e-300` gave a NaN conductance), so it is refused up front, from a file or an option
SPACING_MIN, SPACING_MAX = 1e-12, 1e12


def spacing_ok(v: float) -> bool:
    """Whether ``v`` is a voxel size segscore scores with (finite, in the range above)."""
    return math.isfinite(v) and SPACING_MIN <= v <= SPACING_MAX


@dataclass(frozen=True)
class Spacing:
    """A voxel size per axis in array order, where it came from and its unit."""

    values: tuple  # floats, one per (non-singleton) axis
    source: str  # "nifti", "ome-zarr", "tiff", "imagej", or "given" (--spacing) / "default"
    unit: str | list | None = None  # as the file states it; a list when the axes differ


def _name(path) -> str:
    return os.fspath(path)


def _checked(path, values, shape, what) -> tuple:
    """``values`` of the axes of ``shape`` that are not singletons (those are dropped, as the
    readers drop them), each a positive finite float; a refusal naming the file otherwise."""
    vals = []
    for v, n in zip(values, shape):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ScoreError(f"{_name(path)}: its {what} states a voxel size {v!r}; write a positive number per "
                             f"axis, or give --spacing") from None
        if n != 1:
            if not (math.isfinite(f) and f > 0):
                raise ScoreError(f"{_name(path)}: its {what} states a voxel size {v!r}; write a positive number per "
                                 f"axis, or give --spacing")
            if not spacing_ok(f):
                raise ScoreError(f"{_name(path)}: its {what} states a voxel size {v!r}, outside {SPACING_MIN:g} to "
                                 f"{SPACING_MAX:g}; write it in a unit that brings it into that range, or give "
                                 f"--spacing")
            vals.append(f)
    return tuple(vals)


def _unit(units):
    units = [u for u in units]
    if not units or all(u is None for u in units):
        return None
    return units[0] if all(u == units[0] for u in units) else units


def _nifti(path):
    import nibabel

    try:
        img = nibabel.load(os.fspath(path))
        shape = tuple(int(n) for n in img.shape)
        zooms = img.header.get_zooms()[: len(shape)]
        unit = img.header.get_xyzt_units()[0]
    except Exception:  # noqa: BLE001 - the reader refuses the file itself, with its own message
        return None
    vals = _checked(path, zooms, shape, "NIfTI header (pixdim)")
    return Spacing(vals, "nifti", None if unit in (None, "unknown") else unit)


def _json(path):
    from segscore.io.budget import load_json

    try:  # with the read budget's size limit: metadata is small, a device or a huge file is not read
        return load_json(path, fix="restore the store's metadata")
    except (OSError, ValueError):  # a ScoreError (too large, not JSON) too: the reader refuses the file
        return None


def _attrs(folder) -> dict:
    """A zarr node's attributes (v2 ``.zattrs`` or v3 ``zarr.json``), {} when it has none."""
    v2 = _json(os.path.join(folder, ".zattrs"))
    if isinstance(v2, dict):
        return v2
    v3 = _json(os.path.join(folder, "zarr.json"))
    if isinstance(v3, dict) and isinstance(v3.get("attributes"), dict):
        return v3["attributes"]
    return {}


def _array_shape(folder):
    meta = _json(os.path.join(folder, ".zarray")) or _json(os.path.join(folder, "zarr.json")) or {}
    shape = meta.get("shape") if isinstance(meta, dict) else None
    return tuple(int(n) for n in shape) if isinstance(shape, list) and all(isinstance(n, int) for n in shape) else None


def _scale_of(transforms):
    if not isinstance(transforms, list):
        return None
    scale = None
    for t in transforms:
        if isinstance(t, dict) and t.get("type") == "scale" and isinstance(t.get("scale"), list):
            scale = t["scale"] if scale is None else [a * b for a, b in zip(scale, t["scale"])]
    return scale


def _ome_zarr(path, level=None):
    path = os.fspath(path).rstrip("/")
    if level is not None:
        group, key = path, str(level)
    else:
        group, key = os.path.dirname(path), os.path.basename(path)
    attrs = _attrs(group)
    multiscales = attrs.get("multiscales")
    if multiscales is None and isinstance(attrs.get("ome"), dict):  # NGFF 0.5
        multiscales = attrs["ome"].get("multiscales")
    if not isinstance(multiscales, list):
        return None
    shape = _array_shape(os.path.join(group, key))
    for ms in multiscales:
        if not isinstance(ms, dict) or not isinstance(ms.get("datasets"), list):
            continue
        for ds in ms["datasets"]:
            if not isinstance(ds, dict) or str(ds.get("path")) != key:
                continue
            scale = _scale_of(ds.get("coordinateTransformations"))
            if scale is None:
                return None
            outer = _scale_of(ms.get("coordinateTransformations"))
            if outer is not None and len(outer) == len(scale):
                scale = [a * b for a, b in zip(scale, outer)]
            axes = ms.get("axes") if isinstance(ms.get("axes"), list) else []
            if shape is None or len(shape) != len(scale):
                raise ScoreError(f"{path}: its OME-Zarr multiscales scale {scale} does not have one value per axis "
                                 f"of the array (shape {shape}); fix the metadata, or give --spacing")
            units, keep = [], []
            for i, n in enumerate(shape):
                ax = axes[i] if i < len(axes) and isinstance(axes[i], dict) else {}
                if n == 1:
                    continue
                if ax.get("type") not in (None, "space"):
                    return None  # a time or channel axis the families would read as space
                keep.append(i)
                units.append(ax.get("unit") if isinstance(ax.get("unit"), str) else None)
            vals = _checked(path, scale, shape, "OME-Zarr multiscales scale")
            return Spacing(vals, "ome-zarr", _unit(units))
    return None


_TIFF_UNITS = {3: "cm"}  # 2 (inch) is display resolution: not read (module docstring)


def _tiff(path):
    import tifffile

    try:
        with tifffile.TiffFile(path) as tf:
            series = tf.series[0]
            shape = tuple(series.shape)
            page = tf.pages[0]
            tags = page.tags
            axes = str(getattr(series, "axes", "") or "")
            xres = tags.get("XResolution")
            yres = tags.get("YResolution")
            runit = tags.get("ResolutionUnit")
            ij = tf.imagej_metadata or {}
    except Exception:  # noqa: BLE001 - the reader refuses the file itself
        return None
    if xres is None or yres is None:
        return None

    def inverse(tag):
        v = tag.value
        num, den = (v if isinstance(v, tuple) else (v, 1))
        if not num or not den:
            raise ScoreError(f"{_name(path)}: its TIFF resolution tag states {num}/{den} pixels per unit; write a "
                             f"positive resolution, or give --spacing")
        return float(den) / float(num)

    unit_code = int(runit.value) if runit is not None else 2  # the TIFF default is inch (not read)
    ij_unit = ij.get("unit") if isinstance(ij.get("unit"), str) else None
    if ij_unit in ("", "pixel", "pixels"):
        ij_unit = None
    if unit_code not in _TIFF_UNITS and ij_unit is None:
        return None
    unit = ij_unit or _TIFF_UNITS[unit_code]
    big = [n for n in shape if n != 1]
    if len(big) == 2 and len(shape) >= 2:
        full = [1.0] * len(shape)
        full[-1], full[-2] = inverse(xres), inverse(yres)
        return Spacing(_checked(path, full, shape, "TIFF resolution"), "imagej" if ij_unit else "tiff", unit)
    if len(big) == 3 and "spacing" in ij and len(shape) >= 3:
        z = ij["spacing"]
        full = [1.0] * len(shape)
        full[-1], full[-2] = inverse(xres), inverse(yres)
        if len(axes) != len(shape) or "Z" not in axes or shape[axes.index("Z")] == 1:
            return None  # the third axis is not ImageJ's Z (channels, time): no spacing for it
        full[axes.index("Z")] = z
        return Spacing(_checked(path, full, shape, "ImageJ spacing"), "imagej", unit)
    return None


def read_spacing(path, *, level=None) -> Spacing | None:
    """The spacing ``path`` states (module docstring), or None. Cheap: headers and metadata only."""
    from segscore.io.readers import format_of
    from segscore.io.remote import is_url

    if not isinstance(path, (str, os.PathLike)) or is_url(path):
        return None
    kind = format_of(path)
    if kind == "nifti":
        return _nifti(path)
    if kind == "zarr":
        return _ome_zarr(path, level)
    if kind == "tiff":
        return _tiff(path)
    return None


def resolve_spacing(given, paths, ndim: int) -> Spacing:
    """The spacing to score with: ``given`` (``--spacing``, one number per axis) wins; else the
    one the files of ``paths`` state (every file that states one must state the same, or it is
    refused naming both); else 1 per axis (``source`` "default")."""
    if given is not None:
        vals = tuple(float(v) for v in given)
        if len(vals) != ndim:
            raise ScoreError(f"--spacing {' '.join(map(str, given))}: {len(vals)} numbers for a {ndim}D image; "
                             f"give one voxel size per axis in array order")
        if not all(math.isfinite(v) and v > 0 for v in vals):
            raise ScoreError(f"--spacing {' '.join(map(str, given))}: every voxel size must be a positive finite "
                             f"number")
        if not all(spacing_ok(v) for v in vals):
            raise ScoreError(f"--spacing {' '.join(map(str, given))}: every voxel size must be from {SPACING_MIN:g} "
                             f"to {SPACING_MAX:g} (smaller or larger ones underflow or overflow); give it in "
                             f"another unit")
        return Spacing(vals, "given", None)
    found = [(p, s) for p in paths if p is not None for s in [read_spacing(p)] if s is not None]
    found = [(p, s) for p, s in found if len(s.values) == ndim] or found
    if found:
        (p0, s0), rest = found[0], found[1:]
        if len(s0.values) != ndim:
            raise ScoreError(f"{_name(p0)}: states a spacing of {len(s0.values)} axes for a {ndim}D image; fix "
                             f"its metadata, or give --spacing")
        for p, s in rest:
            if not all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(s.values, s0.values)) or (
                    s.unit is not None and s0.unit is not None and s.unit != s0.unit):
                raise ScoreError(f"{_name(p)}: states a voxel spacing {list(s.values)} {s.unit or ''}".rstrip()
                                 + f", {_name(p0)} states {list(s0.values)} {s0.unit or ''}".rstrip()
                                 + "; put both on one grid, or give --spacing")
        return s0
    return Spacing((1.0,) * ndim, "default", None)
