"""A deterministic synthetic segment in kit-auc's layout, for ``segscore demo`` and the tests.

``make_sample(folder)`` writes::

    folder/MAP.tif                   forward ink map, uint8, on the surface grid
    folder/MAP_reverse.tif           its reverse-depth control (reads texture, not ink)
    folder/labels/inklabels.zarr     zarr group, levels "0", "1", "2" (level 2 on the map's grid
    folder/labels/supervision.zarr   up to a uniform scale, as a real segment's labels are)

The map reads the ink (AUC well above 0.5); the control sees the same brightness but not
the ink (AUC near 0.5). A strip at the map's edge is exactly 0: unpredicted pixels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: labels per surface pixel at level 2 (w045: 5,820 / 5,980)
LABEL_SCALE = 5820 / 5980


def _strokes(shape, n, rng):
    h, w = shape
    out = np.zeros(shape, bool)
    yy, xx = np.mgrid[0:h, 0:w]
    for _ in range(n):
        y0, x0 = rng.uniform(0, h), rng.uniform(0, w)
        ang = rng.uniform(0, np.pi)
        length = rng.uniform(0.05, 0.2) * max(h, w)
        half = rng.uniform(1.5, 3.5)
        dy, dx = np.sin(ang), np.cos(ang)
        t = np.clip((yy - y0) * dy + (xx - x0) * dx, 0, length)
        d2 = (yy - (y0 + t * dy)) ** 2 + (xx - (x0 + t * dx)) ** 2
        out |= d2 <= half * half
    return out


def _smooth(a, passes=2):
    a = a.astype(np.float32)
    for _ in range(passes):
        a = (a + np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1)) / 5
    return a


def make_sample(folder, *, shape=(600, 800), seed=0) -> dict:
    """Write the sample segment into ``folder``; returns the paths (as str) by role."""
    import tifffile
    import zarr

    from segscore.io.grid import label_grid

    folder = Path(folder)
    (folder / "labels").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    h, w = shape
    lh, lw = int(round(h * LABEL_SCALE)), int(round(w * LABEL_SCALE))
    ink = _strokes((lh, lw), max(8, h * w // 12000), rng)
    sup = np.zeros((lh, lw), bool)
    sup[lh // 12: lh - lh // 12, lw // 16: lw - lw // 16] = True
    sup[lh // 3: lh // 2, lw // 3: lw // 2] = False  # an unlabelled hole

    rows, cols = label_grid((lh, lw), (h, w), None, (h, w))
    ink_map = ink[np.ix_(rows, cols)]
    texture = _smooth(rng.normal(0, 1, (h, w)), 6)
    texture /= texture.std() + 1e-9
    noise = rng.normal(0, 1, (h, w)).astype(np.float32)
    forward = 110 + 45 * _smooth(ink_map, 2) + 18 * texture + 22 * noise
    reverse = 110 + 18 * texture + 25 * rng.normal(0, 1, (h, w)).astype(np.float32)
    maps = {}
    for name, m in (("MAP.tif", forward), ("MAP_reverse.tif", reverse)):
        m = np.clip(np.rint(m), 1, 255).astype(np.uint8)
        m[:, : max(2, w // 10)] = 0  # an unpredicted strip at the left edge, partly inside the mask
        tifffile.imwrite(folder / name, m)
        maps[name] = str(folder / name)

    for name, plane in (("inklabels.zarr", ink), ("supervision.zarr", sup)):
        group = zarr.open_group(folder / "labels" / name, mode="w", zarr_format=3)
        level = plane.astype(np.uint8) * 255
        for key, factor in (("2", 1), ("1", 2), ("0", 4)):
            data = np.repeat(np.repeat(level, factor, 0), factor, 1)
            arr = group.create_array(key, shape=data.shape, dtype=np.uint8,
                                     chunks=(min(256, data.shape[0]), min(256, data.shape[1])),
                                     config={"write_empty_chunks": True})  # every chunk present: none absent
            arr[...] = data
    return {"prediction": maps["MAP.tif"], "control": maps["MAP_reverse.tif"],
            "labels": str(folder / "labels" / "inklabels.zarr"),
            "mask": str(folder / "labels" / "supervision.zarr"), "folder": str(folder)}
