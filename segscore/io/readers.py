"""Open images as sources: TIFF, ``.npy``, PNG, NIfTI, zarr arrays and pyramid levels.

Each opener returns a :class:`~segscore.io.sources.Source`, so the caller reads windows
and never holds more of a file than the window. Bad input raises a
:class:`~segscore.errors.ScoreError` whose one-line message names the file and the fix.

Formats are told by name: ``.tif``/``.tiff``, ``.npy``, ``.png`` (and other Pillow images),
``.nii``/``.nii.gz``, and zarr (a path ending in ``.zarr``, a key inside one such as
``labels.zarr/2``, or any folder holding ``zarr.json``, ``.zarray`` or ``.zgroup``). A URL
(``https://``, ``http://``, ``s3://``) is always a zarr store, read by :mod:`segscore.io.remote`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from segscore.io.sources import ArraySource, RawFileSource, Source, ZarrSource, as_source, by_path, squeeze
from segscore.errors import InputFileError, ScoreError
from segscore.io import budget

TIFF_SUFFIXES = (".tif", ".tiff")
NIFTI_SUFFIXES = (".nii", ".nii.gz")


def _name(path) -> str:
    return os.fspath(path)


def input_name(obj, what: str = "array") -> str:
    """How messages and results name an input: a path as given, an array (from
    :mod:`segscore.api`) as ``<what>``."""
    return os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else f"<{what}>"


def is_zarr_path(path) -> bool:
    """Whether ``path`` names a zarr array or group (v2 or v3), or a key inside one.

    Every URL (``https://``, ``s3://``, ...) is taken as a zarr store: only zarr is read remotely."""
    from segscore.io.remote import is_url

    if is_url(path):
        return True
    p = Path(path)
    if any(part.endswith(".zarr") for part in p.parts):
        return True
    return p.is_dir() and any((p / marker).exists() for marker in ("zarr.json", ".zarray", ".zgroup"))


def format_of(path) -> str:
    """``'tiff'``, ``'npy'``, ``'nifti'``, ``'zarr'`` or ``'pillow'`` for a path (a URL: ``'zarr'``)."""
    from segscore.io.remote import is_url

    if is_url(path):
        return "zarr"  # segscore.io.remote refuses a URL naming a file in one line
    low = _name(path).lower().rstrip("/")
    if low.endswith(TIFF_SUFFIXES):
        return "tiff"
    if low.endswith(".npy"):
        return "npy"
    if low.endswith(NIFTI_SUFFIXES):
        return "nifti"
    if is_zarr_path(path):
        return "zarr"
    return "pillow"


def _require_exists(path) -> None:
    if not os.path.exists(path):
        raise InputFileError(f"{_name(path)}: no such file or folder; check the path")


def _require_bytes(path, offset: int, shape, dtype, fix: str) -> None:
    """Refuse a file shorter than the array its header declares (before any read)."""
    need = int(offset) + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    have = os.path.getsize(path)
    if have < need:
        raise ScoreError(f"{_name(path)}: the file is truncated ({have} bytes, its header declares "
                         f"{tuple(int(n) for n in shape)} {np.dtype(dtype).name} = {need} bytes); {fix}")


def _quiet_tifffile() -> None:
    """tifffile logs what it skips in a damaged file; segscore refuses such a file in one line
    of its own instead, so tifffile's log says nothing below a critical error."""
    import logging

    logging.getLogger("tifffile").setLevel(logging.CRITICAL)


def open_tiff(path) -> Source:
    """A TIFF's first series: read in place when stored contiguously, else by strips or tiles."""
    import tifffile

    _quiet_tifffile()
    _require_exists(path)
    try:
        tf = tifffile.TiffFile(path)
    except MemoryError:
        raise budget.out_of_memory(path) from None
    except Exception as exc:  # noqa: BLE001 - any parse failure is the same refusal
        raise ScoreError(f"{_name(path)}: not a readable TIFF; check that it was written "
                         f"completely, or save it as an uncompressed TIFF or .npy") from None
    try:
        series = tf.series[0]
        shape, dtype = tuple(series.shape), np.dtype(series.dtype)
        offset = series.dataoffset
        if offset is not None and dtype.kind in "biuf":
            file_dtype = dtype.newbyteorder(tf.byteorder)  # series.dtype is native; the file may not be
            tf.close()
            _require_bytes(path, offset, shape, file_dtype, "re-save the TIFF")
            return RawFileSource(path, offset, shape, file_dtype, name=_name(path))
        _check_tiff_chunk(path, tf, series)
        import zarr

        store = series.aszarr()
        array = zarr.open(store, mode="r")
        if hasattr(array, "keys"):  # a multi-resolution TIFF: level 0
            array = array["0"]
        source = ZarrSource(array, _name(path), closer=lambda: (store.close(), tf.close()))
        source.read((slice(0, min(1, shape[0])),) + tuple(slice(0, min(1, n)) for n in shape[1:]))
        return source
    except ScoreError:
        tf.close()
        raise
    except MemoryError:
        tf.close()
        raise budget.out_of_memory(path) from None
    except Exception as exc:  # noqa: BLE001 - e.g. a codec imagecodecs lacks
        tf.close()
        raise ScoreError(f"{_name(path)}: its image data cannot be read; the file is "
                         f"truncated or corrupt, or uses a codec imagecodecs lacks: save it as .npy") from None


def _check_tiff_chunk(path, tf, series) -> None:
    """Refuse a compressed or scattered TIFF whose strip or tile (the least a reader must decode
    at once) is larger than the read budget, before any is decoded: a 60,000-pixel-square image in
    one strip is refused here, in one line, not by a ``MemoryError``."""
    page = series.pages[0] if series.pages else tf.pages[0]
    page = getattr(page, "keyframe", page)
    itemsize = np.dtype(series.dtype).itemsize
    samples = int(getattr(page, "samplesperpixel", 1) or 1)
    depth = int(getattr(page, "imagedepth", 1) or 1)
    if getattr(page, "is_tiled", False):
        rows, cols = int(page.tilelength), int(page.tilewidth)
        depth = int(getattr(page, "tiledepth", 1) or 1)
    else:
        rows = min(int(getattr(page, "rowsperstrip", 0) or page.imagelength), int(page.imagelength))
        cols = int(page.imagewidth)
    # a decoded chunk, and the window it is copied into (at least one chunk's worth)
    kind = "tile" if getattr(page, "is_tiled", False) else "strip"
    budget.check_bytes(path, 2 * rows * cols * samples * depth * itemsize,
                       fix=f"its {kind}s of {rows} x {cols} pixels are decoded whole: re-save it with smaller "
                           f"tiles (tifffile.imwrite(..., tile=(1024, 1024))) or as a zarr store")


def open_npy(path) -> Source:
    """A ``.npy`` file, read by windows from disk (memory-mapped when Fortran-ordered)."""
    _require_exists(path)
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                offset = fh.tell()
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                offset = fh.tell()
            else:  # version 3 (a UTF-8 header): numpy's own loader, mapped, reads no data
                array = np.load(path, mmap_mode="r", allow_pickle=False)
                shape, fortran, dtype, offset = array.shape, np.isfortran(array), array.dtype, array.offset
                del array
    except MemoryError:
        raise budget.out_of_memory(path) from None
    except Exception:  # noqa: BLE001
        raise ScoreError(f"{_name(path)}: not a .npy file (its header does not parse); write it with numpy.save") \
            from None
    if any(int(n) < 0 for n in shape):
        raise ScoreError(f"{_name(path)}: its header declares the shape {tuple(int(n) for n in shape)}, with a "
                         f"negative size; the file is damaged: write it again with numpy.save")
    if dtype.hasobject:
        raise ScoreError(f"{_name(path)}: holds Python objects, not numbers; save a numeric array")
    _require_bytes(path, offset, shape, dtype, "re-save it with numpy.save")
    if fortran:
        return ArraySource(np.load(path, mmap_mode="r"), _name(path))
    return RawFileSource(path, offset, shape, dtype, name=_name(path))


#: the most pixels an image decoded whole may have (a header declaring more is refused before
#: any decoding: a PNG cannot be read by windows, and a damaged or hostile header could ask for
#: terabytes); 2**31 px is a 46,000 x 46,000 map, well above a full-size segment
MAX_DECODED_PX = 1 << 31


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_png(data: bytes, name) -> dict:
    """Walk a PNG's chunks before any decoder sees it: the signature, every chunk's length and
    CRC, an IHDR first and an IEND last, and the declared size (at most :data:`MAX_DECODED_PX`).
    Returns ``{"width", "height", "bit_depth", "color_type"}``; a damaged file is refused in one
    line (a decoder would print its own warnings, or read a damaged file in part)."""
    import zlib

    fix = "the file is truncated or corrupt: write it again"
    if not data.startswith(PNG_SIGNATURE):
        raise ScoreError(f"{name}: not a PNG (no PNG signature); give a PNG, TIFF, .npy, NIfTI or zarr")
    pos, info, ended = 8, None, False
    while pos + 12 <= len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        end = pos + 12 + n
        if n > 0x7FFFFFFF or end > len(data):
            raise ScoreError(f"{name}: a PNG chunk runs past the end of the file; {fix}")
        if zlib.crc32(data[pos + 4:pos + 8 + n]) != int.from_bytes(data[pos + 8 + n:end], "big"):
            raise ScoreError(f"{name}: a PNG chunk fails its checksum (CRC); {fix}")
        if info is None:
            if kind != b"IHDR" or n != 13:
                raise ScoreError(f"{name}: the PNG does not start with its header (IHDR); {fix}")
            w, h = int.from_bytes(data[pos + 8:pos + 12], "big"), int.from_bytes(data[pos + 12:pos + 16], "big")
            info = {"width": w, "height": h, "bit_depth": data[pos + 16], "color_type": data[pos + 17]}
        if kind == b"IEND":
            ended = True
            break
        pos = end
    if info is None or not ended:
        raise ScoreError(f"{name}: the PNG ends before its last chunk (IEND); {fix}")
    if info["width"] < 1 or info["height"] < 1 or info["width"] * info["height"] > MAX_DECODED_PX:
        raise ScoreError(f"{name}: its header declares {info['width']} x {info['height']} pixels, which cannot be "
                         f"decoded whole (at most {MAX_DECODED_PX:,}); save a map this large as TIFF, .npy or zarr")
    budget.check_bytes(name, png_decoded_bytes(info), fix=PNG_FIX)
    return info


#: what a refusal of an image decoded whole (PNG, another Pillow image) suggests
PNG_FIX = "save it as TIFF, .npy or a zarr store and read that (use --tile-rows)"

#: bytes per pixel while a Pillow image of each mode is read: Pillow's own buffer, the
#: conversion :func:`_pillow_array` makes (alpha dropped, palette looked up) and the NumPy array
_PILLOW_PX_BYTES = {"1": 2, "L": 2, "P": 4, "I;16": 4, "I;16B": 4, "I;16L": 4, "LA": 6, "PA": 6, "RGB": 7,
                    "RGBA": 11, "RGBX": 11, "I": 8, "F": 8, "CMYK": 8, "YCbCr": 7}


def _png_mode(info) -> str:
    """The Pillow mode a PNG of this IHDR is decoded to."""
    ct, depth = info["color_type"], info["bit_depth"]
    if ct == 0:
        return "1" if depth == 1 else "I;16" if depth == 16 else "L"
    return {2: "RGB", 3: "P", 4: "LA", 6: "RGBA"}.get(ct, "RGBA")


def png_decoded_bytes(info) -> int:
    """The peak bytes a PNG of this IHDR (``width``, ``height``, ``color_type``, ``bit_depth``)
    takes to read as an array: width x height x the bytes per pixel of its decoded mode, counting
    Pillow's buffer and the array made from it (Pillow's decompression-bomb limit counts pixels,
    not bytes: a 46,000-pixel-square grey PNG is 2 GB decoded, 4 GB read)."""
    return int(info["width"]) * int(info["height"]) * _PILLOW_PX_BYTES[_png_mode(info)]


def _pillow_array(img) -> np.ndarray:
    """The pixels of a Pillow image as numbers: grey palettes through their palette, colour
    palettes as their indices (a label image), alpha dropped."""
    mode = img.mode
    if mode in ("P", "PA"):
        pal = np.asarray(img.getpalette() or [], np.uint8).reshape(-1, 3)
        index = np.asarray(img.convert("P") if mode == "PA" else img)
        used = pal[np.unique(index)] if pal.size else pal
        if used.size and (used[:, 0] == used[:, 1]).all() and (used[:, 1] == used[:, 2]).all():
            return pal[:, 0][index]  # a grey palette: the grey levels it stands for
        return index
    if mode == "LA":
        return np.asarray(img.convert("L"))
    if mode == "RGBA":
        return np.asarray(img.convert("RGB"))
    return np.asarray(img)


def open_pillow(path) -> Source:
    """A PNG (or another image Pillow reads), decoded whole: PNGs have no windowed access.

    The header is checked before decoding (size, at most :data:`MAX_DECODED_PX` pixels); 8- and
    16-bit grey, RGB (alpha dropped), 1-bit and grey-palette images are read as their values."""
    import warnings

    from PIL import Image

    _require_exists(path)
    with open(path, "rb") as fh:
        head = fh.read(len(PNG_SIGNATURE))
    is_png = head == PNG_SIGNATURE
    if is_png:
        budget.check_bytes(path, os.path.getsize(path), fix=PNG_FIX)  # the chunk walk holds the file
        with open(path, "rb") as fh:
            check_png(fh.read(), _name(path))  # the read budget against the IHDR too
    try:
        if is_png:
            # Pillow's PNG reader itself: no decompression-bomb check by pixel count (the budget
            # above counts bytes), and nothing set process-wide
            from PIL import PngImagePlugin

            img = PngImagePlugin.PngImageFile(os.fspath(path))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                img = Image.open(path)
    except Image.DecompressionBombError:
        raise budget.TooLargeError(f"{_name(path)}: declares more pixels than Pillow decodes "
                                   f"({Image.MAX_IMAGE_PIXELS * 2:,}); {PNG_FIX}") from None
    except MemoryError:
        raise budget.out_of_memory(path, fix=PNG_FIX) from None
    except Exception:  # noqa: BLE001
        raise ScoreError(f"{_name(path)}: not a readable image (truncated, corrupt or "
                         f"another format); give a PNG, TIFF, .npy, NIfTI or zarr") from None
    with img:
        w, h = img.size
        if w < 1 or h < 1 or w * h > MAX_DECODED_PX:
            raise ScoreError(f"{_name(path)}: its header declares {w} x {h} pixels, which cannot be decoded whole "
                             f"(at most {MAX_DECODED_PX:,}); save a map this large as TIFF, .npy or zarr")
        budget.check_bytes(path, w * h * _PILLOW_PX_BYTES.get(img.mode, 11), fix=PNG_FIX)
        try:
            array = _pillow_array(img)
        except MemoryError:
            raise budget.out_of_memory(path, fix=PNG_FIX) from None
        except Exception:  # noqa: BLE001 - a truncated or corrupt stream
            raise ScoreError(f"{_name(path)}: its image data cannot be read (truncated or corrupt); "
                             f"write the file again") from None
    return ArraySource(array, _name(path))


#: what a refusal of a NIfTI volume too large to read suggests (gzip is decoded whole)
NIFTI_FIX = "save it as an uncompressed .nii or a zarr store and read that (use --tile-rows)"


def open_nifti(path) -> Source:
    """A NIfTI image; its voxel size is kept as ``source.voxel_size``.

    Checked before the data is read: dimensions (positive), and an uncompressed file's size
    against its header; a compressed one (``.nii.gz``) is decoded at once (gzip has no random
    access), so a truncated or corrupt stream is refused here, not in the middle of a score."""
    import nibabel

    _require_exists(path)
    try:
        img = nibabel.load(os.fspath(path))
        shape = tuple(int(n) for n in img.shape)
    except MemoryError:
        raise budget.out_of_memory(path, fix=NIFTI_FIX) from None
    except Exception:  # noqa: BLE001
        raise ScoreError(f"{_name(path)}: not a readable NIfTI-1 or NIfTI-2 file; check that "
                         f"it was written completely") from None
    if not shape or any(n < 1 for n in shape) or int(np.prod(shape, dtype=np.float64)) > MAX_DECODED_PX * 4:
        raise ScoreError(f"{_name(path)}: its header declares dimensions {shape}; a NIfTI mask needs positive "
                         f"dimensions: write the file again")
    proxy = img.dataobj
    compressed = str(path).endswith(".gz")
    raw_dtype = np.dtype(img.get_data_dtype())
    slope, inter = getattr(proxy, "slope", 1.0), getattr(proxy, "inter", 0.0)
    # nibabel applies the header's scale slope and intercept as it reads: an integer volume
    # comes back as float64, 8 bytes a voxel whatever the file stores
    scaled = not (slope == 1 and inter == 0)
    out_dtype = np.promote_types(raw_dtype, np.float64) if scaled and raw_dtype.kind != "c" else raw_dtype
    if compressed:  # decoded whole: the raw volume (twice, as gzip is read) and the scaled one
        budget.check_bytes(path, 2 * budget.nbytes(shape, raw_dtype) + (budget.nbytes(shape, out_dtype) if scaled
                                                                         else 0), fix=NIFTI_FIX)
    try:
        if not compressed:
            offset = getattr(proxy, "offset", None)  # where the proxy reads (the header may say 0)
            offset = int(img.header.get_data_offset() if offset is None else offset)
            need = offset + int(np.prod(shape)) * img.get_data_dtype().itemsize
            have = os.path.getsize(path)
            if have < need:
                raise ScoreError(f"{_name(path)}: the file is truncated ({have} bytes, its header declares {need}); "
                                 f"write it again")
        source = ArraySource(np.asarray(proxy) if compressed else proxy, _name(path))
        # the proxy applies the header's scaling, which can change the dtype: ask it
        source.dtype = np.asarray(proxy[tuple(slice(0, 1) for _ in shape)]).dtype if not compressed \
            else source.dtype
        source.voxel_size = tuple(float(z) for z in img.header.get_zooms()[: len(shape)])
    except ScoreError:
        raise
    except MemoryError:
        raise budget.out_of_memory(path, fix=NIFTI_FIX) from None
    except Exception:  # noqa: BLE001 - a truncated or corrupt gzip stream, a bad scaling
        raise ScoreError(f"{_name(path)}: its image data cannot be read (truncated or corrupt); write the file "
                         f"again") from None
    return source


def open_zarr(path, *, level: str | None = None, what: str = "array") -> ZarrSource:
    """A zarr array: ``path`` itself, or the array ``level`` inside the group at ``path``.

    A group without ``level`` is refused with its keys listed. A local folder of the plainest
    forms is opened and read by segscore alone (:func:`segscore.io.zarr_store.open_plain`: no
    zarr-python to import); any other local folder by zarr-python through
    :func:`segscore.io.zarr_store.local` (absent chunks counted, decoding capped, alike on both
    paths); a URL (``https://``, ``s3://``) by :mod:`segscore.io.remote` through the same
    wrapper. zarr-python's errors become one-line refusals naming the store.
    """
    from segscore.io import remote

    if remote.is_url(path):
        return by_path(remote.open_remote(path, level=level, what=what), "segscore.io.readers:open_zarr", str(path),
                       level=level, what=what)
    if not os.path.exists(path):
        raise InputFileError(f"cannot open {_name(path)} as zarr: no such folder; point at the .zarr folder")
    if not os.path.isdir(path):
        raise ScoreError(f"cannot open {_name(path)} as zarr: not a folder; point at the .zarr folder")
    from segscore.io import zarr_store

    plain = zarr_store.open_plain(path, level, _name(path))  # no zarr-python to import (0.2 s) or run
    if plain is not None:
        array, book = plain
        book.check_array(array.path)
        return by_path(ZarrSource(array, _name(path), store=book), "segscore.io.readers:open_zarr",
                       os.path.abspath(path), level=level, what=what)
    import warnings

    import zarr
    from zarr.errors import ZarrUserWarning

    store = zarr_store.local(path, _name(path))
    fix = "point at the .zarr folder, or restore its metadata"
    try:
        with warnings.catch_warnings():  # e.g. "both zarr.json and .zarray exist"
            warnings.simplefilter("ignore", ZarrUserWarning)
            node = zarr.open(store, mode="r")
            if hasattr(node, "keys") and level is not None and level in node:
                node = node[level]
            if hasattr(node, "shape"):
                _ = node.dtype, node.chunks, node.fill_value
            keys = None if hasattr(node, "shape") else sorted(node.keys())  # reads the members' metadata
    except ScoreError:
        raise
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - zarr-python's own error, in one line
        raise ScoreError(f"cannot open {_name(path)} as zarr ({_zarr_says(exc)}); {fix}") from None
    if keys is not None:
        if level is None:
            raise ScoreError(f"{_name(path)} is a zarr group, not an array; name one inside it, e.g. "
                             f"{_name(path).rstrip('/')}/{keys[0] if keys else 'KEY'} (keys: {keys})")
        if level not in keys:
            raise ScoreError(f"{_name(path)}: no level {level!r}; levels: {keys}")
        raise ScoreError(f"{_name(path)}/{level} is a group, not an array")
    store.check_array(node.path)
    return by_path(ZarrSource(node, _name(path), store=store), "segscore.io.readers:open_zarr", os.path.abspath(path),
                   level=level,
                   what=what)


def _zarr_says(exc: BaseException) -> str:
    """zarr-python's error as a short clause: its type and the first line of its message."""
    text = " ".join(str(exc).split())
    if len(text) > 120:
        text = text[:117] + "..."
    if isinstance(exc, FileNotFoundError) or type(exc).__name__ == "NodeNotFoundError":
        return "no zarr.json, .zarray or .zgroup there"
    return f"zarr-python: {type(exc).__name__}" + (f": {text}" if text else "")


def open_image(path, *, what: str = "image") -> Source:
    """Any supported image file as a source, by its name (see the module docstring)."""
    kind = format_of(path)
    if kind == "zarr":
        return open_zarr(path, what=what)
    source = {"tiff": open_tiff, "npy": open_npy, "nifti": open_nifti, "pillow": open_pillow}[kind](path)
    return by_path(source, "segscore.io.readers:open_image", os.path.abspath(path), what=what)


def open_map(obj, *, what: str = "map", ndim: int = 2, name: str | None = None) -> Source:
    """A path or an array as a squeezed ``ndim``-dimensional source, refused otherwise."""
    if isinstance(obj, (str, os.PathLike)):
        source = squeeze(open_image(obj, what=what))
    else:
        source = squeeze(as_source(obj, name=name or f"<{what}>"))
    if source.ndim != ndim:
        shape = source.shape
        source.close()
        raise ScoreError(f"{source.name}: expected a {ndim}D {what}, got shape {shape}")
    if source.dtype.kind not in "biuf":
        source.close()
        raise ScoreError(f"{source.name}: holds {source.dtype} values; a {what} must be numeric")
    if source.size == 0:
        shape = source.shape
        source.close()
        raise ScoreError(f"{source.name}: the {what} is empty (shape {shape}); give the whole {what}")
    return source


def open_labels(obj, *, what: str = "label image", ndims=(2, 3), name: str | None = None,
                grey_rgb: bool = False) -> Source:
    """A label image (a path of any supported format, or an array) as a source.

    The one label-image reader of every family (objects, fibers, curvilinear masks): singleton
    axes are dropped (but an image is never squeezed below 2D: a one-pixel image stays 1 x 1),
    a colour PNG is refused (with ``grey_rgb``, one whose colour channels are all equal is read
    as its first channel), and the image must have one of ``ndims`` dimensions and a numeric
    dtype. Values are not checked here (each window's values are checked where it is read).
    """
    if isinstance(obj, (str, os.PathLike)):
        base = open_image(obj, what=what)
        label = _name(obj)
    else:
        base = as_source(obj, name=name or f"<{what}>")
        label = base.name
    source = squeeze(base)
    if source.ndim < 2 <= base.ndim:
        source = base
    if isinstance(obj, (str, os.PathLike)) and format_of(obj) == "pillow" and source.ndim == 3:
        arr = source.read_all()
        if grey_rgb and arr.shape[-1] in (3, 4) and all(np.array_equal(arr[..., 0], arr[..., i]) for i in (1, 2)):
            return ArraySource(np.ascontiguousarray(arr[..., 0]), label)
        source.close()
        raise ScoreError(f"{label}: a colour image of shape {source.shape}; a label image has one "
                         "integer id per pixel (save the labels as a single-channel PNG, TIFF or .npy)")
    if source.ndim not in ndims:
        shape = source.shape
        source.close()
        raise ScoreError(f"{label}: a {what} of shape {shape}; expected "
                         + " or ".join(f"{d}D" for d in ndims))
    if source.dtype.kind not in "biuf":
        source.close()
        raise ScoreError(f"{label}: holds {source.dtype} values; a {what} holds integer ids")
    return source


def read_image(path, *, what: str = "image") -> np.ndarray:
    """A whole image as a NumPy array (for inputs that fit in memory)."""
    with open_image(path, what=what) as source:
        return source.read_all()


def same_file(a, b) -> bool:
    """Whether two paths name the same file, through links and other spellings too."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
