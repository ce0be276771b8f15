"""The nearest-neighbour grid that puts labels on a map's pixels.

Labels can sit on another grid than the map, up to a uniform scale: a segment's level-2 ink
labels are 5,820 x 8,020 for a 5,980 x 8,240 surface. Map pixel ``(y, x)`` of a map cut at
``crop`` from a surface of ``surface_shape`` reads label
``(floor((Y + 0.5) * sy), floor((X + 0.5) * sx))`` (clipped to the last label), where
``(Y, X)`` is its surface position and ``sy``, ``sx`` are labels per surface pixel: pixel
centres are matched, the convention of kit's ``label_grid``.
"""

from __future__ import annotations

import numpy as np

from segscore.errors import ScoreError

#: largest relative difference of the two axes' scales still called one grid
MAX_AXIS_MISMATCH = 0.005


def _shape_text(shape):
    return " x ".join(str(int(n)) for n in shape)


def check_crop(crop, surface_shape, map_shape, name=None):
    """The window ``(y0, y1, x0, x1)`` of the surface the map covers, after the refusals.

    Without a crop the map must be the whole surface: a map of another shape than
    ``surface_shape`` is refused (its labels would be read at the wrong place, or outside the
    label grid). ``name`` (the map's path) starts the messages that concern the map.
    """
    where = f"{name}: " if name else ""
    if crop is None:
        h, w = int(surface_shape[0]), int(surface_shape[1])
        if map_shape is not None and (h, w) != tuple(int(n) for n in map_shape):
            raise ScoreError(f"{where}the map is {_shape_text(map_shape)} but the surface shape is {h} x {w}; "
                             f"a map cut from a larger surface needs --crop Y0 Y1 X0 X1, a whole-surface map "
                             f"needs no --surface-shape")
        return 0, h, 0, w
    try:
        y0, y1, x0, x1 = (int(v) for v in crop)
    except (TypeError, ValueError):
        raise ScoreError(f"crop {crop!r} must be four integers Y0 Y1 X0 X1") from None
    h, w = int(surface_shape[0]), int(surface_shape[1])
    if not (0 <= y0 < y1 <= h and 0 <= x0 < x1 <= w):
        raise ScoreError(f"crop {[y0, y1, x0, x1]} is outside the {h} x {w} surface")
    if map_shape is not None and (y1 - y0, x1 - x0) != tuple(int(n) for n in map_shape):
        raise ScoreError(f"{where}map shape {tuple(int(n) for n in map_shape)} does not match the window "
                         f"{y1 - y0} x {x1 - x0}")
    return y0, y1, x0, x1


def label_grid(labels_shape, surface_shape, crop, map_shape, name=None):
    """Row and column indices into the labels for every map pixel (nearest neighbour).

    Parameters
    ----------
    labels_shape : (h, w)
        Shape of the labels at the level used.
    surface_shape : (H, W)
        The full surface the labels cover.
    crop : (y0, y1, x0, x1) or None
        The window of the surface the map covers (ends excluded); None for all of it.
    map_shape : (h_map, w_map)
        Must equal the window's shape (the surface's, without a crop).
    name : str, optional
        The map's path, named in the refusals about the map.

    Returns
    -------
    rows : (h_map,) int64, cols : (w_map,) int64

    Raises
    ------
    ScoreError
        When the two axes' scales differ by more than 0.5 %, the crop leaves the surface, or
        the map does not match the window (with or without a crop).
    """
    lh, lw = (int(n) for n in labels_shape)
    sh, sw = (int(n) for n in surface_shape)
    if sh <= 0 or sw <= 0:
        raise ScoreError(f"surface shape {(sh, sw)} must be positive")
    sy, sx = lh / sh, lw / sw
    if abs(sy - sx) > MAX_AXIS_MISMATCH * max(sy, sx):
        raise ScoreError(f"labels {(lh, lw)} and surface {(sh, sw)} differ in scale between axes "
                         f"({sy:.4f} vs {sx:.4f}); they are not the same grid")
    y0, y1, x0, x1 = check_crop(crop, (sh, sw), map_shape, name)
    rows = np.minimum(((np.arange(y0, y1) + 0.5) * sy).astype(np.int64), lh - 1)
    cols = np.minimum(((np.arange(x0, x1) + 0.5) * sx).astype(np.int64), lw - 1)
    return rows, cols
